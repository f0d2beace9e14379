"""Nearest rows of a stored space for query vectors: plan (exact, HNSW, shards, funnel; filters), then search.

:func:`knn` is the dense search every other search of a stored space builds on (a text, an id,
hybrid, MMR, hubness, set queries, rerankers: :mod:`repspace.workflows.search.query` and its
siblings); it returns rows and scores, not hits. A request's plan is kept per space description,
so a loop of one query per call plans once (:func:`knn_prepared`).
"""

from __future__ import annotations

import functools
import operator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.checks import check_scalar
from repspace.core.exact import exact_search, normalize_rows
from repspace.core.hits import SearchPlan
from repspace.core.limits import DEFAULT_EF, EXACT_MAX_ITEMS, MAX_EF
from repspace.core.progress import Progress
from repspace.core.space import Metric
from repspace.engines.search.hnsw import HNSWParams
from repspace.engines.search.specs import IndexSpec, parse_spec
from repspace.workflows.search.hnsw import (
    DEFAULT_HNSW,
    ensure_hnsw,
    ensure_sharded_hnsw,
    index_paths,
    sharded_paths,
)
from repspace.workflows.search.persist import IndexNotReady, reuse_token, still_reused
from repspace.workflows.search.selection import _GATHERED, _allowed_bits, _allowed_mask, _gathered  # noqa: F401
from repspace.workflows.search.query_checks import check_queries
from repspace.workflows.search.request import Method, check_method

if TYPE_CHECKING:
    from repspace.core.filters import Filter
    from repspace.core.space import SpaceInfo
    from repspace.core.store import Space

__all__ = ["KnnResult", "knn", "knn_one", "knn_prepared"]

#: With a filter, exact search over the matches is chosen when it costs less than the graph
#: (:func:`_exact_is_cheaper`), or when the filter keeps at most this share of the space
#: (a graph searched with a mask that selective loses recall; BENCHMARKS.md, "One query per call").
EXACT_MAX_SELECTIVITY = 0.02
#: Cost model of one filtered query, microseconds (fitted on one thread; BENCHMARKS.md, "Figures behind
#: the defaults"): exact search costs this per multiply-add of matches x dim (FAISS's one-query scan) ...
EXACT_US_PER_MAC = 1.18e-4
#: ... and an HNSW search costs ef x (GRAPH_US_PER_EF + GRAPH_US_PER_EF_DIM x dim) unfiltered,
#: GRAPH_MASK_FACTOR times that with a mask.
GRAPH_US_PER_EF = 2.4
GRAPH_US_PER_EF_DIM = 0.006
GRAPH_MASK_FACTOR = 1.3
#: A graph searched with a mask widens its beam by (total / matches) ** this (:func:`_widened`).
WIDENING_EXPONENT = 0.5

@dataclass(frozen=True)
class KnnResult:
    """Rows and scores, (m, k) each; row -1 where fewer than k were found.

    Examples
    --------
    >>> from repspace.store import example_space, example_vectors
    >>> sp = example_space(300, 16)
    >>> res = knn(sp, example_vectors(2, 16, seed=1), 3, method="exact")
    >>> res.rows.shape, res.scores.shape, res.scores.dtype, res.plan.method
    ((2, 3), (2, 3), dtype('float32'), 'exact')
    >>> res = knn(sp, sp.vectors_of(["i0"]), 3, method="exact")  # an item's own vector finds its row first
    >>> int(res.rows[0, 0]), round(float(res.scores[0, 0]), 3)
    (0, 1.0)
    """

    rows: np.ndarray
    scores: np.ndarray
    plan: SearchPlan

    def to_dict(self) -> dict[str, Any]:
        """Rows, scores (one list per query) and the plan, as JSON values."""
        return {"rows": self.rows.tolist(), "scores": self.scores.tolist(), "plan": self.plan.to_dict()}


