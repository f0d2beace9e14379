"""``repspace layers pooling``: pooling recipes of one model compared on a task, every recipe from one pass.

Each recipe (:mod:`repspace.engines.encoders.pooling_recipes`: mean, cls, max, last, first-last, layer mixes)
pools the same forward passes over the task's texts; each is scored as ``repspace eval TASK`` scores an
encoder, by the same evaluator on the recipe's vectors:

==================  ==========================================================================================
``sts``             :func:`repspace.engines.eval.sts.sts`: Spearman, interval over the pairs
``retrieval``       :func:`repspace.engines.eval.retrieval.retrieval` on a BEIR folder: nDCG@10, interval over the
                    queries (documents and queries pooled alike)
``classification``  :func:`repspace.engines.eval.labels.classification` on a labelled file: cross-validated
                    logistic-regression accuracy, interval over the texts
==================  ==========================================================================================

With ``whiten`` each recipe is also scored after BERT-whitening (:class:`~repspace.engines.transforms.Whiten`,
Su et al. 2021) fitted on all the task's own texts (never on labels or judgements), as that paper does.

Examples
--------
>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "pairs.csv")
>>> _ = open(path, "w").write("a cat sat,a cat was sitting,5\\na dog ran,the market fell,0\\n"
...                            "birds sing,birds are singing,4.5\\nhe cooks,the car is red,0.5\\n")
>>> c = compare_poolings("hf-layers:minilm", "sts", path, recipes="mean,cls", bootstrap=0)
>>> [(row.recipe, row.whitened) for row in c.rows], c.unit
([('mean', False), ('cls', False)], 'pairs')
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from repspace.core.checks import check_choice
from repspace.core.errors import InputError
from repspace.engines.encoders.pooling_recipes import DEFAULT_RECIPES

__all__ = ["PoolingComparison", "PoolingScore", "compare_poolings"]

#: Tasks the comparison scores, and the units each score's interval resamples.
POOLING_TASKS = {"sts": "pairs", "retrieval": "queries", "classification": "texts"}


@dataclass(frozen=True)
class PoolingScore:
    """One recipe's score on the task, raw or whitened.

    Examples
    --------
    >>> PoolingScore("mean", "mean", (6,), False, 0.82, 0.80, 0.84).to_dict()["ci"]
    [0.8, 0.84]
    """

    recipe: str
    pooling: str
    layers: tuple[int, ...]
    whitened: bool
    score: float
    ci_low: float | None
    ci_high: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"recipe": self.recipe, "pooling": self.pooling, "layers": list(self.layers),
                "whitened": self.whitened, "score": self.score,
                "ci": None if self.ci_low is None else [self.ci_low, self.ci_high]}


@dataclass(frozen=True)
class PoolingComparison:
    """Every recipe's score on one task (rows: each recipe raw, then whitened when asked).

    ``n_units`` counts what each interval resamples, named by ``unit``: STS pairs, retrieval queries (over
    ``n_texts`` texts: the documents and the queries), classified texts.

    Examples
    --------
    >>> c = PoolingComparison("hf-layers:m", "sts:t", "spearman", 9, "pairs", 18,
    ...                       (PoolingScore("mean", "mean", (6,), False, 0.8, None, None),
    ...                        PoolingScore("cls", "cls", (6,), False, 0.7, None, None)))
    >>> c.best.recipe, c.to_dict()["best"], c.to_dict()["unit"]
    ('mean', 'mean', 'pairs')
    """

    encoder: str
    task: str
    metric: str
    n_units: int
    unit: str
    n_texts: int
    rows: tuple[PoolingScore, ...]

    @property
    def best(self) -> PoolingScore:
        """The row with the highest score (the first on a tie)."""
        return max(self.rows, key=lambda r: r.score)

    def to_dict(self) -> dict[str, Any]:
        """``{"encoder", "task", "metric", "n_units", "unit", "n_texts", "best", "rows": [...]}``."""
        best = self.best
        return {"encoder": self.encoder, "task": self.task, "metric": self.metric, "n_units": self.n_units,
                "unit": self.unit, "n_texts": self.n_texts, "best": best.recipe + (" +whiten" if best.whitened else ""),
                "rows": [r.to_dict() for r in self.rows]}


@dataclass(frozen=True)
class _Task:
    """A loaded task: the texts to pool, how many units it scores, and its evaluator on pooled vectors."""

    texts: list[str]
    n_units: int
    score: Callable[[np.ndarray], Any]  # (len(texts), d) vectors -> TaskResult


def _load_task(task: str, source: str | Path, *, bootstrap: int, seed: int, split: str, text_col: str,
               label_col: str, folds: int) -> _Task:
    """Read the task's data; its evaluator scores vectors given in the order of ``texts``."""
    if task == "sts":
        from repspace.engines.eval.sts import load_sts, sts

        pairs = load_sts(source)
        return _Task(pairs.texts(), len(pairs), lambda v: sts(lambda texts: v, pairs, name=f"sts:{pairs.name}",
                                                             bootstrap=bootstrap, seed=seed))
    if task == "retrieval":
        from repspace.engines.eval.retrieval import load_beir, retrieval

        data = load_beir(source, split)
        n = data.n_documents
        return _Task(data.texts(), data.n_queries,
                     lambda v: retrieval(lambda texts: v[:n], data, encode_queries=lambda texts: v[n:],
                                         bootstrap=bootstrap, seed=seed))
    from repspace.engines.eval.labels import classification, load_labelled

    labelled = load_labelled(source, text_col, label_col)
    return _Task(list(labelled.texts), len(labelled),
                 lambda v: classification(v, labelled.labels, folds=folds, seed=seed, bootstrap=bootstrap,
                                          name=f"classification:{labelled.name}"))


