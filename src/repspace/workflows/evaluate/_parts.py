"""A task scored part by part (``repspace eval TASK DATA --by COLUMN``): the whole data, then each part alone.

Each part is the task run on that part's units alone, with the same subject
and settings (a transform or codec is fitted on the part's own vectors, as a
run on a file holding only those rows would fit it), so a part's score is
the score of the filtered file. The subject's cache
(:class:`~repspace.engines.eval.TextCache`) answers every text the whole run
embedded, so the parts embed nothing again. The result's main score stays the
whole data's; :attr:`TaskResult.parts` carries the parts and their macro
average with its stratified bootstrap interval
(:func:`repspace.engines.eval.partition.macro_interval`).

A part too small for the task (fewer than 2 pairs, one class only, a class with
fewer members than the folds, a single unit to resample) is an error naming the
part: no part is dropped silently, since the macro average weighs every part the same.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from repspace.core.errors import InputError
from repspace.engines.eval import TaskResult
from repspace.engines.eval.part_data import PART_TASKS, PartLabels, select_part
from repspace.engines.eval.partition import Partition, PartScore, macro_interval


def check_parts(task: str, by: str | None, *, label_field: str | None = None, multivector: bool = False) -> None:
    """A task or setting that cannot be split by a column is one error line, before anything is embedded.

    Examples
    --------
    >>> check_parts("wordsim", "genre")
    Traceback (most recent call last):
    repspace.core.errors.InputError: --by splits sts, pairclass, classification, clustering, retrieval, \
reranking, summarization (files with named columns); wordsim's file has no column to split on
    """
    if by is None:
        return
    if task not in PART_TASKS:
        raise InputError(f"--by splits {', '.join(PART_TASKS)} (files with named columns); "
                         f"{task}'s file has no column to split on")
    if label_field is not None:
        raise InputError("--by reads a column of the data file; it does not combine with --label-field")
    if multivector:
        raise InputError("--by does not combine with --multivector: its token states are not cached, so each "
                         "part would embed the corpus again")


def _n_units(data: Any) -> int:
    return data.n_queries if hasattr(data, "n_queries") else len(data)


def score_parts(run_one: Callable[..., TaskResult], task: str, subject: Any, data: Any, parts: PartLabels, *,
                bootstrap: int, seed: int, **options: Any) -> TaskResult:
    """The whole data's result of ``run_one(task, subject, data, ...)``, carrying each part's and the macro average.

    Parameters
    ----------
    run_one : callable
        Runs the task once: ``run_one(task, subject, data, bootstrap=, seed=, **options)``.
    task, subject, data
        As :func:`repspace.workflows.evaluate.run_task` takes them (``data`` loaded).
    parts : PartLabels
        One part per unit of ``data`` (:func:`repspace.engines.eval.part_data.read_parts`).
    bootstrap, seed : int
        Each part's interval and the macro average's use them (the seed is the same for every part).

    Raises
    ------
    InputError
        Parts that do not match the data's units, or a part the task cannot
        score (the part and the task's reason are named).
    """
    check_parts(task, parts.by, label_field=options.get("label_field"), multivector=bool(options.get("multivector")))
    if data is None:
        raise InputError("--by needs the task's data file")
    if len(parts) != _n_units(data):
        raise InputError(f"{len(parts)} parts by {parts.by!r} for {_n_units(data)} units of the data")
    t0 = time.perf_counter()
    whole = run_one(task, subject, data, bootstrap=bootstrap, seed=seed, **options)
    values, units = [], []
    for part, rows in parts.groups().items():
        try:
            result = run_one(task, subject, select_part(data, rows), bootstrap=bootstrap, seed=seed, **options)
        except InputError as e:
            size = f"{len(rows)} unit{'s' if len(rows) != 1 else ''}"
            raise InputError(f"part {part!r} of --by {parts.by} ({size}) cannot be scored: {e}") from None
        values.append(PartScore(part, len(rows), result.main_score, result.interval))
        units.append(result.units)
    interval = None
    if bootstrap and all(u is not None for u in units):
        interval = macro_interval(units, n_resamples=bootstrap, seed=seed)
    result = whole.with_parts(Partition(parts.by, tuple(values), interval))
    return replace(result, evaluation_time=time.perf_counter() - t0)


__all__ = ["check_parts", "score_parts"]
