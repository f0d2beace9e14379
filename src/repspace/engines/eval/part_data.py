"""Which part each unit of a task's data belongs to (``--by COLUMN``), and the data of one part.

The column is read from the task's own file, beside what its loader read:

- ``sts`` and ``pairclass``: a CSV column named in the header after the
  three fixed ones (``sentence1,sentence2,score,genre``); STS's optional
  header is then required;
- ``classification`` and ``clustering``: a column of the labelled CSV/TSV,
  or a key of its JSON lines;
- ``retrieval``: a key of ``queries.jsonl`` (each query is a unit; the corpus
  stays whole for every part);
- ``reranking`` and ``summarization``: a key of each JSON line.

A JSON key may be nested: ``metadata.domain`` reads ``{"metadata": {"domain": ...}}``
(a key that itself holds the dot is read first). Every unit needs a value: a
missing or empty one is an error naming its line. Values are strings (a JSON
number or boolean is written as JSON writes it: ``3``, ``true``). Word
similarity, analogies and bitext files have no named columns and refuse ``--by``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from repspace.core.errors import InputError
from repspace.core.files import read_csv_rows, read_jsonl
from repspace.engines.eval.labels import LabelledTexts
from repspace.engines.eval.pairclass import PairLabels
from repspace.engines.eval.reranking import RerankingData
from repspace.engines.eval.retrieval import BeirData
from repspace.engines.eval.sts import StsPairs
from repspace.engines.eval.summarization import SummarizationData

__all__ = ["PART_TASKS", "PartLabels", "read_parts", "select_part"]

#: The tasks whose data files can carry a column to split on (``--by``).
PART_TASKS = ("sts", "pairclass", "classification", "clustering", "retrieval", "reranking", "summarization")


@dataclass(frozen=True)
class PartLabels:
    """The part of each unit of a task's data, in the data's unit order.

    Attributes
    ----------
    by : str
        The column (or JSON key) the parts come from.
    labels : tuple of str
        One value per unit (pair, item, judged query, reranking query, text).

    Examples
    --------
    >>> p = PartLabels("genre", ("news", "forum", "news"))
    >>> {k: v.tolist() for k, v in p.groups().items()}
    {'forum': [1], 'news': [0, 2]}
    """

    by: str
    labels: tuple[str, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.by, str) or not self.by.strip():
            raise InputError("--by needs a column name")
        labels = tuple(self.labels)
        if not labels or not all(isinstance(v, str) for v in labels):
            raise InputError(f"parts by {self.by!r} need one string per unit")
        object.__setattr__(self, "labels", labels)

    def __len__(self) -> int:
        return len(self.labels)

    def to_dict(self) -> dict[str, Any]:
        """``{"by", "labels"}`` (JSON-ready)."""
        return {"by": self.by, "labels": list(self.labels)}

    def groups(self) -> dict[str, np.ndarray]:
        """Each part's unit positions (ascending), the parts in sorted order."""
        labels = np.asarray(self.labels, dtype=object)
        return {part: np.flatnonzero(labels == part) for part in sorted(set(self.labels))}


def _value(obj: dict[str, Any], key: str) -> Any:
    """``obj[key]``, else the nested value a dotted ``key`` names (``metadata.domain``), else ``None``."""
    if key in obj:
        return obj[key]
    value: Any = obj
    for step in key.split("."):
        if not isinstance(value, dict) or step not in value:
            return None
        value = value[step]
    return value


def _text(value: Any, by: str, where: str) -> str:
    if isinstance(value, (bool, int, float)):
        value = json.dumps(value)
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{where}: no value for {by!r} (--by needs a part for every unit, a string or number)")
    return value.strip()


def _csv_column(path: Path, by: str, what: str, delimiter: str = ",", *, header_starts: tuple[str, ...] = ()
                ) -> list[str]:
    """The column ``by`` of each non-empty data row of a CSV whose first row is its header."""
    rows = read_csv_rows(path, what, delimiter=delimiter)
    header = [c.strip() for c in rows[0]] if rows else []
    if header_starts and tuple(c.lower() for c in header[:len(header_starts)]) != header_starts:
        raise InputError(f"--by {by} reads a column named in the header, and {path} has none (its first line "
                         f"would be {','.join(header_starts)},{by})")
    if by not in header:
        raise InputError(f"{path} has no column {by!r} for --by (columns: {', '.join(header)})")
    at = header.index(by)
    return [_text(row[at], by, f"{path}:{line}") for line, row in enumerate(rows[1:], start=2) if row]


def _jsonl_key(path: Path, by: str, what: str) -> list[tuple[dict[str, Any], str]]:
    """Each line's object and its value of ``by``."""
    return [(obj, _text(_value(obj, by), by, f"{path}:{line}")) for line, obj in read_jsonl(path, what)]