def knn(
    space: Space,
    queries: np.ndarray,
    k: int = 10,
    *,
    where: str | Filter | None = None,
    method: Method = "auto",
    ef: int | None = None,
    hnsw: HNSWParams | None = None,
    index: str | IndexSpec | None = None,
    progress: Progress | None = None,
) -> KnnResult:
    """Nearest rows of ``space`` for a batch of query vectors.

    Parameters
    ----------
    space : Space
    queries : (m, dim) array
    k : int
    where : filter expression, optional (see :mod:`repspace.core.filters`)
    method : ``auto`` (exact up to 50,000 items or for selective filters, HNSW
        beyond), ``exact`` or ``hnsw``.
    ef : HNSW search beam (default 64, raised as a filter gets more selective; at most
        4096, and at least ``k``). ``k`` beyond the number of items returns every item.
    hnsw : HNSW construction parameters (default M=32, efConstruction=100).
    index : an index spec (``exact``, ``hnsw32``, ``hnsw32,shards4``, ``int8>rescore4``,
        ``binary>rescore8``, ``pca64>rerank``, ``prefix64,hnsw32>rerank``,
        ``ivf1024,pq32>rerank``; see :mod:`repspace.engines.search.specs`).
        Both ``method`` and ``index`` choose how to search: an index with a
        ``method`` other than ``auto`` is refused (:class:`InputError`).
        Funnels read the float vectors of their shortlist from the store (two
        tiers).

    Examples
    --------
    >>> import numpy as np
    >>> from repspace.store import example_space
    >>> sp = example_space(vectors=[[0, 0], [1, 0], [5, 5]], metric="l2")
    >>> r = knn(sp, np.array([[0.9, 0.0]]), k=2)
    >>> r.rows.tolist(), r.plan.method
    ([[1, 0]], 'exact')
    """
    return knn_prepared(space, queries, k, where=where, method=method, ef=ef, hnsw=hnsw, index=index, progress=progress)


def knn_prepared(space: Space, queries: Any, k: int, *, where: str | Filter | None, method: Method, ef: int | None,
         hnsw: HNSWParams | None, index: str | IndexSpec | None, progress: Progress | None,
         info: SpaceInfo | None = None, checked: bool = False) -> KnnResult:
    """:func:`knn` for a caller that has read the space's description (``info``: one version check per
    call) or checked the query (``checked``: ``queries`` is a float32 (1, dim) array whose checks passed).

    The plan of a request (how to search, the filter's matches, the index, its mask) is kept
    per request and space description (:func:`_plan_key`): a loop of one query per call plans once.
    """
    space.require_dense("knn over a batch of vectors")
    key = _plan_key(space, k, where, method, ef, hnsw, index)
    plan = _PLANS.get(key) if key is not None else None
    if plan is not None:  # this very request was planned and checked before: only the query is new
        q = queries if checked else check_queries(queries, space.dim)
        if info is None:
            info = space.info()
        if plan.info is not info or (plan.token is not None and not still_reused(plan.token)):
            plan = None
    if plan is None:
        k = check_scalar(k, "k", int, low=1)
        _check_ef(ef)
        check_method(method, index, hnsw)
        spec = parse_spec(index) if index is not None else None
        q = queries if checked else check_queries(queries, space.dim)
        if info is None:
            info = space.info()
        plan = _plan(space, k, where, method, ef, hnsw, spec, progress, info)
        if key is not None and plan.reusable:
            if len(_PLANS) >= PLAN_CACHE:
                _PLANS.clear()
            _PLANS[key] = plan
    return _run(space, q, plan, progress)


