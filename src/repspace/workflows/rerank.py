"""Train a learning-to-rank reranker for a stored space on judged queries, and apply it.

:func:`train_reranker` reads a BEIR folder (``queries.jsonl`` and
``qrels/<split>.tsv``; the space's item ids are the corpus ``_id``), splits its
judged queries into train, dev and test parts with a seed, takes each query's
top :data:`DEFAULT_CANDIDATES` of an exact dense search of the space (queries
embedded with the space's encoder), computes the features of every candidate
(:mod:`repspace.engines.search.ltr`) and fits LightGBM's lambdarank on the
training part, stopping early on the dev part. On the test part it reports
nDCG@10 of four rankings with bootstrap intervals, and paired comparisons of
the reranker against the three others: the dense search, BM25 over the
space's texts, and their reciprocal-rank fusion (RRF, ``c = 60``). The model is
saved with its recipe; :func:`apply_reranker` refuses it on any other space.

Examples
--------
>>> RerankTrainRequest(qrels="data/cranfield-beir", out="ranker.json", seed=1).split_sizes(225)
(135, 45, 45)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.checks import check_choice, check_scalar
from repspace.core.errors import InputError
from repspace.engines.eval.ranking import ndcg_at_k
from repspace.engines.eval.retrieval import load_beir
from repspace.engines.eval.uncertainty import DEFAULT_RESAMPLES, bootstrap_interval, mean_statistic, paired_comparison
from repspace.engines.search.fusion import rrf
from repspace.engines.search.ltr import RankerModel, RankerParams, fit_ranker, predict, rerank
from repspace.workflows.search.rerank_stage import SOURCES, check_model_space, features_of, first_stage, row_texts

if TYPE_CHECKING:
    from repspace.core.store import Space

#: Candidates per query from the dense first stage.
DEFAULT_CANDIDATES = 100
#: Shares of the judged queries held out for early stopping (dev) and for the figures (test).
DEV_FRACTION = 0.2
TEST_FRACTION = 0.2
#: The RRF constant of the hybrid baseline (Cormack et al.'s 60).
RRF_C = 60
#: The rankings the test figures compare, the reranker first.
SYSTEMS = ("reranker", "dense", "bm25", "rrf")


@dataclass(frozen=True)
class RerankTrainRequest:
    """What :func:`train_reranker` trains on and how (the CLI's ``repspace rerank train`` options).

    Parameters
    ----------
    qrels : str, a BEIR folder (``queries.jsonl``, ``qrels/<split>.tsv``)
    out : str, the model file to write
    split : str, the qrels file's name (``test``)
    candidates : int, dense candidates per query
    seed : int, seed of the query split, the trees and the bootstrap
    first_stage : str, where the candidates come from: ``dense`` (exact dense search) or ``hybrid``
        (dense fused with BM25 by RRF, as ``repspace search --hybrid``)
    dev_fraction, test_fraction : float, shares of the queries held out
    n_estimators, learning_rate, num_leaves, min_child_samples, early_stopping : see
        :class:`~repspace.engines.search.ltr.RankerParams`
    bootstrap : int, resamples of the intervals and comparisons (0: none)

    Examples
    --------
    >>> r = RerankTrainRequest(qrels="cranfield-beir", out="ranker.json", seed=2, n_estimators=100)
    >>> r.params().n_estimators, r.params().seed, r.to_dict()["candidates"]
    (100, 2, 100)
    """

    qrels: str
    out: str
    split: str = "test"
    candidates: int = DEFAULT_CANDIDATES
    seed: int = 0
    dev_fraction: float = DEV_FRACTION
    test_fraction: float = TEST_FRACTION
    n_estimators: int = 300
    learning_rate: float = 0.05
    num_leaves: int = 15
    min_child_samples: int = 20
    early_stopping: int = 30
    bootstrap: int = DEFAULT_RESAMPLES
    first_stage: str = "dense"

    def __post_init__(self) -> None:
        check_choice(self.first_stage, "first stage", SOURCES)
        check_scalar(self.candidates, "candidates", int, low=1)
        check_scalar(self.bootstrap, "bootstrap", int, low=0)
        for name in ("dev_fraction", "test_fraction"):
            v = check_scalar(getattr(self, name), name.replace("_", " "), float, low=0, high=1)
            if not 0 < v < 1:
                raise InputError(f"{name.replace('_', ' ')} must lie strictly between 0 and 1, not {v}")
        if self.dev_fraction + self.test_fraction >= 1:
            raise InputError("dev and test fractions must leave queries to train on (their sum < 1)")
        self.params()  # the tree settings are checked here too
        out = Path(self.out)
        if out.is_dir() or not out.name:
            raise InputError(f"--out {self.out} is a folder; give the model file's path (e.g. ranker.json)")
        if out.parent.exists() and not out.parent.is_dir():
            raise InputError(f"--out {self.out}: {out.parent} is not a folder")

    def params(self) -> RankerParams:
        """The learner's settings."""
        return RankerParams(n_estimators=self.n_estimators, learning_rate=self.learning_rate,
                            num_leaves=self.num_leaves, min_child_samples=self.min_child_samples,
                            early_stopping=self.early_stopping, seed=self.seed)

    def split_sizes(self, n: int) -> tuple[int, int, int]:
        """(train, dev, test) query counts of ``n`` judged queries."""
        n_test = int(round(n * self.test_fraction))
        n_dev = int(round(n * self.dev_fraction))
        return n - n_dev - n_test, n_dev, n_test

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class RerankTrainResult:
    """The test figures of a trained reranker and where it was saved.

    Attributes
    ----------
    space : str
    model : str, the file written
    queries : dict, judged queries per part (``train``, ``dev``, ``test``)
    rounds : int, boosting rounds kept
    scores : dict of system to ``{"ndcg_at_10", "low", "high"}`` on the test queries
    comparisons : list of dict, the reranker against each other system
        (:class:`~repspace.engines.eval.uncertainty.Comparison`'s fields)
    missing_documents : int, judged documents not in the space
    recipe : dict, what the model file records
    """

    space: str
    model: str
    queries: dict[str, int]
    rounds: int
    scores: dict[str, dict[str, float | None]]
    comparisons: list[dict[str, Any]]
    missing_documents: int
    recipe: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class RerankApplyRequest:
    """Queries to rerank with a saved model (``repspace rerank apply``).

    Parameters
    ----------
    model : str, the file :func:`train_reranker` wrote
    queries : list of str
    k : int, results per query

    Examples
    --------
    >>> RerankApplyRequest(model="ranker.json", queries=["flow over a wing"], k=5).to_dict()
    {'model': 'ranker.json', 'queries': ['flow over a wing'], 'k': 5}
    """

    model: str
    queries: tuple[str, ...]
    k: int = 10

    def __post_init__(self) -> None:
        qs = (self.queries,) if isinstance(self.queries, str) else tuple(self.queries)
        if not qs:
            raise InputError("give at least one query text")
        for q in qs:
            if not isinstance(q, str) or not q.strip():
                raise InputError("a query must be a non-empty text")
        object.__setattr__(self, "queries", qs)
        check_scalar(self.k, "k", int, low=1)

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "queries": list(self.queries), "k": self.k}


