"""Input checks shared by the comparison measures (the pair check itself is :func:`repspace.core.arrays.check_pair`)."""

from __future__ import annotations

from repspace.core.errors import InputError

#: Values accepted by the ``precision`` option of the moment-based measures.
PRECISIONS = ("auto", "float64")


def check_precision(precision: str) -> str:
    """``auto`` or ``float64`` (see :func:`repspace.engines.compare.cka_linear`)."""
    if precision not in PRECISIONS:
        raise InputError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    return precision
