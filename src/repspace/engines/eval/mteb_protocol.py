"""MTEB's own protocols for classification and clustering, run on repspace's vectors.

repspace's protocol (:func:`~repspace.engines.eval.labels.classification`,
:func:`~repspace.engines.eval.labels.clustering`) cross-validates on every
item and runs k-means to convergence; MTEB's evaluators do otherwise, and
their figures are not comparable with ours. ``protocol="mteb"`` runs what
mteb 2.26.24's task classes run, step for step, with their seeds and
scikit-learn estimators, so that the figures (and the ``--output-dir`` files)
are those mteb would report for the same vectors:

* **Classification** (``AbsTaskClassification``): 10 experiments; in
  experiment ``i`` the training indices are shuffled by
  ``numpy.random.RandomState(42)`` (the shuffles compound: each shuffles the
  previous one's order) and the first 8 items of each label in that order are
  kept; a ``LogisticRegression(max_iter=100, random_state=42)`` is fitted on
  them and predicts the whole test split. Scores are means over the
  experiments: ``accuracy`` (main), ``f1``, ``precision`` and ``recall``
  (macro) and their ``_weighted`` forms, plus ``ap`` and ``ap_weighted`` when
  the test split has two labels (average precision of the *predicted labels*,
  as MTEB computes it). Without a training split, MTEB's cross-validation path
  (``is_cross_validation``): ``KFold(5, shuffle=True, random_state=42)``, each
  fold's training part undersampled as above (experiment ``i`` = fold ``i``).
* **Clustering** (``AbsTaskClustering``, MTEB's current "fast" clustering
  tasks): ``random.Random(42)`` picks ``int(0.04 * n)`` documents to embed
  (MTEB's default; ``max_fraction=None`` embeds all), then 10 times draws
  16,384 of them *with replacement* and clusters the draw with
  ``MiniBatchKMeans(k, batch_size=512, n_init=1, random_state=42)``, k the
  number of labels present. Scores: ``v_measure`` (main) and ``ami``, means
  over the draws, with ``v_measure_std`` and ``ami_std``.
* **Legacy clustering** (``AbsTaskClusteringLegacy``, MTEB's original
  clustering tasks, one set): ``MiniBatchKMeans(k, batch_size=500,
  n_init="auto", random_state=42)`` on all the vectors; ``v_measure``.

The per-experiment figures that MTEB writes as lists (``scores_per_experiment``,
``v_measures``, ``ami_scores``) are kept in the result's ``info`` (they are
not single scores).

Examples
--------
>>> rng = np.random.default_rng(0)
>>> x = np.vstack([rng.normal(0, 1, (30, 4)) + [6, 0, 0, 0], rng.normal(0, 1, (30, 4)) + [0, 6, 0, 0]])
>>> y = np.repeat([0, 1], 30)
>>> run = classification_scores(x[::2], y[::2], x[1::2], y[1::2])
>>> round(run.scores["accuracy"], 3), len(run.per_experiment), run.correct.shape
(1.0, 10, (10, 30))
"""

from __future__ import annotations

import random
import time
import warnings
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import is_dataclass, replace
from typing import Any, NamedTuple

import numpy as np

from repspace.core.checks import check_choice, check_scalar
from repspace.core.errors import InputError
from repspace.engines.eval._results import TaskResult
from repspace.engines.eval.uncertainty import DEFAULT_RESAMPLES, bootstrap_interval, mean_statistic

__all__ = [
    "CLASSIFICATION_PROTOCOLS",
    "CLUSTERING_PROTOCOLS",
    "ClassificationRun",
    "classification_scores",
    "classification_task",
    "clustering_scores",
    "clustering_task",
    "cross_validation_scores",
    "document_sample",
    "legacy_clustering_scores",
    "undersample",
]

#: The protocols :func:`~repspace.engines.eval.labels.classification` offers.
CLASSIFICATION_PROTOCOLS = ("repspace", "mteb")
#: The protocols :func:`~repspace.engines.eval.labels.clustering` offers.
CLUSTERING_PROTOCOLS = ("repspace", "mteb", "mteb-legacy")

