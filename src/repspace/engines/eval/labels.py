"""Tasks on labelled texts: clustering (V-measure of k-means) and classification (cross-validated).

Both take either the vectors themselves (an ``(n, d)`` array) or an encoder
(anything :func:`~repspace.engines.eval._encode.as_encode` accepts) with the texts,
and the labels (a sequence, or a :class:`LabelledTexts` that holds the texts
too).
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from repspace.core.checks import check_choice, check_scalar
from repspace.core.errors import InputError
from repspace.core.files import read_csv_rows, read_jsonl
from repspace.engines.eval._encode import as_encode
from repspace.engines.eval._results import TaskResult
from repspace.engines.eval.mteb_protocol import CLASSIFICATION_PROTOCOLS, classification_task, clustering_task
from repspace.engines.eval.uncertainty import DEFAULT_RESAMPLES, bootstrap_interval, mean_statistic
from repspace.engines.eval.units import Units


#: The linear probe's iteration cap (scikit-learn's lbfgs): :func:`classification` and the few-shot probes
#: (:mod:`repspace.engines.eval.fewshot`) fit the same classifier.
PROBE_MAX_ITER = 1000


def linear_probe() -> Any:
    """The linear probe of the classification tasks: ``LogisticRegression(max_iter=PROBE_MAX_ITER)``, unfitted."""
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(max_iter=PROBE_MAX_ITER)


@dataclass(frozen=True, eq=False)
class LabelledTexts:
    """Texts with one class label each.

    Attributes
    ----------
    texts : list of str
    labels : list of str
        Labels are read as strings (``1`` and ``"1"`` are the same class).
    name : str
        The data set's name (the file's stem).

    Examples
    --------
    >>> data = LabelledTexts(["a cat", "a kitten", "stocks fell", "bonds fell"],
    ...                      ["pets", "pets", "money", "money"], "toy")
    >>> table = {"a cat": [1.0, 0.0], "a kitten": [0.9, 0.1], "stocks fell": [0.0, 1.0], "bonds fell": [0.1, 0.9]}
    >>> r = clustering(lambda texts: np.array([table[t] for t in texts]), data, seeds=1)
    >>> len(data), r.task_name, round(r.main_score, 3)
    (4, 'clustering:toy', 1.0)
    """

    texts: list[str]
    labels: list[str]
    name: str = "labelled"

    def __len__(self) -> int:
        return len(self.texts)


def _label_str(value: Any, where: str) -> str:
    if isinstance(value, bool) or value is None or isinstance(value, (list, dict)):
        raise InputError(f"{where}: the label {value!r} is not a string or a number")
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(f"{where}: the label {value!r} is not finite")
    text = str(value).strip()
    if not text:
        raise InputError(f"{where}: the label is empty")
    return text


def load_labelled(path: str | Path, text_col: str = "text", label_col: str = "label") -> LabelledTexts:
    """Read labelled texts from a CSV (``.csv``; ``.tsv`` tab-separated) or JSON-lines (``.jsonl``) file.

    Parameters
    ----------
    path : str or Path
        A UTF-8 file. CSV files need a header row naming the columns.
    text_col, label_col : str, optional
        The columns (CSV) or keys (JSON lines) holding the text and the label.

    Returns
    -------
    LabelledTexts
        Labels as strings; named after the file's stem.

    Raises
    ------
    InputError
        If the file is missing, of an unknown kind, empty, lacks one of the
        columns, or a line is malformed (bad JSON, a missing or empty text or
        label: its line number is given).

    Examples
    --------
    >>> from repspace.store import example_file
    >>> data = load_labelled(example_file("toy.jsonl",
    ...                                   '{"text": "a cat", "label": 1}\\n{"text": "stocks fell", "label": "2"}\\n'))
    >>> data.texts, data.labels, data.name
    (['a cat', 'stocks fell'], ['1', '2'], 'toy')
    >>> p = example_file("toy.csv", 'body,topic\\n"a cat, asleep",pets\\n')
    >>> load_labelled(p, text_col="body", label_col="topic").labels
    ['pets']
    >>> load_labelled(p)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: ...toy.csv has no column 'text' (columns: body, topic)
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".tsv", ".jsonl", ".ndjson"):
        raise InputError(f"{path}: unknown kind of labelled file (expected .csv, .tsv or .jsonl)")
    texts: list[str] = []
    labels: list[str] = []
    if suffix in (".csv", ".tsv"):
        rows = read_csv_rows(path, "labelled file", delimiter="\t" if suffix == ".tsv" else ",")
        if not rows:
            raise InputError(f"labelled file {path} is empty")
        header = [c.strip() for c in rows[0]]
        for col in (text_col, label_col):
            if col not in header:
                raise InputError(f"{path} has no column {col!r} (columns: {', '.join(header)})")
        ti, li = header.index(text_col), header.index(label_col)
        for line, row in enumerate(rows[1:], start=2):
            if not row:
                continue
            if len(row) != len(header):
                raise InputError(f"{path}:{line}: expected {len(header)} fields, got {len(row)}")
            if not row[ti].strip():
                raise InputError(f"{path}:{line}: the text is empty")
            texts.append(row[ti])
            labels.append(_label_str(row[li], f"{path}:{line}"))
    else:
        for line, obj in read_jsonl(path, "labelled file"):
            for key in (text_col, label_col):
                if key not in obj:
                    raise InputError(f"{path}:{line}: no key {key!r}")
            text = obj[text_col]
            if not isinstance(text, str) or not text.strip():
                raise InputError(f"{path}:{line}: the text must be a non-empty string, got {text!r:.60}")
            texts.append(text)
            labels.append(_label_str(obj[label_col], f"{path}:{line}"))
    if not texts:
        raise InputError(f"labelled file {path} holds no rows")
    return LabelledTexts(texts, labels, path.stem)