def knn_one(space: Space, q: np.ndarray, k: int, *, where: str | Filter | None, method: Method, ef: int | None,
            hnsw: HNSWParams | None, index: str | IndexSpec | None, progress: Progress | None,
            info: SpaceInfo) -> tuple[list[int], list[float], SearchPlan]:
    """:func:`knn_prepared` of one checked query (``q`` a float32 ``(1, dim)`` array whose checks passed,
    ``info`` the description just read): its rows and scores as lists, best first (-1 rows where fewer
    were found), and the plan.

    The loop of one query per call: a kept unfiltered HNSW plan over a cosine or inner-product space
    goes straight to :meth:`~repspace.engines.search.hnsw.HNSWIndex.search_one`, with no array, mask
    or result object made that the hits do not need; anything else is :func:`knn_prepared`'s. Both
    give the same rows and scores.

    Examples
    --------
    >>> from repspace.store import example_space, example_vectors
    >>> sp = example_space(300, 16)
    >>> q = example_vectors(1, 16, seed=1)
    >>> rows, scores, plan = knn_one(sp, q, 3, where=None, method="auto", ef=None, hnsw=None, index="hnsw16",
    ...                              progress=None, info=sp.info())
    >>> rows == knn(sp, q, 3, index="hnsw16").rows[0].tolist(), plan.method
    (True, 'hnsw')
    """
    key = _plan_key(space, k, where, method, ef, hnsw, index)
    plan = _PLANS.get(key) if key is not None else None
    if (plan is not None and plan.method == "hnsw" and plan.allowed is None and plan.info is info
            and space.metric is not Metric.L2 and (plan.token is None or still_reused(plan.token))):
        scores, rows = plan.loaded.index.search_one(q, plan.k, plan.ef)
        if rows[-1] != -1 and all(map(operator.gt, scores, scores[1:])):  # in order, no equal scores: as they are
            return rows, scores, plan.plan
        r, sc = _score_then_row(np.array([rows], np.int64), np.array([scores], np.float32), space.metric)
        return r[0].tolist(), sc[0].tolist(), plan.plan
    result = knn_prepared(space, q, k, where=where, method=method, ef=ef, hnsw=hnsw, index=index, progress=progress,
                          info=info, checked=True)
    return result.rows[0].tolist(), result.scores[0].tolist(), result.plan


#: Plans of repeated requests kept (a few searches alternating; emptied when full).
PLAN_CACHE = 256
#: Request (and planner settings) -> its :class:`_Plan` for the space description it was made for.
_PLANS: dict[tuple[Any, ...], _Plan] = {}
#: Types of request values a plan is kept for (hashable, compared with their types in the key).
_KEYED_TYPES = frozenset({type(None), int, str, HNSWParams, IndexSpec})


def _plan_key(space: Space, k: Any, where: Any, method: Any, ef: Any, hnsw: Any, index: Any) -> tuple[Any, ...] | None:
    """What a plan depends on beyond the space's description: the request's values with their types
    (``True`` is not ``ef=1``) and the planner's settings as they are now (tests change them between
    calls); None when a value is of another type (a parsed filter: planned on every call)."""
    keyed = _KEYED_TYPES
    if (type(k) is not int or type(where) not in keyed or type(ef) not in keyed or type(hnsw) not in keyed
            or type(index) not in keyed or type(method) is not str):
        return None
    return (space.uid, k, where, method, type(ef), ef, hnsw, index, EXACT_MAX_ITEMS, EXACT_MAX_SELECTIVITY,
            EXACT_US_PER_MAC, GRAPH_US_PER_EF, GRAPH_US_PER_EF_DIM, GRAPH_MASK_FACTOR, WIDENING_EXPONENT, DEFAULT_EF,
            MAX_EF)


@dataclass(slots=True)
class _Plan:
    """How one request searches one space description: what :func:`_run` needs, resolved once.

    ``info`` the description it was made for (compared by identity: a new one means the space may
    have changed); ``token`` the index's :func:`reuse_token`; ``reusable``: may serve the next request.
    """

    info: SpaceInfo
    method: str  # exact, hnsw, shards, funnel, or none (nothing to search)
    k: int
    ef: int | None
    spec: IndexSpec | None
    candidates: np.ndarray | None
    plan: SearchPlan
    loaded: Any = None
    allowed: np.ndarray | None = None
    token: tuple[Any, ...] | None = None
    reusable: bool = True


