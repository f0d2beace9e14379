"""A learned reranker as the last stage of a search: candidates from the dense or the hybrid search, reordered.

A first stage proposes each query's candidates, either the dense search (the space's index,
filters and all) or the hybrid one (dense fused with BM25 by reciprocal rank, as
``repspace search --hybrid``); every candidate gets the features of
:mod:`repspace.engines.search.ltr` (its exact dense similarity to the query, its place in the
first stage's list, its BM25 score, lengths and term overlap) and the model's score orders
them. Training (:func:`repspace.workflows.rerank.train_reranker`) and searching
(:func:`reranked`, what ``search_space(..., rerank=...)`` runs) build the candidates and the
features with the same functions here, so a model sees at search time what it was trained on.

The dense feature is the exact similarity of the query and the candidate's stored vector
(cosine, inner product or Euclidean distance, as the space's metric scores it), for a
candidate the hybrid search found through BM25 alone as for one the dense index found.

Examples
--------
>>> import numpy as np
>>> from repspace.store import example_space
>>> sp = example_space(30, 4, texts=[f"doc {i}" for i in range(30)])
>>> rows, scores = first_stage(sp, ["doc 3"], sp.read_rows([3]), 5, "dense")
>>> int(rows[0, 0]), round(float(scores[0, 0]), 3)
(3, 1.0)
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.checks import check_choice
from repspace.core.errors import InputError, NotFoundError
from repspace.core.hits import SearchPlan
from repspace.core.printable import excerpt
from repspace.core.space import Metric
from repspace.engines.search.fusion import rrf
from repspace.engines.search.ltr import RankerModel, candidate_features, predict, rerank

if TYPE_CHECKING:
    from repspace.core.store import Space
    from repspace.workflows.search.request import SearchRequest

#: Where a reranker's candidates come from: the dense search, or dense fused with BM25 (RRF).
SOURCES = ("dense", "hybrid")
#: Candidates per query when a model does not say (what ``repspace rerank train`` uses by default).
DEFAULT_DEPTH = 100
#: The RRF constant of the hybrid first stage (Cormack et al.'s 60, as ``repspace search --hybrid``).
RRF_C = 60
#: What a reranker's name may be, at start (``repspace serve --reranker NAME=PATH``) and in a search body over
#: HTTP (``"rerank": NAME``, whose JSON schema carries it): printable ASCII but space and ``=``. Written without
#: ``\s``, which Python reads as more characters (U+0085 among them) than a JSON Schema (ECMA) regex does.
RERANKER_NAME_PATTERN = r"^[!-<>-~]+$"
#: Longest reranker name (characters), at start and in a search body.
MAX_RERANKER_NAME = 100


def check_model_space(model: RankerModel, space: Space, path: str) -> None:
    """Refuse a model trained for another space (another uid: other vectors, texts or encoder).

    Examples
    --------
    >>> from repspace.store import example_space
    >>> sp = example_space(5, 2)
    >>> try:
    ...     check_model_space(RankerModel("", {"space": {"name": "docs", "uid": "x"}}), sp, "m.json")
    ... except InputError as e:
    ...     print(str(e).split(":")[0])
    the reranker m.json was trained for space 'docs', not 't'
    """
    trained = model.recipe.get("space") or {}
    if trained.get("uid") != space.uid:
        raise InputError(f"the reranker {path} was trained for space {trained.get('name')!r}, not "
                         f"{space.name!r}: its features (dense scores, BM25 statistics) mean nothing here; "
                         f"train one for this space with 'repspace rerank train'")


def load_rerankers(named: Mapping[str, str | Path]) -> dict[str, RankerModel]:
    """Models by name, each read from its file (what ``repspace serve --reranker NAME=PATH`` loads at start).

    Every name must be one a search body could give (:data:`RERANKER_NAME_PATTERN`, at most
    :data:`MAX_RERANKER_NAME` characters): the names are checked before any file is read, then a
    missing or broken file is refused, all before the service listens.

    Examples
    --------
    >>> load_rerankers({})
    {}
    >>> try:
    ...     load_rerankers({"bm": "no-such-model.json"})
    ... except NotFoundError as e:
    ...     print(e)
    no reranker model at no-such-model.json
    >>> try:
    ...     load_rerankers({"caf\u00e9": "model.json"})
    ... except InputError as e:
    ...     print(str(e).split(":")[0])
    the reranker name 'café' is not one a search can give as "rerank"
    """
    for name in named:
        check_reranker_name(name)
    return {name: RankerModel.load(path) for name, path in named.items()}


def check_reranker_name(name: object) -> str:
    """``name`` if a search body could name it (``"rerank": NAME``), else :class:`InputError` saying why.

    Examples
    --------
    >>> check_reranker_name("cran-v2")
    'cran-v2'
    >>> try:
    ...     check_reranker_name("a b")
    ... except InputError as e:
    ...     print(str(e).split(":")[0])
    the reranker name 'a b' is not one a search can give as "rerank"
    """
    if not isinstance(name, str) or len(name) > MAX_RERANKER_NAME or not re.fullmatch(RERANKER_NAME_PATTERN, name):
        raise InputError(f"the reranker name {excerpt(name)} is not one a search can give as \"rerank\": 1 to "
                         f"{MAX_RERANKER_NAME} printable ASCII characters but space and '='")
    return name


def served_reranker(rerankers: Mapping[str, RankerModel], name: str) -> RankerModel:
    """The service's reranker called ``name`` (a client names one; it never gives a path to read).

    Examples
    --------
    >>> try:
    ...     served_reranker({}, "lgbm")
    ... except NotFoundError as e:
    ...     print(e)
    no reranker named 'lgbm' here (this service serves none; start it with --reranker NAME=PATH)
    """
    if name not in rerankers:
        known = ", ".join(sorted(rerankers)) or "none"
        raise NotFoundError(f"no reranker named {name!r} here (this service serves {known}; start it with "
                            "--reranker NAME=PATH)")
    return rerankers[name]


def reranker_for(space: Space, model: str | Path | RankerModel) -> RankerModel:
    """The model a search names (a file, or one loaded), refused unless it was trained for ``space``.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> try:
    ...     reranker_for(example_space(5, 2), "no-such-model.json")
    ... except NotFoundError as e:
    ...     print(e)
    no reranker model at no-such-model.json
    """
    loaded = model if isinstance(model, RankerModel) else RankerModel.load(model)
    check_model_space(loaded, space, Path(model).name if not isinstance(model, RankerModel) else "given")
    return loaded


def exact_scores(space: Space, vectors: Any, rows: np.ndarray) -> np.ndarray:
    """The space's similarity of each query vector and each of its candidate rows, float64; NaN at padding.

    Cosine and inner product as similarities, Euclidean as the distance (what the space's search
    reports as a hit's score).
    """
    q = np.asarray(vectors, dtype=np.float64).reshape(len(rows), -1)
    out = np.full(rows.shape, np.nan)
    real = rows >= 0
    if not real.any():
        return out
    wanted = np.unique(rows[real])
    x = space.read_rows(wanted).astype(np.float64)
    at = np.searchsorted(wanted, rows[real])
    qi = np.nonzero(real)[0]
    if space.metric is Metric.COSINE:
        x /= np.maximum(np.linalg.norm(x, axis=1, keepdims=True), np.finfo(np.float64).tiny)
        q = q / np.maximum(np.linalg.norm(q, axis=1, keepdims=True), np.finfo(np.float64).tiny)
    if space.metric is Metric.L2:
        diff = x[at] - q[qi]
        out[real] = np.sqrt(np.einsum("ij,ij->i", diff, diff))
    else:
        out[real] = np.einsum("ij,ij->i", x[at], q[qi])
    return out


def first_stage(space: Space, texts: Sequence[str], vectors: Any, depth: int, source: str) -> tuple[
        np.ndarray, np.ndarray]:
    """Each query's top ``depth`` candidates of an exact dense search, or of it fused by RRF with BM25's top
    ``depth`` (``source`` ``hybrid``); rows (m, depth) and their exact dense scores (:func:`exact_scores`)."""
    from repspace.workflows.search.lexical import ensure_lexical
    from repspace.workflows.search.dense import knn

    check_choice(source, "the candidate source", SOURCES)
    q = np.asarray(vectors, dtype=np.float32).reshape(len(texts), -1)
    rows = knn(space, q, depth, method="exact").rows
    if source == "hybrid":
        _, bm25_rows = ensure_lexical(space).search(list(texts), k=depth)
        _, rows = rrf([rows, bm25_rows], depth, c=RRF_C)
    rows = np.asarray(rows, dtype=np.int64)
    return rows, exact_scores(space, q, rows)


def row_texts(space: Space, rows: np.ndarray) -> dict[int, str]:
    """The stored text of every row in ``rows`` ("" for an item without one)."""
    wanted = sorted({int(r) for r in np.asarray(rows).ravel() if r >= 0})
    items = space.items(wanted) if wanted else {}
    return {r: (items[r].text or "") if r in items else "" for r in wanted}


def features_of(space: Space, texts: Sequence[str], rows: np.ndarray, scores: np.ndarray,
                lexical_params: Mapping[str, Any]) -> tuple[np.ndarray, Any]:
    """The features of every candidate (:func:`~repspace.engines.search.ltr.candidate_features`) and the BM25
    index they were read from."""
    from repspace.workflows.search.lexical import ensure_lexical

    lexical = ensure_lexical(space, **dict(lexical_params))
    return candidate_features(list(texts), rows, scores, row_texts(space, rows), lexical), lexical


def reranked(space: Space, req: SearchRequest, vec: Any, k: int, *, progress: Any = None,
             **dense: Any) -> tuple[np.ndarray, np.ndarray, SearchPlan]:
    """:func:`~repspace.workflows.search.search_space`'s last stage for ``req.rerank``: the dense candidates
    (the hybrid ones with ``req.hybrid``) of the query, at the model's depth (at least ``k``), reordered by the
    model; returns rows, the model's scores and the plan.

    ``dense`` are the search's ``where``, ``method``, ``ef``, ``hnsw`` and ``index``: they choose the dense
    candidates, as without a reranker.
    """
    from repspace.workflows.search.dense import knn
    from repspace.workflows.search.hybrid import lexical_or_hybrid

    model = reranker_for(space, req.rerank)
    assert req.text is not None  # the request's rules: a reranker needs a text
    depth = max(int(model.recipe.get("candidates", DEFAULT_DEPTH)), k)
    if req.hybrid:
        rows, _, plan = lexical_or_hybrid(space, req.text, vec, depth, fusion=req.fusion or "rrf",
                                           lexical_weight=1.0 if req.lexical_weight is None else req.lexical_weight,
                                           progress=progress, **dense)
    else:
        found = knn(space, vec, depth, progress=progress, **dense)
        rows, plan = found.rows[0], found.plan
    rows = np.asarray(rows, dtype=np.int64)[None, :]
    feats, _ = features_of(space, [req.text], rows, exact_scores(space, vec, rows),
                           model.recipe.get("lexical") or {})
    top, scores = rerank(rows, predict(model.model, feats), k=depth)
    keep = top[0] >= 0
    trained = model.recipe.get("first_stage", "dense")
    new_plan = SearchPlan(f"{plan.method} + rerank", plan.candidates, plan.total, ef=plan.ef,
                          reason=f"{plan.reason}; the {int(keep.sum())} candidates reordered by the reranker "
                                 f"(trained on {trained} candidates)", index_action=plan.index_action)
    return top[0][keep], scores[0][keep].astype(np.float32), new_plan