#: The seed of every MTEB task (``AbsTask(seed=42)``) and evaluator.
MTEB_SEED = 42
#: ``AbsTaskClassification``'s defaults: training items per label, experiments, LogisticRegression's max_iter,
#: folds of the cross-validation path.
SAMPLES_PER_LABEL, EXPERIMENTS, MAX_ITER, FOLDS = 8, 10, 100, 5
#: ``AbsTaskClustering``'s defaults: fraction of the documents embedded, documents per draw, draws, k-means batch.
MAX_FRACTION, CLUSTER_SIZE, DRAWS, KMEANS_BATCH = 0.04, 16_384, 10, 512
#: ``ClusteringEvaluator``'s k-means batch (the legacy protocol).
LEGACY_BATCH = 500

class ClassificationRun(NamedTuple):
    """What MTEB's classification protocol measured.

    Attributes
    ----------
    scores : dict of str to float
        Means over the experiments, under MTEB's names (``accuracy``, ``f1``, ...).
    per_experiment : list of dict
        Each experiment's scores (MTEB's ``scores_per_experiment``; ``ap`` None when not binary).
    correct : bool array
        Whether each test item was predicted right: ``(experiments, n)`` with a
        training split, ``(n,)`` (by the fold that held it out) under cross-validation.
    not_converged : int
        Experiments whose logistic regression stopped at ``max_iter`` (MTEB only warns).

    Examples
    --------
    >>> ClassificationRun({"accuracy": 1.0}, [], np.ones(2, dtype=bool), 0).scores
    {'accuracy': 1.0}
    """

    scores: dict[str, float]
    per_experiment: list[dict[str, float | None]]
    correct: np.ndarray
    not_converged: int


#: ``prepare(vectors_or_encode, labels, texts, codec, info) -> (vectors, class ids, class names)``.
Prepare = Callable[[Any, Any, Any, Any, dict[str, Any]], tuple[np.ndarray, np.ndarray, list[str]]]


def undersample(labels: Sequence[Any], samples_per_label: int = SAMPLES_PER_LABEL, *, seed: int = MTEB_SEED,
                order: list[int] | None = None) -> tuple[list[int], list[int]]:
    """MTEB's undersampling of a training split: up to ``samples_per_label`` items of each label.

    ``order`` (default ``0 .. n - 1``) is shuffled in place by a fresh
    ``numpy.random.RandomState(seed)``, and the items are kept in that order
    while their label has fewer than ``samples_per_label`` kept
    (``AbsTaskClassification._undersample_data``). Pass the returned order
    back for the next experiment: MTEB's shuffles compound.

    Parameters
    ----------
    labels : sequence
        The training split's labels.
    samples_per_label : int, optional
        Items kept per label.
    seed : int, optional
        MTEB's task seed.
    order : list of int, optional
        The previous experiment's order (shuffled again, in place).

    Returns
    -------
    order : list of int
        The shuffled order (pass it to the next call).
    kept : list of int
        The indices kept, in the order they were met.

    Examples
    --------
    >>> order, kept = undersample(["a", "a", "a", "b", "b"], 1)
    >>> sorted(order), len(kept), sorted(["a", "a", "a", "b", "b"][i] for i in kept)
    ([0, 1, 2, 3, 4], 2, ['a', 'b'])
    >>> order2, kept2 = undersample(["a", "a", "a", "b", "b"], 1, order=list(order))
    >>> len(kept2)
    2
    """
    if order is None:
        order = list(range(len(labels)))
    np.random.RandomState(seed).shuffle(order)
    counts: dict[Any, int] = defaultdict(int)
    kept = []
    for i in order:
        label = labels[i]
        if counts[label] < samples_per_label:
            kept.append(i)
            counts[label] += 1
    return order, kept


def _fit_predict(x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray, max_iter: int,
                 seed: int) -> tuple[np.ndarray, bool]:
    """MTEB's classifier: the predictions, and whether lbfgs stopped at ``max_iter`` (MTEB only warns)."""
    from sklearn.linear_model import LogisticRegression

    if len(np.unique(y_train)) < 2:
        raise InputError(f"a training sample of MTEB's protocol holds 1 class ({len(y_train)} items); "
                         "logistic regression needs at least 2")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf = LogisticRegression(max_iter=max_iter, random_state=seed).fit(x_train, y_train)
    stopped = any("converge" in str(w.message).lower() for w in caught)
    for w in caught:
        if "converge" not in str(w.message).lower():
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return clf.predict(x_test), stopped