def read_parts(data: Any, source: str | Path, by: str) -> PartLabels:
    """The part of each unit of ``data``, read from column (or key) ``by`` of its file ``source``.

    Parameters
    ----------
    data : StsPairs, PairLabels, LabelledTexts, BeirData, RerankingData or SummarizationData
        The task's data as its loader read it from ``source``.
    source : str or Path
        The file (the BEIR folder for retrieval) ``data`` was read from.
    by : str
        The column: a header name of a CSV, a key of JSON lines (``metadata.domain`` nested).

    Returns
    -------
    PartLabels
        One value per unit of ``data``, in its order.

    Raises
    ------
    InputError
        Data of a task without named columns (word pairs, analogies, bitext),
        a column the file lacks (the columns are listed), a unit without a value
        (its line is named), or a file that does not match ``data``.

    Examples
    --------
    >>> from repspace.store import example_file
    >>> from repspace.engines.eval import load_sts
    >>> p = example_file("toy-test.csv", "sentence1,sentence2,score,genre\\nA cat.,A kitten.,4.5,news\\n"
    ...                  "A cat.,A car.,0.5,forum\\n")
    >>> read_parts(load_sts(p), p, "genre").labels
    ('news', 'forum')
    >>> read_parts(load_sts(p), p, "topic")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    repspace.core.errors.InputError: ...toy-test.csv has no column 'topic' for --by (columns: sentence1, ...)
    """
    if not isinstance(by, str) or not by.strip():
        raise InputError("--by needs a column name")
    path = Path(source) if isinstance(source, (str, Path)) else None
    if path is None:
        raise InputError("--by reads its column from one data file")
    if isinstance(data, StsPairs):
        labels = _csv_column(path, by, "STS file", header_starts=("sentence1", "sentence2", "score"))
    elif isinstance(data, PairLabels):
        labels = _csv_column(path, by, "pair file")
    elif isinstance(data, LabelledTexts):
        suffix = path.suffix.lower()
        if suffix in (".csv", ".tsv"):
            labels = _csv_column(path, by, "labelled file", "\t" if suffix == ".tsv" else ",")
        else:
            labels = [v for _, v in _jsonl_key(path, by, "labelled file")]
    elif isinstance(data, BeirData):
        queries = path / "queries.jsonl"
        of_id = {str(obj["_id"]): (line, obj) for line, obj in read_jsonl(queries, "BEIR file")}
        labels = [_text(_value(of_id[q][1], by), by, f"{queries}:{of_id[q][0]}") for q in data.query_ids]
    elif isinstance(data, RerankingData):  # the loader leaves out queries without a negative
        labels = [v for obj, v in _jsonl_key(path, by, "reranking file") if obj.get("negative")]
    elif isinstance(data, SummarizationData):
        labels = [v for _, v in _jsonl_key(path, by, "summarization file")]
    else:
        raise InputError(f"--by splits a task whose file has named columns; {type(data).__name__} has none")
    if len(labels) != _n_units(data):
        raise InputError(f"{path}: {len(labels)} values of {by!r} for {_n_units(data)} units: the file changed "
                         "since it was read")
    return PartLabels(by, tuple(labels))


def _n_units(data: Any) -> int:
    return data.n_queries if isinstance(data, BeirData) else len(data)


def select_part(data: Any, rows: Sequence[int] | np.ndarray) -> Any:
    """The same data with only the units at positions ``rows`` (a part), of the same type and name.

    Examples
    --------
    >>> pairs = StsPairs(["a", "b", "c"], ["x", "y", "z"], np.array([1.0, 2.0, 3.0]), "toy")
    >>> part = select_part(pairs, [0, 2])
    >>> part.sentences1, part.scores.tolist(), part.name
    (['a', 'c'], [1.0, 3.0], 'toy')
    """
    idx = [int(i) for i in rows]
    if not idx:
        raise InputError("a part needs at least one unit")

    def pick(seq: Sequence[Any]) -> list[Any]:
        return [seq[i] for i in idx]

    if isinstance(data, StsPairs):
        return replace(data, sentences1=pick(data.sentences1), sentences2=pick(data.sentences2),
                       scores=np.asarray(data.scores)[idx])
    if isinstance(data, PairLabels):
        return replace(data, sentences1=pick(data.sentences1), sentences2=pick(data.sentences2),
                       labels=np.asarray(data.labels)[idx])
    if isinstance(data, LabelledTexts):
        return replace(data, texts=pick(data.texts), labels=pick(data.labels))
    if isinstance(data, BeirData):
        ids = tuple(pick(data.query_ids))
        return replace(data, query_ids=ids, query_texts=tuple(pick(data.query_texts)),
                       qrels={q: data.qrels[q] for q in ids})
    if isinstance(data, RerankingData):
        return replace(data, queries=tuple(pick(data.queries)), positives=tuple(pick(data.positives)),
                       negatives=tuple(pick(data.negatives)))
    if isinstance(data, SummarizationData):
        return replace(data, texts=tuple(pick(data.texts)), human_summaries=tuple(pick(data.human_summaries)),
                       machine_summaries=tuple(pick(data.machine_summaries)),
                       human_scores=tuple(pick(data.human_scores)))
    raise InputError(f"--by splits a task whose file has named columns; {type(data).__name__} has none")