def compare_poolings(encoder: str, task: str, source: str | Path, *, recipes: str = DEFAULT_RECIPES,
                     whiten: bool = False, bootstrap: int = 1000, seed: int = 0, batch_size: int = 32,
                     split: str = "test", text_col: str = "text", label_col: str = "label", folds: int = 5,
                     encoder_options: dict[str, Any] | None = None) -> PoolingComparison:
    """Score each pooling recipe of ``encoder`` on ``task`` (see the module notes).

    Parameters
    ----------
    encoder : str
        An ``hf-layers:<folder>`` encoder.
    task : {"sts", "retrieval", "classification"}
    source : path
        The task's data, as ``repspace eval TASK`` reads it: a ``sentence1,sentence2,score`` CSV, a BEIR folder,
        a labelled CSV or JSON-lines file.
    recipes : str
        Comma-separated recipes (:func:`~repspace.engines.encoders.pooling_recipes.parse_recipes`).
    whiten : bool
        Also score each recipe whitened.
    bootstrap, seed : int
        Resamples of the units (0: no interval) and their seed (also the classification folds' seed).
    batch_size : int
        Texts per forward pass.
    split : str
        Retrieval: the qrels split.
    text_col, label_col : str
        Classification: the columns (keys) of the texts and the labels.
    folds : int
        Classification: cross-validation folds.
    encoder_options : dict, optional
        ``max_length``, ``prompt``.

    Returns
    -------
    PoolingComparison

    Raises
    ------
    InputError
        A non-``hf-layers`` encoder, an unknown task or recipe, a layer out of range, bad data.

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "pairs.csv")
    >>> _ = open(path, "w").write("a cat sat,a cat was sitting,5\\na dog ran,the market fell,0\\n"
    ...                            "birds sing,birds are singing,4.5\\nhe cooks,the car is red,0.5\\n")
    >>> c = compare_poolings("hf-layers:minilm", "sts", path, recipes="mean,first-last", whiten=True, bootstrap=0)
    >>> len(c.rows), c.n_units, c.n_texts
    (4, 4, 8)
    """
    from repspace.engines.encoders import get_encoder
    from repspace.engines.encoders.hf_layers import HFLayersEncoder
    from repspace.engines.encoders.pooling_recipes import encode_recipes, parse_recipes
    from repspace.engines.transforms import Whiten

    check_choice(task, "task", tuple(POOLING_TASKS))
    enc = get_encoder(encoder, **(encoder_options or {}))
    if not isinstance(enc, HFLayersEncoder):
        raise InputError(f"pooling recipes need the hidden states of an hf-layers encoder (e.g. hf-layers:minilm), "
                         f"not {encoder}")
    chosen = parse_recipes(recipes, enc.n_layers)
    loaded = _load_task(task, source, bootstrap=bootstrap, seed=seed, split=split, text_col=text_col,
                        label_col=label_col, folds=folds)
    vectors = encode_recipes(enc, loaded.texts, chosen, batch_size=batch_size)
    rows, name, metric = [], task, ""
    for whitened in (False, True) if whiten else (False,):
        for r in chosen:
            vecs = Whiten().fit_transform(vectors[r.name]) if whitened else vectors[r.name]
            res = loaded.score(vecs)
            name, metric, ci = res.task_name, res.main_metric, res.interval
            rows.append(PoolingScore(r.name, r.pooling, r.layers, whitened, float(res.main_score),
                                     None if ci is None else ci.low, None if ci is None else ci.high))
    return PoolingComparison(encoder, name, metric, loaded.n_units, POOLING_TASKS[task], len(loaded.texts),
                             tuple(rows))