def _experiment_scores(y_test: np.ndarray, pred: np.ndarray) -> dict[str, float | None]:
    """``AbsTaskClassification._calculate_scores``: one experiment's scores, under MTEB's names."""
    from sklearn.exceptions import UndefinedMetricWarning
    from sklearn.metrics import accuracy_score, average_precision_score, f1_score, precision_score, recall_score

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)  # a class never predicted: 0, as MTEB scores it
        scores: dict[str, float | None] = {
            "accuracy": float(accuracy_score(y_test, pred)),
            "f1": float(f1_score(y_test, pred, average="macro")),
            "f1_weighted": float(f1_score(y_test, pred, average="weighted")),
            "precision": float(precision_score(y_test, pred, average="macro")),
            "precision_weighted": float(precision_score(y_test, pred, average="weighted")),
            "recall": float(recall_score(y_test, pred, average="macro")),
            "recall_weighted": float(recall_score(y_test, pred, average="weighted")),
            "ap": None,
            "ap_weighted": None,
        }
        present = np.unique(y_test)
        if len(present) == 2:  # MTEB scores the predicted labels themselves, the larger label positive
            truth, score = (y_test == present[1]).astype(int), (pred == present[1]).astype(int)
            if set(present.tolist()) == {0, 1}:
                truth, score = y_test, pred
            scores["ap"] = float(average_precision_score(truth, score, average="macro"))
            scores["ap_weighted"] = float(average_precision_score(truth, score, average="weighted"))
    return scores


def _mean_scores(per_experiment: list[dict[str, float | None]]) -> dict[str, float]:
    """``AbsTaskClassification._calculate_avg_scores``; the average precisions only where defined (MTEB: NaN)."""
    out = {}
    for key in per_experiment[0]:
        values = [s[key] for s in per_experiment if s[key] is not None]
        if values:
            out[key] = float(np.mean(values))
    return out


def classification_scores(x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray, y_test: np.ndarray, *,
                          samples_per_label: int = SAMPLES_PER_LABEL, experiments: int = EXPERIMENTS,
                          max_iter: int = MAX_ITER, seed: int = MTEB_SEED) -> ClassificationRun:
    """MTEB's classification protocol on a training and a test split (``AbsTaskClassification._evaluate_subset``).

    Parameters
    ----------
    x_train, y_train : arrays
        Training vectors ``(m, d)`` and their integer labels.
    x_test, y_test : arrays
        Test vectors ``(n, d)`` and their integer labels.
    samples_per_label, experiments, max_iter, seed : int, optional
        MTEB's defaults (8, 10, 100, 42); tasks that set others can be
        reproduced with theirs.

    Returns
    -------
    ClassificationRun
        ``correct`` is ``(experiments, n)``: each experiment's verdict on each test item.

    Examples
    --------
    >>> x = np.array([[0.0], [0.1], [0.2], [1.0], [1.1], [1.2]])
    >>> y = np.array([0, 0, 0, 1, 1, 1])
    >>> run = classification_scores(x, y, x, y, samples_per_label=2, experiments=3)
    >>> run.scores["accuracy"], run.scores["ap"], bool(run.correct.all())
    (1.0, 1.0, True)
    """
    order: list[int] | None = None
    labels = np.asarray(y_train).tolist()
    per_experiment, correct, stopped = [], [], 0
    for _ in range(experiments):
        order, kept = undersample(labels, samples_per_label, seed=seed, order=order)
        pred, at_limit = _fit_predict(x_train[kept], y_train[kept], x_test, max_iter, seed)
        stopped += at_limit
        per_experiment.append(_experiment_scores(y_test, pred))
        correct.append(pred == y_test)
    return ClassificationRun(_mean_scores(per_experiment), per_experiment, np.array(correct), stopped)


