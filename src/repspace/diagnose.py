"""The diagnose workflow: a stored space's vectors through :func:`repspace.geometry.diagnose`.

The store feeds the engine arrays; the engine never touches the store
(``DESIGN.md``: analyses are pure functions of arrays).

Examples
--------
>>> import numpy as np, tempfile, os
>>> from repspace import Store
>>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("t", dim=8)
>>> _ = sp.add([str(i) for i in range(300)], np.random.default_rng(0).standard_normal((300, 8)))
>>> report = diagnose_space(sp, k=5)
>>> report.n, report.metric, report.hubness.k
(300, 'cosine', 5)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from repspace.errors import InputError
from repspace.geometry.diagnose import Diagnosis, diagnose

if TYPE_CHECKING:
    from repspace.store import Space

__all__ = ["diagnose_space"]


def diagnose_space(space: Space, *, k: int = 10, exact: bool | None = None, seed: int = 0) -> Diagnosis:
    """Diagnose a stored space's live vectors with its own metric (see :func:`repspace.geometry.diagnose`)."""
    vectors = space.vectors()
    if len(vectors) <= k:
        raise InputError(f"space {space.name!r} has {len(vectors)} items; diagnosing with k={k} needs more than {k}")
    return diagnose(vectors, k=k, metric=space.metric.value, exact=exact, seed=seed)
