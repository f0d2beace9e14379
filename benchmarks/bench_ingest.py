"""Ingest: how fast ``space.add`` puts vectors durably on disk, against ``np.save`` + ``fsync``.

Two data sets:

* ``random``: n x 384 standard-normal float32 (1,000,000 rows by default) with
  string ids, added in batches of 100,000 rows, each batch its own transaction;
* ``glove``: the real GloVe 6B 50-d vectors (400,000 words; ids are the words),
  same batches.

The repspace time runs from the first ``add`` to ``store.close()`` (closing
checkpoints SQLite's write-ahead log into the store file and fsyncs it, so the
vectors are then as durable as the anchor's). The anchor writes the same
vector bytes with ``np.save`` to a file on the same disk followed by
``os.fsync``; it is timed before and after the repspace run and the best is
kept. Ratio = repspace rows/s / anchor rows/s (1.0 = as fast as a raw dump).
The store's size on disk is reported against the raw vector bytes.

``np.save`` + ``fsync`` is the floor of putting the bytes on disk, not of a
transactional store: in SQLite's WAL mode every byte is written twice (to the
log at commit, into the store file at the checkpoint), and the items need
their rows and id index. The second anchor is that database floor: the same
rows (items with their ids, vectors in the same 4 MiB blocks, after the same
one-statement probe for ids already stored that an upsert needs) written with
the standard library's ``sqlite3`` alone, same schema, page size and pragmas,
one transaction per batch, closed (checkpointed) at the end. Its ratio measures
what repspace's own work (validation, hashing, conflict checks) costs on top
of the database; goal >= 0.8. The ``np.save`` ratio is reported for reference.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import common as c
import numpy as np

NAME = "ingest"
BATCH = 100_000
#: Goals on the ratios (set by the benchmark suite; see BENCHMARKS.md).
GOAL_SPEED = (">=", 0.8)  # against the database floor (raw sqlite3 writes of the same rows)
GOAL_SIZE = ("<=", 1.1)


def sizes(quick: bool) -> dict[str, Any]:
    return {"random_n": 50_000 if quick else 1_000_000, "dim": 384, "glove_n": 40_000 if quick else 400_000,
            "batch": 10_000 if quick else BATCH}


def ingest_once(db: Path, name: str, ids: list[str], vectors: np.ndarray, batch: int) -> dict[str, Any]:
    """Create a store, add everything in batches, close; timings and sizes."""
    from repspace import Store

    store = Store(db)
    space = store.create_space(name, dim=vectors.shape[1], metric="cosine", provenance={"encoder": "precomputed"})
    per_batch = c.fill_space(space, ids, vectors, batch)
    close_s, _ = c.timed(store.close)
    return {"add_s": sum(per_batch), "close_s": close_s, "total_s": sum(per_batch) + close_s,
            "per_batch_s": [round(t, 3) for t in per_batch], "store_bytes": c.store_bytes(db)}


def sqlite_floor_once(db: Path, ids: list[str], vectors: np.ndarray, batch: int) -> float:
    """Seconds for the standard library's sqlite3 to write the same rows as repspace does, then close."""
    import sqlite3

    from repspace.core.store._db import PAGE_SIZE, _split_sql
    from repspace.core.store._schema import MIGRATIONS
    from repspace.core.store._space import BLOCK_BYTES

    for p in db.parent.glob(db.name + "*"):
        p.unlink()
    con = sqlite3.connect(db, isolation_level=None)
    con.execute(f"PRAGMA page_size = {PAGE_SIZE}")
    con.execute("PRAGMA journal_mode = WAL")
    for pragma in ("synchronous = NORMAL", "foreign_keys = ON", "mmap_size = 4294967296", "cache_size = -65536"):
        con.execute(f"PRAGMA {pragma}")  # as repspace.core.store._db.Database._configure sets them
    for statement in _split_sql(MIGRATIONS[0]):
        con.execute(statement)
    con.execute("INSERT INTO spaces (uid, name, dim, metric, dtype, created_at, updated_at)"
                " VALUES ('u', 'floor', ?, 'cosine', 'float32', 'now', 'now')", (vectors.shape[1],))
    per_block = max(1, BLOCK_BYTES // (vectors.shape[1] * 4))
    t0 = time.perf_counter()
    for lo in range(0, len(ids), batch):
        hi = min(lo + batch, len(ids))
        con.execute("BEGIN IMMEDIATE")
        # An upsert must know which ids exist: the same one-statement probe repspace makes.
        con.execute("SELECT i.row FROM json_each(?) AS j CROSS JOIN items AS i ON i.space_id = 1"
                    " AND i.item_id = j.value", (json.dumps(ids[lo:hi]),)).fetchall()
        con.executemany("INSERT INTO items (space_id, row, item_id, text, meta, hash) VALUES (1, ?, ?, NULL, '{}', NULL)",
                        zip(range(lo, hi), ids[lo:hi]))
        for start in range(lo, hi, per_block):
            part = np.ascontiguousarray(vectors[start : min(start + per_block, hi)], dtype=np.float32)
            con.execute("INSERT INTO blocks (space_id, first_row, n_rows, data) VALUES (1, ?, ?, ?)",
                        (start, len(part), memoryview(part).cast("B")))
        con.execute("UPDATE spaces SET next_row = ? WHERE id = 1", (hi,))
        con.execute("COMMIT")
    con.close()
    seconds = time.perf_counter() - t0
    for p in db.parent.glob(db.name + "*"):
        p.unlink()
    return seconds


def anchor_once(path: Path, vectors: np.ndarray) -> float:
    seconds, _ = c.timed(lambda: c.save_npy_durably(path, vectors))
    return seconds


def measure(label: str, folder: Path, ids: list[str], vectors: np.ndarray, batch: int,
            repeats: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Anchor, repspace, anchor, repspace, ...; anchor once more at the end. Best of each."""
    npy = folder / "vectors.npy"
    anchor_times = [anchor_once(npy, vectors)]
    floor_times = [sqlite_floor_once(folder / "floor.db", ids, vectors, batch)]
    runs = []
    for i in range(repeats):
        db = folder / f"store-{i}.db"
        c.log(f"ingest {label}: repspace run {i + 1}/{repeats} ({len(ids):,} rows)")
        runs.append(ingest_once(db, label, ids, vectors, batch))
        anchor_times.append(anchor_once(npy, vectors))
        floor_times.append(sqlite_floor_once(folder / "floor.db", ids, vectors, batch))
        if i + 1 < repeats:
            for p in folder.glob(f"store-{i}.db*"):
                p.unlink()
    best_run = min(runs, key=lambda r: r["total_s"])
    return rows_for(label, ids, vectors, best_run, min(anchor_times), min(floor_times)), {
        "repspace_runs": runs, "anchor_s": [round(t, 3) for t in anchor_times],
        "sqlite_floor_s": [round(t, 3) for t in floor_times],
        "kept_store": str(folder / f"store-{repeats - 1}.db"), "npy": str(npy),
    }


def rows_for(label: str, ids: list[str], vectors: np.ndarray, run: dict[str, Any],
             anchor_s: float, floor_s: float) -> list[dict[str, Any]]:
    n, raw = vectors.shape[0], vectors.nbytes
    id_bytes = sum(len(i.encode("utf-8")) for i in ids)
    mb = raw / 1e6
    shape = f"{n:,} x {vectors.shape[1]}"
    return [
        c.row(f"{label} {shape}: rows/s (add + close) vs the database floor", n / run["total_s"], "rows/s",
              "sqlite3 writing the same rows", n / floor_s, floor_s / run["total_s"], GOAL_SPEED,
              seconds=run["total_s"], anchor_seconds=floor_s, add_only_rows_per_s=n / run["add_s"]),
        c.row(f"{label} {shape}: rows/s (add + close) vs a raw dump", n / run["total_s"], "rows/s",
              "np.save + fsync", n / anchor_s, anchor_s / run["total_s"],
              seconds=run["total_s"], anchor_seconds=anchor_s),
        c.row(f"{label} {shape}: MB/s of vectors", mb / run["total_s"], "MB/s",
              "np.save + fsync", mb / anchor_s, anchor_s / run["total_s"]),
        c.row(f"{label} {shape}: store size on disk", run["store_bytes"] / 1e6, "MB",
              "raw bytes: float32 vectors + UTF-8 ids", (raw + id_bytes) / 1e6, run["store_bytes"] / (raw + id_bytes),
              GOAL_SIZE, ratio_means="store bytes / raw bytes (lower is better)",
              vs_vector_bytes_only=run["store_bytes"] / raw),
    ]


def profile_batch(folder: Path, ids: list[str], vectors: np.ndarray, batch: int) -> list[dict[str, Any]]:
    """cProfile of one ``add`` of ``batch`` rows into a space that already holds one batch."""
    from repspace import Store

    store = Store(folder / "profile.db")
    try:
        space = store.create_space("profile", dim=vectors.shape[1], metric="cosine")
        space.add(ids[:batch], vectors[:batch])
        return c.profile_top(lambda: space.add(ids[batch : 2 * batch], vectors[batch : 2 * batch]))
    finally:
        store.close()
        for p in folder.glob("profile.db*"):
            p.unlink()


def fresh_folder(name: str) -> Path:
    folder = c.work_dir(name)
    for old in folder.iterdir():
        old.unlink()
    return folder


def keep_for_later(folder: Path, details: dict[str, Any]) -> None:
    """Leave the last store and the .npy for the load, exact and hnsw benchmarks of this run."""
    Path(details["kept_store"]).rename(folder / "store.db")
    (folder / "done").touch()


def run(quick: bool = False) -> Path:
    c.begin(NAME, quick)
    p = sizes(quick)
    repeats = 2 if quick else 1
    results, details = [], {}

    folder = fresh_folder(f"random-{p['random_n']}x{p['dim']}")
    vectors = c.random_vectors(p["random_n"], p["dim"])
    ids = c.random_ids(p["random_n"])
    rows, details["random"] = measure("random", folder, ids, vectors, p["batch"], repeats)
    results += rows
    if rows[0]["status"] == "MISS":
        details["random"]["profile_one_batch"] = profile_batch(folder, ids, vectors, p["batch"])
    keep_for_later(folder, details["random"])
    del vectors, ids

    words, gvec = c.glove()
    words, gvec = words[: p["glove_n"]], gvec[: p["glove_n"]]
    gfolder = fresh_folder(f"glove-{p['glove_n']}")
    rows, details["glove"] = measure("glove", gfolder, words, gvec, p["batch"], 2)
    results += rows
    if rows[0]["status"] == "MISS":
        details["glove"]["profile_one_batch"] = profile_batch(gfolder, words, gvec, p["batch"])
    keep_for_later(gfolder, details["glove"])
    return c.write_result(NAME, {**p, "repeats_random": repeats, "repeats_glove": 2, "metric": "cosine",
                                 "timed": "first add .. store.close()", "anchor": "np.save + os.fsync, best of runs"},
                          results, details=details)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    print(run(ap.parse_args().quick))
