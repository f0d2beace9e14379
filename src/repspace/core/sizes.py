"""Sizes in bytes written the way people write them: ``64MB``, ``1.5GiB``, ``500kB``.

Decimal units (``kB``, ``MB``, ``GB``, ``TB``: powers of 1000) and binary ones
(``KiB``, ``MiB``, ``GiB``, ``TiB``: powers of 1024) are both accepted, case and
spaces ignored; a bare number is bytes. A memory budget is the use in mind
(``repspace bench search SPACE --budget 64MB``).

Examples
--------
>>> parse_size("64MB"), parse_size("1.5 GiB"), parse_size("4096")
(64000000, 1610612736, 4096)
>>> format_size(64_000_000)
'61.0 MiB'
"""

from __future__ import annotations

import math
import re

from repspace.core.errors import InputError

__all__ = ["UNITS", "format_size", "parse_size"]

#: Bytes per unit, by the unit's lower-case spelling.
UNITS = {"": 1, "b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3, "tb": 1000**4,
         "kib": 1024, "mib": 1024**2, "gib": 1024**3, "tib": 1024**4}
_SIZE = re.compile(r"(\d+(?:\.\d*)?|\.\d+)([a-z]*)")


def parse_size(text: str | int, what: str = "size") -> int:
    """Bytes of a size such as ``64MB`` or ``1.5GiB`` (an int passes through when positive).

    Raises :class:`~repspace.core.errors.InputError` naming ``what`` when the text is not a
    positive size in a known unit.

    Examples
    --------
    >>> parse_size("2 kib"), parse_size(10)
    (2048, 10)
    >>> parse_size("64XB", "budget")
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: budget '64XB' is not a size: write a number and a unit, e.g. 64MB, 1.5GiB, 500kB
    """
    if isinstance(text, int) and not isinstance(text, bool):
        if text < 1:
            raise InputError(f"{what} must be at least 1 byte, not {text}")
        return text
    if not isinstance(text, str):
        raise InputError(f"{what} is a size such as 64MB, not {type(text).__name__}")
    match = _SIZE.fullmatch(re.sub(r"\s+", "", text).lower())
    if match is None or match.group(2) not in UNITS:
        raise InputError(f"{what} {text!r} is not a size: write a number and a unit, e.g. 64MB, 1.5GiB, 500kB")
    value = float(match.group(1)) * UNITS[match.group(2)]
    if not math.isfinite(value) or value < 1:
        raise InputError(f"{what} {text!r} is less than one byte")
    return int(value)


def format_size(n: int) -> str:
    """``n`` bytes in MiB with one decimal (KiB below one MiB).

    Examples
    --------
    >>> format_size(1536), format_size(3 * 2**20)
    ('1.5 KiB', '3.0 MiB')
    """
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n / 2**10:.1f} KiB"
