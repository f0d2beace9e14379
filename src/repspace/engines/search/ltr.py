"""A learning-to-rank reranker: gradient-boosted trees over features of each (query, candidate) pair.

A first stage (dense search) proposes candidates for each query; the reranker
scores every candidate from a few cheap features and orders them by that score
(LightGBM's lambdarank, the learner of S035: boosted trees over the dense score
plus lexical features). The features, in the order of :data:`FEATURES`:

``dense_score``
    The first stage's similarity of the query and the candidate.
``dense_rank``
    The candidate's place in the first stage's list, counting from 1.
``bm25_score``
    The candidate's BM25 score for the query (0 when it holds no query term),
    from a :class:`~repspace.engines.search.lexical.LexicalIndex` over the same documents.
``query_length``, ``doc_length``
    Tokens of the query and of the candidate's text under the index's tokenizer
    (lower case, stop words removed, stemmed: the terms BM25 sees).
``overlap``
    Distinct query terms found in the candidate's text.
``overlap_fraction``
    ``overlap`` over the distinct query terms (0 for a query with none).

Training is reproducible: one thread, LightGBM's ``deterministic`` mode and the
given seed give the same trees on every run (:func:`fit_ranker`). A fitted model
is kept as LightGBM's text format inside a JSON file with its recipe (features,
versions, what it was trained on), so that it can be refused where it does not
belong (:class:`RankerModel`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from repspace.core.atomic import write_atomic
from repspace.core.checks import check_scalar
from repspace.core.errors import InputError, NotFoundError
from repspace.engines.search.lexical import LexicalIndex, tokenize

#: The features of a (query, candidate) pair, in column order (see the module docstring).
FEATURES = ("dense_score", "dense_rank", "bm25_score", "query_length", "doc_length", "overlap",
            "overlap_fraction")
#: Version of the saved model file; another one is refused.
FORMAT = 1
#: Largest relevance grade (LightGBM's default label gains 2**g - 1 stop at grade 30).
MAX_GRADE = 30


def candidate_features(
    queries: Sequence[str],
    rows: Any,
    dense_scores: Any,
    doc_texts: Mapping[int, str],
    lexical: LexicalIndex,
) -> np.ndarray:
    """The features of every (query, candidate) pair.

    Parameters
    ----------
    queries : list of str, m texts
    rows : (m, k) int array
        Each query's candidates, best first by the first stage; ``-1`` is padding.
    dense_scores : (m, k) float array
        The first stage's score of each candidate.
    doc_texts : mapping of row to str
        The text of every candidate row (a row without text counts as an empty text).
    lexical : LexicalIndex
        BM25 over the documents, keyed by the same rows.

    Returns
    -------
    (m, k, len(FEATURES)) float64 array; NaN where the row is padding.

    Examples
    --------
    >>> ix = LexicalIndex.build(["cats purr", "dogs bark loudly", "cats and dogs"], [0, 1, 2])
    >>> f = candidate_features(["cats"], [[2, 0]], [[0.9, 0.5]], {0: "cats purr", 2: "cats and dogs"}, ix)
    >>> dict(zip(FEATURES, f[0, 0].round(3).tolist()))  # doctest: +NORMALIZE_WHITESPACE
    {'dense_score': 0.9, 'dense_rank': 1.0, 'bm25_score': 0.502, 'query_length': 1.0, 'doc_length': 2.0,
     'overlap': 1.0, 'overlap_fraction': 1.0}
    """
    rows, scores = _check_candidates(queries, rows, dense_scores)
    m, k = rows.shape
    out = np.full((m, k, len(FEATURES)), np.nan)
    if m == 0 or k == 0:
        return out
    q_tokens = tokenize(list(queries), lexical.params)
    needed = sorted({int(r) for r in rows.ravel() if r >= 0})
    missing = [r for r in needed if r not in doc_texts]
    if missing:
        raise InputError(f"no text given for candidate row {missing[0]} ({len(missing)} rows lack a text)")
    texts = [doc_texts[r] or "" for r in needed]
    d_tokens = dict(zip(needed, tokenize(texts, lexical.params))) if needed else {}
    size = max((int(r) for r in needed), default=-1) + 1
    for i, query in enumerate(queries):
        real = rows[i] >= 0
        cand = rows[i][real]
        bm25 = _bm25_of(lexical, query, cand, size)
        terms = set(q_tokens[i])
        feats = np.empty((len(cand), len(FEATURES)))
        feats[:, 0] = scores[i][real]
        feats[:, 1] = np.flatnonzero(real) + 1
        feats[:, 2] = bm25
        feats[:, 3] = len(q_tokens[i])
        for j, r in enumerate(cand):
            toks = d_tokens[int(r)]
            shared = len(terms.intersection(toks))
            feats[j, 4] = len(toks)
            feats[j, 5] = shared
            feats[j, 6] = shared / len(terms) if terms else 0.0
        out[i, real] = feats
    return out


def _bm25_of(lexical: LexicalIndex, query: str, cand: np.ndarray, size: int) -> np.ndarray:
    """BM25 score of each candidate row for ``query`` (0 for a row holding no query term)."""
    if not len(cand):
        return np.zeros(0)
    allowed = np.zeros(size, bool)
    allowed[cand] = True
    s, r = lexical.search([query], k=len(cand), allowed=allowed)
    found = dict(zip(r[0].tolist(), s[0].astype(np.float64).tolist()))
    return np.array([found.get(int(x), 0.0) for x in cand])


def _check_candidates(queries: Sequence[str], rows: Any, dense_scores: Any) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(queries, str):
        raise InputError("queries must be a list of texts, not one string")
    r = np.asarray(rows)
    if r.ndim != 2 or (r.size and not np.issubdtype(r.dtype, np.integer)):
        raise InputError(f"rows must be a (queries, k) integer array, not shape {r.shape} of {r.dtype}")
    s = np.asarray(dense_scores, dtype=np.float64)
    if s.shape != r.shape:
        raise InputError(f"dense scores have shape {s.shape} but rows {r.shape}")
    if r.shape[0] != len(queries):
        raise InputError(f"{len(queries)} queries but candidates for {r.shape[0]}")
    if r.size and r.min() < -1:
        raise InputError("rows hold a negative row other than the padding -1")
    if not np.isfinite(s[r >= 0]).all():
        raise InputError("a dense score is NaN or infinite")
    return r.astype(np.int64), s


@dataclass(frozen=True)
class RankerParams:
    """How the trees are grown (LightGBM's names); the defaults suit a few hundred training queries.

    Parameters
    ----------
    n_estimators : int, ≥ 1
        Most boosting rounds; early stopping on the dev queries may keep fewer.
    learning_rate : float, > 0
    num_leaves : int, ≥ 2
    min_child_samples : int, ≥ 1
    early_stopping : int, ≥ 0
        Rounds without a better dev nDCG@10 before stopping (0: never stop early).
    seed : int

    Examples
    --------
    >>> RankerParams(seed=3).to_dict()["seed"]
    3
    """

    n_estimators: int = 300
    learning_rate: float = 0.05
    num_leaves: int = 15
    min_child_samples: int = 20
    early_stopping: int = 30
    seed: int = 0

    def __post_init__(self) -> None:
        check_scalar(self.n_estimators, "n_estimators", int, low=1)
        check_scalar(self.learning_rate, "learning_rate", float, low=0)
        if not self.learning_rate > 0:
            raise InputError("learning_rate must be > 0")
        check_scalar(self.num_leaves, "num_leaves", int, low=2)
        check_scalar(self.min_child_samples, "min_child_samples", int, low=1)
        check_scalar(self.early_stopping, "early_stopping", int, low=0)
        check_scalar(self.seed, "seed", int)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _flat(features: Any, labels: Any, what: str) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """(pairs, F) features, their grades and the group sizes, padding (NaN rows) left out."""
    x = np.asarray(features, dtype=np.float64)
    y = np.asarray(labels)
    if x.ndim != 3 or x.shape[2] != len(FEATURES):
        raise InputError(f"{what} features must be (queries, k, {len(FEATURES)}), not {x.shape}")
    if y.shape != x.shape[:2]:
        raise InputError(f"{what} grades have shape {y.shape} but the features {x.shape[:2]}")
    if y.size and not np.issubdtype(y.dtype, np.integer):
        raise InputError(f"{what} grades must be integers (graded relevance 0..{MAX_GRADE}), not {y.dtype}")
    real = ~np.isnan(x).any(axis=2)
    if y.size and (y[real].min(initial=0) < 0 or y[real].max(initial=0) > MAX_GRADE):
        raise InputError(f"{what} grades must lie in 0..{MAX_GRADE}")
    if not np.isfinite(x[real]).all():
        raise InputError(f"{what} features hold an infinite value")
    groups = real.sum(axis=1)
    keep = groups > 0
    return x[real], y[real].astype(np.int64), [int(g) for g in groups[keep]]


def fit_ranker(
    train_features: Any,
    train_grades: Any,
    dev_features: Any = None,
    dev_grades: Any = None,
    params: RankerParams | None = None,
) -> tuple[str, int]:
    """Fit LightGBM's lambdarank on the candidates of the training queries.

    Parameters
    ----------
    train_features : (m, k, F) float array from :func:`candidate_features`
    train_grades : (m, k) int array, the graded relevance of each candidate (0: not relevant)
    dev_features, dev_grades : optional, the same for the queries early stopping watches
    params : RankerParams

    Returns
    -------
    model : str, LightGBM's text format of the kept trees
    rounds : int, boosting rounds kept

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(40, 10, len(FEATURES)))
    >>> y = (x[:, :, 2] > 0.5).astype(int)  # relevance follows the BM25 column
    >>> model, rounds = fit_ranker(x, y, params=RankerParams(n_estimators=20, min_child_samples=5))
    >>> s = predict(model, x)
    >>> rounds, bool(np.corrcoef(s.ravel(), x[:, :, 2].ravel())[0, 1] > 0.5)
    (20, True)
    """
    import lightgbm

    p = params or RankerParams()
    x, y, groups = _flat(train_features, train_grades, "training")
    if len(groups) < 2 or not (y > 0).any():
        raise InputError("training needs at least 2 queries with candidates and one relevant candidate")
    ranker = lightgbm.LGBMRanker(
        objective="lambdarank", n_estimators=p.n_estimators, learning_rate=p.learning_rate,
        num_leaves=p.num_leaves, min_child_samples=p.min_child_samples, random_state=p.seed,
        n_jobs=1, deterministic=True, force_row_wise=True, verbose=-1,
    )
    fit: dict[str, Any] = {}
    if dev_features is not None:
        dx, dy, dgroups = _flat(dev_features, dev_grades, "dev")
        if dgroups:
            fit = {"eval_X": (dx,), "eval_y": (dy,), "eval_group": [dgroups], "eval_at": [10]}
            if p.early_stopping:
                fit["callbacks"] = [lightgbm.early_stopping(p.early_stopping, first_metric_only=True,
                                                            verbose=False)]
    ranker.fit(x, y, group=groups, feature_name=list(FEATURES), **fit)
    best = ranker.best_iteration_ or p.n_estimators
    booster = ranker.booster_
    return booster.model_to_string(num_iteration=best), int(best)


def predict(model: str, features: Any) -> np.ndarray:
    """The reranker's score of every pair, (m, k) float64; NaN where the features are padding.

    Examples
    --------
    >>> x = np.random.default_rng(1).normal(size=(30, 8, len(FEATURES)))
    >>> y = (x[:, :, 0] > 0).astype(int)
    >>> model, _ = fit_ranker(x, y, params=RankerParams(n_estimators=5, min_child_samples=5))
    >>> predict(model, x[:2]).shape
    (2, 8)
    """
    import lightgbm

    x = np.asarray(features, dtype=np.float64)
    if x.ndim != 3 or x.shape[2] != len(FEATURES):
        raise InputError(f"features must be (queries, k, {len(FEATURES)}), not {x.shape}")
    out = np.full(x.shape[:2], np.nan)
    real = ~np.isnan(x).any(axis=2)
    if real.any():
        booster = lightgbm.Booster(model_str=model)
        out[real] = booster.predict(x[real], num_threads=1)
    return out


def rerank(rows: Any, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Each query's candidates ordered by the reranker's scores, best first, the ``k`` best kept.

    Equal scores keep the first stage's order. Padding (row -1, score NaN) stays last.

    Examples
    --------
    >>> r, s = rerank(np.array([[4, 7, 9, -1]]), np.array([[0.1, 0.5, 0.1, np.nan]]), k=3)
    >>> r.tolist(), s.tolist()
    ([[7, 4, 9]], [[0.5, 0.1, 0.1]])
    """
    k = check_scalar(k, "k", int, low=1)
    r = np.asarray(rows, dtype=np.int64)
    s = np.where(r >= 0, np.nan_to_num(np.asarray(scores, dtype=np.float64), nan=-np.inf), -np.inf)
    order = np.argsort(-s, axis=1, kind="stable")[:, :k]
    out_r = np.take_along_axis(r, order, axis=1)
    out_s = np.take_along_axis(s, order, axis=1)
    out_s[out_r < 0] = np.nan
    return out_r, out_s