def cross_validation_scores(x: np.ndarray, y: np.ndarray, *, samples_per_label: int = SAMPLES_PER_LABEL,
                            folds: int = FOLDS, max_iter: int = MAX_ITER, seed: int = MTEB_SEED) -> ClassificationRun:
    """MTEB's classification protocol on one split (``AbsTaskClassification._evaluate_subset_cross_validation``).

    ``KFold(folds, shuffle=True, random_state=seed)`` splits the items; each
    fold's training part is undersampled (:func:`undersample`, the order
    carried from fold to fold as MTEB carries it) and the fitted classifier
    predicts the fold's held-out items.

    Returns
    -------
    ClassificationRun
        One experiment per fold; ``correct`` is ``(n,)``: each item's verdict by the fold that held it out.

    Examples
    --------
    >>> x = np.repeat([[0.0], [5.0]], 20, axis=0) + np.linspace(0, 1, 40)[:, None]
    >>> y = np.repeat([0, 1], 20)
    >>> run = cross_validation_scores(x, y, samples_per_label=4)
    >>> run.scores["accuracy"], len(run.per_experiment), float(run.correct.mean())
    (1.0, 5, 1.0)
    """
    from sklearn.model_selection import KFold

    order: list[int] | None = None
    per_experiment, stopped = [], 0
    correct = np.zeros(len(y), dtype=bool)
    for train, test in KFold(n_splits=folds, shuffle=True, random_state=seed).split(range(len(y))):
        order, kept = undersample(np.asarray(y[train]).tolist(), samples_per_label, seed=seed, order=order)
        pred, at_limit = _fit_predict(x[train][kept], y[train][kept], x[test], max_iter, seed)
        stopped += at_limit
        per_experiment.append(_experiment_scores(y[test], pred))
        correct[test] = pred == y[test]
    return ClassificationRun(_mean_scores(per_experiment), per_experiment, correct, stopped)


def document_sample(n: int, *, max_fraction: float | None = MAX_FRACTION, max_documents: int | None = None,
                    rng: random.Random) -> list[int] | None:
    """The documents MTEB's clustering embeds: ``rng.sample(range(n), k)`` (``None``: all of them).

    ``k = int(max_fraction * n)``, or ``max_documents``, at most ``n``
    (``AbsTaskClustering._evaluate_subset``); both ``None``: every document.

    Examples
    --------
    >>> document_sample(100, rng=random.Random(42))
    [81, 14, 3, 94]
    >>> document_sample(100, max_fraction=None, rng=random.Random(42)) is None
    True
    """
    if max_fraction is not None and max_documents is not None:
        raise InputError("give max_fraction or max_documents, not both")
    if max_fraction is None and max_documents is None:
        return None
    k = int(max_fraction * n) if max_fraction is not None else int(max_documents)  # type: ignore[arg-type]
    return rng.sample(range(n), k=min(n, k))


def clustering_scores(x: np.ndarray, y: np.ndarray, *, rng: random.Random, cluster_size: int = CLUSTER_SIZE,
                      draws: int = DRAWS, batch_size: int = KMEANS_BATCH, seed: int = MTEB_SEED
                      ) -> tuple[dict[str, float], dict[str, list[float]]]:
    """MTEB's fast clustering on the embedded documents (``_evaluate_clustering_bootstrapped``, one level).

    ``draws`` times, ``rng.choices`` draws ``cluster_size`` documents with
    replacement and ``MiniBatchKMeans(k, batch_size=batch_size, n_init=1,
    random_state=seed)`` clusters them, k the number of labels among the
    documents; V-measure and adjusted mutual information against the labels.

    Parameters
    ----------
    x, y : arrays
        The embedded documents and their integer labels.
    rng : random.Random
        MTEB's task generator, after :func:`document_sample` drew from it.

    Returns
    -------
    scores : dict
        ``v_measure``, ``v_measure_std``, ``ami``, ``ami_std`` (means and
        population standard deviations over the draws).
    per_draw : dict
        ``v_measures`` and ``ami_scores``, each ``{"Level 0": [one per draw]}`` as MTEB writes them.

    Examples
    --------
    >>> x = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 5.0]])
    >>> scores, per_draw = clustering_scores(x, np.array([0, 0, 1, 1]), rng=random.Random(42), cluster_size=8, draws=2)
    >>> scores["v_measure"], per_draw["v_measures"]
    (1.0, {'Level 0': [1.0, 1.0]})
    """
    from sklearn.cluster import MiniBatchKMeans
    from sklearn.metrics import adjusted_mutual_info_score, v_measure_score

    model = MiniBatchKMeans(n_clusters=np.unique(y).size, batch_size=batch_size, init="k-means++", n_init=1,
                            random_state=seed)
    v, ami = [], []
    for _ in range(draws):
        idx = rng.choices(range(len(x)), k=cluster_size)
        pred = model.fit_predict(x[idx])
        v.append(float(v_measure_score(y[idx], pred)))
        ami.append(float(adjusted_mutual_info_score(y[idx], pred)))
    scores = {"v_measure": float(np.mean(v)), "v_measure_std": float(np.std(v)),
              "ami": float(np.mean(ami)), "ami_std": float(np.std(ami))}
    return scores, {"v_measures": {"Level 0": v}, "ami_scores": {"Level 0": ami}}


