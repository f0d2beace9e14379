"""A model's similarity thresholds from a pair file: related pairs from the file, random pairs drawn from it."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.core.files import read_csv_rows
from repspace.core.store import Store
from repspace.engines.eval.pairclass import load_pairs
from repspace.engines.eval.sts import load_sts, paired_cosine
from repspace.engines.eval.thresholds import SimilarityThreshold, similarity_threshold
from repspace.engines.eval.uncertainty import DEFAULT_RESAMPLES
from repspace.workflows.evaluate._repair import distinct

#: The gold score from which an STS pair counts as related: 4 of STS-B's 0-5 ("mostly equivalent").
DEFAULT_MIN_SCORE = 4.0

#: The header that marks a labelled pair file (pair classification) rather than an STS file.
_PAIR_HEADER = ("sentence1", "sentence2", "label")


def random_pairs(n: int, seed: int, exclude: Iterable[tuple[int, int]] = ()) -> np.ndarray:
    """Each of ``n`` sentences paired with a seeded random other: an ``(n, 2)`` array of indexes ``(i, j)``, ``j != i``.

    A draw that lands on a pair in ``exclude`` (either order: the file's own pairs) is drawn again.

    Examples
    --------
    >>> random_pairs(4, seed=0).tolist()
    [[0, 3], [1, 3], [2, 0], [3, 0]]
    >>> random_pairs(4, seed=0, exclude=[(0, 3)]).tolist()  # 0 and 3 are a pair of the file: drawn again
    [[0, 1], [1, 3], [2, 0], [3, 2]]
    >>> bool((random_pairs(50, seed=1)[:, 0] != random_pairs(50, seed=1)[:, 1]).all())
    True
    """
    if n < 2:
        raise InputError(f"random pairs need at least 2 distinct sentences, got {n}")
    rng = np.random.default_rng(seed)
    first = np.arange(n)
    other = (first + rng.integers(1, n, size=n)) % n
    taken = {(min(a, b), max(a, b)) for a, b in exclude}
    for _ in range(100):
        clash = np.array([(min(a, b), max(a, b)) in taken for a, b in zip(first.tolist(), other.tolist())], dtype=bool)
        if not clash.any():
            break
        other[clash] = (first[clash] + rng.integers(1, n, size=int(clash.sum()))) % n
    return np.stack([first, other], axis=1)


def _read(source: Path, min_score: float | None) -> tuple[Any, np.ndarray, dict[str, Any]]:
    """The file's pairs (:class:`StsPairs` or :class:`PairLabels`), the rows of the related ones (STS: gold at
    least ``min_score``; a pair file: label 1) and what they are."""
    rows = read_csv_rows(source, "pair file")
    if rows and tuple(c.strip().lower() for c in rows[0]) == _PAIR_HEADER:
        if min_score is not None:
            raise InputError("--min-score applies to an STS file (gold scores); the related pairs of a labelled "
                             "pair file are those labelled 1")
        pairs = load_pairs(source)
        keep = np.flatnonzero(pairs.labels == 1)
        what = {"kind": "pairs", "related": "labelled 1", "n_pairs": len(pairs)}
        empty = f"no pair of {source} is labelled 1: no related pairs to set a threshold on"
    else:
        cut = DEFAULT_MIN_SCORE if min_score is None else min_score
        pairs = load_sts(source)  # type: ignore[assignment]
        keep = np.flatnonzero(pairs.scores >= cut)
        what = {"kind": "sts", "related": f"gold score >= {cut:g}", "min_score": cut, "n_pairs": len(pairs)}
        empty = (f"no pair of {source} has a gold score >= {cut:g} (scores {pairs.scores.min():g} to "
                 f"{pairs.scores.max():g}): lower --min-score")
    if len(keep) == 0:
        raise InputError(empty)
    return pairs, keep, {**what, "data": pairs.name, "split": pairs.split}


def model_thresholds(source: str | Path, *, store: Store | None = None, encoder: str | None = None,
                     space: str | None = None, min_score: float | None = None, quantile: float = 0.95,
                     bootstrap: int = DEFAULT_RESAMPLES, seed: int = 0, batch_size: int = 64,
                     progress: Any = None) -> SimilarityThreshold:
    """A model's similarity thresholds (:func:`~repspace.engines.eval.thresholds.similarity_threshold`) on a pair file.

    The related pairs are the file's pairs with a gold score of at least
    ``min_score`` (an STS file: ``sentence1,sentence2,score``) or labelled 1
    (a pair file, header ``sentence1,sentence2,label``); the random pairs pair
    each distinct sentence of the file (either side) with a seeded random
    other (never itself, nor its partner in the file). Similarity is the cosine
    of the model's vectors; each distinct sentence is embedded once.

    Parameters
    ----------
    source : str or Path
        The STS or pair file.
    store : Store, optional
        Needed for ``space``.
    encoder : str, optional
        Registry spec; the default when neither ``encoder`` nor ``space`` is given is ``minilm``.
    space : str, optional
        A stored space instead of an encoder (texts it lacks are embedded with its encoder).
    min_score : float, optional
        STS: the gold score from which a pair is related (default 4.0, of STS-B's 0-5 scale).
    quantile : float
        The random-pair quantile of the first threshold (0.95: 5% of random pairs above it).
    bootstrap : int
        Resamples behind the 95% intervals; 0: none.
    seed : int
        Seed of the random pairs and of the bootstrap.
    batch_size : int
        Texts per encoder batch.
    progress : callable, optional
        ``(phase, done, total)``.

    Returns
    -------
    SimilarityThreshold
        Its ``info``: the subject (``encoder`` or ``space``...), ``data``,
        ``split``, ``kind`` (``sts`` or ``pairs``), ``related`` (the rule),
        ``min_score``, ``n_pairs``, ``n_sentences``, ``seed``.

    Examples
    --------
    >>> from repspace.store import example_file
    >>> rows = ["a cat sits on the mat,a cat is sitting on a mat,5", "a man plays a guitar,a man plays guitar,4.6",
    ...         "stocks fell sharply,the market dropped,4.2", "a dog runs,a dog is running,4.8",
    ...         "a woman cooks,the sun is hot,0.2", "kids play football,a plane lands,0"]
    >>> t = model_thresholds(example_file("toy-test.csv", "\\n".join(rows)), encoder="static", bootstrap=0)
    >>> t.n_related, t.n_random, t.info["related"], t.info["n_sentences"]
    (4, 12, 'gold score >= 4', 12)
    >>> bool(t.related_above > 0.5)
    True
    """
    from repspace.workflows.evaluate._subjects import encoder_subjects, space_subject

    q = check_scalar(quantile, "quantile", float, low=0, high=1, include="neither")
    bootstrap = check_scalar(bootstrap, "bootstrap", int, low=0)
    seed = check_scalar(seed, "seed", int, low=0, high=2**32, include="left")
    min_score = check_scalar(min_score, "min_score", float, none=True)
    if encoder is not None and space is not None:
        raise InputError("give --encoder or --space, not both")
    if space is not None and store is None:
        raise InputError("a store is needed for --space")
    pairs, keep, what = _read(Path(source), min_score)
    sentences = distinct([*pairs.sentences1, *pairs.sentences2])
    row = {text: i for i, text in enumerate(sentences)}
    first = np.array([row[t] for t in pairs.sentences1])
    second = np.array([row[t] for t in pairs.sentences2])
    drawn = random_pairs(len(sentences), seed, exclude=zip(first.tolist(), second.tolist()))
    if space is not None:
        subject = space_subject(store, space, batch_size=batch_size, progress=progress)  # type: ignore[arg-type]
    else:
        subject = encoder_subjects(encoder or "minilm", batch_size=batch_size, progress=progress)[0]
    vectors = np.asarray(subject.encode(sentences), dtype=np.float64)
    related = paired_cosine(vectors[first[keep]], vectors[second[keep]])
    random = paired_cosine(vectors[drawn[:, 0]], vectors[drawn[:, 1]])
    result = similarity_threshold(related, random, quantile=q, n_resamples=bootstrap, seed=seed)
    return result.with_info(subject=subject.label, **subject.info, **what, n_sentences=len(sentences), seed=seed)
