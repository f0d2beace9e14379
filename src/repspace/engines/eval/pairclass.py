"""Pair classification: does the cosine of two texts' vectors tell duplicates (label 1) from the rest (0)?

Scores as MTEB's PairClassification reports them for cosine similarity:
average precision of the cosine (``cosine_ap``, the main score), and the
accuracy and F1 at their best thresholds (``cosine_accuracy``,
``cosine_f1`` with ``cosine_precision`` and ``cosine_recall``), computed like
sentence-transformers' ``BinaryClassificationEvaluator`` (a pair is called
positive when its cosine is at least the threshold; the threshold lies
midway between two distinct cosines, so tied cosines are never split).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.core.files import read_csv_rows
from repspace.engines.eval._encode import as_encode
from repspace.engines.eval._pairs import pair_header, read_pair_rows
from repspace.engines.eval._results import TaskResult
from repspace.engines.eval.uncertainty import DEFAULT_RESAMPLES, average_precision_statistic, bootstrap_interval
from repspace.engines.eval.units import Units

_HEADER = ("sentence1", "sentence2", "label")


@dataclass(frozen=True, eq=False)
class PairLabels:
    """Text pairs labelled 1 (duplicates, paraphrases) or 0.

    Attributes
    ----------
    sentences1, sentences2 : list of str
    labels : (n,) int64 array of 0 and 1
    name : str
        The data set's name (the file's stem).
    split : str
        ``test``, ``dev`` or ``train`` when the name ends so, else ``test``.

    Examples
    --------
    >>> pairs = PairLabels(["a cat", "a man runs"], ["a kitten", "stocks fell"], np.array([1, 0]), "toy")
    >>> table = {"a cat": [1.0, 0.0], "a kitten": [0.9, 0.1], "a man runs": [0.0, 1.0], "stocks fell": [1.0, -1.0]}
    >>> r = pairclass(lambda texts: np.array([table[t] for t in texts]), pairs)
    >>> len(pairs), r.task_name, round(r.main_score, 3)
    (2, 'pairclass:toy', 1.0)
    """

    sentences1: list[str]
    sentences2: list[str]
    labels: np.ndarray
    name: str = "pairs"
    split: str = "test"

    def __len__(self) -> int:
        return len(self.labels)


def _label(text: str, where: str) -> int:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if value not in (0.0, 1.0):
        raise InputError(f"{where}: the label {text!r} is not 0 or 1")
    return int(value)


def load_pairs(path: str | Path) -> PairLabels:
    """Read a CSV with the header ``sentence1,sentence2,label`` (labels 0 or 1).

    The header may name further columns after those three (``sentence1,sentence2,label,source``):
    every row then has that many fields; ``--by source`` splits the task on one
    (:func:`repspace.engines.eval.part_data.read_parts`).

    Parameters
    ----------
    path : str or Path
        A UTF-8 CSV file.

    Returns
    -------
    PairLabels

    Raises
    ------
    InputError
        If the file is missing or holds no pairs, the header does not start with
        ``sentence1,sentence2,label``, or a row does not have three fields (as many
        as the header names) with a label of 0 or 1 or has a blank sentence (its line
        number is given).

    Examples
    --------
    >>> from repspace.store import example_file
    >>> p = example_file("toy-dev.csv", 'sentence1,sentence2,label\\nA cat.,A kitten.,1\\n"Stocks, bonds.",A cat.,0\\n')
    >>> pairs = load_pairs(p)
    >>> pairs.labels.tolist(), pairs.sentences1[1], pairs.split
    ([1, 0], 'Stocks, bonds.', 'dev')
    """
    path = Path(path)
    rows = read_csv_rows(path, "pair file")
    header = pair_header(rows, _HEADER)
    if header is None:
        found = ",".join(rows[0]) if rows else "nothing"
        raise InputError(f"{path}: the first line must be the header sentence1,sentence2,label (found {found[:80]!r})")
    s1, s2, labels = read_pair_rows(enumerate(rows[1:], start=2), path, "pair file", ",".join(header), _label,
                                    n_fields=len(header))
    stem = path.stem
    split = next((s for s in ("test", "dev", "train") if stem.endswith(s)), "test")
    return PairLabels(s1, s2, np.asarray(labels, dtype=np.int64), stem, split)


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    denom = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    dots = np.einsum("ij,ij->i", a, b)
    return np.divide(dots, denom, out=np.zeros_like(dots), where=denom > 0)


def best_thresholds(scores: np.ndarray, labels: np.ndarray) -> dict[str, float]:
    """Best accuracy and best F1 over thresholds "positive when score ≥ t", and those thresholds.

    Same results as sentence-transformers' ``BinaryClassificationEvaluator``
    (``find_best_acc_and_threshold``, ``find_best_f1_and_threshold``): only
    thresholds between distinct scores are tried (plus "every pair positive"
    and, for accuracy, "every pair negative"); the first best one, going from
    high scores down, is kept; a threshold is the midpoint of the two scores
    it separates.

    Parameters
    ----------
    scores : (n,) array
        Higher means more likely positive.
    labels : (n,) array of 0 and 1

    Returns
    -------
    dict
        ``accuracy``, ``accuracy_threshold``, ``f1``, ``f1_threshold``,
        ``precision``, ``recall`` (the last two at the best F1; all 0 when
        there is no positive).

    Examples
    --------
    >>> r = best_thresholds(np.array([0.9, 0.8, 0.3, 0.1]), np.array([1, 0, 1, 0]))
    >>> r["accuracy"], r["f1"], round(r["f1_threshold"], 4)
    (0.75, 0.8, 0.2)
    """
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    labels = np.asarray(labels).reshape(-1).astype(np.int64)
    n = len(scores)
    if n == 0 or len(labels) != n:
        raise InputError(f"need one label per score and at least one pair, got {n} scores and {len(labels)} labels")
    order = np.argsort(-scores, kind="stable")
    s = scores[order]
    lab = labels[order]
    tp = np.cumsum(lab)
    taken = np.arange(1, n + 1)
    # Threshold candidates: after the last of each group of equal scores.
    ends = np.flatnonzero(np.append(s[1:] != s[:-1], True))
    n_pos = int(lab.sum())
    n_neg = n - n_pos

    def threshold(i: int) -> float:
        if i == n - 1:
            return float(s[i])
        mid = (s[i] + s[i + 1]) / 2
        return float(s[i]) if mid == s[i + 1] else float(mid)

    acc = (tp[ends] + (n_neg - (taken[ends] - tp[ends]))) / n
    out: dict[str, float] = {"accuracy": n_neg / n, "accuracy_threshold": float(np.nextafter(s[0], np.inf))}
    j = int(np.argmax(acc))
    if acc[j] > out["accuracy"]:
        out.update(accuracy=float(acc[j]), accuracy_threshold=threshold(int(ends[j])))
    out.update(f1=0.0, f1_threshold=0.0, precision=0.0, recall=0.0)
    if n_pos:
        tpe = tp[ends]
        precision = tpe / taken[ends]
        recall = tpe / n_pos
        with np.errstate(invalid="ignore", divide="ignore"):
            f1 = np.where(tpe > 0, 2 * precision * recall / (precision + recall), 0.0)
        j = int(np.argmax(f1))
        if f1[j] > 0:
            out.update(f1=float(f1[j]), f1_threshold=threshold(int(ends[j])), precision=float(precision[j]),
                       recall=float(recall[j]))
    return out


def pairclass_scores(a: np.ndarray, b: np.ndarray, labels: np.ndarray) -> dict[str, float]:
    """MTEB's cosine pair-classification scores for the pairs ``(a[i], b[i])``.

    Parameters
    ----------
    a, b : (n, d) arrays
        The two sides of each pair (not necessarily normalised).
    labels : (n,) array of 0 and 1

    Returns
    -------
    dict
        ``cosine_ap`` (``sklearn.metrics.average_precision_score`` of the
        cosines), ``cosine_accuracy``, ``cosine_accuracy_threshold``,
        ``cosine_f1``, ``cosine_f1_threshold``, ``cosine_precision``,
        ``cosine_recall`` (see :func:`best_thresholds`).

    Raises
    ------
    InputError
        Unless both labels 0 and 1 occur (average precision is undefined
        otherwise), or on mismatched shapes or labels other than 0 and 1.

    Examples
    --------
    >>> a = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    >>> b = np.array([[1.0, 0.1], [0.0, 1.0], [1.0, 1.0]])
    >>> s = pairclass_scores(a, b, np.array([1, 0, 1]))
    >>> s["cosine_ap"], s["cosine_accuracy"], s["cosine_f1"]
    (1.0, 1.0, 1.0)
    """
    from sklearn.metrics import average_precision_score

    a = np.asarray(a)
    b = np.asarray(b)
    labels = np.asarray(labels).reshape(-1)
    if a.ndim != 2 or a.shape != b.shape or len(labels) != len(a):
        raise InputError(f"pair classification needs two (n, d) arrays and n labels; got {a.shape}, {b.shape}, "
                         f"{labels.shape}")
    if not np.isin(labels, (0, 1)).all():
        raise InputError("pair labels must be 0 or 1")
    labels = labels.astype(np.int64)
    n_pos = int(labels.sum())
    if n_pos == 0 or n_pos == len(labels):
        raise InputError(f"pair classification needs both labels 0 and 1; all {len(labels)} pairs are {labels[0]}")
    cos = _cosines(a, b)
    best = best_thresholds(cos, labels)
    return {
        "cosine_ap": float(average_precision_score(labels, cos)),
        "cosine_accuracy": best["accuracy"],
        "cosine_accuracy_threshold": best["accuracy_threshold"],
        "cosine_f1": best["f1"],
        "cosine_f1_threshold": best["f1_threshold"],
        "cosine_precision": best["precision"],
        "cosine_recall": best["recall"],
    }


def pairclass(encode: Any, pairs: PairLabels | str | Path, *, codec: Any = None, name: str | None = None,
              bootstrap: int = DEFAULT_RESAMPLES, seed: int = 0) -> TaskResult:
    """Score an encoder on labelled pairs by the cosine of their vectors.

    Parameters
    ----------
    encode : callable or object with ``encode``
        Texts to vectors; every distinct sentence goes to it in one call.
    pairs : PairLabels or path
        From :func:`load_pairs` (a path is loaded with it).
    codec : Codec, optional
        A compression fitted on the vectors of all the task's distinct
        sentences, applied before the cosines.
    name : str, optional
        Task name; default ``pairclass:<data set name>``.
    bootstrap : int
        Resamples of the pairs behind the main score's interval: the average
        precision of each resample's (label, cosine) pairs
        (:func:`~repspace.engines.eval.uncertainty.average_precision_statistic`,
        :func:`~repspace.engines.eval.uncertainty.bootstrap_interval`, percentile,
        95%; a resample without a positive pair, where it is undefined, is left
        out); 0: no interval.
    seed : int
        The bootstrap's seed.

    Returns
    -------
    TaskResult
        Main metric ``cosine_ap``; the other scores of
        :func:`pairclass_scores` beside it; ``n_pairs`` and ``positive_rate``
        in info; the average precision's bootstrap interval over the pairs as
        :attr:`TaskResult.interval`; their labels and cosines as :attr:`TaskResult.units`.

    Examples
    --------
    >>> from repspace.engines.encoders import get_encoder
    >>> pairs = PairLabels(["a cat sits", "a man runs", "stocks fell"],
    ...                    ["a cat is sitting", "the cat sleeps", "stock prices dropped"],
    ...                    np.array([1, 0, 1]), "toy")
    >>> r = pairclass(get_encoder("static"), pairs)
    >>> r.task_name, r.main_metric, 0.0 <= r.main_score <= 1.0
    ('pairclass:toy', 'cosine_ap', True)
    >>> r.interval.level, pairclass(get_encoder("static"), pairs, bootstrap=0).interval
    (0.95, None)
    """
    t0 = time.perf_counter()
    check_scalar(bootstrap, "bootstrap", int, low=0)
    if not isinstance(pairs, PairLabels):
        pairs = load_pairs(pairs)
    enc = as_encode(encode)
    distinct = list(dict.fromkeys(pairs.sentences1 + pairs.sentences2))
    position = {t: i for i, t in enumerate(distinct)}
    vectors = enc(distinct)
    info: dict[str, Any] = {"n_pairs": len(pairs), "positive_rate": float(np.mean(pairs.labels))}
    if codec is not None:
        vectors = np.asarray(codec.fit(vectors).transform(vectors), dtype=np.float32)
        if vectors.ndim != 2 or len(vectors) != len(distinct):
            raise InputError(f"codec {getattr(codec, 'name', codec)!r} returned shape {vectors.shape} for "
                             f"{len(distinct)} vectors")
        info.update(codec=codec.to_dict(), bytes_per_vector=int(codec.bytes_per_vector))
    a = vectors[[position[t] for t in pairs.sentences1]]
    b = vectors[[position[t] for t in pairs.sentences2]]
    scores = pairclass_scores(a, b, pairs.labels)
    labels, cosine = np.asarray(pairs.labels), _cosines(a, b)
    interval = bootstrap_interval(average_precision_statistic, labels, cosine, n_resamples=bootstrap, seed=seed)
    units = Units("average_precision", (labels, cosine), ("label", "cosine"), shared=("label",))
    return TaskResult(name or f"pairclass:{pairs.name}", pairs.split, "cosine_ap", scores,
                      time.perf_counter() - t0, info, interval=interval, units=units)
