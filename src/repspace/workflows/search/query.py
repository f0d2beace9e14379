"""Search a stored space by text, stored id or vector: the request's stages, then its hits.

The dense candidates come from :mod:`repspace.workflows.search.dense` (:func:`knn`), BM25 and hybrid
ones from :mod:`repspace.workflows.search.hybrid`; here are the request, MMR, hubness reduction and hits.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.core.hits import SearchPlan, SearchResult
from repspace.core.progress import Progress
from repspace.core.space import Metric
from repspace.core.printable import excerpt
from repspace.core.store.validate import check_query_direction
from repspace.engines.search.hubness import (
    NeighbourStatistics,
    parse_method,
    rescore,
    statistics_from_neighbours,
)
from repspace.workflows.search.hits import hits_for
from repspace.workflows.search.hubness_statistics import POOL, ensure_statistics
from repspace.workflows.search.dense import KnnResult, knn, knn_one, knn_prepared
from repspace.workflows.search.hybrid import lexical_or_hybrid
from repspace.workflows.search.query_checks import plain_query
from repspace.workflows.search.request import SearchRequest, vector_template

if TYPE_CHECKING:
    from repspace.core.store import Space

__all__ = ["KnnResult", "item_lengths", "knn", "search_hubness", "search_space"]


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
        text query is embedded (loading an encoder can take seconds). ``rerank`` (a model file of
        ``repspace rerank train``) reorders the dense candidates, or the hybrid ones with ``hybrid``.
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
    if "gaussian" in space.provenance:  # Gaussian rows searched by KL (workflows/ingest/gaussian.py)
        from repspace.workflows.search.gaussian_search import search_gaussian

        return search_gaussian(space, query if isinstance(query, SearchRequest)
                               else SearchRequest.of(query, k, **options))
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
        if isinstance(query, Mapping) and space.layout == "sparse":  # the same loop over a sparse space
            template = vector_template(k, options)
            if template is not None:
                from repspace.workflows.search.sparse import plain_sparse_query, refuse_dense_options, search_sparse

                refuse_dense_options(template, space.name)
                plain = plain_sparse_query(space, query)
                if plain is not None:
                    return search_sparse(space, template, plain)
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
    if req.rerank is not None:  # the model is read and checked before a text is embedded
        from repspace.workflows.search.rerank_stage import reranker_for

        req = req.model_copy(update={"rerank": reranker_for(space, req.rerank)})
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
    if req.rerank is not None:  # the dense or hybrid candidates, reordered by a learned reranker
        from repspace.workflows.search.rerank_stage import reranked

        rows, scores, plan = reranked(space, req, vec, k_ask, progress=progress, **dense)
    elif req.bm25 or req.hybrid:
        assert req.text is not None
        rows, scores, plan = lexical_or_hybrid(space, req.text, vec if req.hybrid else None, k_ask,
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
        result = knn_prepared(space, vec if plain is None else plain, k_ask, progress=progress, info=info,
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
    if plain is not None:
        rows, scores, plan = knn_one(space, plain, req.k, where=req.where, method=req.method, ef=req.ef,
                                     hnsw=req.hnsw, index=req.index, progress=progress, info=info)
    else:
        result = knn_prepared(space, vec, req.k, where=req.where, method=req.method, ef=req.ef, hnsw=req.hnsw,
                              index=req.index, progress=progress, info=info)
        rows, scores, plan = result.rows[0], result.scores[0], result.plan
    if not len(rows):
        return SearchResult((), plan)
    return SearchResult(tuple(hits_for(space, rows, scores, generation=info.generation)), plan)


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
