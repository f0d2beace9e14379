"""The result of one evaluation task, shaped like MTEB's ``TaskResult``."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from repspace.core.errors import InputError

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
        Every metric, keys as in ``METRICS.md`` (``spearman``, ``ndcg_at_10``...).
    evaluation_time : float
        Wall seconds the task took, encoding included.
    info : dict
        What was evaluated and how: encoder or space, layer, compression,
        counts such as ``oov_pairs``. Written under ``repspace`` in :meth:`to_dict`.

    Examples
    --------
    >>> r = TaskResult("sts", "test", "spearman", {"spearman": 0.8, "pearson": 0.79}, 1.5)
    >>> r.main_score
    0.8
    >>> r.to_dict()["scores"]["test"][0]["main_score"]
    0.8
    """

    task_name: str
    split: str
    main_metric: str
    scores: dict[str, float]
    evaluation_time: float
    info: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.main_metric not in self.scores:
            raise InputError(f"main metric {self.main_metric!r} is not among the scores {sorted(self.scores)}")
        for key, value in self.scores.items():
            if not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"score {key} of {self.task_name} is not a finite number: {value!r}")

    @property
    def main_score(self) -> float:
        """The value of :attr:`main_metric`."""
        return float(self.scores[self.main_metric])

    def to_dict(self) -> dict[str, Any]:
        """MTEB's TaskResult layout, plus a ``repspace`` block describing the subject.

        Returns
        -------
        dict
            ``{"task_name", "scores": {split: [{"main_score", "hf_subset",
            "languages", **scores}]}, "evaluation_time", "repspace": info}``.
        """
        entry: dict[str, Any] = {"main_score": self.main_score, "hf_subset": DEFAULT_SUBSET, "languages": []}
        entry.update({k: float(v) for k, v in self.scores.items()})
        return {
            "task_name": self.task_name,
            "scores": {self.split: [entry]},
            "evaluation_time": self.evaluation_time,
            "repspace": dict(self.info, main_metric=self.main_metric),
        }

    def with_info(self, **info: Any) -> TaskResult:
        """A copy whose :attr:`info` has these keys added or replaced."""
        return TaskResult(self.task_name, self.split, self.main_metric, dict(self.scores),
                          self.evaluation_time, {**self.info, **info})

    def __repr__(self) -> str:
        subject = ", ".join(f"{k}={v}" for k, v in self.info.items() if k in ("encoder", "space", "layer", "codec"))
        extra = f", {subject}" if subject else ""
        return f"TaskResult({self.task_name}/{self.split}: {self.main_metric}={self.main_score:.4f}{extra})"
