"""Reading the text files users hand over (CSV, JSON lines, plain lines): one encoding rule and one error line
per problem.

Every reader of a user's CSV, JSON-lines or line-oriented text file (a corpus,
an edge list, a lexicon) goes through these functions, so each accepts the same
input (UTF-8 unless told, a byte-order mark skipped) and names a bad line the
same way (``path:line: ...``).
"""

from __future__ import annotations

import codecs
import csv
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from repspace.core.errors import InputError

__all__ = ["read_csv_rows", "read_jsonl", "text_lines"]


def read_csv_rows(path: str | Path, what: str, *, delimiter: str = ",") -> list[list[str]]:
    """Every row of a UTF-8 CSV file (``csv.reader``; a byte-order mark is skipped).

    ``what`` names the file in errors (``"STS file"``, ``"labelled file"``).

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> _ = open(p, "w", encoding="utf-8-sig").write('a,"b, c"\\n')
    >>> read_csv_rows(p, "table")
    [['a', 'b, c']]
    """
    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8-sig") as f:
            return list(csv.reader(f, delimiter=delimiter))
    except FileNotFoundError:
        raise InputError(f"{what} {path} does not exist") from None
    except csv.Error as e:
        raise InputError(f"{path}: malformed CSV: {e}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read {what} {path}: {e}") from None


def read_jsonl(path: str | Path, what: str) -> list[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line of a UTF-8 JSON-lines file; each line must be an object.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "t.jsonl")
    >>> _ = open(p, "w").write('{"a": 1}\\n\\n{"a": 2}\\n')
    >>> read_jsonl(p, "records")
    [(1, {'a': 1}), (3, {'a': 2})]
    >>> _ = open(p, "w").write('{"a": 1}\\n[2]\\n')
    >>> read_jsonl(p, "records")
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: ...t.jsonl:2: expected a JSON object, got list
    """
    path = Path(path)
    try:
        with path.open("rb") as f:
            return parse_jsonl_lines(f, path)
    except FileNotFoundError:
        raise InputError(f"{what} {path} does not exist") from None
    except OSError as e:
        raise InputError(f"cannot read {what} {path}: {e}") from None


def parse_jsonl_lines(lines: Iterable[bytes], path: str | Path, first_line: int = 1) -> list[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line of raw JSON-lines bytes; errors name ``path`` and the line.

    ``first_line`` numbers the first of ``lines`` (a reader of a byte range passes its line number).

    Examples
    --------
    >>> parse_jsonl_lines([b'{"a": 1}\\n', b'\\n', b'{"a": 2}\\n'], "x.jsonl", first_line=7)
    [(7, {'a': 1}), (9, {'a': 2})]
    """
    rows = []
    for number, raw in enumerate(lines, start=first_line):
        try:
            line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError as e:
            raise InputError(f"{path}:{number}: invalid UTF-8 at byte {e.start}") from None
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(f"{path}:{number}: invalid JSON ({e.msg} at column {e.colno})") from None
        except ValueError as e:  # an integer of more digits than Python converts (4,300)
            raise InputError(f"{path}:{number}: invalid JSON ({str(e).split(';')[0]})") from None
        except RecursionError:  # Python's decoder gives up near 1,000 levels of nesting
            raise InputError(f"{path}:{number}: JSON nested too deeply to read") from None
        if not isinstance(obj, dict):
            raise InputError(f"{path}:{number}: expected a JSON object, got {type(obj).__name__}")
        rows.append((number, obj))
    return rows


def text_lines(path: str | Path, what: str, *, encoding: str = "utf-8") -> Iterator[tuple[int, str]]:
    """Each line of a text file with its number (from 1), decoded, without its line ending.

    A line ends at ``\\n`` or ``\\r\\n`` and nowhere else (``str.splitlines``
    would also cut at U+2028, U+0085, a form feed or ``\\x1c``, shifting every
    later line of a file whose lines are aligned with something else); exactly
    one ending is removed, so a stray ``\\r`` before it stays part of the line.
    One UTF-8 byte-order mark is skipped; any Python codec may be named. An
    unknown codec, a missing file, a folder, an unreadable file or a line that
    does not decode is one :class:`InputError` line naming ``what`` (``corpus
    file``, ``edge file``, ...) or ``path:line``.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "t.txt")
    >>> _ = open(path, "wb").write("\\ufeffone\\r\\ntwo\\n".encode("utf-8"))
    >>> list(text_lines(path, "text file"))
    [(1, 'one'), (2, 'two')]
    >>> _ = open(path, "wb").write("a\\u2028b\\x85c\\x0cd\\nlast".encode("utf-8"))
    >>> [line for _, line in text_lines(path, "ids file")]
    ['a\\u2028b\\x85c\\x0cd', 'last']
    >>> list(text_lines(path + ".missing", "corpus file"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: corpus file ....missing does not exist
    """
    path = Path(path)
    try:
        codec = codecs.lookup(encoding).name
    except (LookupError, TypeError):
        raise InputError(f"unknown text encoding {encoding!r}") from None
    try:
        with path.open("rb") as f:
            for number, raw in enumerate(f, start=1):
                try:
                    line = raw.decode("utf-8-sig" if number == 1 and codec == "utf-8" else codec)
                except UnicodeDecodeError as e:
                    name = "UTF-8" if codec == "utf-8" else codec
                    raise InputError(f"{path}:{number}: invalid {name} at byte {e.start} "
                                     "(pass the file's encoding)") from None
                if line.endswith("\n"):
                    line = line[:-2] if line.endswith("\r\n") else line[:-1]
                yield number, line
    except FileNotFoundError:
        raise InputError(f"{what} {path} does not exist") from None
    except IsADirectoryError:
        raise InputError(f"{what} {path} is a folder") from None
    except OSError as e:
        raise InputError(f"cannot read {what} {path}: {e}") from None
