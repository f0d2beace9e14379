"""Deleting items and spaces, migrations, and files that are not stores."""

from __future__ import annotations

import os
import sqlite3
import uuid

import numpy as np
import pytest

from repspace import NotFoundError, Store, StoreError
from repspace.core.store._schema import MIGRATIONS
from repspace.workflows.search import HNSWParams, ensure_hnsw


def _sql(path, query, *args):
    con = sqlite3.connect(path)
    try:
        return con.execute(query, args).fetchall()
    finally:
        con.close()


# ------------------------------------------------------------------ deleting items
def test_delete_items(store, rng):
    sp = store.create_space("d", dim=3, metric="l2")
    x = rng.standard_normal((10, 3)).astype(np.float32)
    ids = [f"i{i}" for i in range(10)]
    sp.add(ids, x, texts=ids)
    g = sp.info().generation
    assert sp.delete(["i2", "i5", "i2"]) == 2  # duplicates in the request count once
    info = sp.info()
    assert (info.count, info.dead_rows, info.next_row, info.generation) == (8, 2, 10, g + 1)
    keep = [i for i in range(10) if i not in (2, 5)]
    assert sp.ids() == [ids[i] for i in keep]
    assert np.array_equal(sp.vectors(), x[keep])
    assert sp.rows().tolist() == keep
    with pytest.raises(NotFoundError):
        sp.get(["i2"])
    assert sorted(sp.items(range(10))) == keep
    # Dead rows keep their bytes for derived indexes.
    assert np.array_equal(sp.read_rows([2, 5]), x[[2, 5]])
    rows, vecs = sp.live_rows(1, 7)
    assert rows.tolist() == [1, 3, 4, 6] and np.array_equal(vecs, x[[1, 3, 4, 6]])
    assert sp.delete([]) == 0 and sp.info().generation == g + 1
    assert sp.delete(ids[:2] + ["i2"], missing_ok=True) == 2


def test_delete_everything_then_add(store):
    sp = store.create_space("all", dim=2)
    sp.add(["a", "b"], np.eye(2))
    sp.delete(["a", "b"])
    assert len(sp) == 0 and sp.vectors().shape == (0, 2)
    sp.add(["c"], [[1.0, 1.0]])
    assert sp.ids() == ["c"] and sp.rows().tolist() == [2]


def test_delete_many_ids_in_one_call(store, rng):
    # More ids than one SQL statement takes (chunks of 500).
    sp = store.create_space("many", dim=2)
    ids = [f"i{i}" for i in range(1700)]
    sp.add(ids, rng.standard_normal((1700, 2)))
    assert sp.delete(ids[::2]) == 850
    assert sp.ids() == ids[1::2]
    assert len(sp.get(ids[1::2])) == 850
    assert len(sp.items(range(1700))) == 850


# ------------------------------------------------------------------ deleting spaces
def test_delete_space_removes_rows_and_index_folder(store, rng):
    keep = store.create_space("keep", dim=4)
    keep.add(["k"], np.ones((1, 4)))
    sp = store.create_space("gone", dim=4, metric="l2")
    sp.add([f"g{i}" for i in range(200)], rng.standard_normal((200, 4)), texts=["t"] * 200)
    uid = sp.uid
    ensure_hnsw(sp, HNSWParams(m=8, ef_construction=20))
    folder = store.index_dir / uid
    assert folder.is_dir() and any(folder.iterdir())
    info = store.delete_space("gone")
    assert info.name == "gone" and info.count == 200 and info.uid == uid
    assert not folder.exists()
    assert [s.name for s in store.spaces()] == ["keep"]
    with pytest.raises(NotFoundError):
        store.space("gone")
    # Rows went with it (no orphans), the other space is intact.
    assert _sql(store.path, "SELECT count(*) FROM items WHERE space_id NOT IN (SELECT id FROM spaces)") == [(0,)]
    assert _sql(store.path, "SELECT count(*) FROM blocks WHERE space_id NOT IN (SELECT id FROM spaces)") == [(0,)]
    assert _sql(store.path, "SELECT count(*) FROM items") == [(1,)]
    assert keep.ids() == ["k"]


def test_recreated_space_gets_fresh_uid_and_is_empty(store):
    sp = store.create_space("again", dim=2)
    sp.add(["a"], [[1.0, 0.0]])
    old_uid = sp.uid
    store.delete_space("again")
    new = store.create_space("again", dim=3, metric="l2")
    assert new.uid != old_uid and len(new.uid) == 32
    assert len(new) == 0 and new.dim == 3 and new.info().generation == 0
    assert store.space("again").uid == new.uid
    # The old handle does not reach the new space.
    with pytest.raises(NotFoundError):
        sp.add(["b"], [[1.0, 0.0]])
    assert len(new) == 0


def test_delete_space_without_index_folder(store):
    store.create_space("plain", dim=2)
    assert not store.index_dir.exists() or not any(store.index_dir.iterdir())
    store.delete_space("plain")
    assert store.spaces() == []


