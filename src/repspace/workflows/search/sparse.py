"""Search a sparse space: the query from a stored id, a ``{feature: weight}`` map or a dense vector, exact.

:func:`search_sparse` is what :func:`~repspace.workflows.search.search_space` runs for a space
whose layout is sparse: the same :class:`~repspace.workflows.search.request.SearchRequest` in,
the same :class:`~repspace.core.hits.SearchResult` out, so ``repspace search SPACE --id X
--json`` reads the same for both layouts. The space's rows are read once per generation into a
:class:`~repspace.engines.search.sparse.SparseIndex` kept in memory (:func:`sparse_index`);
a ``where`` filter restricts the index's search to its matches (scored directly when few, else
over the inverted index with the other rows masked out). What only a dense space has (a
text to embed, HNSW and funnel indexes, hybrid, MMR, hubness reduction) is refused with one line.

Examples
--------
>>> import tempfile, os
>>> from repspace import Store
>>> from repspace.core.sparse import SparseRows
>>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space(
...     "bow", dim=3, metric="ip", layout="sparse", features=["cat", "dog", "fish"])
>>> _ = sp.add(["a", "b", "c"], SparseRows.from_pairs([([0], [1.0]), ([0, 1], [0.5, 2.0]), ([2], [1.0])], 3))
>>> res = sp.search({"cat": 1.0, "dog": 0.5}, k=2)
>>> [(h.id, h.score) for h in res], res.plan.method
([('b', 1.5), ('a', 1.0)], 'sparse-exact')
>>> [h.id for h in sp.search(id="a", k=1)]
['b']
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.cache import LRUCache
from repspace.core.errors import InputError
from repspace.core.hits import SearchPlan, SearchResult
from repspace.core.printable import excerpt
from repspace.engines.search.seismic import is_seismic_spec, parse_seismic_spec
from repspace.engines.search.sparse import SparseIndex, SparseQuery, sparse_query
from repspace.workflows.search.hits import hits_for
from repspace.workflows.search.request import SearchRequest

if TYPE_CHECKING:
    from repspace.core.space import SpaceInfo
    from repspace.core.store import Space

__all__ = ["plain_sparse_query", "refuse_dense_options", "search_sparse", "sparse_index", "sparse_request_query"]

#: Sparse indexes kept in memory (each holds a space's rows twice: as rows and as posting lists).
SPARSE_INDEXES = 4
_INDEXES: LRUCache[tuple[np.ndarray, SparseIndex]] = LRUCache(SPARSE_INDEXES)


def sparse_index(space: Space, info: SpaceInfo | None = None) -> tuple[np.ndarray, SparseIndex, str]:
    """The live rows of a sparse space and their index, built once per generation: ``(rows, index, action)``.

    ``action`` is ``built`` or ``loaded`` (from memory), as a search plan reports it; ``info``: the
    space's description as the caller just read it (one version check less).

    Examples
    --------
    >>> import tempfile, os
    >>> from repspace import Store
    >>> from repspace.core.sparse import SparseRows
    >>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("s", dim=3, layout="sparse")
    >>> _ = sp.add(["a", "b"], SparseRows.from_pairs([([0], [1.0]), ([2], [2.0])], 3))
    >>> rows, index, action = sparse_index(sp)
    >>> rows.tolist(), index.n_features, action, sparse_index(sp)[2]
    ([0, 1], 3, 'built', 'loaded')
    """
    if info is None:
        info = space.info()
    rows, data = space.sparse_rows()
    key = (space.uid, info.generation, space.metric.value)
    held = _INDEXES.get(key)
    if held is not None and held[0] is rows:
        return held[0], held[1], "loaded"
    index = SparseIndex(data, metric=space.metric.value)
    _INDEXES.put(key, (rows, index))
    return rows, index, "built"


def refuse_dense_options(req: SearchRequest, name: str) -> None:
    """One line for each option that has no meaning on a sparse space."""
    dense_only = [("hybrid", req.hybrid), ("bm25", req.bm25), ("mmr", req.mmr is not None),
                  ("hubness", req.hubness is not None), ("ef", req.ef is not None), ("hnsw", req.hnsw is not None),
                  ("method hnsw", req.method == "hnsw"), ("candidates", req.candidates is not None)]
    for option, given in dense_only:
        if given:
            raise InputError(f"{option} does not apply to sparse space {name!r}: it is searched exactly over its "
                             "inverted index")
    if req.index is not None:
        spec = str(req.index).strip()
        if spec.lower() != "exact" and not is_seismic_spec(spec):
            raise InputError(f"index {spec!r} does not apply to sparse space {name!r}: it is searched exactly over "
                             "its inverted index (index 'exact' or none) or with Seismic (index 'sparse,seismic')")
        if is_seismic_spec(spec):
            parse_seismic_spec(spec)  # a bad parameter is one line before any work


def sparse_request_query(space: Space, req: SearchRequest) -> tuple[SparseQuery, str | None]:
    """The request's query as a :class:`SparseQuery` over the space's features, and the id to leave out.

    A ``sparse`` map's keys are the space's feature names (tokens) when it has them, else feature
    ids written as text (``"12"``); a ``vector`` gives every feature's weight (its non-zeros are kept).

    Examples
    --------
    >>> import tempfile, os
    >>> from repspace import Store
    >>> from repspace.core.sparse import SparseRows
    >>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("s", dim=3, layout="sparse",
    ...                                                                    features=["x", "y", "z"])
    >>> q, _ = sparse_request_query(sp, SearchRequest.of({"z": 1.0, "x": 0.5}))
    >>> q.indices.tolist(), q.values.tolist()
    ([0, 2], [0.5, 1.0])
    """
    n = space.dim
    if req.text is not None:  # a derived space encodes it by its recipe; any other refuses it in one line
        from repspace.workflows.ingest.derived import derived_text_query

        req = req.model_copy(update={"text": None, "sparse": derived_text_query(space, req.text)})
    if req.id is not None:
        row = space.sparse_of([req.id])
        idx, val = row.row(0)
        if not idx:
            raise InputError(f"item {excerpt(req.id)} has no non-zero weight: it matches nothing")
        return sparse_query(idx, val, n), req.id
    if req.sparse is not None:
        return sparse_query(_feature_ids(space, req.sparse), list(req.sparse.values()), n), None
    vec = np.asarray(req.vector)
    if not (np.issubdtype(vec.dtype, np.number) and not np.issubdtype(vec.dtype, np.complexfloating)):
        raise InputError("the query vector is not numeric")
    vec = vec.reshape(-1) if vec.ndim == 2 and vec.shape[0] == 1 else vec
    if vec.ndim != 1 or len(vec) != n:
        raise InputError(f"the query vector has shape {vec.shape}; sparse space {space.name!r} has {n} features")
    nz = np.flatnonzero(vec)
    return sparse_query(nz, vec[nz].astype(np.float64), n), None


def _feature_ids(space: Space, keys: Iterable[str]) -> list[int]:
    """The feature id of each key of a sparse query: a feature name of the space, else an id written as text."""
    lookup = space.feature_ids()
    keys = list(keys)
    # The common cases in one pass each: every key a feature name, or every key an id written in decimal digits
    # (int() reads every str.isdecimal string; str.isdigit would also take "²", which int() refuses).
    found = list(map(lookup.get, keys)) if lookup is not None else None
    if found is not None and None not in found:
        return found  # type: ignore[return-value]
    if lookup is None and all(map(str.isdecimal, keys)):
        return list(map(int, keys))
    idx = []
    for key in keys:
        j = None if lookup is None else lookup.get(key)
        if j is None:
            if not key.strip().lstrip("-").isdecimal():
                known = "its feature names" if lookup is not None else "feature ids (the space has no names)"
                raise InputError(f"sparse query feature {excerpt(key)} is not one of {known}")
            j = int(key)
        idx.append(j)
    return idx


_STR = frozenset({str})
_NUMBERS = frozenset({float, int})


def plain_sparse_query(space: Space, query: Mapping[Any, Any]) -> SparseQuery | None:
    """A ``{feature: weight}`` map of text keys and finite Python numbers as a checked :class:`SparseQuery`,
    without the request model: what a loop of one sparse query per call pays. None when the map is
    empty or holds anything else (a numpy number, a bool, NaN): the request model then converts it or
    names what is wrong, as for any request.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> sp = example_space(2, 3)
    >>> plain_sparse_query(sp.store.create_space("s", dim=4, layout="sparse"), {"3": 0.5, "1": 2}).indices.tolist()
    [1, 3]
    >>> plain_sparse_query(sp, {"1": float("nan")}) is None
    True
    """
    if not query or not _STR.issuperset(map(type, query)):
        return None
    values = list(query.values())
    if not _NUMBERS.issuperset(map(type, values)):
        return None
    try:  # a NaN or an infinity (or an overflow: the model's) leaves the sum of squares not finite
        if not math.isfinite(math.fsum(map(operator.mul, values, values))):
            return None
    except OverflowError:
        return None
    ids = _feature_ids(space, query)
    # Sorted and checked in Python: for the tens of weights of a query, half the time of the numpy calls
    idx, weights, distinct = ids, values, True
    if not all(map(operator.lt, ids, ids[1:])):  # keys in ascending order need no sort, and are distinct
        order = sorted(range(len(ids)), key=ids.__getitem__)
        idx, weights = [ids[i] for i in order], [values[i] for i in order]
        distinct = all(map(operator.lt, idx, idx[1:]))
    if idx[0] < 0 or idx[-1] >= space.dim or not distinct or not all(weights):
        return sparse_query(idx, weights, space.dim)  # the checks again, for their message or the zeros dropped
    idx, weights = np.array(idx, dtype=np.int64), np.array(weights, dtype=np.float64)
    return SparseQuery(idx, weights)  # what sparse_query returns for it, without its general checks


def search_sparse(space: Space, req: SearchRequest, query: SparseQuery | None = None) -> SearchResult:
    """Answer one request over a sparse space: exact top ``k`` by inner product or cosine.

    Parameters
    ----------
    space : a sparse Space
    req : SearchRequest
        ``id``, ``sparse`` (``{feature id or token: weight}``) or ``vector`` (all ``n_features``
        numbers, zeros included), with ``k`` and ``where``; ``method`` ``auto`` or ``exact`` and
        ``index`` ``exact``, none, or ``sparse,seismic[,...]`` (approximate: Seismic, see
        :mod:`repspace.workflows.search.seismic`). Anything else is refused.
    query : SparseQuery, optional
        The query, checked (:func:`plain_sparse_query`), with ``req``'s options checked by
        :func:`refuse_dense_options`; ``req`` then only carries the options (its ``id`` and
        ``sparse`` are not read).

    Examples
    --------
    >>> import tempfile, os
    >>> from repspace import Store
    >>> from repspace.core.sparse import SparseRows
    >>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("s", dim=3, metric="cosine",
    ...                                                                    layout="sparse")
    >>> _ = sp.add(["a", "b"], SparseRows.from_pairs([([0], [1.0]), ([0, 2], [1.0, 1.0])], 3))
    >>> res = search_sparse(sp, SearchRequest.of({"0": 2.0}, k=2))
    >>> [(h.id, round(h.score, 4)) for h in res], res.plan.method
    ([('a', 1.0), ('b', 0.7071)], 'sparse-exact')
    """
    if query is None:  # a caller giving the query checked the options first
        refuse_dense_options(req, space.name)
    info = space.info()  # read before the rows: their hits' records are of its generation or newer
    generation = info.generation
    q, exclude = (query, None) if query is not None else sparse_request_query(space, req)
    seismic = req.index is not None and is_seismic_spec(req.index)
    no_filter = req.where is None or (isinstance(req.where, str) and not req.where.strip())
    if seismic and no_filter:  # Seismic holds the rows it answers with
        from repspace.workflows.search.seismic import search_seismic

        return search_seismic(space, req, q, exclude, None, info=info)
    rows = space.sparse_rows()[0]
    total = len(rows)
    allowed = None
    n_cand = total
    if not no_filter:
        matches = space.filter_rows(req.where)
        pos = np.searchsorted(rows, matches)
        pos = pos[(pos < len(rows)) & (rows[np.minimum(pos, len(rows) - 1)] == matches)]
        allowed, n_cand = pos, len(pos)
    k = req.k + (exclude is not None)
    if n_cand == 0:
        return SearchResult((), SearchPlan("sparse-exact", 0, total, reason="nothing to search"))
    if seismic:
        from repspace.workflows.search.seismic import search_seismic

        return search_seismic(space, req, q, exclude, allowed, info=info)
    rows, index, action = sparse_index(space, info)
    scores, found = index.search(q, k=min(k, n_cand), allowed=allowed)
    reason = f"exact {space.metric.value} over {space.dim} features: " + index.plan(q, None if allowed is None
                                                                                     else n_cand)

    hits = hits_for(space, rows[found], scores, exclude=exclude, generation=generation)[: req.k]
    return SearchResult(tuple(hits), SearchPlan("sparse-exact", n_cand, total, reason=reason, index_action=action))