@dataclass(frozen=True)
class RerankApplyResult:
    """Each query's reranked hits: ``{"id", "score", "dense_rank", "text"}`` best first (``dense_rank``: the
    place in the first stage's list)."""

    space: str
    model: str
    results: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# ------------------------------------------------------------------------------ shared steps
def _space_recipe(space: Space) -> dict[str, Any]:
    return {"name": space.name, "uid": space.uid, "dim": int(space.dim), "metric": str(space.metric),
            "encoder": space.provenance.get("encoder")}


def _embedded(space: Space, queries: Sequence[str]) -> np.ndarray:
    """The queries embedded by the query side of the space's encoder."""
    from repspace.workflows.stored_transforms import encoder_for_space

    return np.asarray(encoder_for_space(space).encode_queries(list(queries)))


# ------------------------------------------------------------------------------ training
def train_reranker(space: Space, request: RerankTrainRequest) -> RerankTrainResult:
    """Fit a reranker for ``space`` on judged queries, report its test figures, save it to ``request.out``.

    Nothing is written when an input is refused; the model file is replaced whole.

    Examples
    --------
    >>> import os, tempfile
    >>> from repspace.store import example_space
    >>> sp = example_space(20, 4, texts=[f"doc {i}" for i in range(20)])
    >>> try:
    ...     train_reranker(sp, RerankTrainRequest(qrels=tempfile.mkdtemp(), out="m.json"))
    ... except InputError as e:
    ...     print(str(e).split("(")[-1])
    no qrels for split 'test')
    """
    data = load_beir(request.qrels, request.split)
    ids = list(data.corpus_ids)
    present = space.existing_ids(ids)
    if not present:
        raise InputError(f"space {space.name!r} holds none of the {len(ids)} documents of {request.qrels} "
                         "(its item ids must be the corpus _id)")
    row_of = {it.id: it.row for it in space.get(sorted(present))}
    id_of = {r: i for i, r in row_of.items()}
    n_train, n_dev, n_test = request.split_sizes(len(data.query_ids))
    if min(n_train, n_dev, n_test) < 2:
        raise InputError(f"{len(data.query_ids)} judged queries are too few to split into train, dev and test "
                         "(at least 2 each)")
    order = np.random.default_rng(request.seed).permutation(len(data.query_ids))
    parts = {"test": order[:n_test], "dev": order[n_test:n_test + n_dev], "train": order[n_test + n_dev:]}
    queries = list(data.query_texts)
    vectors = _embedded(space, queries)
    dense_rows, dense_scores = first_stage(space, queries, vectors, request.candidates, "dense")
    rows, scores = dense_rows, dense_scores
    if request.first_stage == "hybrid":
        rows, scores = first_stage(space, queries, vectors, request.candidates, "hybrid")
    feats, lexical = features_of(space, queries, rows, scores, {})
    grades = np.array([[data.qrels[data.query_ids[i]].get(id_of.get(int(r), ""), 0) if r >= 0 else 0
                        for r in rows[i]] for i in range(len(queries))], dtype=np.int64)
    grades = np.maximum(grades, 0)
    model, rounds = fit_ranker(feats[parts["train"]], grades[parts["train"]], feats[parts["dev"]],
                               grades[parts["dev"]], request.params())
    test = parts["test"]
    t_queries = [queries[i] for i in test]
    reranked, _ = rerank(rows[test], predict(model, feats[test]), k=10)
    _, bm25_rows = lexical.search(t_queries, k=request.candidates)
    _, rrf_rows = rrf([dense_rows[test], bm25_rows], k=10, c=RRF_C)
    runs = {"reranker": reranked, "dense": dense_rows[test], "bm25": bm25_rows, "rrf": rrf_rows}
    per_query = {name: np.array([ndcg_at_k([id_of[int(r)] for r in run[j] if r >= 0],
                                           data.qrels[data.query_ids[i]], 10) for j, i in enumerate(test)])
                 for name, run in runs.items()}
    scores, comparisons = _figures(per_query, request.bootstrap, request.seed)
    recipe = {
        "space": _space_recipe(space), "candidates": request.candidates, "first_stage": request.first_stage,
        "lexical": lexical.params.to_dict(),
        "params": request.params().to_dict(), "rounds": rounds,
        "trained_on": {"qrels": Path(request.qrels).name, "split": request.split, "seed": request.seed,
                       "queries": {p: [data.query_ids[i] for i in sorted(ix)] for p, ix in parts.items()}},
        "test_ndcg_at_10": {name: s["ndcg_at_10"] for name, s in scores.items()},
    }
    RankerModel.new(model, recipe).save(request.out)
    missing = sum(1 for q in data.qrels.values() for d in q if d not in present)
    return RerankTrainResult(space=space.name, model=str(request.out),
                             queries={p: len(ix) for p, ix in parts.items()}, rounds=rounds, scores=scores,
                             comparisons=comparisons, missing_documents=missing,
                             recipe={k: v for k, v in recipe.items() if k != "trained_on"})


