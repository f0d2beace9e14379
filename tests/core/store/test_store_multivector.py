"""Multi-vector spaces in the store: token matrices round-trip (across blocks, deletes, upserts and a reopen),
migration 7 keeps an older store's spaces, and every refused batch changes nothing.

The matrices read back are compared byte for byte with the float32 arrays they were written from; a refused
batch leaves the database as it was (``state_of``: every table read through a separate SQLite connection).
"""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from repspace import Store
from repspace.core.errors import ConflictError, InputError, NotFoundError
from repspace.core.limits import MAX_TOKENS_PER_ROW
from repspace.core.store._db import _split_sql
from repspace.core.store._rows import BLOCK_BYTES
from repspace.core.store._schema import MIGRATIONS


def _sets(rng, n: int, dim: int, most: int = 40) -> list[np.ndarray]:
    return [rng.standard_normal((int(t), dim)).astype(np.float32) for t in rng.integers(1, most, size=n)]


def _same(got: list[np.ndarray], want: list[np.ndarray]) -> bool:
    return len(got) == len(want) and all(g.shape == w.shape and g.tobytes() == w.tobytes() for g, w in zip(got, want))


def test_token_sets_round_trip_across_blocks_deletes_and_a_reopen(tmp_path, rng):
    path = tmp_path / "s.db"
    sets = _sets(rng, 3000, 96)
    assert sum(len(s) for s in sets) * 96 * 4 > 2 * BLOCK_BYTES  # several blocks
    ids = [f"d{i}" for i in range(3000)]
    with Store(path) as store:
        sp = store.create_space("tok", dim=96, metric="ip", layout="multivector")
        assert sp.add(ids, sets, texts=[f"t{i}" for i in range(3000)]).added == 3000
        assert store.db.conn.execute("SELECT count(*) FROM token_blocks").fetchone()[0] >= 2
        assert _same(sp.token_sets([2999, 0, 1500]), [sets[2999], sets[0], sets[1500]])
        sp.delete(ids[::3])
    with Store(path) as store:
        sp = store.space("tok")
        assert sp.info().layout == "multivector" and sp.info().count == 2000
        rows, held = sp.multivector_rows()
        keep = [i for i in range(3000) if i % 3]
        assert rows.tolist() == keep and _same(held.to_list(), [sets[i] for i in keep])
        assert _same(sp.tokens_of(["d2", "d1"]), [sets[2], sets[1]])
        assert _same(sp.token_sets([0]), [sets[0]])  # a dead row reads back too (rows are append-only)
        assert sp.ids() == [ids[i] for i in keep]
        with pytest.raises(NotFoundError, match="'d0'"):
            sp.tokens_of(["d0"])


def test_upserts_keep_unchanged_rows_and_append_changed_ones(store, rng):
    sp = store.create_space("tok", dim=4, metric="ip", layout="multivector")
    sets = _sets(rng, 3, 4, 6)
    sp.add(["a", "b", "c"], sets)
    r = sp.add(["a", "b"], [sets[0], sets[1][:1]], texts=["now with a text", None])
    assert (r.added, r.replaced, r.updated, r.unchanged) == (0, 1, 1, 0)
    assert _same(sp.tokens_of(["a", "b"]), [sets[0], sets[1][:1]])
    rows, _ = sp.multivector_rows()
    assert rows.tolist() == [0, 2, 3] and sp.get(["a"])[0].text == "now with a text"


