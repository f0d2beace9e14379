"""The rows of a pair file (STS, pair classification, word similarity): two texts and a value each."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from repspace.core.errors import InputError

__all__ = ["finite_score", "pair_header", "read_pair_rows"]


def finite_score(text: str, where: str) -> float:
    """``text`` as a finite float, else one :class:`InputError` line starting with ``where``."""
    try:
        score = float(text)
    except ValueError:
        raise InputError(f"{where}: the score {text!r} is not a number") from None
    if not math.isfinite(score):
        raise InputError(f"{where}: the score {text!r} is not finite")
    return score


def read_pair_rows(rows: Iterable[tuple[int, list[str]]], path: Path, what: str, fields: str,
                   value: Callable[[str, str], Any], n_fields: int = 3) -> tuple[list[str], list[str], list[Any]]:
    """The two texts and the value of each row ``(line number, fields)``; an empty row is skipped.

    ``value(third field, "path:line")`` reads the value or raises; a row
    without ``n_fields`` fields is an error naming ``fields`` (``sentence1,sentence2,score``),
    a blank text one naming its column (an empty side would be embedded as if it
    were a sentence and scored), and a file without a pair one naming ``what`` (``STS file``).
    Fields after the third (further columns a header names, such as a ``genre`` that
    ``--by`` splits on) are not read here.
    """
    names = fields.replace(",", " ").split()
    first: list[str] = []
    second: list[str] = []
    values: list[Any] = []
    for line, row in rows:
        if not row:
            continue
        if len(row) != n_fields:
            raise InputError(f"{path}:{line}: expected {n_fields} fields ({fields}), got {len(row)}")
        values.append(value(row[2], f"{path}:{line}"))
        for name, text in zip(names, row[:2]):
            if not text.strip():
                raise InputError(f"{path}:{line}: {name} is empty (each pair needs both texts)")
        first.append(row[0])
        second.append(row[1])
    if not values:
        raise InputError(f"{what} {path} holds no pairs")
    return first, second, values


def pair_header(rows: list[list[str]], names: tuple[str, ...]) -> list[str] | None:
    """The first row's column names when it starts with ``names`` (``sentence1,sentence2,score``), else ``None``.

    Further names after those three are allowed (a ``genre`` column, say); each must be non-empty and distinct.
    """
    if not rows or tuple(c.strip().lower() for c in rows[0][:len(names)]) != names:
        return None
    header = [c.strip() for c in rows[0]]
    header[:len(names)] = names
    extra = header[len(names):]
    if any(not c for c in extra) or len(set(header)) != len(header):
        raise InputError(f"the header {','.join(rows[0])[:80]!r} names an empty or repeated column")
    return header
