"""Classification by retrieval: each test item takes the label its nearest labelled neighbours vote for (MINERS, S187).

MINERS (Winata, Zhang & Adelani 2024, "MINERS: Multilingual Language Models
as Semantic Retrievers") classifies without training anything: the labelled
training split is embedded, each test item retrieves its ``k`` nearest
training items and takes the label most of them carry. Its code
(``classification.py`` of the authors' repository) ranks the training items by
Euclidean distance between the raw vectors, for ``k`` = 1, 5 and 10, and
breaks a tied vote with ``Counter.most_common``: of the tied labels, the one
met first going down the ranking, i.e. the one of the nearest tied
neighbour; it reports accuracy and macro precision, recall and F1.

:func:`knn_classification` runs that protocol with the metric and vote as
options: ``metric="euclidean"`` is the paper's, ``metric="cosine"`` (the
default, the similarity of the rest of repspace) ranks by cosine distance,
``1 - cos``; ``vote="majority"`` is the paper's rule, ``vote="distance"``
weighs each neighbour by the inverse of its distance (scikit-learn's
``KNeighborsClassifier(weights="distance")``; a neighbour at distance 0
outvotes all others). Without a tie the majority vote is scikit-learn's
``weights="uniform"``; on a tie scikit-learn takes the smallest class, the
paper the nearest (the number of tied votes is in ``info["tied_votes"]``).
Neighbours at equal distances are ranked by their order in the training split.

Examples
--------
>>> train_x = np.array([[1.0, 0.0], [0.9, 0.2], [0.0, 1.0], [0.1, 0.9]])
>>> train_y = np.array([0, 0, 1, 1])
>>> knn_predict(train_x, train_y, np.array([[1.0, 0.1], [0.2, 1.0]]), 3).tolist()
[0, 1]
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from repspace.core.checks import check_choice, check_scalar
from repspace.core.errors import InputError
from repspace.engines.eval._results import TaskResult
from repspace.engines.eval._split import train_test
from repspace.engines.eval.fewshot import parse_counts
from repspace.engines.eval.uncertainty import DEFAULT_RESAMPLES, bootstrap_interval, mean_statistic
from repspace.engines.eval.units import Units

__all__ = ["DEFAULT_KS", "KNN_METRICS", "KNN_VOTES", "knn_classification", "knn_predict"]

#: The neighbour counts MINERS reports.
DEFAULT_KS = (1, 5, 10)
#: How neighbours are ranked: cosine distance (1 - cos), or the Euclidean distance of the raw vectors (MINERS').
KNN_METRICS = ("cosine", "euclidean")
#: How the neighbours vote: one vote each (MINERS'), or weighted by the inverse of the distance (scikit-learn's).
KNN_VOTES = ("majority", "distance")
#: Test items whose distances to the training split are computed at once (bounds the memory: rows x training items).
CHUNK = 512


def _distances(train: np.ndarray, test: np.ndarray, metric: str) -> np.ndarray:
    """``(len(test), len(train))`` distances in float64: ``1 - cos`` clipped to [0, 2], or Euclidean."""
    if metric == "cosine":
        def unit(x: np.ndarray) -> np.ndarray:
            norms = np.linalg.norm(x, axis=1, keepdims=True)
            return x / np.where(norms == 0, 1.0, norms)  # a zero vector: cosine 0 to everything (as scikit-learn)

        return np.clip(1.0 - unit(test) @ unit(train).T, 0.0, 2.0)
    sq = (test * test).sum(1)[:, None] + (train * train).sum(1)[None, :] - 2.0 * (test @ train.T)
    return np.sqrt(np.maximum(sq, 0.0))


def _vote(labels: np.ndarray, dist: np.ndarray, n_classes: int, vote: str) -> tuple[np.ndarray, np.ndarray]:
    """Each row's label from its neighbours' ``labels`` (nearest first) and distances; whether the vote tied."""
    rows = np.arange(len(labels))
    if vote == "majority":
        counts = np.zeros((len(labels), n_classes))
        np.add.at(counts, (rows[:, None], labels), 1.0)
        best = counts.max(axis=1)
        tied = (counts == best[:, None]).sum(axis=1) > 1
        # MINERS' Counter.most_common: of the labels with the most votes, the one met first down the ranking
        first = np.argmax(counts[rows[:, None], labels] == best[:, None], axis=1)
        return labels[rows, first], tied
    with np.errstate(divide="ignore"):
        weights = 1.0 / dist
    exact = (dist == 0).any(axis=1)
    weights[exact] = (dist[exact] == 0).astype(float)  # scikit-learn: an exact match takes the whole vote
    votes = np.zeros((len(labels), n_classes))
    np.add.at(votes, (rows[:, None], labels), weights)
    best = votes.max(axis=1)
    return np.argmax(votes, axis=1), (votes == best[:, None]).sum(axis=1) > 1


def knn_predict(x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray, k: int, *, metric: str = "cosine",
                vote: str = "majority", return_ties: bool = False) -> Any:
    """Each test vector's label by its ``k`` nearest training vectors.

    Parameters
    ----------
    x_train : (m, d) array
    y_train : (m,) int array
        Class ids ``0 .. C - 1``.
    x_test : (n, d) array
    k : int
        Neighbours (at most ``m``).
    metric : {"cosine", "euclidean"}
    vote : {"majority", "distance"}
        See the module's docstring for the rules and their ties.
    return_ties : bool
        Also return whether each test item's vote tied.

    Returns
    -------
    (n,) int array, or (predictions, tied) with ``return_ties``

    Examples
    --------
    >>> x = np.array([[0.0], [1.0], [3.0]])
    >>> knn_predict(x, np.array([1, 0, 0]), np.array([[0.4]]), 2, metric="euclidean").tolist()  # tie: nearest
    [1]
    >>> knn_predict(x, np.array([1, 0, 0]), np.array([[0.4]]), 2, metric="euclidean", vote="distance").tolist()
    [1]
    """
    metric = check_choice(metric, "metric", KNN_METRICS)
    vote = check_choice(vote, "vote", KNN_VOTES)
    a = np.asarray(x_train, dtype=np.float64)
    b = np.asarray(x_test, dtype=np.float64)
    y = np.asarray(y_train, dtype=np.int64)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1] or len(y) != len(a):
        raise InputError(f"training vectors {a.shape}, labels {y.shape} and test vectors {b.shape} do not match")
    k = check_scalar(k, "k", int, low=1)
    if k > len(a):
        raise InputError(f"k={k} neighbours, but the training split holds {len(a)} items")
    n_classes = int(y.max()) + 1 if len(y) else 0
    pred, tied = np.empty(len(b), dtype=np.int64), np.empty(len(b), dtype=bool)
    for start in range(0, len(b), CHUNK):
        dist = _distances(a, b[start:start + CHUNK], metric)
        order = np.argsort(dist, axis=1, kind="stable")[:, :k]  # equal distances: training order
        near = np.take_along_axis(dist, order, axis=1)
        pred[start:start + CHUNK], tied[start:start + CHUNK] = _vote(y[order], near, n_classes, vote)
    return (pred, tied) if return_ties else pred


def _macro_f1(y_true: np.ndarray, pred: np.ndarray) -> float:
    """scikit-learn's ``f1_score(average="macro", zero_division=0)``: the mean F1 over the classes present in
    either array, written out with ``bincount`` (the bootstrap calls it once per resample)."""
    present = np.union1d(y_true, pred)
    size = int(present.max()) + 1
    tp = np.bincount(y_true[y_true == pred], minlength=size)[present]
    true_n = np.bincount(y_true, minlength=size)[present]
    pred_n = np.bincount(pred, minlength=size)[present]
    denominator = true_n + pred_n
    f1 = np.divide(2.0 * tp, denominator, out=np.zeros(len(present)), where=denominator > 0)
    return float(f1.mean())


def _scores(y_true: np.ndarray, pred: np.ndarray) -> dict[str, float]:
    from sklearn.metrics import precision_score, recall_score

    return {"accuracy": float(np.mean(pred == y_true)), "f1_macro": _macro_f1(y_true, pred),
            "precision_macro": float(precision_score(y_true, pred, average="macro", zero_division=0)),
            "recall_macro": float(recall_score(y_true, pred, average="macro", zero_division=0))}


def knn_classification(vectors_or_encode: Any, labels: Any, texts: list[str] | None = None, *, train: Any,
                       ks: str | int | Sequence[int] = DEFAULT_KS, metric: str = "cosine", vote: str = "majority",
                       codec: Any = None, seed: int = 0, bootstrap: int = DEFAULT_RESAMPLES,
                       name: str | None = None) -> list[TaskResult]:
    """kNN classification of the test split by the labelled training split, for each ``k`` of ``ks`` (MINERS).

    Parameters
    ----------
    vectors_or_encode, labels, texts
        The test split, as in :func:`~repspace.engines.eval.labels.classification`.
    train : LabelledTexts or (vectors or texts, labels)
        The labelled training split the neighbours come from (required).
    ks : str, int or sequence of int, optional
        Neighbour counts (``"1,5,10"``), each at most the training split's size.
    metric : {"cosine", "euclidean"}, optional
        How neighbours are ranked (MINERS: ``euclidean`` on the raw vectors).
    vote : {"majority", "distance"}, optional
        One vote per neighbour, a tie going to the nearest (MINERS), or votes
        weighted by the inverse distance.
    codec : Codec, optional
        A compression fitted on both splits' vectors, applied first.
    seed, bootstrap : int, optional
        The bootstrap's seed and resamples of the test items (0: no interval).
    name : str, optional
        The data set's name in the task names.

    Returns
    -------
    list of TaskResult
        One per ``k``: task ``knn-<k>`` (``:<data set>`` added), main metric
        ``accuracy`` with its bootstrap interval over the test items, and
        ``f1_macro``, ``precision_macro``, ``recall_macro`` beside it;
        ``info["f1_macro_interval"]`` is macro-F1's interval from the same
        resamples' seed. :attr:`TaskResult.units`: each test item right (1) or wrong (0).

    Raises
    ------
    InputError
        Without a training split, with a training split of one class, a ``k``
        above its size, an unknown metric or vote, or mismatched inputs.

    Examples
    --------
    >>> x = np.array([[1.0, 0.0], [0.9, 0.3], [0.8, 0.1], [0.0, 1.0], [0.2, 0.9], [0.1, 0.8]])
    >>> y = ["pets", "pets", "pets", "money", "money", "money"]
    >>> rows = knn_classification(x, y, train=(x, y), ks="1,3", bootstrap=0)
    >>> [(r.task_name, r.main_score, r.scores["f1_macro"]) for r in rows]
    [('knn-1', 1.0, 1.0), ('knn-3', 1.0, 1.0)]
    """
    t0 = time.perf_counter()
    ks = parse_counts(ks, "k")
    metric = check_choice(metric, "metric", KNN_METRICS)
    vote = check_choice(vote, "vote", KNN_VOTES)
    check_scalar(bootstrap, "bootstrap", int, low=0)
    check_scalar(seed, "seed", int, low=0, high=2**32, include="left")
    info: dict[str, Any] = {}
    s = train_test(vectors_or_encode, labels, texts, train, codec, info, "kNN classification")
    if ks[-1] > len(s.y_train):
        raise InputError(f"k={ks[-1]} neighbours, but the training split holds {len(s.y_train)} items")
    suffix = f":{name or info['dataset']}" if (name or info.get("dataset")) else ""
    setup = time.perf_counter() - t0
    results = []
    for k in ks:
        t1 = time.perf_counter()
        pred, tied = knn_predict(s.x_train, s.y_train, s.x_test, k, metric=metric, vote=vote, return_ties=True)
        correct = (pred == s.y_test).astype(float)
        f1_ci = bootstrap_interval(_macro_f1, s.y_test, pred, n_resamples=bootstrap, seed=seed)
        block = {**info, "k": k, "metric": metric, "vote": vote, "tied_votes": int(tied.sum()), "seed": seed,
                 "f1_macro_interval": None if f1_ci is None else f1_ci.to_dict()}
        interval = bootstrap_interval(mean_statistic, correct, n_resamples=bootstrap, seed=seed)
        results.append(TaskResult(f"knn-{k}{suffix}", "test", "accuracy", _scores(s.y_test, pred),
                                  setup + time.perf_counter() - t1, block, interval=interval,
                                  units=Units("mean", (correct,), ("correct",))))
    return results