def _plan(space: Space, k: int, where: str | Filter | None, method: Method | str, ef: int | None,
          hnsw: HNSWParams | None, spec: IndexSpec | None, progress: Progress | None, info: SpaceInfo) -> _Plan:
    """Choose how to search (exact, a graph, shards, a funnel), load or build the index, read the
    filter's matches: everything of a search but the query's own work. Arguments checked."""
    if spec is not None:
        if spec.kind == "exact":
            method = "exact"
        elif spec.kind == "hnsw" and spec.shards is not None:
            method = "shards"
            ef = ef or spec.ef
        elif spec.kind == "hnsw" and spec.codes is None:
            method, hnsw = "hnsw", _hnsw_params(spec.m)
            ef = ef or spec.ef
        else:
            method = "funnel"
    total = info.count
    candidates: np.ndarray | None = None
    if where is not None and (not isinstance(where, str) or where.strip()):
        candidates = space.filter_rows(where, generation=info.generation)
    n_cand = total if candidates is None else len(candidates)
    if n_cand == 0:
        return _Plan(info, "none", k, None, spec, candidates,
                     SearchPlan("exact", n_cand, total, reason="nothing to search"))
    k = min(k, n_cand)  # never more results than items: a huge k costs nothing beyond the whole space
    ef_used = max(min(ef or DEFAULT_EF, MAX_EF), k)
    if candidates is not None:
        ef_used = max(_widened(ef_used, n_cand, total), k)
    selective = candidates is not None and (n_cand / total <= EXACT_MAX_SELECTIVITY
                                            or _exact_is_cheaper(n_cand, space.dim, ef_used))
    if space.metric is Metric.POINCARE:  # no FAISS index measures hyperbolic distance
        if method != "auto" and method != "exact":
            space.metric.require_vector_space(f"{spec if spec is not None else method} search")
        method, reason = "exact", "Poincare distance: exact search (no index measures it)"
    elif method == "auto":
        if total <= EXACT_MAX_ITEMS:
            method, reason = "exact", f"{total} items <= {EXACT_MAX_ITEMS}: exact is fast and exact"
        elif selective:
            method, reason = "exact", f"filter keeps {n_cand} of {total} items: exact over the matches"
        else:
            method, reason = "hnsw", f"{n_cand} candidates of {total}: HNSW"
    elif selective and method != "exact":
        # A graph or a funnel searched with a mask this selective finds fewer of its rows than the
        # planner promises; exact search over the matches is exact and faster.
        reason = (f"filter keeps {n_cand} of {total} items: exact over the matches, not "
                  f"{spec if spec is not None else method} (recall 1 where a selective mask costs an index recall)")
        method = "exact"
    else:
        reason = _requested(spec if spec is not None else method)
    if method == "funnel":  # planned on every call by its own path (ensure_funnel)
        assert spec is not None
        return _Plan(info, "funnel", k, ef, spec, candidates, SearchPlan(str(spec), n_cand, total, ef=ef,
                                                                         reason=reason))
    reusable = True
    try:
        if method == "shards":  # one graph per shard of rows: fan-out, then the top k of all (IndexShards)
            assert spec is not None and spec.shards is not None
            params = HNSWParams(m=spec.m)
            loaded: Any = ensure_sharded_hnsw(space, params, spec.shards, progress=progress, info=info,
                                              recheck=False)
            path, plan_method = sharded_paths(space, params, spec.shards)[0], str(spec)
        elif method == "hnsw":
            loaded = ensure_hnsw(space, hnsw, progress=progress, info=info, recheck=False)
            path, plan_method = index_paths(space, hnsw or DEFAULT_HNSW)[0], "hnsw"
    except IndexNotReady as e:  # a read-only store builds nothing: exact search, which needs no index
        # not kept: an index built meanwhile by a writer serves the next call
        method, reason, reusable = "exact", f"{reason}; {e}: exact search instead", False
    if method == "exact":
        return _Plan(info, "exact", k, None, spec, candidates, SearchPlan("exact", n_cand, total, reason=reason),
                     reusable=reusable)
    token = reuse_token(path, info, loaded)
    # The mask covers the rows the index holds; rows another writer adds meanwhile are not in it.
    allowed = _allowed_bits(space, info, loaded.stamp.rows, candidates, loaded.needs_mask)
    return _Plan(info, method, k, ef_used, spec, candidates,
                 SearchPlan(plan_method, n_cand, total, ef=ef_used, reason=reason, index_action=loaded.action),
                 loaded, allowed, token, reusable=token is not None)


