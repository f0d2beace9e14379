"""Words of a stored space: its ids indexed once, and named word lists turned into rows with a clear error."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from repspace.core.errors import InputError

if TYPE_CHECKING:
    from repspace.core.store import Space

#: Unknown words named in an error line before "and N more".
SHOWN = 5


def id_rows(space: Space) -> tuple[dict[str, int], np.ndarray]:
    """``({id: row of the snapshot}, vectors)`` of the space's live items (one snapshot, ids and vectors agree)."""
    snap = space.snapshot()
    return {i: r for r, i in enumerate(snap.ids)}, snap.vectors


def rows_of(index: dict[str, int], words: Sequence[str], space_name: str, what: str) -> list[int]:
    """The rows of ``words``; every one must be an id of the space (else one error line naming the unknown)."""
    missing = [w for w in words if w not in index]
    if missing:
        more = f" and {len(missing) - SHOWN} more" if len(missing) > SHOWN else ""
        raise InputError(f"{what}: {', '.join(repr(w) for w in missing[:SHOWN])}{more} not in space "
                         f"{space_name!r}")
    return [index[w] for w in words]
