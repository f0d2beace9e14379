"""An evaluation report: results from files, folders and the store, grouped by task, with their tested comparisons.

:func:`results_report` reads the sources (see
:mod:`repspace.workflows.evaluate._report_sources`), groups the results by task
and split, names each model (as its file's comparisons name it, else by
:func:`~repspace.engines.eval.comparisons.result_label`; the source is added
where two would share a name) and gives every task the comparisons of its
models: those the file holds when all the task's models come from one
``{"results", "comparisons"}`` file, else computed anew with
:func:`~repspace.engines.eval.comparisons.compare_results` when every model
carries its per-unit scores (Holm's correction then covers all the task's
pairs). :func:`repspace.interfaces.reports.eval_report_html` renders the
report as one HTML page (``repspace eval report``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.core.store import Store
from repspace.engines.eval import TaskResult
from repspace.engines.eval.comparisons import SIGNIFICANCE_LEVEL, compare_results, result_label
from repspace.engines.eval.uncertainty import DEFAULT_RESAMPLES, Comparison
from repspace.workflows.evaluate._report_sources import Loaded, load_sources

#: Counts a result records (``repspace`` block) that say how many units its score is over, when it has no units.
_COUNT_KEYS = ("n_pairs", "n_queries", "n_texts", "n_summaries", "n_sentences", "n_items")


@dataclass(frozen=True)
class ModelRow:
    """One model's result on a task, as the report shows it.

    Attributes
    ----------
    model : str
        Its name in the report (unique within the task).
    source : str
        The file it was read from, or ``#id`` of a saved result.
    main_metric : str
    main_score : float
    ci_low, ci_high : float or None
        The bootstrap interval of the main score (``None`` without one).
    level : float or None
        That interval's confidence level.
    n_units : int or None
        The units the score is over (pairs, queries ...), when known.
    parts : dict or None
        The per-part breakdown the result carries (``repspace.parts``):
        ``{"by", "macro", "values": [{"part", "n", "main_score", "ci_low", "ci_high"}]}``.

    Examples
    --------
    >>> ModelRow("static", "a.json", "spearman", 0.71, 0.65, 0.77, 0.95, 150).to_dict()["ci_high"]
    0.77
    """

    model: str
    source: str
    main_metric: str
    main_score: float
    ci_low: float | None = None
    ci_high: float | None = None
    level: float | None = None
    n_units: int | None = None
    parts: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Every field (JSON-ready)."""
        return {"model": self.model, "source": self.source, "main_metric": self.main_metric,
                "main_score": self.main_score, "ci_low": self.ci_low, "ci_high": self.ci_high, "level": self.level,
                "n_units": self.n_units, "parts": self.parts}


@dataclass(frozen=True)
class TaskReport:
    """One task (and split) of the report: a row per model and the comparisons of every pair.

    Attributes
    ----------
    task, split : str
    rows : tuple of ModelRow
    comparisons : tuple of Comparison
        Every pair ``a - b`` with its paired interval and Holm-corrected p-value.
    comparisons_from : str
        ``"given"`` (read from the results' file), ``"computed"`` (from the
        per-unit scores) or ``"none"``.
    note : str
        Why there are no comparisons, or whose they are; empty when nothing needs saying.

    Examples
    --------
    >>> t = TaskReport("sts:x", "test", (ModelRow("a", "a.json", "spearman", 0.5),))
    >>> t.to_dict()["comparisons_from"], t.main_metrics
    ('none', ['spearman'])
    """

    task: str
    split: str
    rows: tuple[ModelRow, ...]
    comparisons: tuple[Comparison, ...] = ()
    comparisons_from: str = "none"
    note: str = ""

    @property
    def main_metrics(self) -> list[str]:
        """The main metrics of the rows, each once."""
        return list(dict.fromkeys(r.main_metric for r in self.rows))

    def to_dict(self) -> dict[str, Any]:
        """``{"task", "split", "rows", "comparisons", "comparisons_from", "note"}`` (JSON-ready)."""
        return {"task": self.task, "split": self.split, "rows": [r.to_dict() for r in self.rows],
                "comparisons": [c.to_dict() for c in self.comparisons], "comparisons_from": self.comparisons_from,
                "note": self.note}


