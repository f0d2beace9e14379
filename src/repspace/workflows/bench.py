"""``repspace bench search``: recall, speed, memory and build time of index specs on your own space.

The suite in ``benchmarks/`` compares repspace with other libraries on fixed
data; this workflow answers the user's question on their data: which spec
should this space use? Queries are stored vectors of the space itself (a
random sample); each query's own row is left out of every result list, so the
ground truth is its ``k`` nearest *other* items by exact search.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.core.progress import Progress, relabel
from repspace.engines.search.specs import parse_spec
from repspace.workflows.search import knn
from repspace.workflows.search.indexes import build_index

if TYPE_CHECKING:
    from repspace.core.store import Space

#: What ``repspace bench search`` measures when no spec is given.
DEFAULT_SPECS = ("exact", "hnsw32", "int8>rescore4", "binary>rescore8")


@dataclass(frozen=True)
class SpecResult:
    """One spec's figures.

    Attributes
    ----------
    spec : str
    recall : float
        Mean recall@k against exact search (1.0 for ``exact``).
    qps : float
        Queries per second over the whole batch, through :func:`repspace.engines.search.knn`.
    build_s : float
        Seconds to build (or bring up to date) the index; 0 when it was current.
    memory_bytes : int or None
        The index in memory (funnels: codes and graph; the float vectors stay in the store).
    action : str
        What the build did: ``built``, ``loaded``, ``extended``, ``rebuilt`` (``none`` for exact).
    plan : str
        How the searches ran (``--explain``'s method).
    """

    spec: str
    recall: float
    qps: float
    build_s: float
    memory_bytes: int | None
    action: str
    plan: str

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class SearchBench:
    """The result of :func:`bench_search`."""

    space: str
    count: int
    dim: int
    n_queries: int
    k: int
    where: str | None
    results: list[SpecResult] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """For ``--json``."""
        return {"space": self.space, "count": self.count, "dim": self.dim, "n_queries": self.n_queries, "k": self.k,
                "where": self.where, "results": [r.to_dict() for r in self.results]}


def _without_self(rows: np.ndarray, own: np.ndarray, k: int) -> np.ndarray:
    out = np.full((len(rows), k), -1, dtype=np.int64)
    for i, (r, o) in enumerate(zip(rows, own)):
        kept = r[(r != o) & (r >= 0)][:k]
        out[i, : len(kept)] = kept
    return out


def _recall(found: np.ndarray, truth: np.ndarray) -> float:
    scores = []
    for f, t in zip(found, truth):
        t = t[t >= 0]
        if len(t):
            scores.append(len(set(f[f >= 0].tolist()) & set(t.tolist())) / len(t))
    return float(np.mean(scores)) if scores else 1.0


def bench_search(space: Space, specs: Sequence[str] = DEFAULT_SPECS, *, queries: int = 200, k: int = 10,
                 where: str | None = None, seed: int = 0,
                 progress: Progress | None = None) -> SearchBench:
    """Measure index specs on a stored space against exact search.

    Parameters
    ----------
    space : Space
    specs : sequence of str
        Index specs (``exact``, ``hnsw32``, ``int8>rescore4``, ``pca64>rerank``...).
    queries : int
        Stored vectors sampled as queries.
    k : int
        Neighbours per query.
    where : str, optional
        A filter applied to every search (the planner's choice is reported).
    seed : int
        Sampling seed.
    progress : callable, optional
        ``(phase, done, total)`` while indexes are built.

    Returns
    -------
    SearchBench

    Examples
    --------
    >>> import tempfile, os
    >>> from repspace import Store
    >>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("t", dim=8)
    >>> _ = sp.add([str(i) for i in range(500)], np.random.default_rng(0).standard_normal((500, 8)))
    >>> b = bench_search(sp, ["exact", "int8>rescore4"], queries=20)
    >>> [(r.spec, r.recall) for r in b.results]
    [('exact', 1.0), ('int8>rescore4', 1.0)]
    """
    parsed = [parse_spec(s) for s in specs]
    if not parsed:
        raise InputError("give at least one index spec")
    check_scalar(queries, "queries", int, low=1)
    check_scalar(k, "k", int, low=1)
    rows, vectors = space.rows_and_vectors()
    if len(rows) < 2:
        raise InputError(f"space {space.name} has {len(rows)} items: nothing to benchmark")
    pick = np.sort(np.random.default_rng(seed).choice(len(rows), min(queries, len(rows)), replace=False))
    q, own = np.ascontiguousarray(vectors[pick]), rows[pick]
    del vectors
    truth = _without_self(knn(space, q, k + 1, where=where, method="exact").rows, own, k)
    results = []
    for spec in parsed:
        t0 = time.perf_counter()
        if spec.kind == "exact":
            action, memory = "none", None
        else:
            report = build_index(space, spec, progress=relabel(progress, str(spec)))
            action, memory = report.action, report.memory_bytes
        build_s = time.perf_counter() - t0 if action != "loaded" else 0.0
        knn(space, q[:1], k + 1, where=where, index=spec)  # warm: the index is in memory
        t0 = time.perf_counter()
        res = knn(space, q, k + 1, where=where, index=spec)
        seconds = time.perf_counter() - t0
        found = _without_self(res.rows, own, k)
        results.append(SpecResult(str(spec), _recall(found, truth), len(q) / max(seconds, 1e-9), build_s, memory,
                                  action, res.plan.method))
    return SearchBench(space.name, len(rows), space.dim, len(q), k, where, results)