def _figures(per_query: dict[str, np.ndarray], bootstrap: int, seed: int) -> tuple[
        dict[str, dict[str, float | None]], list[dict[str, Any]]]:
    """Mean nDCG@10 with its interval per system, and the reranker paired against each other system."""
    scores: dict[str, dict[str, float | None]] = {}
    for name in SYSTEMS:
        v = per_query[name]
        ci = bootstrap_interval(mean_statistic, v, n_resamples=bootstrap, seed=seed) if bootstrap else None
        scores[name] = {"ndcg_at_10": float(v.mean()), "low": ci.low if ci else None,
                        "high": ci.high if ci else None}
    comparisons = [paired_comparison(mean_statistic, per_query["reranker"], per_query[name], a="reranker", b=name,
                                     n_resamples=bootstrap, seed=seed).to_dict() for name in SYSTEMS[1:]]
    return scores, comparisons


# ------------------------------------------------------------------------------ applying
def apply_reranker(space: Space, request: RerankApplyRequest) -> RerankApplyResult:
    """Rerank each query's candidates (from the first stage the model was trained on) with a saved model; the
    ``k`` best per query.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> try:
    ...     apply_reranker(example_space(5, 2), RerankApplyRequest(model="nothing.json", queries=("a",)))
    ... except Exception as e:
    ...     print(type(e).__name__)
    NotFoundError
    """
    model = RankerModel.load(request.model)
    check_model_space(model, space, request.model)
    depth = max(int(model.recipe.get("candidates", DEFAULT_CANDIDATES)), request.k)
    source = str(model.recipe.get("first_stage", "dense"))
    rows, scores = first_stage(space, request.queries, _embedded(space, request.queries), depth, source)
    feats, _ = features_of(space, request.queries, rows, scores, model.recipe.get("lexical") or {})
    top, scores = rerank(rows, predict(model.model, feats), k=request.k)
    texts = row_texts(space, top)
    ids = {r: it.id for r, it in space.items(sorted(texts)).items()} if texts else {}
    results = []
    for i, query in enumerate(request.queries):
        hits = [{"id": ids[int(r)], "score": float(s), "dense_rank": int(np.flatnonzero(rows[i] == r)[0]) + 1,
                 "text": texts[int(r)]} for r, s in zip(top[i], scores[i]) if r >= 0]
        results.append({"query": query, "hits": hits})
    return RerankApplyResult(space=space.name, model=str(request.model), results=results)