def legacy_clustering_scores(x: np.ndarray, y: np.ndarray, *, batch_size: int = LEGACY_BATCH,
                             seed: int = MTEB_SEED) -> dict[str, float]:
    """MTEB's legacy clustering of one set (``ClusteringEvaluator`` + ``AbsTaskClusteringLegacy``, text).

    Examples
    --------
    >>> x = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 5.0]])
    >>> legacy_clustering_scores(x, np.array([0, 0, 1, 1]))
    {'v_measure': 1.0, 'v_measure_std': 0.0}
    """
    from sklearn.cluster import MiniBatchKMeans
    from sklearn.metrics import v_measure_score

    model = MiniBatchKMeans(n_clusters=len(set(np.asarray(y).tolist())), batch_size=batch_size, n_init="auto",
                            compute_labels=True, random_state=seed).fit(x)
    v = [float(v_measure_score(y, model.labels_))]
    return {"v_measure": float(np.mean(v)), "v_measure_std": float(np.std(v))}


def _labels_of(labels: Any) -> list[Any]:
    return list(labels.labels) if hasattr(labels, "texts") and hasattr(labels, "labels") else list(labels)


def _count_classes(labels: Any, what: str = "the labels") -> None:
    """Fewer than 2 classes is one error line, before anything is embedded."""
    n = len(set(map(str, _labels_of(labels))))
    if n < 2:
        raise InputError(f"{what} hold {n} class; at least 2 are needed")


def _is_vectors(obj: Any) -> bool:
    """Vectors (an array or nested lists), not an encoder (a callable or an object with ``encode``)."""
    return isinstance(obj, np.ndarray) or not (callable(obj) or hasattr(obj, "encode"))


def _subset(vectors_or_encode: Any, labels: Any, texts: Any, keep: list[int]) -> tuple[Any, Any, Any]:
    """The documents ``keep`` of the task's input (vectors, labels, texts), before anything is embedded."""
    if is_dataclass(labels) and hasattr(labels, "texts"):  # LabelledTexts: its texts and labels
        labels = replace(labels, texts=[labels.texts[i] for i in keep], labels=[labels.labels[i] for i in keep])
    else:
        every = list(labels)
        labels = [every[i] for i in keep]
    if texts is not None:
        every = list(texts)
        texts = [every[i] for i in keep]
    if _is_vectors(vectors_or_encode):
        x = np.asarray(vectors_or_encode)
        if x.ndim == 2:
            vectors_or_encode = x[keep]
    return vectors_or_encode, labels, texts


