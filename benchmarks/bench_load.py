"""Load: time to bring a stored space into memory, against ``np.load`` of the same array.

``space.vectors()`` is called on a fresh ``Store`` object (nothing cached in the
process; it reads ids and vectors in one snapshot, as every search does). The
anchor is ``np.load`` of the same float32 array saved as ``.npy`` on the same
disk. Both are measured twice over:

* warm: the files are in the OS page cache (alternating runs, best of 3);
* cold: the files' pages are dropped first with ``posix_fadvise(DONTNEED)``
  (alternating, best of 2), so the disk is read.

``space.snapshot()`` (ids and vectors together, what exact search reads) is
timed beside them, warm, for information: its anchor reads no ids, so it has
no goal.

Ratio = anchor seconds / repspace seconds (1.0 = as fast as ``np.load``).
Data: the 1,000,000 x 384 random space of the ingest benchmark and GloVe
400,000 x 50. When a ratio misses its goal, a cProfile of one warm load is
stored in the result file.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import common as c
import numpy as np

NAME = "load"
GOAL = (">=", 0.5)


def sizes(quick: bool) -> dict[str, Any]:
    return {"random_n": 50_000 if quick else 1_000_000, "dim": 384, "glove_n": 40_000 if quick else 400_000}


def load_space(db: Path, name: str, what: str = "vectors") -> Callable[[], Any]:
    """``space.vectors()`` (or ``space.snapshot()``) on a fresh Store, closed after."""
    def go() -> Any:
        from repspace import Store

        store = Store(db)
        try:
            return getattr(store.space(name), what)()
        finally:
            store.close()

    return go


def ensure_glove_store(n: int) -> tuple[Path, Path]:
    """GloVe (first n words) as a store and as a .npy, in benchmarks/.work."""
    from repspace import Store

    folder = c.work_dir(f"glove-{n}")
    db, npy = folder / "store.db", folder / "vectors.npy"
    if (folder / "done").exists():
        return db, npy
    words, vectors = c.glove()
    store = Store(db)
    space = store.create_space("glove", dim=vectors.shape[1], metric="cosine")
    c.fill_space(space, words[:n], vectors[:n], 100_000)
    store.close()
    c.save_npy_durably(npy, vectors[:n])
    (folder / "done").touch()
    return db, npy


def best_of(fn: Callable[[], Any], repeats: int = 3) -> tuple[float, Any]:
    """Best seconds of ``repeats`` runs and the last value (first touches of fresh memory are slow here)."""
    best_s, value = float("inf"), None
    for _ in range(repeats):
        value = None  # let the previous value go before the next run
        seconds, value = c.timed(fn)
        best_s = min(best_s, seconds)
    return best_s, value


def ids_and_rows(pairs: list[tuple[int, str]]) -> tuple[np.ndarray, list[str]]:
    """What a snapshot makes of its ``(row, item_id)`` pairs."""
    return np.fromiter((p[0] for p in pairs), dtype=np.int64, count=len(pairs)), [p[1] for p in pairs]


def breakdown(db: Path, space: str) -> dict[str, float]:
    """Where a warm load's time goes, query by query (diagnostic; reads store schema v1 directly).

    The cursor's row fetching is C code that cProfile cannot see, so the
    queries a snapshot runs (``vectors()`` skips the ids when no row is dead)
    are replayed here one by one on the store's own
    connection (same pragmas, same memory map): counting items, reading ids in
    row order, turning them into a list and a row array, then streaming the
    vector blocks (as ``Space._read_range`` does) without and with the copy
    into one preallocated array. Each step: best of 3.
    """
    import sqlite3

    from repspace import Store

    store = Store(db)
    conn = store.db.conn
    try:
        sid, dim = conn.execute("SELECT id, dim FROM spaces WHERE name = ?", (space,)).fetchone()
        out: dict[str, float] = {}
        count_sql = "SELECT count(*) FROM items WHERE space_id = ?"
        ids_sql = "SELECT row, item_id FROM items WHERE space_id = ? ORDER BY row"
        blocks_sql = "SELECT first_row, n_rows, data FROM blocks WHERE space_id = ? ORDER BY first_row"
        out["count_items_s"], _ = best_of(lambda: conn.execute(count_sql, (sid,)).fetchone())
        out["ids_in_row_order_s"], pairs = best_of(lambda: conn.execute(ids_sql, (sid,)).fetchall())
        out["ids_to_list_and_rows_s"], _ = best_of(lambda: ids_and_rows(pairs))
        pairs = None
        out["stream_blocks_only_s"], _ = best_of(lambda: sum(len(b) for _, _, b in conn.execute(blocks_sql, (sid,))))

        def stream_and_copy() -> np.ndarray:
            n_rows = conn.execute("SELECT next_row FROM spaces WHERE id = ?", (sid,)).fetchone()[0]
            arr = np.empty((n_rows, dim), dtype=np.float32)
            for first, n, data in conn.execute(blocks_sql, (sid,)):
                arr[first : first + n] = np.frombuffer(data, dtype=np.float32).reshape(n, dim)
            return arr

        out["stream_blocks_and_copy_s"], _ = best_of(stream_and_copy)
        return {k: round(v, 4) for k, v in out.items()}
    except (sqlite3.Error, TypeError) as e:  # the schema moved on: skip the diagnosis
        return {"error": str(e)}  # type: ignore[dict-item]
    finally:
        store.close()


def measure(label: str, db: Path, npy: Path, space: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    ours, anchor = load_space(db, space), lambda: np.load(npy)
    a, b = ours(), anchor()
    if not np.array_equal(a, b):
        raise AssertionError(f"{label}: the store and the .npy differ")
    shape = f"{a.shape[0]:,} x {a.shape[1]}"
    mb = a.nbytes / 1e6
    del a, b
    warm = c.alternate({"repspace": ours, "anchor": anchor, "snapshot": load_space(db, space, "snapshot")}, 3)
    details: dict[str, Any] = {"warm_s": warm}
    if c.best(warm["anchor"]) / c.best(warm["repspace"]) < GOAL[1]:  # diagnose while the cache is warm
        details["profile_warm"] = c.profile_top(ours)
        details["breakdown_warm"] = breakdown(db, space)

    def cold(fn: Callable[[], Any]) -> Callable[[], Any]:
        def go() -> Any:
            c.evict_from_page_cache(db, npy)
            return fn()
        return go

    details["fadvise_ok"] = c.evict_from_page_cache(db, npy)
    details["cold_s"] = cold_t = c.alternate({"repspace": cold(ours), "anchor": cold(anchor)}, 2)
    rows = []
    for mode, times in (("warm cache", warm), ("cold cache", cold_t)):
        r, an = c.best(times["repspace"]), c.best(times["anchor"])
        rows.append(c.row(f"{label} {shape}, {mode}: space.vectors()", r * 1e3, "ms", "np.load", an * 1e3,
                          an / r, GOAL, repspace_mb_per_s=mb / r, anchor_mb_per_s=mb / an))
    snap, an = c.best(warm["snapshot"]), c.best(warm["anchor"])
    rows.append(c.row(f"{label} {shape}, warm cache: space.snapshot() (ids + vectors)", snap * 1e3, "ms",
                      "np.load (vectors only)", an * 1e3, an / snap,
                      note="what exact search loads; the anchor reads no ids, so no goal"))
    return rows, details


def run(quick: bool = False) -> Path:
    c.begin(NAME, quick)
    p = sizes(quick)
    results: list[dict[str, Any]] = []
    details: dict[str, Any] = {}
    c.log(f"load: random {p['random_n']:,} x {p['dim']}")
    db, npy = c.ensure_random_store(p["random_n"], p["dim"])
    rows, details["random"] = measure("random", db, npy, "random")
    results += rows
    c.log(f"load: glove {p['glove_n']:,} x 50")
    db, npy = ensure_glove_store(p["glove_n"])
    rows, details["glove"] = measure("glove", db, npy, "glove")
    results += rows
    return c.write_result(NAME, {**p, "warm_repeats": 3, "cold_repeats": 2,
                                 "cold": "posix_fadvise(POSIX_FADV_DONTNEED) on both files before each run"},
                          results, details=details)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    print(run(ap.parse_args().quick))