@dataclass(frozen=True)
class ResultsReport:
    """Evaluation results grouped by task, with their comparisons: what ``repspace eval report`` renders.

    Attributes
    ----------
    tasks : tuple of TaskReport
        In the order the tasks first appear in the sources.
    sources : tuple of str
        The sources as given.
    level : float
        The confidence level of the comparisons computed here.
    significance : float
        The Holm-corrected p-value at and below which a comparison is marked.

    Examples
    --------
    >>> r = ResultsReport((TaskReport("sts:x", "test", (ModelRow("a", "a.json", "spearman", 0.5),)),), ("a.json",))
    >>> r.n_results, r.to_dict()["significance"]
    (1, 0.05)
    """

    tasks: tuple[TaskReport, ...]
    sources: tuple[str, ...] = ()
    level: float = 0.95
    significance: float = field(default=SIGNIFICANCE_LEVEL)

    @property
    def n_results(self) -> int:
        """The results shown, over all tasks."""
        return sum(len(t.rows) for t in self.tasks)

    def to_dict(self) -> dict[str, Any]:
        """``{"tasks", "sources", "level", "significance"}`` (JSON-ready)."""
        return {"tasks": [t.to_dict() for t in self.tasks], "sources": list(self.sources), "level": self.level,
                "significance": self.significance}


def results_report(sources: Sequence[str | Path | int], *, store: Store | str | Path | None = None,
                   n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0, level: float = 0.95) -> ResultsReport:
    """Read evaluation results and group them by task with their tested comparisons.

    Parameters
    ----------
    sources : sequence of str, Path or int
        ``--json`` output files (a list of results, or ``{"results",
        "comparisons"}``), MTEB result files or folders (``--output-dir``, or
        mteb's own), and ids of results saved in ``store`` (an int, or a
        string ``"3"``/``"#3"`` that names no file).
    store : Store, str or Path, optional
        Where saved ids are read; a path (default: the default store, as
        :class:`~repspace.store.Store` finds it) is opened read-only, and only
        when an id is given.
    n_resamples, seed, level
        The comparisons computed here
        (:func:`repspace.engines.eval.comparisons.compare_results`).

    Returns
    -------
    ResultsReport

    Raises
    ------
    InputError
        No sources; a missing file; a file that is not a result; an id unknown
        to the store, or no store; a bad ``n_resamples``, ``seed`` or ``level``.

    Examples
    --------
    Two models' cosines on the same six STS pairs, as ``eval sts --json`` writes them:

    >>> import json, os, tempfile
    >>> from repspace.engines.eval import TaskResult, Units
    >>> gold = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    >>> folder = tempfile.mkdtemp()
    >>> for name, cosines in (("good", [0.1, 0.2, 0.3, 0.5, 0.4, 0.9]), ("poor", [0.5, 0.2, 0.1, 0.3, 0.6, 0.4])):
    ...     units = Units("spearman", (gold, cosines), ("gold", "cosine"), shared=("gold",))
    ...     r = TaskResult("sts:toy", "test", "spearman", {"spearman": units.value()}, 0.0, {"subject": name},
    ...                    units=units)
    ...     with open(os.path.join(folder, f"{name}.json"), "w") as f:
    ...         json.dump([r.to_dict()], f)
    >>> report = results_report([os.path.join(folder, "good.json"), os.path.join(folder, "poor.json")],
    ...                         n_resamples=200)
    >>> (task,) = report.tasks
    >>> [(row.model, round(row.main_score, 3)) for row in task.rows], task.comparisons_from
    ([('good', 0.943), ('poor', 0.257)], 'computed')
    >>> round(task.comparisons[0].difference, 3)
    0.686
    """
    n_resamples = check_scalar(n_resamples, "n_resamples", int, low=0)
    seed = check_scalar(seed, "seed", int, low=0, high=2**32, include="left")
    level = check_scalar(level, "level", float, low=0, high=1, include="neither")
    opened: list[Store] = []

    def the_store() -> Store:
        if isinstance(store, Store):
            return store
        if not opened:
            opened.append(Store(store, create=False, readonly=True))
        return opened[0]

    try:
        loaded = load_sources(list(sources), the_store)
    finally:
        for s in opened:
            s.close()
    groups: dict[tuple[str, str], list[Loaded]] = {}
    for item in loaded:
        groups.setdefault((item.result.task_name, item.result.split), []).append(item)
    tasks = tuple(_task(task, split, items, n_resamples=n_resamples, seed=seed, level=level)
                  for (task, split), items in groups.items())
    return ResultsReport(tasks, tuple(str(s) for s in sources), level=level)


