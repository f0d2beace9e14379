"""Search a stored space: choose exact or HNSW, apply filters, return hits."""

from __future__ import annotations

import functools
import operator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.core.exact import exact_search, normalize_rows
from repspace.core.hits import Hit, SearchPlan, SearchResult
from repspace.core.limits import DEFAULT_EF, EXACT_MAX_ITEMS, MAX_EF
from repspace.core.progress import Progress
from repspace.core.space import Metric
from repspace.core.printable import excerpt
from repspace.core.store.validate import check_query_direction
from repspace.engines.search.hnsw import HNSWParams
from repspace.engines.search.hubness import (
    NeighbourStatistics,
    parse_method,
    rescore,
    statistics_from_neighbours,
)
from repspace.engines.search.specs import IndexSpec, parse_spec
from repspace.workflows.search.hnsw import (
    DEFAULT_HNSW,
    ensure_hnsw,
    ensure_sharded_hnsw,
    index_paths,
    sharded_paths,
)
from repspace.workflows.search.hits import hits_for
from repspace.workflows.search.hubness_statistics import POOL, ensure_statistics
from repspace.workflows.search.persist import IndexNotReady, reuse_token, still_reused
from repspace.workflows.search.selection import _GATHERED, _allowed_bits, _allowed_mask, _gathered  # noqa: F401
from repspace.workflows.search.query_checks import check_queries, plain_query
from repspace.workflows.search.request import Method, SearchRequest, check_method, vector_template

if TYPE_CHECKING:
    from repspace.core.filters import Filter
    from repspace.core.space import SpaceInfo
    from repspace.core.store import Space

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
    return _knn(space, queries, k, where=where, method=method, ef=ef, hnsw=hnsw, index=index, progress=progress)


