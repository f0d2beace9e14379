"""Recorded evaluation results: what was measured, on which generation of which space."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from repspace.core.errors import InputError
from repspace.core.store._base import now_iso
from repspace.core.store.validate import json_default


@dataclass(frozen=True)
class SavedResult:
    """One recorded result.

    Attributes
    ----------
    id : int
        Its number in the store.
    subject : str
        The space's name, or the encoder spec for a result about an encoder alone.
    space : str or None
        The space it measured, if any.
    generation : int or None
        The space's generation when it was measured.
    stale : bool
        True when the space has changed since (its generation moved on).
    task_name, split, main_metric : str
    main_score : float
    result : dict
        The full result (MTEB TaskResult layout).
    created_at : str
        ISO 8601 UTC time of recording.

    Examples
    --------
    >>> import os, tempfile
    >>> from repspace.core.store import Store
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
    >>> space = store.create_space("v", dim=2)
    >>> _ = store.save_result({"task_name": "sts:x", "scores": {"test": [{"main_score": 0.5}]}}, space=space)
    >>> _ = space.add(["a"], [[1.0, 0.0]])  # the space changes after the measurement
    >>> (s,) = store.results()
    >>> s.id, s.subject, s.task_name, s.split, s.main_score, s.generation, s.stale
    (1, 'v', 'sts:x', 'test', 0.5, 0, True)
    """

    id: int
    subject: str
    space: str | None
    generation: int | None
    stale: bool
    task_name: str
    split: str
    main_metric: str
    main_score: float
    result: dict[str, Any]
    created_at: str

    def to_dict(self) -> dict[str, Any]:
        """All fields, for ``--json``."""
        return {
            "id": self.id, "subject": self.subject, "space": self.space, "generation": self.generation,
            "stale": self.stale, "task_name": self.task_name, "split": self.split,
            "main_metric": self.main_metric, "main_score": self.main_score, "created_at": self.created_at,
            "result": self.result,
        }


def save_result(db: Any, result: dict[str, Any], *, subject: str, space_uid: str | None = None,
                generation: int | None = None) -> int:
    """Insert one result (a ``TaskResult.to_dict()``); returns its id."""
    try:
        task_name = str(result["task_name"])
        (split, entries), = result["scores"].items()
        main_score = float(entries[0]["main_score"])
        main_metric = str(result.get("repspace", {}).get("main_metric", "main_score"))
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        raise InputError("a result must look like MTEB's TaskResult: task_name and one split of scores") from None
    if not math.isfinite(main_score):
        raise InputError(f"the main score of {task_name} is not finite")
    text = json.dumps(result, default=json_default, allow_nan=False)
    with db.write() as c:
        sid = None
        if space_uid is not None:
            row = c.execute("SELECT id, generation FROM spaces WHERE uid = ?", (space_uid,)).fetchone()
            if row is None:
                raise InputError("the space this result measured was deleted meanwhile; nothing recorded")
            sid = row[0]
            if generation is None:
                generation = row[1]
        cur = c.execute(
            "INSERT INTO results (space_id, generation, subject, task_name, split, main_metric, main_score, "
            "result, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (sid, generation if sid is not None else None, subject, task_name, split, main_metric,
             main_score, text, now_iso()),
        )
        return int(cur.lastrowid)


def list_results(db: Any, *, space: str | None = None, task: str | None = None) -> list[SavedResult]:
    """Recorded results, oldest first, optionally of one space (by name) and/or task (name or prefix before ':')."""
    sql = (
        "SELECT r.id, r.subject, s.name, r.generation, s.generation, r.task_name, r.split, r.main_metric, "
        "r.main_score, r.result, r.created_at FROM results r LEFT JOIN spaces s ON s.id = r.space_id"
    )
    where, params = [], []
    if space is not None:
        where.append("s.name = ?")
        params.append(space)
    if task is not None:
        where.append("(r.task_name = ? OR r.task_name LIKE ? ESCAPE '\\')")
        params += [task, task.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + ":%"]
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY r.id"
    with db.read() as c:
        rows = c.execute(sql, params).fetchall()
    return [
        SavedResult(id=r[0], subject=r[1], space=r[2], generation=r[3],
                    stale=r[2] is not None and r[3] != r[4], task_name=r[5], split=r[6], main_metric=r[7],
                    main_score=r[8], result=json.loads(r[9]), created_at=r[10])
        for r in rows
    ]
