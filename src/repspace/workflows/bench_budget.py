"""``repspace bench search SPACE --budget 64MB``: the index spec with the best recall within a memory budget.

Among candidate specs (:func:`budget_candidates` for the space's size and dimension, or
the user's), those whose vectors alone would exceed the budget
(:meth:`~repspace.engines.search.specs.IndexSpec.vector_bytes`, a lower bound) are left
out before anything is built; the others are built and measured by
:func:`~repspace.workflows.bench.bench_search` (recall@k against exact search on a
sample of stored vectors, each query's own row left out of its results; memory as the
index accounts for itself: codes, labels, graph and trained model, or the float matrix for
``exact``). The choice is the spec of highest recall whose measured memory fits; ties go
to the smaller index. A budget below every candidate's lower bound is bad input: one
error, nothing built.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from repspace.core.errors import InputError
from repspace.core.progress import Progress
from repspace.core.sizes import format_size, parse_size
from repspace.engines.search.specs import parse_spec
from repspace.workflows.bench import SpecResult, bench_search

if TYPE_CHECKING:
    from repspace.core.store import Space

#: IVF lists of the candidate IVF specs: about ``IVF_LISTS_PER_SQRT × sqrt(rows)``, a power of two in this range.
IVF_LISTS_RANGE = (16, 4096)
IVF_LISTS_PER_SQRT = 4
#: Rows a product quantizer needs to train its 256 centroids per sub-space.
PQ_MIN_ROWS = 256
#: Dimensions per PQ sub-quantizer of the candidate IVF-PQ specs (``pq{dim // s}`` for each ``s`` dividing dim).
PQ_SUBDIMS = (4, 8)
#: The PQ sub-dimension that also gets an OPQ candidate (OPQ's training costs ~50 PQ trainings).
OPQ_SUBDIM = 8


def budget_candidates(count: int, dim: int) -> list[str]:
    """The specs ``--budget`` weighs for ``count`` vectors of ``dim`` dimensions, largest first.

    Full vectors (``exact``, ``hnsw32``), graph and flat quantizers, PCA and TLDR (a
    linear map learnt on neighbour pairs, :mod:`repspace.core.tldr`) to a quarter of
    the dimensions, AdANNS' IVF over a quarter-dimension prefix, and IVF-PQ with 4 and 8
    dimensions per byte, with and without an OPQ rotation; every funnel reranks on the
    full vectors. IVF and PQ specs are left out where there are too few rows to train them.

    Examples
    --------
    >>> budget_candidates(100_000, 384)  # doctest: +NORMALIZE_WHITESPACE
    ['exact', 'hnsw32', 'hnsw32,int8>rescore2', 'int8>rescore4', 'pca96>rerank10', 'tldr96>rerank10',
     'prefix96,ivf1024>rerank10', 'ivf1024,pq96>rerank10', 'ivf1024,pq48>rerank10', 'opq48,ivf1024,pq48>rerank10',
     'binary>rescore8']
    """
    nlist = 2 ** round(math.log2(max(1.0, IVF_LISTS_PER_SQRT * math.sqrt(count))))
    nlist = min(max(nlist, IVF_LISTS_RANGE[0]), IVF_LISTS_RANGE[1])
    out = ["exact", "hnsw32", "hnsw32,int8>rescore2", "int8>rescore4"]
    if dim >= 8:
        out += [f"pca{dim // 4}>rerank10", f"tldr{dim // 4}>rerank10"]
        if count >= nlist:
            out.append(f"prefix{dim // 4},ivf{nlist}>rerank10")
    if count >= max(nlist, PQ_MIN_ROWS):
        for sub in PQ_SUBDIMS:
            if dim % sub == 0 and dim > sub:
                out.append(f"ivf{nlist},pq{dim // sub}>rerank10")
                if sub == OPQ_SUBDIM:
                    out.append(f"opq{dim // sub},ivf{nlist},pq{dim // sub}>rerank10")
    out.append("binary>rescore8")
    return out


@dataclass(frozen=True)
class BudgetBench:
    """The result of :func:`bench_budget`.

    Attributes
    ----------
    space, count, dim : the space measured.
    budget_bytes : int
    n_queries, k, where : the recall sample, depth and filter.
    results : list of SpecResult
        The specs built and measured (``exact``'s memory: the float matrix).
    skipped : list of (spec, bytes)
        Specs left out unbuilt: their vectors alone (the lower bound) exceed the budget.
    chosen : str or None
        The spec of best recall whose memory fits (None: none of the measured ones fits).
    """

    space: str
    count: int
    dim: int
    budget_bytes: int
    n_queries: int
    k: int
    where: str | None = None
    results: list[SpecResult] = field(default_factory=list)
    skipped: list[tuple[str, int]] = field(default_factory=list)
    chosen: str | None = None

    def fits(self, r: SpecResult) -> bool:
        """Whether a measured spec's memory is within the budget."""
        return r.memory_bytes is not None and r.memory_bytes <= self.budget_bytes

    def to_dict(self) -> dict[str, Any]:
        """For ``--json``."""
        return {"space": self.space, "count": self.count, "dim": self.dim, "budget_bytes": self.budget_bytes,
                "n_queries": self.n_queries, "k": self.k, "where": self.where,
                "results": [{**r.to_dict(), "fits": self.fits(r)} for r in self.results],
                "skipped": [{"spec": s, "lower_bound_bytes": b} for s, b in self.skipped], "chosen": self.chosen}


def bench_budget(space: Space, budget: str | int, specs: Sequence[str] | None = None, *, queries: int = 200,
                 k: int = 10, where: str | None = None, seed: int = 0,
                 progress: Progress | None = None) -> BudgetBench:
    """Choose the index spec with the best recall@k within a memory budget.

    Parameters
    ----------
    space : Space
    budget : str or int
        Bytes, or a size such as ``"64MB"`` or ``"1.5GiB"`` (:func:`repspace.core.sizes.parse_size`).
    specs : sequence of str, optional
        Candidates (default: :func:`budget_candidates` for the space).
    queries, k, where, seed, progress : as :func:`~repspace.workflows.bench.bench_search` (recall is
        measured under the filter ``where``; memory is the whole index's).

    Returns
    -------
    BudgetBench

    Examples
    --------
    >>> import numpy as np
    >>> from repspace.store import example_space
    >>> sp = example_space(vectors=np.random.default_rng(0).standard_normal((400, 16)))
    >>> b = bench_budget(sp, "20kB", ["exact", "int8>rescore4", "binary>rescore8"], queries=50)
    >>> b.chosen, [s for s, _ in b.skipped], [(r.spec, r.memory_bytes, round(r.recall, 2)) for r in b.results]
    ('int8>rescore4', ['exact'], [('int8>rescore4', 9728, 1.0), ('binary>rescore8', 4000, 0.79)])
    """
    limit = parse_size(budget, "budget")
    info = space.info()
    parsed = [parse_spec(s) for s in (budget_candidates(info.count, info.dim) if specs is None else specs)]
    if not parsed:
        raise InputError("give at least one index spec")
    lower = {str(s): s.vector_bytes(info.dim) * info.count for s in parsed}
    fitting = [s for s in lower if lower[s] <= limit]
    if not fitting:
        smallest = min(lower, key=lambda s: lower[s])
        raise InputError(f"a budget of {format_size(limit)} is below every candidate: the smallest, {smallest}, "
                         f"holds at least {format_size(lower[smallest])} for {info.count:,} vectors of {info.dim} "
                         "dimensions")
    bench = bench_search(space, fitting, queries=queries, k=k, where=where, seed=seed, progress=progress)
    results = [replace(r, memory_bytes=4 * info.dim * bench.count) if r.spec == "exact" else r
               for r in bench.results]
    out = BudgetBench(space.name, bench.count, bench.dim, limit, bench.n_queries, k, where, results,
                      [(s, b) for s, b in lower.items() if s not in fitting])
    ok = [r for r in results if out.fits(r)]
    best = min(ok, key=lambda r: (-r.recall, r.memory_bytes, r.spec), default=None)
    return replace(out, chosen=best.spec if best else None)