def _run(space: Space, q: np.ndarray, plan: _Plan, progress: Progress | None) -> KnnResult:
    """Search the (checked) queries ``q`` as ``plan`` says."""
    method, k = plan.method, plan.k
    if method == "hnsw" or method == "shards":
        scores, rows = plan.loaded.index.search(q, k, plan.ef, plan.allowed)
        if space.metric is Metric.L2:
            scores = np.sqrt(np.maximum(scores, 0))
        rows, scores = _score_then_row(np.asarray(rows, dtype=np.int64), np.asarray(scores, dtype=np.float32),
                                       space.metric)
        return KnnResult(rows, scores, plan.plan)
    if method == "exact":
        rows, scores = _exact(space, q, k, plan.candidates, plan.info, plan.info.count)
        return KnnResult(rows, scores, plan.plan)
    if method == "funnel":
        assert plan.spec is not None
        p = plan.plan
        try:
            return _funnel(space, q, k, plan.spec, plan.candidates, p.candidates, p.total, plan.ef, p.reason,
                           progress, plan.info)
        except IndexNotReady as e:  # a read-only store builds nothing: exact search, which needs no index
            rows, scores = _exact(space, q, k, plan.candidates, plan.info, p.total)
            return KnnResult(rows, scores, SearchPlan("exact", p.candidates, p.total,
                                                      reason=f"{p.reason}; {e}: exact search instead"))
    m = q.shape[0]  # nothing to search
    return KnnResult(np.full((m, 0), -1, np.int64), np.zeros((m, 0), np.float32), plan.plan)


@functools.lru_cache(maxsize=64)
def _hnsw_params(m: int) -> HNSWParams:
    """The construction parameters of ``hnsw{m}`` (checked once: a search loop names its index per call)."""
    return HNSWParams(m=m)


@functools.lru_cache(maxsize=256)
def _requested(how: IndexSpec | str) -> str:
    """A plan's reason when the caller chose the index or method (its text built once per choice)."""
    return f"{how} requested"


def _check_ef(ef: Any) -> None:
    check_scalar(ef, "ef", int, low=1, none=True)


def _widened(ef: int, matches: int, total: int) -> int:
    """The beam of a graph searched with a mask: ``ef * (total / matches) ** WIDENING_EXPONENT``, up to
    :data:`MAX_EF`.

    The square root is the smallest exponent tried that keeps a filtered search's recall@10 at least at
    the unfiltered search's for the same base ef on GloVe's rare words (the hard case: 0.934 unfiltered,
    0.945 with a filter keeping 50%); 0.75 bought 0.956 there for a sixth more time, and a linear widening
    1.3-4x the time for little more recall (BENCHMARKS.md, "Figures behind the defaults").
    """
    return int(min(MAX_EF, max(ef, ef * (total / max(matches, 1)) ** WIDENING_EXPONENT)))


def _exact_is_cheaper(matches: int, dim: int, ef: int) -> bool:
    """Whether exact search over a filter's matches costs less than a masked graph search at ``ef``
    (the cost model above)."""
    exact = matches * dim * EXACT_US_PER_MAC
    graph = ef * (GRAPH_US_PER_EF + GRAPH_US_PER_EF_DIM * dim) * GRAPH_MASK_FACTOR
    return exact <= graph


