"""Bitext mining: is each sentence's translation its nearest neighbour among all the translations?

Given two aligned lists (``sentences1[i]`` translates to ``sentences2[i]``), every
sentence of the first list is matched to the sentence of the second list whose
vector has the highest cosine with its own (the first one on a tie), and the
matches are scored as MTEB's ``BitextMiningEvaluator`` and ``AbsTaskBitextMining``
score them: the gold match of sentence ``i`` is ``i``, and with the gold and the
predicted indices as class labels, ``precision``, ``recall`` and ``f1`` are
scikit-learn's support-weighted averages (``average="weighted"``,
``zero_division=0``) and ``accuracy`` is the share matched right. ``f1`` is the
main score, as in MTEB's bitext tasks.

With one class per sentence, the weighted recall is the accuracy; precision
charges a sentence of the second list that several sentences were matched to;
F1 sits between. A sentence repeated in the second list can match only one
of its copies, so repeated sentences cost accuracy (MTEB's evaluator does
the same).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from repspace.core.arrays import unit_rows
from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.core.files import read_csv_rows, text_lines
from repspace.engines.eval._encode import as_encode
from repspace.engines.eval._results import TaskResult
from repspace.engines.eval.uncertainty import DEFAULT_RESAMPLES, bootstrap_interval, mean_statistic

#: The scores :func:`bitext_scores` reports (MTEB's names); ``f1`` is the main one.
SCORE_KEYS = ("f1", "precision", "recall", "accuracy")
_HEADER = ("sentence1", "sentence2")
#: Rows of the first list scored against the whole second list at once (bounds the similarity block's memory).
_BLOCK = 1024


@dataclass(frozen=True, eq=False)
class BitextPairs:
    """Two aligned lists of sentences: ``sentences2[i]`` is the translation of ``sentences1[i]``.

    Attributes
    ----------
    sentences1, sentences2 : list of str
        The same length (one InputError line otherwise).
    name : str
        The data set's name (the file's stem).
    split : str
        ``test``, ``dev`` or ``train`` when the name ends so, else ``test``.

    Examples
    --------
    >>> pairs = BitextPairs(["a cat", "a dog"], ["eine Katze", "ein Hund"], "toy")
    >>> table = {"a cat": [1.0, 0.1], "a dog": [0.1, 1.0], "eine Katze": [0.9, 0.0], "ein Hund": [0.0, 0.8]}
    >>> r = bitext(lambda texts: np.array([table[t] for t in texts]), pairs)
    >>> len(pairs), r.task_name, r.main_metric, r.main_score
    (2, 'bitext:toy', 'f1', 1.0)
    >>> BitextPairs(["a cat", "a dog"], ["eine Katze"])
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: bitext needs two aligned lists of the same length: 2 sentences and 1
    """

    sentences1: list[str]
    sentences2: list[str]
    name: str = "bitext"
    split: str = "test"

    def __post_init__(self) -> None:
        if len(self.sentences1) != len(self.sentences2):
            raise InputError(f"bitext needs two aligned lists of the same length: {len(self.sentences1)} sentences "
                             f"and {len(self.sentences2)}")
        if not self.sentences1:
            raise InputError("bitext needs at least one sentence pair")

    def __len__(self) -> int:
        return len(self.sentences1)

    def texts(self) -> list[str]:
        """Every distinct sentence of both lists, in order of first appearance (what is embedded)."""
        return list(dict.fromkeys(self.sentences1 + self.sentences2))


def _split_of(stem: str) -> str:
    return next((s for s in ("test", "dev", "train") if stem.endswith(s)), "test")


def _one_file(path: Path) -> tuple[list[str], list[str]]:
    """The two columns of a CSV, or of a tab-separated file (``.tsv``, ``.tab``: fields split at tabs, no quoting)."""
    if path.suffix.lower() in (".tsv", ".tab"):
        rows = [(n, line.split("\t")) for n, line in text_lines(path, "bitext file") if line.strip()]
    else:
        rows = [(n, row) for n, row in enumerate(read_csv_rows(path, "bitext file"), start=1) if row]
    if rows and tuple(c.strip().lower() for c in rows[0][1]) == _HEADER:
        rows = rows[1:]
    first, second = [], []
    for line, row in rows:
        if len(row) != 2:
            raise InputError(f"{path}:{line}: expected 2 fields (sentence1, sentence2), got {len(row)}")
        for name, text in zip(("sentence1", "sentence2"), row):
            if not text.strip():
                raise InputError(f"{path}:{line}: {name} is empty (each sentence is matched with its translation)")
        first.append(row[0])
        second.append(row[1])
    if not first:
        raise InputError(f"bitext file {path} holds no sentence pairs")
    return first, second


def _lines(path: Path) -> list[str]:
    out = []
    for n, line in text_lines(path, "bitext file"):
        if not line.strip():
            raise InputError(f"{path}:{n}: empty line (each line is a sentence aligned with the same line of the "
                             "other file)")
        out.append(line)
    return out


def load_bitext(path: str | Path, second: str | Path | None = None) -> BitextPairs:
    """Read aligned sentences: one file with two columns, or two files with one sentence per line.

    Parameters
    ----------
    path : str or Path
        With ``second`` omitted, a UTF-8 file of ``sentence1, sentence2`` rows:
        CSV, or tab-separated when it ends in ``.tsv`` or ``.tab`` (split at the
        tab, no quoting); a header row ``sentence1, sentence2`` is optional,
        blank rows are skipped. With ``second``, a UTF-8 text file of the first
        list's sentences, one per line.
    second : str or Path, optional
        The second list's sentences, one per line, aligned with ``path``'s lines.

    Returns
    -------
    BitextPairs
        Named after ``path``'s stem (``path``'s and ``second``'s joined by
        ``+`` for two files); split ``test``, ``dev`` or ``train`` when the
        name ends so.

    Raises
    ------
    InputError
        If a file is missing or empty, a row has other than 2 fields or a blank
        one, a line of a two-file pair is empty, or the two files hold different numbers
        of lines.

    Examples
    --------
    >>> from repspace.store import example_file
    >>> p = example_file("en-de-test.tsv", "sentence1\\tsentence2\\nA cat.\\tEine Katze.\\nA dog.\\tEin Hund.\\n")
    >>> pairs = load_bitext(p)
    >>> pairs.sentences2, pairs.split
    (['Eine Katze.', 'Ein Hund.'], 'test')
    >>> load_bitext(example_file("en.txt", "A cat.\\nA dog.\\n"), example_file("de.txt", "Eine Katze.\\n"))
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: bitext needs two aligned lists of the same length: 2 sentences and 1
    """
    path = Path(path)
    if second is None:
        first, other = _one_file(path)
        name = path.stem
    else:
        second = Path(second)
        first, other = _lines(path), _lines(second)
        name = f"{path.stem}+{second.stem}"
    return BitextPairs(first, other, name, _split_of(name))


def nearest_neighbours(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """For each row of ``a``, the index of the row of ``b`` with the highest cosine (the first one on a tie).

    Examples
    --------
    >>> nearest_neighbours(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[0.1, 1.0], [1.0, 0.0], [1.0, 0.1]])).tolist()
    [1, 0]
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1] or not len(b):
        raise InputError(f"nearest neighbours need two (n, d) arrays of one dimension, got {a.shape} and {b.shape}")
    ua, ub = unit_rows(a), unit_rows(b)
    out = np.empty(len(a), dtype=np.int64)
    for start in range(0, len(a), _BLOCK):
        out[start:start + _BLOCK] = np.argmax(ua[start:start + _BLOCK] @ ub.T, axis=1)
    return out


