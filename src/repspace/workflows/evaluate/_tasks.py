"""The task types scored as MTEB's evaluators score them beside STS and retrieval: reranking, bitext mining,
summarization.

:func:`repspace.workflows.evaluate.run_task` hands these three here: how each reads its
data, which texts a transform is fitted on, and how it is scored (the task
functions are in :mod:`repspace.engines.eval`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from repspace.core.errors import InputError
from repspace.engines.eval import TaskResult
from repspace.engines.eval.bitext import bitext, load_bitext
from repspace.engines.eval.reranking import load_reranking, reranking
from repspace.engines.eval.summarization import load_summarization, summarization

#: The tasks of this module, in the order the CLI lists them.
MINED_TASKS = ("reranking", "bitext", "summarization")


def load_mined(task: str, source: str | Path | Sequence[str | Path]) -> Any:
    """Read the data of a task of :data:`MINED_TASKS`.

    ``bitext`` also takes two files (a pair of paths), one sentence per line each.

    Examples
    --------
    >>> from repspace.store import example_file
    >>> len(load_mined("bitext", example_file("en-de.tsv", "A cat.\\tEine Katze.\\n")))
    1
    """
    if task == "bitext":
        if isinstance(source, (str, Path)):
            return load_bitext(source)
        paths = list(source)
        if len(paths) != 2:
            raise InputError(f"bitext takes one file with two columns or two files, not {len(paths)}")
        return load_bitext(paths[0], paths[1])
    if not isinstance(source, (str, Path)):
        raise InputError(f"{task} takes one data file")
    return load_reranking(source) if task == "reranking" else load_summarization(source)


def fit_texts(task: str, data: Any) -> tuple[list[str], str]:
    """The distinct texts a transform is fitted on for ``task``, and what they are (no scores among them).

    Examples
    --------
    >>> from repspace.engines.eval import BitextPairs
    >>> fit_texts("bitext", BitextPairs(["a cat", "a dog"], ["eine Katze", "a dog"]))
    (['a cat', 'a dog', 'eine Katze'], 'distinct sentences of both lists')
    """
    if data is None:
        raise InputError(f"{task} needs its data to fit a transform on")
    if task == "reranking":
        return data.texts(), "distinct candidates"
    if task == "bitext":
        return data.texts(), "distinct sentences of both lists"
    return data.summaries(), "distinct summaries"


def score_mined(task: str, encode: Any, encode_queries: Any, data: Any, *, codec: Any = None,
                bootstrap: int, seed: int) -> TaskResult:
    """Score one task of :data:`MINED_TASKS` (reranking's queries go to ``encode_queries``).

    Examples
    --------
    >>> import numpy as np
    >>> from repspace.engines.eval import BitextPairs
    >>> enc = lambda texts: np.array([[t.count("cat"), t.count("dog") + 0.1] for t in texts])
    >>> score_mined("bitext", enc, enc, BitextPairs(["cat", "dog"], ["a cat", "a dog"]), bootstrap=0, seed=0).main_score
    1.0
    """
    if data is None:
        raise InputError(f"{task} needs its data file")
    if task == "reranking":
        return reranking(encode, data, codec=codec, encode_queries=encode_queries, bootstrap=bootstrap, seed=seed)
    fn = bitext if task == "bitext" else summarization
    return fn(encode, data, codec=codec, bootstrap=bootstrap, seed=seed)


__all__ = ["MINED_TASKS", "fit_texts", "load_mined", "score_mined"]