@dataclass(frozen=True)
class RankerModel:
    """A fitted reranker and its recipe: the trees, the features and what they were trained on.

    Attributes
    ----------
    model : str, LightGBM's text format
    recipe : dict
        ``features``, ``format``, ``lightgbm``/``repspace`` versions, ``params`` and
        whatever the trainer adds (the space, the candidates' depth, the lexical
        parameters, the split).

    Examples
    --------
    >>> import tempfile, os
    >>> x = np.random.default_rng(1).normal(size=(30, 8, len(FEATURES)))
    >>> model, _ = fit_ranker(x, (x[:, :, 0] > 0).astype(int), params=RankerParams(n_estimators=5))
    >>> path = os.path.join(tempfile.mkdtemp(), "ranker.json")
    >>> RankerModel.new(model, {"space": {"name": "docs"}}).save(path)
    >>> back = RankerModel.load(path)
    >>> back.recipe["features"] == list(FEATURES), back.recipe["space"], back.model == model
    (True, {'name': 'docs'}, True)
    """

    model: str = field(repr=False)  # the trees: megabytes of text
    recipe: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def new(cls, model: str, recipe: Mapping[str, Any]) -> RankerModel:
        """A model with the features, format and versions added to ``recipe``."""
        from importlib.metadata import PackageNotFoundError, version

        import lightgbm

        try:
            ours = version("repspace")
        except PackageNotFoundError:  # run from a source tree that was never installed
            ours = None
        full = {"format": FORMAT, "features": list(FEATURES), "lightgbm": lightgbm.__version__,
                "repspace": ours, **dict(recipe)}
        return cls(model, full)

    def to_dict(self) -> dict[str, Any]:
        """``{"recipe", "model"}``: what the model file holds."""
        return {"recipe": self.recipe, "model": self.model}

    def save(self, path: str | Path) -> None:
        """Write the model as one JSON file (atomically: a reader sees the old file or the new one)."""
        text = json.dumps(self.to_dict(), indent=1)
        write_atomic(path, lambda f: f.write(text.encode()), durable=True)

    @classmethod
    def load(cls, path: str | Path) -> RankerModel:
        """Read a model written by :meth:`save`; a file of another kind, format or feature set is refused."""
        p = Path(path)
        if not p.is_file():
            raise NotFoundError(f"no reranker model at {p}")
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
            recipe, model = data["recipe"], data["model"]
        except (ValueError, TypeError, KeyError, UnicodeDecodeError):
            raise InputError(f"{p} is not a reranker model (a JSON file written by 'repspace rerank train')") from None
        if not isinstance(recipe, dict) or not isinstance(model, str):
            raise InputError(f"{p} is not a reranker model (a JSON file written by 'repspace rerank train')")
        if recipe.get("format") != FORMAT:
            raise InputError(f"{p}: reranker format {recipe.get('format')!r}, this version reads {FORMAT}")
        if recipe.get("features") != list(FEATURES):
            raise InputError(f"{p}: trained on features {recipe.get('features')}, this version computes "
                             f"{list(FEATURES)}; train it again")
        return cls(model, recipe)
