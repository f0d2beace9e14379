"""``repspace layers pooling``: pooling recipes of one model compared on a task, every recipe from one pass.

Each recipe (:mod:`repspace.engines.encoders.pooling_recipes`: mean, cls, max, last, first-last, layer mixes)
pools the same forward passes over the task's sentences; each is scored as ``repspace eval sts`` scores an
encoder (:func:`repspace.engines.eval.sts.sts`: Spearman with its bootstrap interval over pairs). With
``whiten`` each recipe is also scored after BERT-whitening (:class:`~repspace.engines.transforms.Whiten`,
Su et al. 2021) fitted on the task's own sentences, as that paper does.

Examples
--------
>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "pairs.csv")
>>> _ = open(path, "w").write("a cat sat,a cat was sitting,5\\na dog ran,the market fell,0\\n"
...                            "birds sing,birds are singing,4.5\\nhe cooks,the car is red,0.5\\n")
>>> c = compare_poolings("hf-layers:minilm", "sts", path, recipes="mean,cls", bootstrap=0)
>>> [(row.recipe, row.whitened) for row in c.rows]
[('mean', False), ('cls', False)]
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from repspace.core.checks import check_choice
from repspace.core.errors import InputError
from repspace.engines.encoders.pooling_recipes import DEFAULT_RECIPES

__all__ = ["PoolingComparison", "PoolingScore", "compare_poolings"]

#: Tasks the comparison scores.
POOLING_TASKS = ("sts",)


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

    Examples
    --------
    >>> c = PoolingComparison("hf-layers:m", "sts:t", "spearman", 9,
    ...                       (PoolingScore("mean", "mean", (6,), False, 0.8, None, None),
    ...                        PoolingScore("cls", "cls", (6,), False, 0.7, None, None)))
    >>> c.best.recipe, c.to_dict()["best"]
    ('mean', 'mean')
    """

    encoder: str
    task: str
    metric: str
    n_pairs: int
    rows: tuple[PoolingScore, ...]

    @property
    def best(self) -> PoolingScore:
        """The row with the highest score (the first on a tie)."""
        return max(self.rows, key=lambda r: r.score)

    def to_dict(self) -> dict[str, Any]:
        """``{"encoder", "task", "metric", "n_pairs", "best", "rows": [...]}``."""
        best = self.best
        return {"encoder": self.encoder, "task": self.task, "metric": self.metric, "n_pairs": self.n_pairs,
                "best": best.recipe + (" +whiten" if best.whitened else ""),
                "rows": [r.to_dict() for r in self.rows]}


def compare_poolings(encoder: str, task: str, source: str | Path, *, recipes: str = DEFAULT_RECIPES,
                     whiten: bool = False, bootstrap: int = 1000, seed: int = 0, batch_size: int = 32,
                     encoder_options: dict[str, Any] | None = None) -> PoolingComparison:
    """Score each pooling recipe of ``encoder`` on ``task`` (see the module notes).

    Parameters
    ----------
    encoder : str
        An ``hf-layers:<folder>`` encoder.
    task : {"sts"}
    source : path
        The task's data (``sentence1,sentence2,score`` CSV).
    recipes : str
        Comma-separated recipes (:func:`~repspace.engines.encoders.pooling_recipes.parse_recipes`).
    whiten : bool
        Also score each recipe whitened.
    bootstrap, seed : int
        Resamples of the pairs (0: no interval) and their seed.
    batch_size : int
        Sentences per forward pass.
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
    >>> len(c.rows), c.n_pairs
    (4, 4)
    """
    from repspace.engines.encoders.pooling_recipes import encode_recipes, parse_recipes
    from repspace.engines.eval.sts import load_sts, sts
    from repspace.engines.transforms import Whiten

    from repspace.engines.encoders import get_encoder
    from repspace.engines.encoders.hf_layers import HFLayersEncoder

    check_choice(task, "task", POOLING_TASKS)
    enc = get_encoder(encoder, **(encoder_options or {}))
    if not isinstance(enc, HFLayersEncoder):
        raise InputError(f"pooling recipes need the hidden states of an hf-layers encoder (e.g. hf-layers:minilm), "
                         f"not {encoder}")
    chosen = parse_recipes(recipes, enc.n_layers)
    pairs = load_sts(source)
    vectors = encode_recipes(enc, pairs.texts(), chosen, batch_size=batch_size)
    name = f"sts:{pairs.name}"
    rows = []
    for whitened in (False, True) if whiten else (False,):
        for r in chosen:
            vecs = Whiten().fit_transform(vectors[r.name]) if whitened else vectors[r.name]
            res = sts(lambda texts, v=vecs: v, pairs, name=name, bootstrap=bootstrap, seed=seed)
            ci = res.interval
            rows.append(PoolingScore(r.name, r.pooling, r.layers, whitened, float(res.main_score),
                                     None if ci is None else ci.low, None if ci is None else ci.high))
    return PoolingComparison(encoder, name, "spearman", len(pairs), tuple(rows))