def clustering_task(vectors_or_encode: Any, labels: Any, texts: list[str] | None = None, *, prepare: Prepare,
                    protocol: str = "mteb", codec: Any = None, name: str | None = None,
                    max_fraction: float | None = MAX_FRACTION, max_documents: int | None = None,
                    cluster_size: int = CLUSTER_SIZE, draws: int = DRAWS, seed: int = MTEB_SEED) -> TaskResult:
    """A clustering task under MTEB's protocol: what ``clustering(..., protocol=...)`` returns.

    With ``protocol="mteb"`` only the documents MTEB embeds
    (:func:`document_sample`) are embedded (and the codec fitted on them).

    No bootstrap interval (:attr:`TaskResult.interval` is ``None``): MTEB's
    draws are themselves resamples with replacement of the documents, whose
    duplicates k-means weighs and V-measure counts as agreeing, so neither a
    draw nor a resample of the documents is a draw of the same problem (see
    :func:`~repspace.engines.eval.labels.clustering`); the spread over MTEB's
    draws is ``v_measure_std``, as MTEB reports it. The legacy protocol
    clusters one set once (``v_measure_std`` 0).

    Parameters
    ----------
    vectors_or_encode, labels, texts, codec, name
        As :func:`~repspace.engines.eval.labels.clustering`.
    prepare : callable
        The labelled tasks' input check and embedding (labels' ``_vectors_and_labels``).
    protocol : {"mteb", "mteb-legacy"}
    max_fraction, max_documents, cluster_size, draws, seed
        ``AbsTaskClustering``'s settings (defaults: MTEB's).

    Examples
    --------
    ``clustering(..., protocol="mteb")`` runs MTEB's 10 draws of 16,384
    documents; the legacy protocol clusters the set once:

    >>> from repspace.engines.eval.labels import clustering
    >>> rng = np.random.default_rng(0)
    >>> x = np.vstack([rng.normal(0, 0.1, (60, 2)) + c for c in ([0, 0], [5, 5])])
    >>> r = clustering(x, ["a"] * 60 + ["b"] * 60, protocol="mteb-legacy")
    >>> r.main_metric, r.main_score, r.info["n_items"], sorted(r.scores)
    ('v_measure', 1.0, 120, ['v_measure', 'v_measure_std'])
    """
    t0 = time.perf_counter()
    if check_choice(protocol, "protocol", CLUSTERING_PROTOCOLS) == "repspace":
        raise InputError("clustering_task runs MTEB's protocols: mteb or mteb-legacy")
    check_scalar(cluster_size, "cluster_size", int, low=1)
    check_scalar(draws, "draws", int, low=1)
    _count_classes(labels)
    info: dict[str, Any] = {"protocol": protocol, "mteb_seed": seed}
    rng = random.Random(seed)  # AbsTask(seed).rng_state
    n_all = len(_labels_of(labels))
    keep = document_sample(n_all, max_fraction=max_fraction, max_documents=max_documents,
                           rng=rng) if protocol == "mteb" else None
    if keep is not None:
        if len(set(map(str, (_labels_of(labels)[i] for i in keep)))) < 2:
            raise InputError(f"MTEB's sample of {len(keep)} of the {n_all} documents (max_fraction "
                             f"{max_fraction}, max_documents {max_documents}) holds fewer than 2 classes")
        vectors_or_encode, labels, texts = _subset(vectors_or_encode, labels, texts, keep)
        info["n_documents"] = n_all
    x, y, classes = prepare(vectors_or_encode, labels, texts, codec, info)
    if protocol == "mteb":
        scores, per_draw = clustering_scores(x, y, rng=rng, cluster_size=cluster_size, draws=draws, seed=seed)
        info.update(per_draw, cluster_size=cluster_size, draws=draws, kmeans_batch_size=KMEANS_BATCH)
    else:
        scores = legacy_clustering_scores(x, y, seed=seed)
        info.update(kmeans_batch_size=LEGACY_BATCH)
    info["n_clusters"] = len(classes)
    task = name or ("clustering:" + info["dataset"] if "dataset" in info else "clustering")
    return TaskResult(task, "test", "v_measure", scores, time.perf_counter() - t0, info)


def _with_train(vectors_or_encode: Any, labels: Any, texts: Any, train: Any) -> tuple[Any, list[Any], Any, int]:
    """The training split put before the test split (one embedding call, one class numbering); its size."""
    if hasattr(train, "texts") and hasattr(train, "labels"):
        train_x, train_labels = list(train.texts), list(train.labels)
    elif isinstance(train, tuple) and len(train) == 2:
        train_x, train_labels = train[0], list(train[1])
    else:
        raise InputError("train must be a LabelledTexts or a (vectors or texts, labels) pair")
    if len(train_labels) != len(train_x):
        raise InputError(f"the training split has {len(train_x)} items but {len(train_labels)} labels")
    _count_classes(train_labels, "the training split's labels")
    if _is_vectors(vectors_or_encode):
        try:
            a = np.asarray(train_x, dtype=np.float32)
        except (TypeError, ValueError):
            raise InputError("with vectors, train must be a (vectors, labels) pair") from None
        b = np.asarray(vectors_or_encode, dtype=np.float32)
        if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
            raise InputError(f"training vectors {a.shape} and test vectors {b.shape} must be (n, d) arrays "
                             "of the same width")
        vectors_or_encode = np.vstack([a, b])
    else:
        if isinstance(train_x, np.ndarray) or any(not isinstance(t, str) for t in train_x):
            raise InputError("with an encoder, train must hold texts (a LabelledTexts or a (texts, labels) pair)")
        test_texts = texts if texts is not None else getattr(labels, "texts", None)
        if test_texts is None:
            raise InputError("an encoder needs the texts (pass texts= or a LabelledTexts)")
        texts = list(train_x) + list(test_texts)
    return vectors_or_encode, train_labels + _labels_of(labels), texts, len(train_labels)


