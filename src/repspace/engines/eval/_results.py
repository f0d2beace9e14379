"""The result of one evaluation task, shaped like MTEB's ``TaskResult``."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from repspace.core.errors import InputError
from repspace.engines.eval.mteb_format import (
    DEFAULT_LANGUAGES,
    MTEB_VERSION,
    NO_REVISION,
    parse_languages,
    safe_name,
)
from repspace.engines.eval.partition import Partition
from repspace.engines.eval.uncertainty import Interval
from repspace.engines.eval.units import Units

#: The subset name MTEB uses for single-subset tasks.
DEFAULT_SUBSET = "default"


@dataclass(frozen=True)
class TaskResult:
    """Scores of one task on one split, for one subject (an encoder, layer or space).

    Parameters
    ----------
    task_name : str
        ``sts``, ``retrieval``, ``wordsim``, ... (with the data set's name when
        known, e.g. ``sts:stsb-en-test``).
    split : str
        The split scored (``test`` unless the data says otherwise).
    main_metric : str
        The key of :attr:`scores` that is the task's headline number.
    scores : dict of str to float
        Every metric, keys as in ``METRICS.md`` (``spearman``, ``ndcg_at_10``...)
        and MTEB's names beside them where they differ (``cosine_spearman``).
    evaluation_time : float
        Wall seconds the task took, encoding included.
    info : dict
        What was evaluated and how: encoder or space, layer, compression,
        counts such as ``oov_pairs``. Written under ``repspace`` in :meth:`to_dict`.
    dataset_revision : str, optional
        A content hash of the data
        (:func:`repspace.engines.eval.mteb_format.data_revision`); ``unknown`` when not given.
    languages : tuple of str
        The data's languages as MTEB writes them (``eng-Latn``); default English.
    mteb_task : str, optional
        The registered MTEB task the data is (``STSBenchmark``): the task name
        of :meth:`to_mteb`.
    mteb_main_metric : str, optional
        That task's main score, a key of :attr:`scores` (default :attr:`main_metric`).
    interval : Interval, optional
        The seeded bootstrap interval of the main score
        (:func:`repspace.engines.eval.uncertainty.bootstrap_interval`, resampling
        the task's units); written as ``ci_low``/``ci_high`` beside ``main_score``.
    parts : Partition, optional
        The task split by a column (``--by``): each part's score and interval and
        their macro average (:class:`~repspace.engines.eval.partition.Partition`);
        the main score stays the whole data's. Written under ``repspace.parts``
        by :meth:`to_dict` and inside :meth:`to_mteb`'s score entry.
    units : Units, optional
        The per-unit arrays the main score is computed from
        (:class:`~repspace.engines.eval.units.Units`): what
        :func:`~repspace.engines.eval.comparisons.compare_results` tests two
        models on. Written under ``repspace.units`` by :meth:`to_dict` (not in
        the score entry, nor in :meth:`to_mteb`'s files).

    Examples
    --------
    >>> r = TaskResult("sts", "test", "spearman", {"spearman": 0.8, "pearson": 0.79}, 1.5)
    >>> r.main_score
    0.8
    >>> d = r.to_dict()
    >>> d["scores"]["test"][0]["main_score"], d["scores"]["test"][0]["languages"], d["mteb_version"]
    (0.8, ['eng-Latn'], '2.26.24')
    >>> from repspace.engines.eval.uncertainty import Interval
    >>> r = TaskResult("sts", "test", "spearman", {"spearman": 0.8}, 1.5, interval=Interval(0.75, 0.84, 0.95, 1000))
    >>> entry = r.to_dict()["scores"]["test"][0]
    >>> entry["main_score"], entry["ci_low"], entry["ci_high"]
    (0.8, 0.75, 0.84)
    """

    task_name: str
    split: str
    main_metric: str
    scores: dict[str, float]
    evaluation_time: float
    info: dict[str, Any] = field(default_factory=dict)
    dataset_revision: str | None = None
    languages: tuple[str, ...] = DEFAULT_LANGUAGES
    mteb_task: str | None = None
    mteb_main_metric: str | None = None
    interval: Interval | None = None
    units: Units | None = None
    parts: Partition | None = None

    def __post_init__(self) -> None:
        if self.main_metric not in self.scores:
            raise InputError(f"main metric {self.main_metric!r} is not among the scores {sorted(self.scores)}")
        for key, value in self.scores.items():
            if not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"score {key} of {self.task_name} is not a finite number: {value!r}")
        object.__setattr__(self, "languages", parse_languages(self.languages))
        if self.mteb_main_metric is not None and self.mteb_main_metric not in self.scores:
            raise InputError(f"MTEB's main score {self.mteb_main_metric!r} is not among the scores of "
                             f"{self.task_name} ({', '.join(sorted(self.scores))})")
        if self.interval is not None and not all(hasattr(self.interval, k) for k in ("low", "high", "to_dict")):
            raise InputError(f"the interval of {self.task_name} must be an Interval, "
                             f"not {type(self.interval).__name__}")
        if self.units is not None and not all(hasattr(self.units, k) for k in ("arrays", "statistic", "to_dict")):
            raise InputError(f"the units of {self.task_name} must be Units, not {type(self.units).__name__}")
        if self.parts is not None and not all(hasattr(self.parts, k) for k in ("by", "values", "to_dict")):
            raise InputError(f"the parts of {self.task_name} must be a Partition, not {type(self.parts).__name__}")
        if self.mteb_task is not None and safe_name(self.mteb_task) != self.mteb_task:
            raise InputError(f"MTEB task name {self.mteb_task!r} must be letters, digits, '.', '_' and '-' only")

    @property
    def main_score(self) -> float:
        """The value of :attr:`main_metric`."""
        return float(self.scores[self.main_metric])

    @property
    def mteb_task_name(self) -> str:
        """The task name of :meth:`to_mteb`: :attr:`mteb_task`, else :attr:`task_name` made file-safe.

        Examples
        --------
        >>> TaskResult("sts:stsb-en-test", "test", "spearman", {"spearman": 0.8}, 1.0).mteb_task_name
        'sts_stsb-en-test'
        """
        return self.mteb_task or safe_name(self.task_name)

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` shape: MTEB's TaskResult fields, plus a ``repspace`` block describing the subject.

        mteb's ``TaskResult.from_dict`` accepts it (``task_name`` stays
        repspace's, e.g. ``sts:stsb-en-test``; mteb drops the top-level
        ``repspace`` block). :meth:`to_mteb` is the form of a results file.

        Returns
        -------
        dict
            ``{"task_name", "dataset_revision", "mteb_version", "scores": {split:
            [{"main_score", "hf_subset", "languages", **scores}]},
            "evaluation_time", "repspace": info}``; with an :attr:`interval`, the
            score entry has ``ci_low`` and ``ci_high`` after ``main_score`` (mteb
            keeps them as extra keys) and ``repspace`` has ``interval``
            (:meth:`Interval.to_dict`); with :attr:`units`, ``repspace`` has
            ``units`` (:meth:`Units.to_dict`); with :attr:`parts`, ``repspace`` has
            ``parts`` (:meth:`Partition.to_dict`: ``by``, ``level``, ``macro``,
            ``values``). :meth:`from_dict` reads it back.
        """
        entry: dict[str, Any] = {"main_score": self.main_score, **self._ci(self.main_metric),
                                 "hf_subset": DEFAULT_SUBSET, "languages": list(self.languages)}
        entry.update({k: float(v) for k, v in self.scores.items()})
        return {
            "task_name": self.task_name,
            "dataset_revision": self.dataset_revision or NO_REVISION,
            "mteb_version": MTEB_VERSION,
            "scores": {self.split: [entry]},
            "evaluation_time": self.evaluation_time,
            "repspace": self._block(units=True),
        }

    @classmethod
    def from_dict(cls, data: Any) -> TaskResult:
        """The result :meth:`to_dict` wrote (as read back from JSON or the store).

        Parameters
        ----------
        data : dict
            A :meth:`to_dict` dict: one split with one score entry, and the
            ``repspace`` block (``main_metric``, ``task``; ``interval``,
            ``units`` and ``parts`` when there were).

        Raises
        ------
        InputError
            When ``data`` is not such a dict.

        Examples
        --------
        >>> r = TaskResult("sts:toy", "test", "spearman", {"spearman": 0.8, "pearson": 0.7}, 1.5,
        ...                {"encoder": "static"}, interval=Interval(0.7, 0.9, 0.95, 1000),
        ...                units=Units("spearman", [[1.0, 2.0, 3.0], [0.1, 0.3, 0.2]], ("gold", "cosine"), ("gold",)))
        >>> back = TaskResult.from_dict(r.to_dict())
        >>> back.to_dict() == r.to_dict(), back.units == r.units, back.info
        (True, True, {'encoder': 'static'})
        """
        try:
            (split, entries), = data["scores"].items()
            entry = dict(entries[0])
            block = dict(data.get("repspace") or {})
            main_metric = str(block.pop("main_metric"))
            task = str(block.pop("task", data["task_name"]))
            evaluation_time = float(data.get("evaluation_time") or 0.0)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):
            raise InputError("a result must look like TaskResult.to_dict(): task_name, one split of scores and "
                             "a repspace block naming its main metric") from None
        interval, units, parts = block.pop("interval", None), block.pop("units", None), block.pop("parts", None)
        mteb_task = block.pop("mteb_task", None)
        languages = entry.pop("languages", None) or DEFAULT_LANGUAGES
        for key in ("main_score", "ci_low", "ci_high", "hf_subset", "mteb_version", "repspace"):
            entry.pop(key, None)
        scores = {k: float(v) for k, v in entry.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
        try:
            interval = None if interval is None else Interval(**interval)
        except TypeError:
            raise InputError(f"the interval of {task} must have low, high, level and n_resamples") from None
        revision = data.get("dataset_revision")
        return cls(task, str(split), main_metric, scores, evaluation_time, block,
                   dataset_revision=None if revision in (None, NO_REVISION) else str(revision),
                   languages=tuple(languages), mteb_task=mteb_task, interval=interval,
                   units=None if units is None else Units.from_dict(units),
                   parts=None if parts is None else Partition.from_dict(parts))

    def to_mteb(self, *, date: float | None = None) -> dict[str, Any]:
        """One MTEB results file (``<task>.json``), as mteb 2.x writes and reads it.

        The task is named :attr:`mteb_task_name`; ``main_score`` is the value of
        :attr:`mteb_main_metric` (else :attr:`main_metric`); the ``repspace``
        block sits inside the score entry, where mteb's model keeps it. The
        :attr:`interval` is written as ``ci_low``/``ci_high`` beside
        ``main_score`` when that is the value of :attr:`main_metric`.

        Parameters
        ----------
        date : float, optional
            When the evaluation ran (seconds since the epoch, as mteb writes it).

        Examples
        --------
        >>> r = TaskResult("sts:toy", "test", "spearman", {"spearman": 0.8, "cosine_spearman": 0.8}, 1.0,
        ...                mteb_task="STSBenchmark", mteb_main_metric="cosine_spearman")
        >>> d = r.to_mteb()
        >>> d["task_name"], d["scores"]["test"][0]["main_score"], d["scores"]["test"][0]["repspace"]["task"]
        ('STSBenchmark', 0.8, 'sts:toy')
        """
        main = self.mteb_main_metric or self.main_metric
        entry: dict[str, Any] = {"main_score": float(self.scores[main]), **self._ci(main),
                                 "hf_subset": DEFAULT_SUBSET, "languages": list(self.languages),
                                 "mteb_version": MTEB_VERSION}
        entry.update({k: float(v) for k, v in self.scores.items()})
        entry["repspace"] = self._block()
        return {
            "dataset_revision": self.dataset_revision or NO_REVISION,
            "task_name": self.mteb_task_name,
            "mteb_version": MTEB_VERSION,
            "scores": {self.split: [entry]},
            "evaluation_time": self.evaluation_time,
            "kg_co2_emissions": None,
            "date": date,
        }

    def _ci(self, metric: str) -> dict[str, float]:
        """``ci_low``/``ci_high`` of the score ``metric`` reported as ``main_score`` (when it is the main score's)."""
        if self.interval is None or float(self.scores[metric]) != self.main_score:
            return {}
        return {"ci_low": float(self.interval.low), "ci_high": float(self.interval.high)}

    def _block(self, *, units: bool = False) -> dict[str, Any]:
        block = dict(self.info, main_metric=self.main_metric, task=self.task_name)
        if self.interval is not None:
            block["interval"] = self.interval.to_dict()
        if self.mteb_task is not None:
            block["mteb_task"] = self.mteb_task
        if self.parts is not None:
            block["parts"] = self.parts.to_dict()
        if units and self.units is not None:
            block["units"] = self.units.to_dict()
        return block

    def with_info(self, **info: Any) -> TaskResult:
        """A copy whose :attr:`info` has these keys added or replaced."""
        return replace(self, scores=dict(self.scores), info={**self.info, **info})

    def with_interval(self, interval: Interval | None) -> TaskResult:
        """A copy with this :attr:`interval` of the main score (``None`` removes it)."""
        return replace(self, scores=dict(self.scores), info=dict(self.info), interval=interval)

    def with_units(self, units: Units | None) -> TaskResult:
        """A copy with these :attr:`units` (``None`` removes them)."""
        return replace(self, scores=dict(self.scores), info=dict(self.info), units=units)

    def with_parts(self, parts: Partition | None) -> TaskResult:
        """A copy with these :attr:`parts` (``None`` removes them)."""
        return replace(self, scores=dict(self.scores), info=dict(self.info), parts=parts)

    def with_mteb(self, *, dataset_revision: str | None = None, languages: Any = None,
                  mteb_task: str | None = None, mteb_main_metric: str | None = None) -> TaskResult:
        """A copy carrying what MTEB's format needs beyond the scores (``None`` keeps a field as it is).

        Examples
        --------
        >>> r = TaskResult("sts:toy", "test", "spearman", {"spearman": 0.8}, 1.0)
        >>> r.with_mteb(dataset_revision="abc", languages="deu-Latn").to_dict()["scores"]["test"][0]["languages"]
        ['deu-Latn']
        """
        changes: dict[str, Any] = {"dataset_revision": dataset_revision, "mteb_task": mteb_task,
                                   "mteb_main_metric": mteb_main_metric}
        changes = {k: v for k, v in changes.items() if v is not None}
        if languages is not None:
            changes["languages"] = parse_languages(languages)
        return replace(self, **changes)

    def __repr__(self) -> str:
        subject = ", ".join(f"{k}={v}" for k, v in self.info.items() if k in ("encoder", "space", "layer", "codec"))
        extra = f", {subject}" if subject else ""
        return f"TaskResult({self.task_name}/{self.split}: {self.main_metric}={self.main_score:.4f}{extra})"
