"""Hits of one query: its rows and scores turned into :class:`~repspace.core.hits.Hit` objects.

Shared by every search of a stored space (dense, sparse, set queries), so none of them imports another's module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from repspace.core.hits import Hit

if TYPE_CHECKING:
    from repspace.core.store import Space

__all__ = ["hits_for"]


def hits_for(space: Space, rows: np.ndarray | list[int], scores: np.ndarray | list[float],
             exclude: str | None = None, *, generation: int | None = None) -> list[Hit]:
    """Turn one query's rows and scores into hits (rows deleted meanwhile are dropped).

    ``generation``: the one the rows were searched at (``space.info().generation``); records
    this process read at it are served from memory (:meth:`~repspace.core.store.Space.records`);
    each hit decodes its metadata when it is first read (:meth:`~repspace.core.hits.Hit.of`).
    """
    if type(rows) is not list:  # a search of one query may hand lists (knn_one)
        rows = np.asarray(rows).tolist()
    if type(scores) is not list:
        scores = np.asarray(scores).tolist()
    make = Hit.of
    held = space.held_records(generation) if generation is not None else None
    if held is not None:  # a loop of one query per call: every hit's record is usually read already
        out = []
        for r, s in zip(rows, scores):
            it = held.get(r)
            if it is None:
                if r >= 0:
                    break  # not kept: all of them from stored_records below
            elif it[0] != exclude:
                out.append(make(it[0], s, it[1], it[2], r))
        else:
            return out
    found = space.stored_records([r for r in rows if r >= 0], generation=generation)
    out = []
    for r, s in zip(rows, scores):
        it = found.get(r)
        if it is None or it[0] == exclude:
            continue
        out.append(make(it[0], s, it[1], it[2], r))
    return out