# ------------------------------------------------------------------ migrations and opening
def test_fresh_store_has_latest_schema_version(tmp_path):
    path = tmp_path / "fresh.db"
    Store(path).close()
    assert _sql(path, "PRAGMA user_version") == [(len(MIGRATIONS),)]
    assert _sql(path, "PRAGMA journal_mode") == [("wal",)]
    tables = {r[0] for r in _sql(path, "SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"spaces", "items", "blocks"} <= tables


def test_reopening_keeps_data_and_version(tmp_path):
    path = tmp_path / "s.db"
    with Store(path) as s:
        s.create_space("x", dim=2).add(["a"], [[1.0, 2.0]], texts=["t"])
    with Store(path) as s:
        assert s.space("x").vectors().tolist() == [[1.0, 2.0]]
        assert s.space("x").get(["a"])[0].text == "t"
    assert _sql(path, "PRAGMA user_version") == [(len(MIGRATIONS),)]


def test_empty_file_becomes_a_store(tmp_path):
    path = tmp_path / "empty.db"
    path.write_bytes(b"")
    with Store(path) as s:
        s.create_space("x", dim=2)
    assert _sql(path, "PRAGMA user_version") == [(len(MIGRATIONS),)]


def test_store_folder_is_created(tmp_path):
    path = tmp_path / "a" / "b" / "s.db"
    with Store(path) as s:
        assert s.spaces() == []
    assert path.is_file()
    assert Store(path).index_dir == tmp_path / "a" / "b" / "s.db.indexes"


def test_newer_schema_is_refused_and_not_touched(tmp_path):
    path = tmp_path / "future.db"
    with Store(path) as s:
        s.create_space("x", dim=2).add(["a"], [[1.0, 2.0]])
    con = sqlite3.connect(path)
    con.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    con.close()
    with pytest.raises(StoreError) as e:
        Store(path)
    assert "newer" in str(e.value) and "\n" not in str(e.value)
    assert _sql(path, "PRAGMA user_version") == [(len(MIGRATIONS) + 1,)]  # never downgraded
    assert _sql(path, "SELECT count(*) FROM items") == [(1,)]


def test_random_bytes_file_is_store_error_and_untouched(tmp_path):
    path = tmp_path / "junk.db"
    junk = np.random.default_rng(7).bytes(64 * 1024)
    path.write_bytes(junk)
    with pytest.raises(StoreError) as e:
        Store(path)
    assert "\n" not in str(e.value) and str(path) in str(e.value)
    assert path.read_bytes() == junk


def test_text_file_is_store_error(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("SQLite format 2\nthis is not a database\n" * 100)
    with pytest.raises(StoreError):
        Store(path)


def test_directory_path_is_store_error(tmp_path):
    folder = tmp_path / "iam.db"
    folder.mkdir()
    with pytest.raises(StoreError) as e:
        Store(folder)
    assert "\n" not in str(e.value)
    assert folder.is_dir() and list(folder.iterdir()) == []


def test_parent_is_a_file_is_store_error(tmp_path):
    parent = tmp_path / "file"
    parent.write_text("x")
    with pytest.raises(StoreError):
        Store(parent / "s.db")


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
def test_unreadable_file_is_store_error(tmp_path):
    path = tmp_path / "locked.db"
    Store(path).close()
    path.chmod(0)
    try:
        with pytest.raises(StoreError):
            Store(path)
    finally:
        path.chmod(0o600)


def test_default_store_path_env(monkeypatch, tmp_path):
    from repspace.workflows.store import STORE_ENV, default_store_path

    monkeypatch.setenv(STORE_ENV, str(tmp_path / "env.db"))
    assert default_store_path() == tmp_path / "env.db"
    with Store() as s:
        assert s.path == tmp_path / "env.db"
    monkeypatch.delenv(STORE_ENV)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_store_path() == tmp_path / "xdg" / "repspace" / "store.db"


def test_uids_are_unique_hex(store):
    uids = {store.create_space(f"s{i}", dim=2).uid for i in range(20)}
    assert len(uids) == 20
    assert all(uuid.UUID(u).hex == u for u in uids)


# ------------------------------------------------------------- the cached description
def test_info_follows_commits_of_this_and_other_connections(store, rng):
    sp = store.create_space("v", dim=2, metric="l2")
    first = sp.info()
    assert sp.info() is first  # nothing committed since: the cached description is reused
    sp.add(["a"], [[0.0, 1.0]])
    assert sp.info().count == 1  # this connection's own commit
    other = Store(store.path)  # another connection, as another process would hold
    try:
        other.space("v").add(["b", "c"], rng.standard_normal((2, 2)).astype(np.float32))
        assert sp.info().count == 3 and sp.info().generation > first.generation
        other.delete_space("v")
    finally:
        other.close()
    with pytest.raises(NotFoundError):
        sp.info()


def test_cached_vectors_follow_commits_of_this_and_other_connections(store, rng):
    sp = store.create_space("c", dim=2, metric="l2")
    sp.add(["a"], [[0.0, 1.0]])
    rows, vectors = sp.rows_and_vectors()
    assert sp.rows_and_vectors()[1] is vectors  # nothing committed since: the cached arrays are reused
    store.space("c").add(["b"], [[1.0, 0.0]])  # this connection, through another Space object
    assert sp.rows_and_vectors()[1].tolist() == [[0.0, 1.0], [1.0, 0.0]]
    other = Store(store.path)  # another connection, as another process would hold
    try:
        other.space("c").delete(["a"])
        rows, vectors = sp.rows_and_vectors()
        assert rows.tolist() == [1] and vectors.tolist() == [[1.0, 0.0]]
        other.delete_space("c")
    finally:
        other.close()
    with pytest.raises(NotFoundError):
        sp.rows_and_vectors()


def test_info_after_a_failed_batch_is_unchanged(store):
    sp = store.create_space("w", dim=2, metric="l2")
    sp.add(["a"], [[0.0, 1.0]])
    before = sp.info()
    with pytest.raises(Exception):
        sp.add(["b", "b"], [[0.0, 1.0], [1.0, 0.0]])  # duplicate ids: rejected whole
    after = sp.info()
    assert (after.count, after.generation, after.next_row) == (before.count, before.generation, before.next_row)
