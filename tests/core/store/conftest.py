"""Fixtures for the store tests: a fresh store per test and a content fingerprint
read through an independent SQLite connection (not through repspace)."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from repspace import Store


def _fingerprint(path: Path) -> list:
    """Every row of every table (blobs as SHA-256), plus user_version, via a read-only connection."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        out: list = [con.execute("PRAGMA user_version").fetchone()[0]]
        tables = [("spaces", "id"), ("items", "space_id, row"), ("blocks", "space_id, first_row"),
                  ("space_state", "space_id, name")]
        if con.execute("SELECT 1 FROM sqlite_master WHERE name = 'sparse_blocks'").fetchone():
            tables.append(("sparse_blocks", "space_id, first_row"))
        if con.execute("SELECT 1 FROM sqlite_master WHERE name = 'token_blocks'").fetchone():
            tables.append(("token_blocks", "space_id, first_row"))
        for table, order in tables:
            rows = con.execute(f"SELECT * FROM {table} ORDER BY {order}").fetchall()
            out.append([
                tuple(hashlib.sha256(v).hexdigest() if isinstance(v, bytes) else v for v in r) for r in rows
            ])
        return out
    finally:
        con.close()


class StoreState:
    """What must not change when an operation is refused: DB content and the API's view."""

    def __init__(self, store: Store) -> None:
        self.db = _fingerprint(store.path)
        self.spaces = [s.to_dict() for s in store.spaces()]
        self.views = {}
        for info in store.spaces():
            sp = store.space(info.name)
            if info.layout == "multivector":
                rows, sets = sp.multivector_rows()
                ids = sp.ids()
                items = sp.get(ids) if ids else []
                self.views[info.name] = (ids, rows.tolist(), sets.offsets.tobytes(), sets.tokens.tobytes(),
                                         [(it.id, it.text, it.metadata, it.row) for it in items])
                continue
            if info.sparse:
                rows, data = sp.sparse_rows()
                ids = sp.ids()
                items = sp.get(ids) if ids else []
                self.views[info.name] = (ids, rows.tolist(), data.indptr.tobytes(), data.indices.tobytes(),
                                         data.values.tobytes(), [(it.id, it.text, it.metadata, it.row) for it in items])
                continue
            snap = sp.snapshot()
            items = sp.get(snap.ids) if snap.ids else []
            self.views[info.name] = (
                snap.ids, snap.rows.tolist(), snap.vectors.tobytes(), snap.generation,
                [(it.id, it.text, it.metadata, it.row) for it in items],
            )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StoreState) and (self.db, self.spaces, self.views) == (
            other.db, other.spaces, other.views
        )


@pytest.fixture
def state_of():
    """``state_of(store)`` captures the store's full content for before/after comparisons."""
    return StoreState


@pytest.fixture
def fingerprint():
    return _fingerprint


@pytest.fixture
def rng():
    return np.random.default_rng(20240601)
