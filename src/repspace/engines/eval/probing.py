"""SentEval's probing tasks (Conneau et al. 2018): what a sentence vector tells a linear classifier.

Each task file holds one sentence a line, ``split<TAB>label<TAB>sentence``, the
split ``tr``, ``va`` or ``te`` (SentEval's ``data/probing/*.txt``: sentence
length, word content, tree depth, top constituents, bigram shift, tense,
subject and object number, semantic odd man out, coordination inversion).
:func:`load_probing` reads and checks one; :func:`probing` encodes the
sentences, fits a logistic regression on ``tr`` for each regularisation of
:data:`REGULARISATION`, keeps the one with the best ``va`` accuracy and reports
its ``te`` accuracy, with a bootstrap interval over the test sentences, beside
the majority-class baseline.

SentEval's protocol, mirrored: labels are numbered in sorted order of the
training labels, the regularisation grid is SentEval's scikit-learn grid
(``C`` in 2^-2 .. 2^3), the first best development score wins, and the final
classifier is fitted on ``tr`` only. Differences: the paper's figures come from
an MLP with tuned hidden size and dropout (SentEval's ``usepytorch`` path), not
this logistic regression; SentEval compares development accuracies rounded to
two decimals of a percent (we compare them exactly, so a tie within 0.005% may
choose another ``C``); we let lbfgs run up to :data:`MAX_ITER` iterations
(scikit-learn's default 100 often stops short on raw transformer vectors); and
we z-score each dimension with the training split's mean and standard deviation
before fitting (SentEval feeds the raw vectors), so that one ``C`` grid means
the same for vectors of any scale: unit vectors, raw hidden states of each
layer (whose scales differ by orders of magnitude), averaged word vectors.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.core.files import text_lines
from repspace.engines.eval._encode import as_encode
from repspace.engines.eval._results import TaskResult
from repspace.engines.eval.uncertainty import DEFAULT_RESAMPLES, bootstrap_interval, mean_statistic
from repspace.engines.eval.units import Units

#: SentEval's task files (``data/probing/<stem>.txt``) and the names the paper gives them, in the paper's order.
PROBING_TASKS = {
    "sentence_length": "SentLen", "word_content": "WC", "tree_depth": "TreeDepth",
    "top_constituents": "TopConst", "bigram_shift": "BShift", "past_present": "Tense",
    "subj_number": "SubjNum", "obj_number": "ObjNum", "odd_man_out": "SOMO",
    "coordination_inversion": "CoordInv",
}
#: The splits of a probing file: train, development (chooses the regularisation), test (is scored).
SPLITS = ("tr", "va", "te")
#: Inverse regularisation strengths tried (SentEval's scikit-learn grid, ``[2**t for t in range(-2, 4)]``).
REGULARISATION = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
#: lbfgs iterations allowed per fit.
MAX_ITER = 1000


@dataclass(frozen=True, eq=False)
class ProbingData:
    """One probing task's sentences and labels, split as the file splits them.

    Attributes
    ----------
    name : str
        The task (the file's stem, e.g. ``sentence_length``).
    texts, labels : dict of str to list of str
        Per split (``tr``, ``va``, ``te``), the sentences and their labels, in file order.

    Examples
    --------
    >>> d = ProbingData("toy", {"tr": ["a b", "a b c"], "va": ["x y"], "te": ["p q r"]},
    ...                 {"tr": ["0", "1"], "va": ["0"], "te": ["1"]})
    >>> d.counts(), d.classes
    ({'tr': 2, 'va': 1, 'te': 1}, ['0', '1'])
    """

    name: str
    texts: dict[str, list[str]]
    labels: dict[str, list[str]]

    @property
    def classes(self) -> list[str]:
        """The training labels, sorted: class ``i`` of the classifier is ``classes[i]`` (as SentEval numbers them)."""
        return sorted(set(self.labels["tr"]))

    def counts(self) -> dict[str, int]:
        """Sentences per split."""
        return {s: len(self.texts[s]) for s in SPLITS}

    def to_dict(self) -> dict[str, Any]:
        """A summary (not the sentences): ``{"name", "counts", "classes"}``."""
        return {"name": self.name, "counts": self.counts(), "classes": self.classes}


def load_probing(path: str | Path) -> ProbingData:
    """Read one SentEval probing file: ``split<TAB>label<TAB>sentence`` lines, split ``tr``, ``va`` or ``te``.

    As SentEval reads it, the label is the second field and the sentence the
    last (a line may carry more fields between them). Blank lines are skipped.

    Parameters
    ----------
    path : str or Path
        A UTF-8 text file; the task is named after its stem.

    Returns
    -------
    ProbingData

    Raises
    ------
    InputError
        One line naming ``path:line`` for a line with fewer than three
        fields, an unknown split, an empty label or sentence; and for a file
        without a line of some split, with fewer than two training classes, or
        whose development or test split holds a label the training split lacks.

    Examples
    --------
    >>> from repspace.store import example_file
    >>> d = load_probing(example_file("toy.txt", "tr\\tPAST\\tShe ran .\\ntr\\tPRES\\tShe runs .\\n"
    ...                                           "va\\tPAST\\tHe sat .\\nte\\tPRES\\tHe sits .\\n"))
    >>> d.name, d.counts(), d.labels["te"]
    ('toy', {'tr': 2, 'va': 1, 'te': 1}, ['PRES'])
    >>> load_probing(example_file("bad.txt", "train\\tPAST\\tShe ran .\\n"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: ...bad.txt:1: unknown split 'train' (expected tr, va or te)
    """
    path = Path(path)
    texts: dict[str, list[str]] = {s: [] for s in SPLITS}
    labels: dict[str, list[str]] = {s: [] for s in SPLITS}
    for number, line in text_lines(path, "probing file"):
        if not line.strip():
            continue
        fields = line.split("\t")
        where = f"{path}:{number}"
        if len(fields) < 3:
            raise InputError(f"{where}: expected split<TAB>label<TAB>sentence, got {len(fields)} field"
                             f"{'s' if len(fields) != 1 else ''}")
        split, label, sentence = fields[0].strip(), fields[1].strip(), fields[-1].strip()
        if split not in SPLITS:
            raise InputError(f"{where}: unknown split {split[:40]!r} (expected tr, va or te)")
        if not label:
            raise InputError(f"{where}: the label is empty")
        if not sentence:
            raise InputError(f"{where}: the sentence is empty")
        texts[split].append(sentence)
        labels[split].append(label)
    missing = [s for s in SPLITS if not texts[s]]
    if missing:
        raise InputError(f"probing file {path} has no {', '.join(missing)} line"
                         f"{'s' if len(missing) > 1 else ''} (it needs tr, va and te)")
    seen = set(labels["tr"])
    if len(seen) < 2:
        raise InputError(f"probing file {path}: the training split holds {len(seen)} class; at least 2 are needed")
    for split in ("va", "te"):
        unseen = sorted(set(labels[split]) - seen)
        if unseen:
            raise InputError(f"probing file {path}: the {split} split has label {unseen[0]!r}, absent from tr")
    return ProbingData(path.stem, texts, labels)


def load_probing_dir(path: str | Path, tasks: list[str] | None = None) -> list[ProbingData]:
    """Read the probing files of a folder (``<task>.txt``, SentEval's ``data/probing``) or one file.

    Parameters
    ----------
    path : str or Path
        A folder holding task files named as in :data:`PROBING_TASKS`, or one file.
    tasks : list of str, optional
        Only these tasks (file stems), in this order; default every task file
        the folder holds, in the paper's order. With a file, its stem must be among them.

    Raises
    ------
    InputError
        For an unknown task name, a named task without its file, a folder
        without any task file, or a bad file (:func:`load_probing`).

    Examples
    --------
    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> _ = open(os.path.join(folder, "past_present.txt"), "w").write(
    ...     "tr\\tPAST\\tShe ran .\\ntr\\tPRES\\tShe runs .\\nva\\tPAST\\tHe sat .\\nte\\tPRES\\tHe sits .\\n")
    >>> [d.name for d in load_probing_dir(folder)]
    ['past_present']
    >>> load_probing_dir(folder, ["tense"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: unknown probing task 'tense' (known: sentence_length, ...)
    """
    path = Path(path)
    for task in tasks or []:
        if task not in PROBING_TASKS:
            raise InputError(f"unknown probing task {task!r} (known: {', '.join(PROBING_TASKS)})")
    if not path.is_dir():
        if tasks and path.stem not in tasks:
            raise InputError(f"{path} is the {path.stem!r} task, not {', '.join(tasks)}")
        return [load_probing(path)]
    names = list(tasks) if tasks else [t for t in PROBING_TASKS if (path / f"{t}.txt").is_file()]
    if not names:
        raise InputError(f"{path} holds no probing task file ({', '.join(t + '.txt' for t in PROBING_TASKS)})")
    absent = [t for t in names if not (path / f"{t}.txt").is_file()]
    if absent:
        raise InputError(f"{path} has no {absent[0]}.txt")
    return [load_probing(path / f"{t}.txt") for t in names]


def _vectors(vectors_or_encode: Any, data: ProbingData) -> dict[str, np.ndarray]:
    """Each split's vectors (float64): an encoder sees every distinct sentence once, in one call."""
    if isinstance(vectors_or_encode, dict):
        out = {s: np.asarray(vectors_or_encode[s], dtype=np.float64) for s in SPLITS}
    else:
        encode = as_encode(vectors_or_encode)
        distinct = list(dict.fromkeys(t for s in SPLITS for t in data.texts[s]))
        table = np.asarray(encode(distinct), dtype=np.float64)
        if table.ndim != 2 or len(table) != len(distinct):
            raise InputError(f"the encoder returned shape {table.shape} for {len(distinct)} sentences")
        row = {t: i for i, t in enumerate(distinct)}
        out = {s: table[[row[t] for t in data.texts[s]]] for s in SPLITS}
    for s in SPLITS:
        x = out[s]
        if x.ndim != 2 or len(x) != len(data.texts[s]):
            raise InputError(f"the {s} vectors have shape {x.shape} for {len(data.texts[s])} sentences")
        if not np.isfinite(x).all():
            raise InputError(f"the {s} vectors hold NaN or infinite values")
    return out


def standardize(x: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every split z-scored with the training split's per-dimension mean and (population) standard deviation.

    A dimension constant on the training split is only centred (its deviation is taken as 1), as
    scikit-learn's ``StandardScaler`` does.

    Examples
    --------
    >>> z = standardize({"tr": np.array([[1.0, 5.0], [3.0, 5.0]]), "va": np.array([[2.0, 6.0]]),
    ...                  "te": np.array([[5.0, 5.0]])})
    >>> z["tr"].tolist(), z["va"].tolist(), z["te"].tolist()
    ([[-1.0, 0.0], [1.0, 0.0]], [[0.0, 1.0]], [[3.0, 0.0]])
    """
    mean = x["tr"].mean(axis=0)
    scale = x["tr"].std(axis=0)
    scale[scale == 0] = 1.0
    return {s: (v - mean) / scale for s, v in x.items()}


def fit_probe(x: np.ndarray, y: np.ndarray, c: float) -> Any:
    """The classifier of one regularisation: ``LogisticRegression(C=c, max_iter=MAX_ITER)`` fitted on ``(x, y)``.

    Examples
    --------
    >>> fit_probe(np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([0, 0, 1, 1]), 1.0).predict([[2.5]]).tolist()
    [1]
    """
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(C=c, max_iter=MAX_ITER).fit(x, y)


def probing(vectors_or_encode: Any, data: ProbingData, *, regularisation: tuple[float, ...] = REGULARISATION,
            bootstrap: int = DEFAULT_RESAMPLES, seed: int = 0, name: str | None = None) -> TaskResult:
    """Test accuracy of a logistic-regression probe, its regularisation chosen on the development split.

    The vectors are z-scored with the training split's statistics (:func:`standardize`), then
    :func:`fit_probe` is fitted on ``tr`` for each ``C``.

    Parameters
    ----------
    vectors_or_encode : encoder or dict of str to (n, d) array
        Anything :func:`~repspace.engines.eval._encode.as_encode` accepts, or
        the vectors themselves per split (``{"tr": ..., "va": ..., "te": ...}``,
        rows in file order).
    data : ProbingData
        The task (:func:`load_probing`).
    regularisation : tuple of float, optional
        The ``C`` values tried, in order; the first with the best development accuracy is kept.
    bootstrap : int, optional
        Resamples of the test sentences behind the accuracy's 95% interval (0: none).
    seed : int, optional
        The bootstrap's seed.
    name : str, optional
        Task name; default ``probing:<task>``.

    Returns
    -------
    TaskResult
        Split ``test``; main metric ``accuracy``; beside it ``dev_accuracy``
        (of the chosen ``C``) and ``majority_accuracy`` (always answering the
        most frequent training class); :attr:`TaskResult.info` holds ``c``,
        every ``C``'s development accuracy, the counts and the paper's task
        name; each test sentence, right (1) or wrong (0), as :attr:`TaskResult.units`.

    Raises
    ------
    InputError
        For an empty or non-positive ``regularisation``, ``bootstrap < 0``,
        or vectors that do not match the sentences.

    Examples
    --------
    >>> d = ProbingData("toy", {"tr": ["a", "bb", "ccc", "dddd"], "va": ["ee", "fff"], "te": ["g", "hhhh"]},
    ...                 {"tr": ["short", "short", "long", "long"], "va": ["short", "long"], "te": ["short", "long"]})
    >>> r = probing(lambda texts: np.array([[len(t), 1.0] for t in texts]), d, bootstrap=0)
    >>> r.task_name, r.main_score, r.scores["majority_accuracy"], r.info["c"]
    ('probing:toy', 1.0, 0.5, 0.25)
    """
    t0 = time.perf_counter()
    check_scalar(bootstrap, "bootstrap", int, low=0)
    grid = tuple(regularisation)
    if not grid or any(not isinstance(c, (int, float)) or not c > 0 for c in grid):
        raise InputError(f"the regularisation must be positive numbers, got {grid!r}")
    x = standardize(_vectors(vectors_or_encode, data))
    index = {label: i for i, label in enumerate(data.classes)}
    y = {s: np.array([index[label] for label in data.labels[s]], dtype=np.int64) for s in SPLITS}
    dev, models, not_converged = [], [], 0
    for c in grid:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = fit_probe(x["tr"], y["tr"], float(c))
        not_converged += any("converge" in str(w.message).lower() for w in caught)
        models.append(model)
        dev.append(float(np.mean(model.predict(x["va"]) == y["va"])))
    best = int(np.argmax(dev))
    correct = (models[best].predict(x["te"]) == y["te"]).astype(np.float64)
    majority = int(np.argmax(np.bincount(y["tr"], minlength=len(index))))
    scores = {"accuracy": float(correct.mean()), "dev_accuracy": dev[best],
              "majority_accuracy": float(np.mean(y["te"] == majority))}
    info: dict[str, Any] = {
        "dataset": data.name, "probing_task": PROBING_TASKS.get(data.name, data.name), "c": float(grid[best]),
        "dev_accuracies": {str(float(c)): a for c, a in zip(grid, dev, strict=True)},
        "n_train": len(y["tr"]), "n_dev": len(y["va"]), "n_test": len(y["te"]), "n_classes": len(index),
        "majority_class": data.classes[majority], "standardized": True,
        "classifier": f"LogisticRegression(max_iter={MAX_ITER})",
    }
    if not_converged:
        info["not_converged_fits"] = int(not_converged)
    interval = bootstrap_interval(mean_statistic, correct, n_resamples=bootstrap, seed=seed) if bootstrap else None
    return TaskResult(name or f"probing:{data.name}", "test", "accuracy", scores, time.perf_counter() - t0, info,
                      interval=interval, units=Units("mean", (correct,), ("correct",)))


__all__ = ["PROBING_TASKS", "SPLITS", "REGULARISATION", "MAX_ITER", "ProbingData", "load_probing",
           "load_probing_dir", "standardize", "fit_probe", "probing"]
