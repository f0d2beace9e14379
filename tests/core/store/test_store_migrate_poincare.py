"""Migration 5 rebuilds the spaces table to admit the poincare metric, keeping every row that refers to it."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from repspace import Store
from repspace.core.errors import InputError
from repspace.core.store._db import _split_sql
from repspace.core.store._schema import MIGRATIONS


def test_a_schema_4_store_keeps_its_items_vectors_state_and_shards(tmp_path):
    path = tmp_path / "old.db"
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA journal_mode = WAL")
    con.execute("PRAGMA foreign_keys = ON")
    for number in range(4):
        for statement in _split_sql(MIGRATIONS[number]):
            con.execute(statement)
    con.execute("PRAGMA user_version = 4")
    con.close()
    # Fill it through the code (the schema is the same up to 4), then take the store back to version 4.
    X = np.random.default_rng(0).normal(size=(50, 3)).astype(np.float32)
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("INSERT INTO spaces (uid, name, dim, metric, dtype, provenance, next_row, created_at, updated_at) "
                "VALUES ('u1', 'old', 3, 'l2', 'float32', '{\"encoder\": \"precomputed\"}', 0, 't', 't')")
    con.execute("INSERT INTO space_state (space_id, name, data) VALUES (1, 'transforms', x'00')")
    con.execute("INSERT INTO shards (space_id, sha256, job, name, n_rows, ingested_at) "
                "VALUES (1, 'abc', 'j', 's', 0, 't')")
    con.close()
    with Store(path) as s:
        sp = s.space("old")
        sp.add([f"i{k}" for k in range(50)], X, texts=[f"text {k}" for k in range(50)])
        assert s.space("old").metric.value == "l2"
        p = s.create_space("ball", dim=2, metric="poincare")
        p.add(["a", "b"], [[0.1, 0.2], [-0.5, 0.3]])
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS) >= 5
    assert con.execute("SELECT count(*) FROM items WHERE space_id = 1").fetchone()[0] == 50
    assert con.execute("SELECT count(*) FROM space_state").fetchone()[0] == 1
    assert con.execute("SELECT count(*) FROM shards").fetchone()[0] == 1
    assert con.execute("PRAGMA foreign_key_check").fetchall() == []
    assert "poincare" in con.execute("SELECT sql FROM sqlite_master WHERE name = 'spaces'").fetchone()[0]
    con.close()
    with Store(path) as s:
        assert np.array_equal(s.space("old").vectors_of(["i7"]), X[7:8])
        s.delete_space("old")  # the cascade still works on the rebuilt table
    con = sqlite3.connect(path)
    assert con.execute("SELECT count(*) FROM items WHERE space_id = 1").fetchone()[0] == 0
    con.close()


def test_poincare_vectors_outside_the_ball_are_refused_whole(store):
    sp = store.create_space("ball", dim=2, metric="poincare")
    with pytest.raises(InputError, match=r"item 'b' has norm 1: .*open unit ball.*1 of 3"):
        sp.add(["a", "b", "c"], [[0.1, 0.0], [0.6, 0.8], [0.0, 0.2]])
    assert sp.info().count == 0
    with pytest.raises(InputError, match="open unit ball"):  # float16 rounding up to the sphere counts too
        store.create_space("h", dim=1, metric="poincare", dtype="float16").add(["x"], [[0.99999]])
