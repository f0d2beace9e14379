"""Input checks shared by the comparison measures (the pair check itself is :func:`repspace.core.arrays.check_pair`)."""

from __future__ import annotations

from repspace.core.checks import check_choice

#: Values accepted by the ``precision`` option of the moment-based measures.
PRECISIONS = ("auto", "float64")


def check_precision(precision: str) -> str:
    """``auto`` or ``float64`` (see :func:`repspace.engines.compare.cka_linear`)."""
    return check_choice(precision, "precision", PRECISIONS)