def _score_then_row(rows: np.ndarray, scores: np.ndarray, metric: Metric) -> tuple[np.ndarray, np.ndarray]:
    """Each query's results by score, equal scores to the lower row, padding (-1) last.

    FAISS leaves equal distances in the order its graph search met them, which depends on the
    graph and so on FAISS's SIMD level; exact search puts them by row.
    """
    if rows.shape[0] == 1:  # one query (the per-call path): plain lists check it in a third of the time
        r, sc = rows[0].tolist(), scores[0].tolist()
        if r[-1:] != [-1] and all(map(operator.lt if metric is Metric.L2 else operator.gt, sc, sc[1:])):
            return rows, scores
    real = rows >= 0
    key = np.where(real, scores if metric is Metric.L2 else -scores, np.inf)
    step = np.diff(key, axis=1)
    if (step > 0).all():  # already in order with no equal scores (the usual case): nothing to reorder
        return rows, scores
    order = np.lexsort((np.where(real, rows, np.iinfo(np.int64).max), key), axis=-1)
    return np.take_along_axis(rows, order, axis=1), np.take_along_axis(scores, order, axis=1)


def _funnel(space: Space, q: np.ndarray, k: int, spec: IndexSpec, candidates: np.ndarray | None, n_cand: int,
            total: int, ef: int | None, reason: str, progress: Progress | None, info: Any) -> KnnResult:
    from repspace.workflows.search.indexes import ensure_funnel
    from repspace.workflows.search.vectorfile import ensure_vector_file

    loaded = ensure_funnel(space, spec, progress=progress, info=info, recheck=False)
    allowed = _allowed_mask(space, loaded.stamp.rows, candidates, loaded.needs_mask)
    index = loaded.index.with_search_params(spec)
    fetch, prepared, vectors = None, False, None
    if spec.exact_rerank:  # the rescoring tier: the space's vectors in a memory-mapped file
        try:
            tier = ensure_vector_file(space, info=info, recheck=False).index
            fetch, prepared = tier.read, tier.normalized or space.metric is not Metric.COSINE
            vectors = tier.array() if prepared else None
        except IndexNotReady:  # a read-only store without a current vector file: the store's own blocks
            fetch, prepared = space.read_rows, space.metric is not Metric.COSINE
    scores, rows = index.search(q, k, allowed=allowed, fetch=fetch, ef=ef, prepared=prepared, vectors=vectors)
    return KnnResult(rows.astype(np.int64), scores.astype(np.float32),
                     SearchPlan(str(spec), n_cand, total, ef=ef, reason=reason, index_action=loaded.action))


def _exact(
    space: Space, q: np.ndarray, k: int, candidates: np.ndarray | None, info: Any, total: int
) -> tuple[np.ndarray, np.ndarray]:
    metric = space.metric
    if candidates is not None and total > EXACT_MAX_ITEMS:
        base_rows, base = candidates, _gathered(space, candidates, info)
    else:
        base_rows, vectors = space.rows_and_vectors()
        base = _search_matrix(space, vectors)
        if candidates is not None and len(base_rows):  # both ascending: a gather, not a set test per call
            pos = np.minimum(np.searchsorted(base_rows, candidates), len(base_rows) - 1)
            pos = pos[base_rows[pos] == candidates]  # a match written after the snapshot is left out
            base_rows, base = base_rows[pos], base[pos]
    eff = Metric.IP if metric is Metric.COSINE else metric
    qq = normalize_rows(q) if metric is Metric.COSINE else q
    scores, idx = exact_search(qq, base, k, eff)
    return base_rows[idx], scores


def _search_matrix(space: Space, vectors: np.ndarray) -> np.ndarray:
    """The vectors as searched (normalised for cosine), cached while the space's vectors are the same."""
    if space.metric is not Metric.COSINE:
        return vectors
    cached = space.normalized
    if cached is not None and cached[0] is vectors:
        return cached[1]
    normed = normalize_rows(vectors)
    space.normalized = (vectors, normed)
    return normed
