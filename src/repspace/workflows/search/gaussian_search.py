"""Search a Gaussian space (:mod:`repspace.workflows.ingest.gaussian`) by KL divergence.

A query is a Gaussian: a stored item's own (``id``, the item left out) or a vector of ``2d``
numbers, the mean then the variance. It becomes its KL query vector padded with 0
(:func:`~repspace.engines.search.gaussian.kl_query_vectors`); the space's index (exact or
HNSW over the ``l2`` rows) finds the nearest rows, and each distance ``δ`` is turned back into
the divergence: ``q·x = (‖q‖² + M² − δ²)/2`` and ``KL(q ‖ x) = −(q·x + Σ(1 + ln σq²))/2``
(:func:`~repspace.engines.search.gaussian.kl_from_inner_products`). A hit's score is
``KL(query ‖ item)``: smaller is nearer, as a distance.

Examples
--------
>>> import numpy as np, os, tempfile, json
>>> from repspace.store import Store
>>> from repspace.workflows.ingest.gaussian import ingest_gaussian_file
>>> d = tempfile.mkdtemp(); p = os.path.join(d, "g.jsonl")
>>> with open(p, "w") as f:
...     for i, (m, v) in enumerate([([0, 0], [1, 1]), ([1, 0], [0.5, 2]), ([3, 3], [1, 1])]):
...         _ = f.write(json.dumps({"id": f"g{i}", "mean": m, "var": v}) + "\\n")
>>> store = Store(os.path.join(d, "s.db"))
>>> _ = ingest_gaussian_file(store, "g", p, mean_col="mean", variance_col="var")
>>> [(h.id, round(h.score, 4)) for h in store.space("g").search(id="g0", k=2)]
[('g1', 1.25), ('g2', 9.0)]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.errors import InputError
from repspace.core.hits import SearchPlan, SearchResult
from repspace.engines.search.gaussian import kl_from_inner_products, kl_query_vectors
from repspace.workflows.search.hits import hits_for

if TYPE_CHECKING:
    from repspace.core.store import Space
    from repspace.workflows.search.request import SearchRequest


def recipe_of(space: Space) -> dict[str, Any] | None:
    """The Gaussian layout a space's provenance records, or None for any other space."""
    r = space.provenance.get("gaussian")
    return r if isinstance(r, dict) else None


def gaussians_of_rows(space: Space, rows: Any) -> tuple[np.ndarray, np.ndarray]:
    """The means and variances of stored rows, read back from their KL item vectors."""
    d = int(recipe_of(space)["dim"])  # type: ignore[index]
    x = space.read_rows(rows).astype(np.float64)
    var = 1.0 / x[:, :d]
    return x[:, d:2 * d] * var, var


def search_gaussian(space: Space, req: SearchRequest) -> SearchResult:
    """The items of smallest ``KL(query ‖ item)``; see the module docstring.

    Examples
    --------
    >>> import os, tempfile, json
    >>> from repspace.store import Store
    >>> from repspace.workflows.ingest.gaussian import ingest_gaussian_file
    >>> from repspace.workflows.search.request import SearchRequest
    >>> d = tempfile.mkdtemp(); p = os.path.join(d, "g.jsonl")
    >>> with open(p, "w") as f:
    ...     for i, m in enumerate([[0, 0], [1, 0], [3, 3]]):
    ...         _ = f.write(json.dumps({"id": f"g{i}", "mean": m, "var": [1, 1]}) + "\\n")
    >>> store = Store(os.path.join(d, "s.db"))
    >>> _ = ingest_gaussian_file(store, "g", p, mean_col="mean", variance_col="var")
    >>> res = search_gaussian(store.space("g"), SearchRequest.of([0.9, 0.0, 1.0, 1.0], 1))
    >>> [(h.id, round(h.score, 3)) for h in res]
    [('g1', 0.005)]
    """
    recipe = recipe_of(space)
    assert recipe is not None
    d = int(recipe["dim"])
    if req.text is not None or req.sparse is not None or req.hybrid or req.bm25 or req.mmr is not None or (
            req.hubness is not None or req.rerank is not None):
        raise InputError(f"space {space.name!r} holds Gaussians: search it with a stored id or a vector of its "
                         f"{d} means then {d} variances (no text, sparse, hybrid, bm25, mmr, hubness or rerank)")
    k, exclude = req.k, None
    if req.id is not None:
        mean, var = gaussians_of_rows(space, [space.get([req.id])[0].row])
        k, exclude = k + 1, req.id
    else:
        vec = np.asarray(req.vector, dtype=np.float64).reshape(-1)
        if vec.size != 2 * d:
            raise InputError(f"a query of space {space.name!r} is a Gaussian: {2 * d} numbers ({d} means then "
                             f"{d} variances), not {vec.size}")
        mean, var = vec[None, :d], vec[None, d:]
    q = kl_query_vectors(mean, var)  # refuses a variance <= 0, NaN or inf
    from repspace.workflows.search.dense import knn

    found = knn(space, np.hstack([q, np.zeros((1, 1))]).astype(np.float32), k, where=req.where, method=req.method,
                ef=req.ef, hnsw=req.hnsw, index=req.index)
    rows, dist = found.rows[0], found.scores[0].astype(np.float64)
    keep = rows >= 0
    rows, dist = rows[keep], dist[keep]
    norm = float(recipe["norm"])
    inner = (float(q[0] @ q[0]) + norm ** 2 - dist ** 2) / 2
    kl = kl_from_inner_products(inner[None, :], mean, var)[0]
    plan = found.plan
    new_plan = SearchPlan(f"{plan.method} (gaussian kl)", plan.candidates, plan.total, ef=plan.ef,
                          reason=f"{plan.reason}; Gaussian space: scores are KL(query ‖ item)",
                          index_action=plan.index_action)
    if not len(rows):
        return SearchResult((), new_plan)
    hits = hits_for(space, rows, kl.astype(np.float32), exclude=exclude, generation=space.info().generation)
    return SearchResult(tuple(hits[:req.k]), new_plan)