def _knn(space: Space, queries: Any, k: int, *, where: str | Filter | None, method: Method, ef: int | None,
         hnsw: HNSWParams | None, index: str | IndexSpec | None, progress: Progress | None,
         info: SpaceInfo | None = None, checked: bool = False) -> KnnResult:
    """:func:`knn`; ``info`` the space's description the caller has just read (one version check per
    call), ``checked`` when ``queries`` is a float32 (1, dim) array the caller has checked.

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
            EXACT_US_PER_MAC, GRAPH_US_PER_EF, GRAPH_US_PER_EF_DIM, GRAPH_MASK_FACTOR, DEFAULT_EF, MAX_EF)


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
    """The beam of a graph searched with a mask: ``ef * (total / matches) ** 0.75``, up to :data:`MAX_EF`.

    The exponent is the smallest that keeps a filtered search's recall@10 at least
    at the unfiltered search's for the same base ef on GloVe's rare words (the hard
    case); a linear widening costs more time for little more recall (BENCHMARKS.md,
    "Figures behind the defaults").
    """
    return int(min(MAX_EF, max(ef, ef * (total / max(matches, 1)) ** 0.75)))


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




def search_space(
    space: Space,
    query: str | np.ndarray | SearchRequest | None = None,
    k: int = 10,
    *,
    encoder: Any = None,
    progress: Progress | None = None,
    explain: bool = False,
    **options: Any,
) -> SearchResult:
    """Search a space by text, by stored id, or by vector.

    Parameters
    ----------
    query : str, array, dict or SearchRequest, optional
        A text (embedded with the query side, ``encode_queries``, of the
        space's own encoder, from its provenance), a vector of the space's
        dimension, a ``{feature: weight}`` map (a sparse space's query; see
        :func:`repspace.workflows.search.sparse.search_sparse`), or a whole
        :class:`~repspace.workflows.search.request.SearchRequest` (then no other option).
    k : int
        How many results.
    **options
        The other fields of :class:`~repspace.workflows.search.request.SearchRequest`:
        ``id`` (search with a stored item's vector, the item left out), ``where``,
        ``method``, ``ef``, ``hnsw``, ``index`` (see :func:`knn`: ``method`` and ``index``
        both choose how to search, give one), ``hybrid`` / ``bm25`` / ``fusion`` /
        ``lexical_weight`` (BM25 fused with the dense ranking, or alone: text queries only),
        ``mmr`` (λ in [0, 1], over a pool of ``max(4k, 50)`` nearest items), ``hubness`` and
        ``kappa`` (re-rank the plain top 100 by a hubness-reduced similarity, with each item's
        neighbour statistics cached beside the store, see
        :mod:`repspace.workflows.search.hubness_statistics`). Every rule is checked before a
        text query is embedded (loading an encoder can take seconds).
    encoder : an :class:`~repspace.engines.encoders.Encoder` to embed a text query with its
        ``encode_queries`` (default: re-created from the space's provenance).
    explain : accepted for older callers; the result always carries its plan.

    Returns
    -------
    SearchResult
        The hits, best first (a read-only sequence of :class:`Hit`), and the :class:`SearchPlan`.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> from repspace import Store
    >>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("t", dim=2)
    >>> _ = sp.add(["a", "b", "c"], [[1, 0], [0.9, 0.1], [0, 1]], metadata=[{"y": 1}, {"y": 2}, {"y": 3}])
    >>> [h.id for h in search_space(sp, id="a", k=2)]
    ['b', 'c']
    >>> res = search_space(sp, np.array([1.0, 0.0]), k=3, where="y >= 2")
    >>> [h.id for h in res.hits], res.plan.method
    (['b', 'c'], 'exact')
    """
    if isinstance(query, SearchRequest):
        if options or k != 10:
            raise InputError("give a SearchRequest or search options, not both")
        req = query
    else:
        template = None
        if isinstance(query, np.ndarray) and space.layout == "dense":  # a layout is fixed when a space is made
            template = vector_template(k, options)
        if template is not None and template.hubness is None and template.mmr is None and template.candidates is None:
            return _vector_search(space, query, template, progress)  # the loop of one query per call
        req = SearchRequest.of(query, k, **options)
    if space.layout == "sparse":
        from repspace.workflows.search.sparse import search_sparse

        return search_sparse(space, req)
    if space.layout == "multivector":
        from repspace.workflows.search.multivector import search_multivector

        return search_multivector(space, req, encoder=encoder)
    if req.sparse is not None or req.candidates is not None:
        what = ("a sparse query searches a sparse space" if req.sparse is not None
                else "candidates (a MUVERA shortlist) apply to multi-vector spaces")
        raise InputError(f"{what}; space {space.name!r} holds dense vectors of {space.dim} numbers (give a vector, "
                         "a text or an id)")
    k = req.k
    exclude = None
    if req.id is not None:
        vec = space.vectors_of([req.id])
        exclude, k_ask = req.id, k + 1
    elif req.text is not None:
        if req.bm25:  # lexical only: the query is never embedded
            vec = None
        else:
            if encoder is None:  # the space's own encoder, and its fitted transforms if it is derived
                from repspace.workflows.stored_transforms import encoder_for_space

                encoder = encoder_for_space(space)
            # the query side of the encoder (e5 embeds queries with 'query: ', documents with 'passage: ')
            vec = (getattr(encoder, "encode_queries", None) or encoder.encode)([req.text])
        k_ask = k
    else:
        vec, k_ask = np.asarray(req.vector), k
        if vec.ndim > 2 or (vec.ndim == 2 and vec.shape[0] != 1):
            raise InputError(f"search takes one query vector, not an array of shape {vec.shape} "
                             "(knn searches a batch)")
    plain = plain_query(vec, space.dim, space.metric) if req.id is None and not (req.bm25 or req.hybrid) else None
    if plain is None and vec is not None and space.metric is Metric.COSINE:  # a zero query: every cosine 0/0
        check_query_direction(vec, space.dim, "the query text, embedded," if req.text is not None else
                              f"the vector of id {excerpt(req.id)}" if req.id is not None else "the query vector")
    dense = {"where": req.where, "method": req.method, "ef": req.ef, "hnsw": req.hnsw, "index": req.index}
    generation = None
    if req.bm25 or req.hybrid:
        assert req.text is not None
        rows, scores, plan = _lexical_or_hybrid(space, req.text, vec if req.hybrid else None, k_ask,
                                                fusion=req.fusion or "rrf",
                                                lexical_weight=1.0 if req.lexical_weight is None
                                                else req.lexical_weight, progress=progress, **dense)
    elif req.hubness is not None:
        q = np.asarray(vec, dtype=np.float32).reshape(1, -1)
        rows, scores, plan = search_hubness(space, q, k_ask, req.hubness, kappa=req.kappa,
                                            knn_options={**dense, "progress": progress})
    elif req.mmr is not None:
        rows, scores, plan = _mmr(space, vec, k_ask, req.mmr, progress=progress, length=req.mmr_length, **dense)
    else:  # one version check for the search and its hits: both belong to the generation it read
        info = space.info()
        generation = info.generation
        result = _knn(space, vec if plain is None else plain, k_ask, progress=progress, info=info,
                      checked=plain is not None, **dense)
        rows, scores, plan = result.rows[0], result.scores[0], result.plan
    if not np.size(rows):
        return SearchResult((), plan)
    hits = hits_for(space, rows, scores, exclude=exclude,
                    generation=space.info().generation if generation is None else generation)[:k]
    return SearchResult(tuple(hits), plan)


def _vector_search(space: Space, vec: np.ndarray, req: SearchRequest, progress: Progress | None) -> SearchResult:
    """:func:`search_space` of a plain vector query (no hubness, no MMR; ``req`` validated, its ``id``
    a stand-in for ``vec``): one version check, the search, the hits from that generation."""
    plain = plain_query(vec, space.dim, space.metric)
    if plain is None:
        if vec.ndim > 2 or (vec.ndim == 2 and vec.shape[0] != 1):
            raise InputError(f"search takes one query vector, not an array of shape {vec.shape} "
                             "(knn searches a batch)")
        if space.metric is Metric.COSINE:  # a zero query: every cosine would be 0/0
            check_query_direction(vec, space.dim, "the query vector")
    info = space.info()
    result = _knn(space, vec if plain is None else plain, req.k, where=req.where, method=req.method, ef=req.ef,
                  hnsw=req.hnsw, index=req.index, progress=progress, info=info, checked=plain is not None)
    rows = result.rows[0]
    if not rows.size:
        return SearchResult((), result.plan)
    return SearchResult(tuple(hits_for(space, rows, result.scores[0], generation=info.generation)), result.plan)


#: Candidates each list contributes to a hybrid fusion.
HYBRID_POOL = 100


def _lexical_or_hybrid(space: Space, text: str, vec: np.ndarray | None, k: int, *, where: Any, fusion: str,
                       lexical_weight: float, progress: Any, **dense: Any) -> tuple[np.ndarray, np.ndarray, SearchPlan]:
    from repspace.engines.search.fusion import rrf, weighted_sum
    from repspace.workflows.search.lexical import ensure_lexical

    # fusion and lexical_weight were checked by search_space before the query was embedded
    info = space.info()
    allowed = None
    n_cand = info.count
    if where is not None and (not isinstance(where, str) or where.strip()):
        matches = space.filter_rows(where)
        n_cand = len(matches)
        allowed = np.zeros(info.next_row, dtype=bool)
        allowed[matches] = True
    lex = ensure_lexical(space)
    k = min(k, max(n_cand, 1))  # never more results than items (k = 10**9 allocated 10**9 rows)
    pool = k if vec is None else max(k, HYBRID_POOL)
    l_scores, l_rows = lex.search([text], pool, allowed=allowed)
    if vec is None:
        return l_rows[0], l_scores[0], SearchPlan("bm25", n_cand, info.count, reason="BM25 over the stored texts")
    d = knn(space, vec, max(k, HYBRID_POOL), where=where, progress=progress, **dense)
    if fusion == "rrf":
        f_scores, f_rows = rrf([d.rows[0], l_rows[0]], k, weights=[1.0, lexical_weight])
    else:
        dense_scores = d.scores[0] if space.metric.higher_is_better else -d.scores[0]  # larger = nearer for the sum
        f_scores, f_rows = weighted_sum([(dense_scores, d.rows[0]), (l_scores[0], l_rows[0])], k,
                                        weights=[1.0, lexical_weight])
    plan = SearchPlan(f"hybrid ({fusion}: {d.plan.method} + bm25)", d.plan.candidates, d.plan.total, ef=d.plan.ef,
                      reason=f"{d.plan.reason}; fused with BM25, lexical weight {lexical_weight:g}",
                      index_action=d.plan.index_action)
    return f_rows, f_scores.astype(np.float32), plan


def _mmr(space: Space, vec: np.ndarray, k: int, lambda_: float, *, where: Any, progress: Progress | None,
         length: str | None = None, **dense: Any) -> tuple[np.ndarray, np.ndarray, SearchPlan]:
    from repspace.engines.search.dlmmr import length_mmr
    from repspace.engines.search.mmr import mmr as diversify

    d = knn(space, vec, max(4 * k, 50), where=where, progress=progress, **dense)
    pool = d.rows[0][d.rows[0] >= 0]
    if not len(pool):
        return pool, d.scores[0][:0], d.plan
    q = np.asarray(vec, dtype=np.float32).reshape(-1)
    if length is None:
        relevance, rows = diversify(q, space.read_rows(pool), pool, k, lambda_=lambda_, metric=space.metric.value)
    else:
        lengths = item_lengths(space, pool, length)
        relevance, rows = length_mmr(q, space.read_rows(pool), pool, lengths, k, lambda_=lambda_,
                                     metric=space.metric.value)
    name = "mmr" if length is None else f"dl-mmr ({length})"
    plan = SearchPlan(f"{d.plan.method} + {name}", d.plan.candidates, d.plan.total, ef=d.plan.ef,
                      reason=f"{d.plan.reason}; {name} λ={lambda_:g} over the {len(pool)} nearest",
                      index_action=d.plan.index_action)
    return rows, relevance, plan


def item_lengths(space: Space, rows: np.ndarray, field: str) -> np.ndarray:
    """The length of each row for DL-MMR: words of its stored text (``text``) or a numeric metadata field."""
    records = space.records(rows)
    out = np.empty(len(rows))
    for i, row in enumerate(np.asarray(rows).tolist()):
        item_id, text, metadata = records[row]
        value = len((text or "").split()) if field == "text" else metadata.get(field)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value) or value < 0:
            raise InputError(f"--mmr-length {field}: item {excerpt(item_id)} has {excerpt(repr(value))}, "
                             "not a number ≥ 0 (give 'text' or a numeric metadata field)")
        out[i] = float(value)
    return out


def search_hubness(space: Space, query: np.ndarray, k: int, method: str, *, kappa: int = 10,
                   knn_options: dict[str, Any] | None = None) -> tuple[np.ndarray, np.ndarray, Any]:
    """Top ``k`` rows for one query vector by a hubness-reduced similarity; returns rows, scores, plan.

    ``knn_options`` go to :func:`repspace.engines.search.knn` (``where``, ``method``,
    ``ef``, ``hnsw``, ``index``): they choose the plain candidates.
    """
    from repspace.core.hits import SearchPlan

    method = parse_method(method)
    kappa = check_scalar(kappa, "kappa", int, low=1)
    if method == "local-scaling" and space.metric is Metric.IP:
        raise InputError("local scaling needs a non-negative distance; this space's metric is ip")
    opts = dict(knn_options or {})
    where = opts.pop("where", None)
    stats = ensure_statistics(space, kappa)
    cand = knn(space, query, max(k, kappa, POOL), where=where, **opts)
    own = cand if where is None or (isinstance(where, str) and not where.strip()) else knn(space, query, kappa,
                                                                                            **opts)
    if int((own.rows[0] >= 0).sum()) < kappa:
        raise InputError(f"hubness reduction with kappa={kappa} needs more than {kappa} items")
    q_stats = statistics_from_neighbours(own.scores[:1, :kappa], kappa, space.metric)
    rows, raw = cand.rows[0], cand.scores[0]
    valid = rows >= 0
    rows, raw = rows[valid], raw[valid]
    b_stats = stats.at(rows)
    if b_stats is None:  # rows added since the statistics were computed: recompute once
        stats = ensure_statistics(space, kappa)
        b_stats = stats.at(rows)
        if b_stats is None:
            raise InputError("the space changed during the search; search again")
    b2 = NeighbourStatistics(kappa, b_stats.metric, b_stats.r[None], b_stats.sigma[None], b_stats.mu[None],
                             b_stats.sd[None])
    scores, order = rescore(raw[None].astype(np.float64), method, space.metric, q_stats, b2)
    top = order[0, :k]
    plan = cand.plan
    new_plan = SearchPlan(f"{plan.method} + {method}", plan.candidates, plan.total, ef=plan.ef,
                          reason=f"{plan.reason}; {len(rows)} candidates re-ranked by {method} "
                                 f"(kappa={kappa}, {stats.method} neighbour statistics)",
                          index_action=plan.index_action)
    return rows[top], scores[0, top], new_plan
