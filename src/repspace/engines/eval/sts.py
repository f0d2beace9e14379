"""Semantic textual similarity: does cosine similarity rank sentence pairs as people do?

The score is the Spearman correlation between the cosine of each pair's two
vectors and the gold similarity, as sentence-transformers'
``EmbeddingSimilarityEvaluator`` computes it (``scipy.stats.spearmanr``), with
Pearson beside it. MTEB's names and its distance-based correlations are
reported too (``cosine_spearman`` is MTEB's main score of STS tasks).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.core.files import read_csv_rows
from repspace.engines.eval._encode import as_encode
from repspace.engines.eval._pairs import finite_score, pair_header, read_pair_rows
from repspace.engines.eval._results import TaskResult
from repspace.engines.eval.uncertainty import DEFAULT_RESAMPLES, bootstrap_interval, spearman_statistic
from repspace.engines.eval.units import Units

_HEADER = ("sentence1", "sentence2", "score")


@dataclass(frozen=True)
class StsPairs:
    """Sentence pairs with a gold similarity.

    Attributes
    ----------
    sentences1, sentences2 : list of str
    scores : (n,) float64 array
        Gold similarities (any scale; only their order matters for Spearman).
    name : str
        The data set's name (the file's stem).
    split : str
        ``test``, ``dev`` or ``train`` when the name says so, else ``test``.

    Examples
    --------
    >>> pairs = StsPairs(["a cat sat", "a cat sat", "a man ran"], ["a kitten sat", "stocks fell", "a man jogged"],
    ...                  np.array([4.8, 0.2, 4.0]), "toy")
    >>> table = {"a cat sat": [1.0, 0.0], "a kitten sat": [0.9, 0.2], "stocks fell": [-0.5, 1.0],
    ...          "a man ran": [0.3, 1.0], "a man jogged": [0.8, 0.6]}
    >>> r = sts(lambda texts: np.array([table[t] for t in texts]), pairs)
    >>> len(pairs), len(pairs.texts()), r.task_name, round(r.main_score, 3)
    (3, 6, 'sts:toy', 1.0)
    """

    sentences1: list[str]
    sentences2: list[str]
    scores: np.ndarray
    name: str = "sts"
    split: str = "test"

    def __len__(self) -> int:
        return len(self.scores)

    def texts(self) -> list[str]:
        """Every sentence the task embeds (repeats included)."""
        return self.sentences1 + self.sentences2


def load_sts(path: str | Path) -> StsPairs:
    """Read a CSV of ``sentence1,sentence2,score`` rows (a header row is optional).

    A header may name further columns after those three (``sentence1,sentence2,score,genre``):
    every row then has that many fields; the further ones are not scored, and
    ``--by genre`` splits the task on one (:func:`repspace.engines.eval.part_data.read_parts`).

    Parameters
    ----------
    path : str or Path
        A UTF-8 CSV file such as ``stsb-en-test.csv``.

    Returns
    -------
    StsPairs

    Raises
    ------
    InputError
        If the file is missing, empty, or a row does not have three fields
        (as many as the header names) with a numeric third one or has a blank sentence
        (the line number is given).

    Examples
    --------
    >>> from repspace.store import example_file
    >>> p = example_file("toy-test.csv", 'A cat.,A kitten.,4.5\\nA cat.,"A car, red.",0.5\\n')
    >>> pairs = load_sts(p)
    >>> len(pairs), pairs.sentences2[1], pairs.split
    (2, 'A car, red.', 'test')
    """
    path = Path(path)
    rows = read_csv_rows(path, "STS file")
    header = pair_header(rows, _HEADER)
    start = 0 if header is None else 1
    fields = ",".join(header or _HEADER)
    s1, s2, gold = read_pair_rows(enumerate(rows[start:], start=start + 1), path, "STS file", fields, finite_score,
                                  n_fields=len(header or _HEADER))
    stem = path.stem
    split = next((s for s in ("test", "dev", "train") if stem.endswith(s)), "test")
    return StsPairs(s1, s2, np.asarray(gold, dtype=np.float64), stem, split)


def sts_scores(a: np.ndarray, b: np.ndarray, gold: np.ndarray) -> dict[str, float]:
    """Correlations of the pairs' similarity with the gold scores, under repspace's and MTEB's names.

    Parameters
    ----------
    a, b : (n, d) arrays
        The two sides of each pair (not necessarily normalised).
    gold : (n,) array
        Gold similarities.

    Returns
    -------
    dict
        ``spearman`` and ``pearson`` of the cosine (repspace's names), the same
        values as ``cosine_spearman`` and ``cosine_pearson`` (MTEB's), and, as
        MTEB's STS evaluator computes them, ``euclidean_spearman``,
        ``euclidean_pearson``, ``manhattan_spearman`` and ``manhattan_pearson``
        of the negated distances between the vectors as given. A distance
        correlation that is undefined (every pair at the same distance) is left out.

    Raises
    ------
    InputError
        With fewer than 2 pairs, or when the gold scores or the cosines are
        all equal (the correlation is undefined there rather than ``NaN``).

    Examples
    --------
    >>> a = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    >>> b = np.array([[1.0, 0.1], [1.0, 1.0], [0.0, 1.0]])
    >>> s = sts_scores(a, b, np.array([5.0, 3.0, 0.0]))
    >>> s["spearman"], s["cosine_spearman"], s["euclidean_spearman"]
    (1.0, 1.0, 1.0)
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    gold = np.asarray(gold, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 2 or len(gold) != len(a):
        raise InputError(f"STS needs two (n, d) arrays and n gold scores; got {a.shape}, {b.shape}, {gold.shape}")
    if len(gold) < 2:
        raise InputError("STS needs at least 2 pairs")
    cos = paired_cosine(a, b)
    if np.ptp(gold) == 0:
        raise InputError("all gold scores are equal: the correlation is undefined")
    if np.ptp(cos) == 0:
        raise InputError("every pair has the same cosine (constant or zero vectors?): the correlation is undefined")
    spearman = float(stats.spearmanr(gold, cos).statistic)
    pearson = float(stats.pearsonr(gold, cos).statistic)
    out = {"spearman": spearman, "pearson": pearson, "cosine_spearman": spearman, "cosine_pearson": pearson}
    diff = a - b
    for name, sim in (("euclidean", -np.sqrt(np.einsum("ij,ij->i", diff, diff))),
                      ("manhattan", -np.abs(diff).sum(axis=1))):
        if np.ptp(sim) > 0:
            out[f"{name}_spearman"] = float(stats.spearmanr(gold, sim).statistic)
            out[f"{name}_pearson"] = float(stats.pearsonr(gold, sim).statistic)
    return out


def paired_cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine of each row of ``a`` with the same row of ``b`` (0 where a row is zero).

    Examples
    --------
    >>> paired_cosine(np.array([[1.0, 0.0], [0.0, 0.0]]), np.array([[1.0, 1.0], [1.0, 0.0]])).round(4).tolist()
    [0.7071, 0.0]
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    na = np.linalg.norm(a, axis=1)
    nb = np.linalg.norm(b, axis=1)
    dots = np.einsum("ij,ij->i", a, b)
    denom = na * nb
    return np.divide(dots, denom, out=np.zeros_like(dots), where=denom > 0)


def sts(encode: Any, pairs: StsPairs, *, codec: Any = None, name: str | None = None,
        bootstrap: int = DEFAULT_RESAMPLES, seed: int = 0) -> TaskResult:
    """Score an encoder on STS pairs.

    Parameters
    ----------
    encode : callable or object with ``encode``
        Texts to vectors (a repspace encoder, a sentence-transformers model,
        or a function); all sentences go to it in one call.
    pairs : StsPairs
        From :func:`load_sts`.
    codec : Codec, optional
        A compression (:class:`repspace.engines.eval.compression.Codec`), fitted on
        all the task's vectors, applied before scoring.
    name : str, optional
        Task name; default ``sts:<data set name>``.
    bootstrap : int
        Resamples of the pairs behind the main score's interval
        (:func:`~repspace.engines.eval.uncertainty.bootstrap_interval`, percentile,
        95%); 0: no interval.
    seed : int
        The bootstrap's seed.

    Returns
    -------
    TaskResult
        Main metric ``spearman``; the other keys of :func:`sts_scores` beside it
        (``cosine_spearman`` equals ``spearman``); ``n_pairs`` in info; the
        Spearman correlation's bootstrap interval as :attr:`TaskResult.interval`;
        the pairs' gold scores and cosines as :attr:`TaskResult.units` (whatever ``bootstrap``).

    Examples
    --------
    >>> from repspace.engines.encoders import get_encoder
    >>> pairs = StsPairs(["a cat sits", "a man runs", "stocks fell"],
    ...                  ["a cat is sitting", "a man is running fast", "the cat sleeps"],
    ...                  np.array([4.8, 4.0, 0.2]), "toy")
    >>> r = sts(get_encoder("static"), pairs)
    >>> r.task_name, r.main_metric, -1.0 <= r.main_score <= 1.0
    ('sts:toy', 'spearman', True)
    >>> sts(get_encoder("static"), pairs, bootstrap=0).interval is None
    True
    """
    t0 = time.perf_counter()
    check_scalar(bootstrap, "bootstrap", int, low=0)
    enc = as_encode(encode)
    n = len(pairs)
    vectors = enc(pairs.texts())
    info: dict[str, Any] = {"n_pairs": n}
    if codec is not None:
        vectors = codec.fit(vectors).transform(vectors)
        info.update(codec=codec.to_dict(), bytes_per_vector=int(codec.bytes_per_vector))
    scores = sts_scores(vectors[:n], vectors[n:], pairs.scores)
    gold, cosine = np.asarray(pairs.scores, dtype=np.float64), paired_cosine(vectors[:n], vectors[n:])
    interval = bootstrap_interval(spearman_statistic, gold, cosine, n_resamples=bootstrap, seed=seed)
    units = Units("spearman", (gold, cosine), ("gold", "cosine"), shared=("gold",))
    return TaskResult(name or f"sts:{pairs.name}", pairs.split, "spearman", scores, time.perf_counter() - t0, info,
                      interval=interval, units=units)