def _counts(labels: np.ndarray, predictions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The support, the predicted count and the hits of every class (class labels are indices from 0)."""
    k = int(max(labels.max(), predictions.max())) + 1
    support = np.bincount(labels, minlength=k)
    predicted = np.bincount(predictions, minlength=k)
    hits = np.bincount(labels[labels == predictions], minlength=k)
    return support, predicted, hits


def _checked(labels: np.ndarray, predictions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    labels = np.asarray(labels, dtype=np.int64).ravel()
    predictions = np.asarray(predictions, dtype=np.int64).ravel()
    if labels.shape != predictions.shape or not labels.size:
        raise InputError(f"mining scores need as many predictions as labels (at least one), got "
                         f"{predictions.size} and {labels.size}")
    if labels.min() < 0 or predictions.min() < 0:
        raise InputError("labels and predictions are indices: they cannot be negative")
    return labels, predictions


def unit_f1(labels: np.ndarray, predictions: np.ndarray) -> np.ndarray:
    """Each sentence's share of the support-weighted F1: the F1 of its gold class, ``2·hits / (support + predicted)``.

    Their mean is scikit-learn's ``f1_score(average="weighted")`` (each class
    weighs its support, i.e. its sentences): the per-unit values a bootstrap
    interval of the F1 resamples.

    Examples
    --------
    Sentences 1 and 2 both matched to translation 1: class 1 has F1 2/3, class 2 has 0.

    >>> unit_f1(np.array([0, 1, 2]), np.array([0, 1, 1])).round(4).tolist()
    [1.0, 0.6667, 0.0]
    """
    labels, predictions = _checked(labels, predictions)
    support, predicted, hits = _counts(labels, predictions)
    return 2.0 * hits[labels] / (support[labels] + predicted[labels])


def mining_scores(labels: np.ndarray, predictions: np.ndarray) -> dict[str, float]:
    """MTEB's bitext-mining scores of predicted matches against the gold ones.

    Parameters
    ----------
    labels, predictions : (m,) arrays of int
        The gold and the predicted index of each sentence's match.

    Returns
    -------
    dict
        ``f1``, ``precision``, ``recall`` (support-weighted, as scikit-learn's
        ``average="weighted"`` with ``zero_division=0``) and ``accuracy``.

    Examples
    --------
    Sentences 1 and 2 both matched to translation 1: sentence 2 is wrong, and
    translation 1's precision is 1/2.

    >>> s = mining_scores(np.array([0, 1, 2]), np.array([0, 1, 1]))
    >>> {k: round(v, 4) for k, v in s.items()}
    {'f1': 0.5556, 'precision': 0.5, 'recall': 0.6667, 'accuracy': 0.6667}
    """
    labels, predictions = _checked(labels, predictions)
    support, predicted, hits = _counts(labels, predictions)
    m = labels.size
    precision = np.divide(hits, predicted, out=np.zeros(hits.shape), where=predicted > 0)
    recall = np.divide(hits, support, out=np.zeros(hits.shape), where=support > 0)
    return {"f1": float(np.mean(unit_f1(labels, predictions))),
            "precision": float((support * precision).sum() / m),
            "recall": float((support * recall).sum() / m),
            "accuracy": float(hits.sum() / m)}


def bitext_scores(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    """Match each row of ``a`` to its nearest row of ``b`` by cosine and score the matches (gold: the same row).

    Parameters
    ----------
    a, b : (n, d) arrays
        The two lists' vectors, aligned: ``b[i]`` is the translation of ``a[i]``.

    Returns
    -------
    dict
        The scores of :func:`mining_scores`.

    Examples
    --------
    >>> a = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> bitext_scores(a, a)["f1"], bitext_scores(a, a[::-1])["accuracy"]
    (1.0, 0.3333333333333333)
    """
    a = np.asarray(a)
    if np.shape(a) != np.shape(b):
        raise InputError(f"bitext needs two aligned (n, d) arrays of one shape, got {np.shape(a)} and {np.shape(b)}")
    return mining_scores(np.arange(len(a)), nearest_neighbours(a, b))


def bitext(encode: Any, pairs: BitextPairs, *, codec: Any = None, name: str | None = None,
           bootstrap: int = DEFAULT_RESAMPLES, seed: int = 0) -> TaskResult:
    """Score an encoder on bitext mining: match each sentence to its nearest translation by cosine.

    Parameters
    ----------
    encode : callable or object with ``encode``
        Texts to vectors; the distinct sentences of both lists go to it in one
        call (as documents: the same side for both languages).
    pairs : BitextPairs
        From :func:`load_bitext`.
    codec : Codec, optional
        A compression, fitted on all the task's vectors, applied before matching.
    name : str, optional
        Task name; default ``bitext:<data set name>``.
    bootstrap : int
        Resamples of the sentence pairs behind the main score's interval (the
        mean of each pair's share of the F1, :func:`unit_f1`, the matches found
        once over the whole second list; percentile, 95%); 0: none.
    seed : int
        The bootstrap's seed.

    Returns
    -------
    TaskResult
        Main metric ``f1``; ``precision``, ``recall``, ``accuracy`` beside it;
        ``n_pairs`` in info.

    Examples
    --------
    >>> from repspace.engines.encoders import get_encoder
    >>> pairs = BitextPairs(["a cat sits", "a man runs"], ["a cat is sitting", "a man is running"], "toy")
    >>> r = bitext(get_encoder("static"), pairs)
    >>> r.task_name, r.main_metric, 0.0 <= r.main_score <= 1.0
    ('bitext:toy', 'f1', True)
    """
    t0 = time.perf_counter()
    check_scalar(bootstrap, "bootstrap", int, low=0)
    if not isinstance(pairs, BitextPairs):
        pairs = load_bitext(pairs)
    texts = pairs.texts()
    vectors = as_encode(encode)(texts)
    info: dict[str, Any] = {"n_pairs": len(pairs)}
    if codec is not None:
        vectors = np.asarray(codec.fit(vectors).transform(vectors), dtype=np.float32)
        if vectors.ndim != 2 or len(vectors) != len(texts):
            raise InputError(f"codec {getattr(codec, 'name', codec)!r} returned shape {vectors.shape} for "
                             f"{len(texts)} vectors")
        info.update(codec=codec.to_dict(), bytes_per_vector=int(codec.bytes_per_vector))
    row = {t: i for i, t in enumerate(texts)}
    a = vectors[[row[t] for t in pairs.sentences1]]
    b = vectors[[row[t] for t in pairs.sentences2]]
    labels = np.arange(len(pairs))
    predicted = nearest_neighbours(a, b)
    scores = mining_scores(labels, predicted)
    interval = None
    if len(pairs) >= 2:
        interval = bootstrap_interval(mean_statistic, unit_f1(labels, predicted), n_resamples=bootstrap, seed=seed)
    return TaskResult(name or f"bitext:{pairs.name}", pairs.split, "f1", scores, time.perf_counter() - t0, info,
                      interval=interval)