def _task(task: str, split: str, items: list[Loaded], *, n_resamples: int, seed: int, level: float) -> TaskReport:
    names = _unique_names(items)
    rows = tuple(_row(name, item) for name, item in zip(names, items, strict=True))
    results = [item.result for item in items]
    if len(items) < 2:
        return TaskReport(task, split, rows)
    documents = {item.batch for item in items}
    if len(documents) == 1 and items[0].comparisons:
        return TaskReport(task, split, rows, _renamed(items, names, {items[0].batch}), "given")
    bare = [name for name, r in zip(names, results, strict=True) if r.units is None]
    if not bare:
        try:
            comparisons = compare_results(results, n_resamples=n_resamples, seed=seed, level=level, names=names)
        except InputError as e:
            return TaskReport(task, split, rows, note=f"Not compared: {e}")
        return TaskReport(task, split, rows, tuple(comparisons), "computed",
                          f"Compared on the per-unit scores: {n_resamples} resamples, seed {seed}.")
    given = {item.batch for item in items if item.comparisons}
    why = (f"{', '.join(repr(b) for b in bare)} carr{'y' if len(bare) > 1 else 'ies'} no per-unit scores "
           f"(MTEB files and clustering record none)")
    if given:
        return TaskReport(task, split, rows, _renamed(items, names, given), "given",
                          f"Only the pairs within each file are compared, as the files give them: {why}")
    return TaskReport(task, split, rows, note=f"Not compared: {why}")


def _unique_names(items: list[Loaded]) -> list[str]:
    """Each model's name: as its file's comparisons give it, else its label; the source added to a repeated name."""
    names = [item.given_name or result_label(item.result) for item in items]
    if len(set(names)) < len(names):
        repeated = {n for n in names if names.count(n) > 1}
        names = [f"{n} ({item.origin or item.source})" if n in repeated else n
                 for n, item in zip(names, items, strict=True)]
    if len(set(names)) < len(names):
        names = [f"{n} #{i + 1}" for i, n in enumerate(names)]
    return names


def _renamed(items: list[Loaded], names: list[str], batches: set[int]) -> tuple[Comparison, ...]:
    """The comparisons of these documents, their models named as the report names them."""
    out: list[Comparison] = []
    for batch in sorted(batches):
        members = [(item, name) for item, name in zip(items, names, strict=True) if item.batch == batch]
        rename = {item.given_name: name for item, name in members}
        out += [Comparison(rename.get(c.a, c.a), rename.get(c.b, c.b), c.difference, c.ci_low, c.ci_high, c.p_value,
                           c.p_raw) for c in members[0][0].comparisons]
    return tuple(out)


def _row(name: str, item: Loaded) -> ModelRow:
    r = item.result
    iv = r.interval
    n_units = r.units.n_units if r.units is not None else next(
        (int(r.info[k]) for k in _COUNT_KEYS if isinstance(r.info.get(k), int) and not isinstance(r.info[k], bool)),
        None)
    return ModelRow(name, item.source, r.main_metric, r.main_score, None if iv is None else float(iv.low),
                    None if iv is None else float(iv.high), None if iv is None else float(iv.level), n_units,
                    _parts(r.parts.to_dict() if r.parts is not None else None))


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _score(data: Any) -> dict[str, float | None] | None:
    if not isinstance(data, dict):
        return None
    score = data.get("main_score", data.get("score"))
    return {"main_score": _number(score), "ci_low": _number(data.get("ci_low")),
            "ci_high": _number(data.get("ci_high"))}


def _parts(parts: Any) -> dict[str, Any] | None:
    """The per-part breakdown of a result's ``repspace.parts``, read defensively (unknown keys are left out)."""
    if not isinstance(parts, dict):
        return None
    values = parts.get("values", parts.get("parts"))
    if not isinstance(values, list):
        return None
    rows = []
    for v in values:
        score = _score(v)
        if score is None:
            continue
        n = v.get("n", v.get("n_units"))
        rows.append({"part": str(v.get("part", v.get("name", ""))),
                     "n": n if isinstance(n, int) and not isinstance(n, bool) else None, **score})
    return {"by": str(parts.get("by", "")), "macro": _score(parts.get("macro")), "values": rows}