def classification_task(vectors_or_encode: Any, labels: Any, texts: list[str] | None = None, *, prepare: Prepare,
                        train: Any = None, codec: Any = None, name: str | None = None,
                        bootstrap: int = DEFAULT_RESAMPLES, seed: int = 0,
                        samples_per_label: int = SAMPLES_PER_LABEL, experiments: int = EXPERIMENTS,
                        max_iter: int = MAX_ITER, folds: int = FOLDS, mteb_seed: int = MTEB_SEED) -> TaskResult:
    """A classification task under MTEB's protocol: what ``classification(..., protocol="mteb")`` returns.

    ``vectors_or_encode``, ``labels`` and ``texts`` are the test split. With
    ``train`` (a :class:`~repspace.engines.eval.labels.LabelledTexts`, or a
    ``(vectors, labels)`` pair beside test vectors, or ``(texts, labels)``
    beside an encoder), :func:`classification_scores`: the classifier learns
    from undersamples of ``train`` and is scored on the test split. Without
    it, as MTEB runs a task that has one split, :func:`cross_validation_scores`.
    Both splits are embedded in one call; a codec is fitted on both.

    The bootstrap interval of the accuracy resamples the test items. With a
    training split each item's unit is the fraction of the experiments that
    predicted it right: their mean is the mean accuracy over the experiments
    exactly, the main score. Under cross-validation each item is predicted
    once, by the fold that held it out, and its unit is that prediction, right
    or wrong: the interval is that of the pooled accuracy, which differs from
    the mean over the folds by a fraction of an item's weight when the folds
    differ in size. The classifiers are not refitted per resample: the
    interval is the uncertainty of the test items, not of the undersampling.
    ``seed`` seeds only the bootstrap; MTEB's own seed (``mteb_seed``, 42)
    fixes the sampling.

    Examples
    --------
    >>> from repspace.engines.eval.labels import classification
    >>> rng = np.random.default_rng(0)
    >>> x = np.vstack([rng.normal(0, 1, (20, 3)) + [6, 0, 0], rng.normal(0, 1, (20, 3)) + [0, 6, 0]])
    >>> labels = ["a"] * 20 + ["b"] * 20
    >>> r = classification(x[::2], labels[::2], train=(x[1::2], labels[1::2]), protocol="mteb")
    >>> r.main_score, r.scores["f1"], r.info["n_train"], (r.interval.low, r.interval.high)
    (1.0, 1.0, 20, (1.0, 1.0))
    >>> classification(x, labels, protocol="mteb").info["folds"]
    5
    """
    t0 = time.perf_counter()
    for value, what, low in ((samples_per_label, "samples_per_label", 1), (experiments, "experiments", 1),
                             (max_iter, "max_iter", 1), (folds, "folds", 2), (bootstrap, "bootstrap", 0)):
        check_scalar(value, what, int, low=low)
    info: dict[str, Any] = {"protocol": "mteb", "mteb_seed": mteb_seed, "samples_per_label": samples_per_label,
                            "max_iter": max_iter}
    m = 0
    if train is not None:
        dataset = getattr(labels, "name", None) if hasattr(labels, "texts") else None
        vectors_or_encode, labels, texts, m = _with_train(vectors_or_encode, labels, texts, train)
        if dataset is not None:
            info["dataset"] = dataset
    else:
        _count_classes(labels)
    x, y, _ = prepare(vectors_or_encode, labels, texts, codec, info)
    if train is not None:
        run = classification_scores(x[:m], y[:m], x[m:], y[m:], samples_per_label=samples_per_label,
                                    experiments=experiments, max_iter=max_iter, seed=mteb_seed)
        units = run.correct.mean(axis=0)
        info.update(n_train=m, n_items=int(len(y) - m), experiments=experiments)
    else:
        if len(y) < folds:
            raise InputError(f"{len(y)} items cannot be split into {folds} folds")
        run = cross_validation_scores(x, y, samples_per_label=samples_per_label, folds=folds, max_iter=max_iter,
                                      seed=mteb_seed)
        units = run.correct
        info.update(folds=folds)
    if run.not_converged:
        info["not_converged_experiments"] = run.not_converged
    info["scores_per_experiment"] = run.per_experiment
    scores = run.scores
    task = name or ("classification:" + info["dataset"] if "dataset" in info else "classification")
    interval = bootstrap_interval(mean_statistic, np.asarray(units, dtype=float), n_resamples=bootstrap, seed=seed)
    return TaskResult(task, "test", "accuracy", scores, time.perf_counter() - t0, info, interval=interval)
