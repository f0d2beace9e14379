"""Search a multi-vector space: MUVERA's first stage, then exact MaxSim rescoring (or exact MaxSim over all).

:func:`search_multivector` is what :func:`~repspace.workflows.search.search_space` runs for a
space whose layout is ``multivector``: the same :class:`~repspace.workflows.search.request.SearchRequest`
in, the same :class:`~repspace.core.hits.SearchResult` out. The query is a stored item's
token matrix (``id``), a text put through the space's recorded recipe
(:func:`~repspace.workflows.token_recipe.text_query_tokens`) or a token matrix given whole
(``vector``: ``(n_tokens, dim)``, or one ``dim``-vector as a single token). By default the
``candidates`` best documents by MUVERA FDE inner product (:data:`~repspace.core.limits.MUVERA_CANDIDATES`,
at least ``k``) are rescored by exact MaxSim; ``method="exact"`` (``--exact``) scores every
document by exact MaxSim; a ``where`` filter scores its matches exactly. Every path ends in
:func:`~repspace.engines.search.muvera.maxsim_search`'s float64 pass, so scores and order do
not depend on the path or the CPU. The FDE index is built once per generation and kept in memory
(:func:`multivector_index`). What only a dense space has is refused with one line.

Examples
--------
>>> import tempfile, os
>>> import numpy as np
>>> from repspace import Store
>>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("tok", dim=2, metric="ip",
...                                                                   layout="multivector")
>>> _ = sp.add(["a", "b", "c"], [[[1.0, 0.0]], [[0.0, 1.0]], [[0.6, 0.8], [1.0, 0.0]]])
>>> res = sp.search(np.array([[0.0, 1.0], [1.0, 0.0]]), k=2, candidates=2)
>>> [(h.id, round(h.score, 4)) for h in res], res.plan.method
([('c', 1.8), ('a', 1.0)], 'muvera>maxsim')
>>> [h.id for h in sp.search(id="a", k=1, method="exact")]
['c']
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.cache import LRUCache
from repspace.core.errors import InputError
from repspace.core.hits import SearchPlan, SearchResult
from repspace.core.limits import MUVERA_CANDIDATES
from repspace.engines.search.muvera import FDEConfig, MultiVectorIndex, fde_documents, maxsim_search
from repspace.workflows.search.hits import hits_for
from repspace.workflows.search.request import SearchRequest

if TYPE_CHECKING:
    from repspace.core.store import Space

__all__ = ["multivector_index", "multivector_query", "search_multivector"]

#: Multi-vector indexes kept in memory (each holds a space's token vectors and their FDEs).
MULTIVECTOR_INDEXES = 2
_INDEXES: LRUCache[tuple[np.ndarray, MultiVectorIndex]] = LRUCache(MULTIVECTOR_INDEXES)


def multivector_index(space: Space) -> tuple[np.ndarray, MultiVectorIndex, str]:
    """The live rows of a multi-vector space and their MUVERA index, built once per generation.

    Returns ``(rows, index, action)``: document ``i`` of the index is row ``rows[i]``; ``action``
    is ``built`` or ``loaded`` (from memory), as a search plan reports it. The FDEs use
    :class:`~repspace.engines.search.muvera.FDEConfig`'s defaults (k_sim 4, d_proj 16, 10 repetitions).

    Examples
    --------
    >>> import tempfile, os
    >>> from repspace import Store
    >>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("m", dim=2, metric="ip",
    ...                                                                   layout="multivector")
    >>> _ = sp.add(["a", "b"], [[[1.0, 0.0]], [[0.0, 1.0], [1.0, 0.0]]])
    >>> rows, index, action = multivector_index(sp)
    >>> rows.tolist(), len(index), action, multivector_index(sp)[2]
    ([0, 1], 2, 'built', 'loaded')
    """
    rows, sets = space.multivector_rows()
    key = (space.uid, space.info().generation)
    held = _INDEXES.get(key)
    if held is not None and held[0] is rows:
        return held[0], held[1], "loaded"
    config = FDEConfig(dim=space.dim)
    fdes = fde_documents(config, sets.to_list()) if len(rows) else np.zeros((0, config.fde_dim), np.float32)
    index = MultiVectorIndex(config, fdes, sets.tokens, sets.offsets)
    _INDEXES.put(key, (rows, index))
    return rows, index, "built"


def _refuse_dense_options(req: SearchRequest, name: str) -> None:
    """One line for each option that has no meaning on a multi-vector space."""
    dense_only = [("hybrid", req.hybrid), ("bm25", req.bm25), ("mmr", req.mmr is not None),
                  ("hubness", req.hubness is not None), ("ef", req.ef is not None), ("hnsw", req.hnsw is not None),
                  ("method hnsw", req.method == "hnsw"), ("a sparse query", req.sparse is not None),
                  ("index", req.index is not None)]
    for option, given in dense_only:
        if given:
            raise InputError(f"{option} does not apply to multi-vector space {name!r}: it is searched by MaxSim "
                             "(MUVERA's shortlist rescored, or every document with --exact)")
    if req.candidates is not None and req.method == "exact":
        raise InputError("candidates (the MUVERA shortlist) do not combine with exact search, which scores every "
                         "document")


def multivector_query(space: Space, req: SearchRequest, encoder: Any = None) -> tuple[np.ndarray, str | None]:
    """The request's query as a ``(n_tokens, dim)`` float32 token matrix, and the id to leave out.

    Examples
    --------
    >>> import tempfile, os
    >>> from repspace import Store
    >>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("m", dim=2, metric="ip",
    ...                                                                   layout="multivector")
    >>> _ = sp.add(["a"], [[[1.0, 0.0], [0.0, 1.0]]])
    >>> q, leave_out = multivector_query(sp, SearchRequest.of(None, id="a"))
    >>> q.shape, leave_out, multivector_query(sp, SearchRequest.of([0.5, 0.25]))[0].tolist()
    ((2, 2), 'a', [[0.5, 0.25]])
    """
    if req.id is not None:
        return space.tokens_of([req.id])[0], req.id
    if req.text is not None:
        from repspace.workflows.token_recipe import text_query_tokens

        return text_query_tokens(space, req.text), None
    arr = np.asarray(req.vector)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
        raise InputError("the query is not a matrix of numbers")
    if arr.ndim == 1:
        arr = arr[None, :]  # one vector: a query of one token
    if arr.ndim != 2 or arr.shape[1] != space.dim or arr.shape[0] == 0:
        raise InputError(f"the query has shape {arr.shape}; multi-vector space {space.name!r} takes a "
                         f"(n_tokens, {space.dim}) matrix of token vectors")
    with np.errstate(over="ignore", invalid="ignore"):
        q = np.ascontiguousarray(arr, dtype=np.float32)
    if not np.isfinite(q).all():
        raise InputError("the query's token vectors have NaN or inf (or values beyond float32)")
    return q, None


def search_multivector(space: Space, req: SearchRequest, encoder: Any = None) -> SearchResult:
    """Answer one request over a multi-vector space: the top ``k`` by MaxSim.

    Parameters
    ----------
    space : a multi-vector Space
    req : SearchRequest
        ``id``, ``text`` (encoded by the space's recipe) or ``vector`` (a token matrix), with
        ``k``, ``where``, ``candidates`` (MUVERA's shortlist, default
        :data:`~repspace.core.limits.MUVERA_CANDIDATES`) and ``method`` ``auto`` (MUVERA, then
        exact MaxSim) or ``exact`` (exact MaxSim over every document). Anything else is refused.
    encoder : unused (a text goes through the space's recorded recipe); accepted as search_space passes it.

    Examples
    --------
    >>> import tempfile, os
    >>> from repspace import Store
    >>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("m", dim=2, metric="ip",
    ...                                                                   layout="multivector")
    >>> _ = sp.add(["a", "b"], [[[1.0, 0.0]], [[0.0, 1.0]]], metadata=[{"y": 1}, {"y": 2}])
    >>> res = search_multivector(sp, SearchRequest.of([1.0, 0.0], k=2, where="y >= 2"))
    >>> [h.id for h in res], res.plan.method
    (['b'], 'maxsim-exact')
    """
    _refuse_dense_options(req, space.name)
    q, exclude = multivector_query(space, req, encoder)
    rows, index, action = multivector_index(space)
    total = len(rows)
    k = req.k + (exclude is not None)
    shortlist = None
    if req.where is not None and (not isinstance(req.where, str) or req.where.strip()):
        matches = space.filter_rows(req.where)
        pos = np.searchsorted(rows, matches)
        shortlist = pos[(pos < total) & (rows[np.minimum(pos, max(total - 1, 0))] == matches)]
    n_cand = total if shortlist is None else len(shortlist)
    if n_cand == 0:
        return SearchResult((), SearchPlan("maxsim-exact", 0, total, reason="nothing to search"))
    k_ask = min(k, n_cand)
    if req.candidates is not None and req.candidates < req.k:
        raise InputError(f"candidates ({req.candidates}) must be at least k ({req.k}): the shortlist holds the hits")
    candidates = max(req.candidates or MUVERA_CANDIDATES, k_ask)
    if shortlist is not None:
        scores, found = maxsim_search(index, [q], k_ask, shortlist=shortlist[None, :])
        method, reason = "maxsim-exact", f"exact MaxSim over the filter's {n_cand} matches"
    elif req.method == "exact" or candidates >= total:
        scores, found = maxsim_search(index, [q], k_ask)
        method = "maxsim-exact"
        reason = ("exact MaxSim over every document" if req.method == "exact"
                  else f"the shortlist ({candidates}) holds every document: exact MaxSim over all")
    else:
        scores, found = maxsim_search(index, [q], k_ask, candidates=candidates)
        method, n_cand = "muvera>maxsim", candidates
        reason = (f"MUVERA shortlist of {candidates} by FDE inner product ({index.config.fde_dim} dimensions), "
                  "rescored by exact MaxSim")
    keep = found[0] >= 0
    hits = hits_for(space, rows[found[0][keep]], scores[0][keep], exclude=exclude)[: req.k]
    return SearchResult(tuple(hits), SearchPlan(method, n_cand, total, reason=reason, index_action=action))
