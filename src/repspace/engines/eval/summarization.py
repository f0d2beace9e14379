"""Summarization: does a machine summary's similarity to the human summaries follow people's judgement of it?

Data comes in the layout of MTEB's SummEval task: a JSON-lines file, one source
text per line, ``{"text": "...", "human_summaries": [...], "machine_summaries":
[...], "relevance": [...]}``, with one human score (``relevance``) per machine
summary. As MTEB's ``SummarizationEvaluator`` scores it, each machine summary
is given the highest cosine of its vector with the text's human summaries
(the references), and each text's Spearman and Pearson correlations between
those similarities and the human scores are averaged over the texts
(``cosine_spearman``, MTEB's main score, and ``cosine_pearson``; the same with
the highest dot product: ``dot_spearman``, ``dot_pearson``). A text whose human
scores, cosines or dot products are all equal has no correlation and is left
out, as MTEB leaves it out; the count is reported.

``spearman`` and ``pearson`` (repspace's names, equal to the cosine ones; MTEB
computes them with the model's own similarity, the cosine for the encoders
here) are given too; ``spearman`` is the main score.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from repspace.core.arrays import unit_rows
from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.core.files import read_jsonl
from repspace.engines.eval._encode import as_encode
from repspace.engines.eval._results import TaskResult
from repspace.engines.eval.uncertainty import DEFAULT_RESAMPLES, bootstrap_interval, mean_statistic

#: The scores :func:`summarization_scores` reports; ``spearman`` is the main one (``cosine_spearman`` is MTEB's).
SCORE_KEYS = ("spearman", "pearson", "cosine_spearman", "cosine_pearson", "dot_spearman", "dot_pearson")


@dataclass(frozen=True, eq=False)
class SummarizationData:
    """Source texts, each with human (reference) summaries and machine summaries scored by people.

    Attributes
    ----------
    texts : tuple of str
        The source texts ("" where the file gives none; they are not scored).
    human_summaries : tuple of tuple of str
        Each text's references (at least one).
    machine_summaries : tuple of tuple of str
        Each text's machine summaries (at least one).
    human_scores : tuple of (m_i,) float64 arrays
        People's score of each machine summary (SummEval's ``relevance``).
    name : str
        The data set's name (the file's stem).
    split : str
        ``test``, ``dev`` or ``train`` when the name ends so, else ``test``.

    Examples
    --------
    >>> data = SummarizationData(("a long story",), (("a cat sat", "the cat sat"),),
    ...                          (("a cat sat down", "stocks fell", "a dog ran"),), (np.array([5.0, 1.0, 2.0]),), "toy")
    >>> len(data), data.summaries()[:3]
    (1, ['a cat sat', 'the cat sat', 'a cat sat down'])
    """

    texts: tuple[str, ...]
    human_summaries: tuple[tuple[str, ...], ...]
    machine_summaries: tuple[tuple[str, ...], ...]
    human_scores: tuple[np.ndarray, ...]
    name: str = "summarization"
    split: str = "test"

    def __post_init__(self) -> None:
        n = len(self.texts)
        if not (n == len(self.human_summaries) == len(self.machine_summaries) == len(self.human_scores)):
            raise InputError(f"summarization data needs one entry per text: {n} texts, {len(self.human_summaries)} "
                             f"reference lists, {len(self.machine_summaries)} machine lists, "
                             f"{len(self.human_scores)} score lists")
        if n == 0:
            raise InputError("summarization data holds no text")
        for i, (refs, machine, scores) in enumerate(zip(self.human_summaries, self.machine_summaries,
                                                        self.human_scores)):
            if not refs or not machine:
                raise InputError(f"text {i + 1} needs at least one human and one machine summary")
            if len(scores) != len(machine):
                raise InputError(f"text {i + 1} has {len(machine)} machine summaries but {len(scores)} human scores")

    def __len__(self) -> int:
        return len(self.texts)

    def summaries(self) -> list[str]:
        """Every distinct summary, human and machine, in order of first appearance (what is embedded)."""
        return list(dict.fromkeys(s for refs, machine in zip(self.human_summaries, self.machine_summaries)
                                  for s in (*refs, *machine)))


def _strings(row: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = row.get(key)
    if not isinstance(value, list) or not value or not all(isinstance(t, str) for t in value):
        raise InputError(f"{where}: {key!r} must be a non-empty list of strings")
    return tuple(value)


def _scores(row: dict[str, Any], key: str, n: int, where: str) -> np.ndarray:
    value = row.get(key)
    if value is None:
        raise InputError(f"{where}: no human scores ({key!r}) for the machine summaries")
    if (not isinstance(value, list)
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value)):
        raise InputError(f"{where}: {key!r} must be a list of finite numbers, one per machine summary")
    if len(value) != n:
        raise InputError(f"{where}: {n} machine summaries but {len(value)} human scores ({key!r})")
    return np.asarray(value, dtype=np.float64)


def load_summarization(path: str | Path) -> SummarizationData:
    """Read a summarization file in the layout of MTEB's SummEval: JSON lines with the summaries and human scores.

    Parameters
    ----------
    path : str or Path
        A UTF-8 JSON-lines file, one source text per line (blank lines
        skipped): ``human_summaries`` (the references) and ``machine_summaries``,
        non-empty lists of strings; ``relevance``, one finite number per
        machine summary; ``text``, the source (optional: it is not scored).
        Other keys (SummEval's ``id``, ``coherence``...) are ignored.

    Returns
    -------
    SummarizationData

    Raises
    ------
    InputError
        If the file is missing or holds no text, or a line lacks its summaries
        or its human scores, or has a score count other than its machine
        summary count (the line is named).

    Examples
    --------
    >>> from repspace.store import example_file
    >>> p = example_file("toy.jsonl", '{"text": "A cat sat on the mat all day.", "human_summaries": ["A cat sat."], '
    ...                  '"machine_summaries": ["A cat sat.", "A mat."], "relevance": [4.67, 2.33]}\\n')
    >>> data = load_summarization(p)
    >>> data.machine_summaries, data.human_scores[0].tolist()
    ((('A cat sat.', 'A mat.'),), [4.67, 2.33])
    """
    path = Path(path)
    texts, refs, machine, scores = [], [], [], []
    for line, row in read_jsonl(path, "summarization file"):
        where = f"{path}:{line}"
        text = row.get("text", "")
        if not isinstance(text, str):
            raise InputError(f"{where}: 'text' must be a string")
        refs.append(_strings(row, "human_summaries", where))
        machine.append(_strings(row, "machine_summaries", where))
        scores.append(_scores(row, "relevance", len(machine[-1]), where))
        texts.append(text)
    if not texts:
        raise InputError(f"summarization file {path} holds no text")
    stem = path.stem
    split = next((s for s in ("test", "dev", "train") if stem.endswith(s)), "test")
    return SummarizationData(tuple(texts), tuple(refs), tuple(machine), tuple(scores), stem, split)


def _per_text(human_vectors: Sequence[np.ndarray], machine_vectors: Sequence[np.ndarray],
              human_scores: Sequence[np.ndarray]) -> tuple[list[dict[str, float]], list[int]]:
    """Each scored text's correlations, and the numbers of the texts left out (no correlation defined)."""
    if not (len(human_vectors) == len(machine_vectors) == len(human_scores)):
        raise InputError(f"summarization needs one entry per text: {len(human_vectors)} reference arrays, "
                         f"{len(machine_vectors)} machine arrays, {len(human_scores)} score arrays")
    out, skipped = [], []
    for i, (refs, machine, gold) in enumerate(zip(human_vectors, machine_vectors, human_scores)):
        refs = np.asarray(refs, dtype=np.float64)
        machine = np.asarray(machine, dtype=np.float64)
        gold = np.asarray(gold, dtype=np.float64)
        if refs.ndim != 2 or machine.ndim != 2 or refs.shape[1] != machine.shape[1] or len(gold) != len(machine):
            raise InputError(f"text {i + 1}: references {refs.shape}, machine summaries {machine.shape} and "
                             f"{len(gold)} human scores do not fit together")
        cosine = (unit_rows(machine) @ unit_rows(refs).T).max(axis=1)
        dot = (machine @ refs.T).max(axis=1)
        if np.ptp(gold) == 0 or np.ptp(cosine) == 0 or np.ptp(dot) == 0:
            skipped.append(i)
            continue
        out.append({"cosine_spearman": float(stats.spearmanr(gold, cosine).statistic),
                    "cosine_pearson": float(stats.pearsonr(gold, cosine).statistic),
                    "dot_spearman": float(stats.spearmanr(gold, dot).statistic),
                    "dot_pearson": float(stats.pearsonr(gold, dot).statistic)})
    if not out:
        raise InputError("no text has human scores that differ and machine summaries at different similarities: "
                         "every correlation is undefined")
    return out, skipped


def summarization_scores(human_vectors: Sequence[np.ndarray], machine_vectors: Sequence[np.ndarray],
                         human_scores: Sequence[np.ndarray]) -> dict[str, float]:
    """MTEB's summarization scores: per-text correlations of human scores with the best similarity to a reference.

    Parameters
    ----------
    human_vectors : sequence of (h_i, d) arrays
        Each text's reference (human) summaries.
    machine_vectors : sequence of (m_i, d) arrays
        Each text's machine summaries.
    human_scores : sequence of (m_i,) arrays
        People's score of each machine summary.

    Returns
    -------
    dict
        :data:`SCORE_KEYS`, each the mean over the texts whose correlation is
        defined (see the module docstring).

    Raises
    ------
    InputError
        When no text has a defined correlation.

    Examples
    --------
    The machine summaries' best cosines to the reference are 1, 0.8 and 0.6;
    people scored them 5, 1 and 2:

    >>> refs = [np.array([[1.0, 0.0]])]
    >>> machine = [np.array([[1.0, 0.0], [0.8, 0.6], [0.6, 0.8]])]
    >>> s = summarization_scores(refs, machine, [np.array([5.0, 1.0, 2.0])])
    >>> s["spearman"], round(s["pearson"], 4)
    (0.5, 0.7206)
    """
    per_text, _ = _per_text(human_vectors, machine_vectors, human_scores)
    return _means(per_text)


def _means(per_text: list[dict[str, float]]) -> dict[str, float]:
    means = {key: float(np.mean([p[key] for p in per_text])) for key in per_text[0]}
    return {"spearman": means["cosine_spearman"], "pearson": means["cosine_pearson"], **means}


def summarization(encode: Any, data: SummarizationData | str | Path, *, codec: Any = None, name: str | None = None,
                  bootstrap: int = DEFAULT_RESAMPLES, seed: int = 0) -> TaskResult:
    """Score an encoder on summaries judged by people (SummEval's protocol, as MTEB runs it).

    Parameters
    ----------
    encode : callable or object with ``encode``
        Texts to vectors; every distinct summary goes to it in one call (as documents).
    data : SummarizationData, str or Path
        From :func:`load_summarization`, or a file to load.
    codec : Codec, optional
        A compression, fitted on all the summaries' vectors, applied before scoring.
    name : str, optional
        Task name; default ``summarization:<data set name>``.
    bootstrap : int
        Resamples of the texts behind the main score's interval (the mean of
        the per-text Spearman correlations; percentile, 95%); 0: none.
    seed : int
        The bootstrap's seed.

    Returns
    -------
    TaskResult
        Main metric ``spearman`` (equal to ``cosine_spearman``, MTEB's main
        score); the other keys of :data:`SCORE_KEYS` beside it; info with
        ``n_texts``, ``n_summaries`` (distinct) and ``n_skipped_texts`` (texts
        without a defined correlation, left out as MTEB leaves them out).

    Examples
    --------
    >>> data = SummarizationData(("",), (("a cat sat",),), (("a cat sat", "stocks fell", "a cat ran"),),
    ...                          (np.array([5.0, 1.0, 3.0]),), "toy")
    >>> r = summarization(lambda texts: np.array([[t.count("cat"), t.count("sat"), 1.0] for t in texts]), data)
    >>> r.task_name, r.main_metric, r.main_score, r.info["n_skipped_texts"]
    ('summarization:toy', 'spearman', 1.0, 0)
    """
    t0 = time.perf_counter()
    check_scalar(bootstrap, "bootstrap", int, low=0)
    if not isinstance(data, SummarizationData):
        data = load_summarization(data)
    texts = data.summaries()
    vectors = as_encode(encode)(texts)
    info: dict[str, Any] = {"n_texts": len(data), "n_summaries": len(texts)}
    if codec is not None:
        vectors = np.asarray(codec.fit(vectors).transform(vectors), dtype=np.float32)
        if vectors.ndim != 2 or len(vectors) != len(texts):
            raise InputError(f"codec {getattr(codec, 'name', codec)!r} returned shape {vectors.shape} for "
                             f"{len(texts)} vectors")
        info.update(codec=codec.to_dict(), bytes_per_vector=int(codec.bytes_per_vector))
    row = {t: i for i, t in enumerate(texts)}
    refs = [vectors[[row[t] for t in r]] for r in data.human_summaries]
    machine = [vectors[[row[t] for t in m]] for m in data.machine_summaries]
    per_text, skipped = _per_text(refs, machine, data.human_scores)
    info["n_skipped_texts"] = len(skipped)
    interval = None
    if len(per_text) >= 2:
        interval = bootstrap_interval(mean_statistic, np.array([p["cosine_spearman"] for p in per_text]),
                                      n_resamples=bootstrap, seed=seed)
    return TaskResult(name or f"summarization:{data.name}", data.split, "spearman", _means(per_text),
                      time.perf_counter() - t0, info, interval=interval)