def test_a_schema_6_store_migrates_and_keeps_its_spaces(tmp_path):
    path = tmp_path / "old.db"
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA foreign_keys = ON")
    for number in range(6):
        for statement in _split_sql(MIGRATIONS[number]):
            con.execute(statement)
    con.execute("PRAGMA user_version = 6")
    con.execute("INSERT INTO spaces (uid, name, dim, metric, dtype, provenance, next_row, created_at, updated_at, "
                "layout) VALUES ('u1', 'bow', 3, 'ip', 'float32', '{}', 0, 't', 't', 'sparse')")
    con.execute("INSERT INTO space_state (space_id, name, data) VALUES (1, 'sparse.features', CAST('a\nb\nc' AS BLOB))")
    con.close()
    with Store(path) as s:
        assert s.space("bow").info().layout == "sparse" and s.space("bow").feature_names() == ["a", "b", "c"]
        s.create_space("tok", dim=2, metric="ip", layout="multivector").add(["x"], [[[1.0, 0.0]]])
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS) == 7
    assert con.execute("PRAGMA foreign_key_check").fetchall() == []
    assert "multivector" in con.execute("SELECT sql FROM sqlite_master WHERE name = 'spaces'").fetchone()[0]
    con.close()
    with Store(path) as s:
        s.delete_space("tok")  # the cascade reaches token_blocks on the rebuilt table
        assert s.db.conn.execute("SELECT count(*) FROM token_blocks").fetchone()[0] == 0


@pytest.mark.parametrize("batch, fragment", [
    ([np.ones((2, 4)), np.ones((3, 5))], "id 'b' (position 1) have dimension 5"),
    ([np.ones((2, 4)), np.zeros((0, 4))], "id 'b' (position 1) has no token vector"),
    ([np.ones((2, 4)), []], "id 'b' (position 1) has no token vector"),
    ([np.ones((2, 4)), [[1.0, 2.0, 3.0, 4.0], [1.0, 2.0]]], "id 'b' (position 1) are not a matrix"),
    ([np.ones((2, 4)), np.array([[0.0, np.nan, 0.0, 0.0]])], "NaN or inf"),
    ([np.ones((2, 4)), np.array([[0.0, np.inf, 0.0, 0.0]])], "NaN or inf"),
    ([np.ones((2, 4)), np.array([[1e39, 0.0, 0.0, 0.0]])], "beyond float32"),
    ([np.ones((2, 4)), np.ones(4)], "2-d (n_tokens, 4)"),
    ([np.ones((2, 4)), np.full((1, 4), "x")], "not a matrix of numbers"),
    ([np.ones((2, 4)), np.ones((MAX_TOKENS_PER_ROW + 1, 4))], "MAX_TOKENS_PER_ROW"),
    ([np.ones((2, 4))], "got 1 token sets for 2 ids"),
])
def test_bad_batches_are_one_line_and_change_nothing(store, state_of, batch, fragment):
    sp = store.create_space("tok", dim=4, metric="ip", layout="multivector")
    sp.add(["z"], [np.ones((1, 4))])
    before = state_of(store)
    with pytest.raises(InputError) as e:
        sp.add(["a", "b"], batch)
    assert fragment in str(e.value) and "\n" not in str(e.value)
    assert state_of(store) == before


def test_layout_rules_are_one_line(store):
    with pytest.raises(InputError, match="metric ip"):
        store.create_space("t", dim=4, layout="multivector")
    with pytest.raises(InputError, match="float32"):
        store.create_space("t", dim=4, metric="ip", dtype="float16", layout="multivector")
    sp = store.create_space("t", dim=4, metric="ip", layout="multivector")
    sp.add(["a"], [np.ones((2, 4))])
    for read in (sp.vectors, sp.snapshot, lambda: sp.read_rows([0])):
        with pytest.raises(InputError, match="holds token vectors .* needs dense vectors"):
            read()
    with pytest.raises(InputError, match="sparse rows"):
        sp.sparse_rows()
    dense = store.create_space("d", dim=4)
    with pytest.raises(InputError, match="reads token vectors"):
        dense.token_sets([0])
    with pytest.raises(ConflictError, match="layout=multivector"):
        store.create_space("d", dim=4, metric="ip", layout="multivector", exist_ok=True)
    assert repr(sp) == "<Space 't' multivector dim=4 metric=ip>"
