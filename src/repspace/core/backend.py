"""Where the two heavy kernels run: the kNN graph and the moment pass, here or elsewhere.

:func:`repspace.core.knn.knn_graph` and :func:`repspace.core.moments.moments`
check their input and decide everything that does not depend on where the work
runs; the work itself (building a graph of a checked matrix, summing a moment
plan over all rows) goes to a :class:`Backend` passed to them explicitly, from
the workflow down through every engine function that reaches them
(``backend=None`` means this process: what :data:`LOCAL` does). The Ray backend
(:class:`repspace.workflows.distributed.measure.RayBackend`) implements the
same two methods on a cluster.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from repspace.core.knn import KnnGraph, local_graph
from repspace.core.moments import MomentPlan, accumulate

__all__ = ["LOCAL", "Backend", "LocalBackend"]


@runtime_checkable
class Backend(Protocol):
    """What a backend does: build a kNN graph and sum a moment pass.

    Attributes
    ----------
    name : str
        ``local``, ``ray``...: recorded in reports (``compare --json``'s ``backend``).

    Examples
    --------
    >>> isinstance(LOCAL, Backend)
    True
    """

    name: str

    def knn_graph(self, X: np.ndarray, k: int, *, metric: str, exact: bool | None, recall_sample: int,
                  seed: int | None) -> KnnGraph:
        """The graph of a checked matrix ``X`` (``n > k``; metric ``cosine``, ``ip`` or ``l2``)."""
        ...

    def accumulate(self, X: Any, Y: Any, plan: MomentPlan) -> dict[str, Any]:
        """The sums :func:`repspace.core.moments.accumulate` returns over all rows of ``X`` and ``Y``."""
        ...


class LocalBackend:
    """Both kernels in this process: the code of :mod:`repspace.core.knn` and :mod:`repspace.core.moments`.

    Examples
    --------
    >>> import numpy as np
    >>> from repspace.core.knn import knn_graph
    >>> knn_graph(np.array([[0.0], [1.0], [3.0]]), k=1, metric="l2", backend=LOCAL).indices.ravel().tolist()
    [1, 0, 1]
    """

    name = "local"

    def knn_graph(self, X: np.ndarray, k: int, *, metric: str, exact: bool | None, recall_sample: int,
                  seed: int | None) -> KnnGraph:
        """:func:`repspace.core.knn.local_graph`: exact up to ``EXACT_MAX`` items (or as ``exact`` says), else HNSW."""
        return local_graph(X, k, metric=metric, exact=exact, recall_sample=recall_sample, seed=seed)

    def accumulate(self, X: Any, Y: Any, plan: MomentPlan) -> dict[str, Any]:
        """:func:`repspace.core.moments.accumulate` over all rows, block by block."""
        return accumulate(X, Y, plan)

    def __repr__(self) -> str:
        return "LocalBackend()"


#: The default backend: this process.
LOCAL = LocalBackend()