def _vectors_and_labels(vectors_or_encode: Any, labels: Any, texts: Any, codec: Any,
                        info: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The task's (codec-applied) float32 vectors, integer class ids, and class names."""
    if isinstance(labels, LabelledTexts):
        info["dataset"] = labels.name
        texts = labels.texts if texts is None else texts
        labels = labels.labels
    label_arr = np.asarray(list(labels))
    if label_arr.ndim != 1:
        raise InputError(f"labels must be one per item, got shape {label_arr.shape}")
    if isinstance(vectors_or_encode, np.ndarray) or not (callable(vectors_or_encode)
                                                         or hasattr(vectors_or_encode, "encode")):
        x = np.asarray(vectors_or_encode, dtype=np.float32)
        if x.ndim != 2:
            raise InputError(f"vectors must be an (n, d) array, got shape {x.shape}")
        if not np.isfinite(x).all():
            raise InputError("vectors hold NaN or infinite values")
    else:
        if texts is None:
            raise InputError("an encoder needs the texts (pass texts= or a LabelledTexts)")
        texts = list(texts)
        enc = as_encode(vectors_or_encode)
        distinct = list(dict.fromkeys(texts))
        position = {t: i for i, t in enumerate(distinct)}
        x = enc(distinct)[[position[t] for t in texts]]
    if len(x) != len(label_arr):
        raise InputError(f"{len(x)} vectors but {len(label_arr)} labels")
    classes, y = np.unique(label_arr, return_inverse=True)
    if len(classes) < 2:
        raise InputError(f"the labels hold {len(classes)} class; at least 2 are needed")
    if codec is not None:
        x = np.asarray(codec.fit(x).transform(x), dtype=np.float32)
        if x.ndim != 2 or len(x) != len(y):
            raise InputError(f"codec {getattr(codec, 'name', codec)!r} returned shape {x.shape} for {len(y)} vectors")
        info.update(codec=codec.to_dict(), bytes_per_vector=int(codec.bytes_per_vector))
    info.update(n_items=int(len(y)), n_classes=int(len(classes)))
    return np.ascontiguousarray(x), y.reshape(-1).astype(np.int64), [str(c) for c in classes]


def clustering(vectors_or_encode: Any, labels: Any, texts: list[str] | None = None, *, codec: Any = None,
               seeds: int = 5, name: str | None = None, protocol: str = "repspace") -> TaskResult:
    """V-measure of k-means clusters against the labels, k = the number of distinct labels.

    scikit-learn's ``KMeans(n_clusters=k, n_init=10, random_state=seed)`` is
    run for each seed ``0 .. seeds - 1`` on the raw (not normalised) vectors;
    the score is the mean ``v_measure_score`` over the seeds.

    No bootstrap interval is given (:attr:`TaskResult.interval` is ``None``):
    the items are not independent units of this score. Resampling them with
    replacement puts duplicate points in the data, which k-means treats as
    weights (a duplicated point pulls its centroid) and which V-measure counts
    as items already agreeing with each other, so a resample's clustering and
    score are those of another, easier problem, not a draw of the same one.
    The spread over k-means seeds is reported as ``v_measure_std`` instead.

    Parameters
    ----------
    vectors_or_encode, labels, texts
        The vectors or an encoder, the labels and the texts, as in :func:`classification`.
    codec : Codec, optional
        A compression fitted on all the task's vectors, applied before clustering.
    seeds : int, optional
        Number of k-means runs (seeds 0 to ``seeds - 1``).
    name : str, optional
        Task name; default ``clustering`` or ``clustering:<data set name>``.
    protocol : {"repspace", "mteb", "mteb-legacy"}, optional
        ``mteb``: MTEB's fast clustering (subsampled documents, mini-batch
        k-means on 10 draws; ``v_measure`` and ``ami``), ``mteb-legacy``: MTEB's
        original one-set clustering; ``seeds`` then unused
        (:func:`~repspace.engines.eval.mteb_protocol.clustering_task`).

    Returns
    -------
    TaskResult
        Main metric ``v_measure`` (mean over seeds), ``v_measure_std``
        (population standard deviation over seeds) beside it.

    Raises
    ------
    InputError
        With fewer than 2 classes, fewer items than classes, ``seeds < 1``,
        or mismatched vectors, texts and labels.

    Examples
    --------
    >>> x = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 5.0]])
    >>> r = clustering(x, ["a", "a", "b", "b"], seeds=2)
    >>> r.main_metric, r.main_score, r.scores["v_measure_std"]
    ('v_measure', 1.0, 0.0)
    """
    from sklearn.cluster import KMeans
    from sklearn.metrics import v_measure_score

    if protocol != "repspace":
        return clustering_task(vectors_or_encode, labels, texts, prepare=_vectors_and_labels, protocol=protocol,
                               codec=codec, name=name)
    t0 = time.perf_counter()
    check_scalar(seeds, "seeds", int, low=1)
    info: dict[str, Any] = {}
    x, y, classes = _vectors_and_labels(vectors_or_encode, labels, texts, codec, info)
    k = len(classes)
    if len(x) < k:
        raise InputError(f"{len(x)} items cannot form {k} clusters")
    values = []
    for seed in range(seeds):
        pred = KMeans(n_clusters=k, n_init=10, random_state=seed).fit_predict(x)
        values.append(float(v_measure_score(y, pred)))
    info.update(n_clusters=k, seeds=seeds)
    scores = {"v_measure": float(np.mean(values)), "v_measure_std": float(np.std(values))}
    task = name or ("clustering:" + info["dataset"] if "dataset" in info else "clustering")
    return TaskResult(task, "test", "v_measure", scores, time.perf_counter() - t0, info)


def classification(vectors_or_encode: Any, labels: Any, texts: list[str] | None = None, *, folds: int = 5,
                   knn_k: int = 5, codec: Any = None, seed: int = 0, name: str | None = None,
                   bootstrap: int = DEFAULT_RESAMPLES, protocol: str = "repspace", train: Any = None) -> TaskResult:
    """Cross-validated accuracy of a logistic regression (and of k nearest neighbours) on the vectors.

    The items are split by scikit-learn's ``StratifiedKFold(folds,
    shuffle=True, random_state=seed)``; in each fold a
    ``LogisticRegression(max_iter=1000)`` and a cosine
    ``KNeighborsClassifier(knn_k)`` are fitted on the training part and
    scored on the held-out part; scores are means over the folds. A codec is
    fitted once on all the vectors (it is unsupervised, so this leaks no
    label, though the held-out vectors do shape it).

    Parameters
    ----------
    vectors_or_encode : (n, d) array or encoder
        The vectors, or anything :func:`~repspace.engines.eval._encode.as_encode`
        accepts (the distinct texts then go to it in one call).
    labels : sequence or LabelledTexts
        One label per item; a :class:`LabelledTexts` brings the texts too.
    texts : list of str, optional
        The texts, needed with an encoder and plain labels.
    folds : int, optional
        Number of folds (at least 2).
    knn_k : int, optional
        Neighbours of the kNN classifier (capped at the training part's size).
    codec : Codec, optional
        A compression fitted on all the task's vectors, applied before fitting.
    seed : int, optional
        The folds' shuffling seed, and the bootstrap's.
    name : str, optional
        Task name; default ``classification`` or ``classification:<data set name>``.
    bootstrap : int, optional
        Resamples of the items behind the main score's interval; 0: no interval.
        Every item is predicted once, by the fold that held it out, and the
        units are those predictions, right (1) or wrong (0): the interval is
        that of their mean (:func:`~repspace.engines.eval.uncertainty.bootstrap_interval`,
        percentile, 95%), the pooled held-out accuracy, which equals the mean
        over folds when the folds are the same size (and differs from it by a
        fraction of an item's weight otherwise). The folds are not refitted per
        resample: the interval is the uncertainty of the test items, not of
        the fitting.
    protocol : {"repspace", "mteb"}, optional
        ``mteb``: MTEB's protocol (logistic regression on 8 items per label,
        10 experiments, scores under MTEB's names;
        :func:`~repspace.engines.eval.mteb_protocol.classification_task`);
        ``folds`` and ``knn_k`` then unused, ``seed`` seeds only the bootstrap.
    train : LabelledTexts or (vectors or texts, labels), optional
        ``mteb`` only: the training split (the items above are the test
        split); without it, MTEB's 5-fold cross-validation.

    Returns
    -------
    TaskResult
        Main metric ``accuracy`` (logistic regression); ``f1_macro`` (its
        macro-averaged F1) and ``knn_accuracy`` beside it; the accuracy's
        bootstrap interval over the items as :attr:`TaskResult.interval`; each
        item's held-out prediction, right (1) or wrong (0), as :attr:`TaskResult.units`.

    Raises
    ------
    InputError
        With fewer than 2 classes, a class with fewer members than
        ``folds``, ``folds < 2``, ``knn_k < 1``, ``bootstrap < 0``, or
        mismatched vectors, texts and labels.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = np.vstack([rng.normal(0, 1, (20, 3)) + [8, 0, 0], rng.normal(0, 1, (20, 3)) + [0, 8, 0]])
    >>> r = classification(x, ["a"] * 20 + ["b"] * 20)
    >>> r.main_score, r.scores["knn_accuracy"], r.scores["f1_macro"]
    (1.0, 1.0, 1.0)
    >>> r.interval.low, r.interval.high
    (1.0, 1.0)
    """
    from sklearn.metrics import accuracy_score, f1_score
    from sklearn.model_selection import StratifiedKFold
    from sklearn.neighbors import KNeighborsClassifier

    if check_choice(protocol, "protocol", CLASSIFICATION_PROTOCOLS) == "mteb":
        return classification_task(vectors_or_encode, labels, texts, prepare=_vectors_and_labels, train=train,
                                   codec=codec, name=name, bootstrap=bootstrap, seed=seed)
    if train is not None:
        raise InputError("a training split is for protocol='mteb'; the repspace protocol cross-validates")
    t0 = time.perf_counter()
    check_scalar(folds, "folds", int, low=2)
    check_scalar(knn_k, "knn_k", int, low=1)
    check_scalar(bootstrap, "bootstrap", int, low=0)
    info: dict[str, Any] = {}
    x, y, classes = _vectors_and_labels(vectors_or_encode, labels, texts, codec, info)
    counts = np.bincount(y)
    if counts.min() < folds:
        small = classes[int(np.argmin(counts))]
        raise InputError(f"class {small!r} has {int(counts.min())} member{'s' if counts.min() != 1 else ''}, "
                         f"fewer than the {folds} folds")
    acc, f1, knn_acc = [], [], []
    correct = np.zeros(len(y))  # each item's held-out prediction, right (1) or wrong (0)
    not_converged = 0
    for train, test in StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed).split(x, y):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            clf = linear_probe().fit(x[train], y[train])
        for w in caught:
            if "converge" in str(w.message).lower():
                not_converged += 1
                break
        for w in caught:
            if "converge" not in str(w.message).lower():
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        pred = clf.predict(x[test])
        correct[test] = pred == y[test]
        acc.append(accuracy_score(y[test], pred))
        f1.append(f1_score(y[test], pred, average="macro"))
        knn = KNeighborsClassifier(n_neighbors=min(knn_k, len(train)), metric="cosine").fit(x[train], y[train])
        knn_acc.append(accuracy_score(y[test], knn.predict(x[test])))
    info.update(folds=folds, knn_k=knn_k, seed=seed)
    if not_converged:
        info["not_converged_folds"] = int(not_converged)
    scores = {"accuracy": float(np.mean(acc)), "f1_macro": float(np.mean(f1)), "knn_accuracy": float(np.mean(knn_acc))}
    task = name or ("classification:" + info["dataset"] if "dataset" in info else "classification")
    interval = bootstrap_interval(mean_statistic, correct, n_resamples=bootstrap, seed=seed)
    units = Units("mean", (correct,), ("correct",))
    return TaskResult(task, "test", "accuracy", scores, time.perf_counter() - t0, info, interval=interval,
                      units=units)
