"""Child process used by the crash and concurrency tests (run as a script, not collected).

Modes
-----
crash STORE SPACE BATCH DIM
    Add batch after batch forever (starting after what the store already holds),
    printing the batch number to stdout after each commit. The parent kills it.
bigcrash STORE SPACE DIM N
    Commit a 2-item batch, print "small", then print "big" and add an N-item batch.
writer STORE SPACE PREFIX START NBATCHES BATCH DIM SLEEP
    Open (or create) the store and space, add NBATCHES batches of ids
    ``PREFIX<n>`` for n = START*BATCH ..., print "done" at the end.
reader STORE SPACE BATCH DIM EXPECTED DEADLINE_S
    Print "ready", then snapshot/search repeatedly until EXPECTED items are seen
    (or the deadline passes); print one JSON summary line. Exit 1 on any violation.
opener STORE GO
    Print "ready", wait until the file GO exists, then open (or create) the store
    and close it: many openers started together race to create the same file.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from pathlib import Path

import numpy as np


def crash_vectors(batch: int, size: int, dim: int) -> np.ndarray:
    """The vectors of crash batch ``batch``: a deterministic function of the batch number."""
    return np.random.default_rng(batch).standard_normal((size, dim)).astype(np.float32)


def crash_ids(batch: int, size: int) -> list[str]:
    return [f"b{batch:05d}-{i:04d}" for i in range(size)]


def numbered_vectors(nums: np.ndarray, dim: int, tag: float = 0.0) -> np.ndarray:
    """Column 0 holds the item's number, column 1 a tag, the rest a function of the number."""
    nums = np.asarray(nums, dtype=np.float64)
    out = np.empty((len(nums), dim), dtype=np.float32)
    out[:, 0] = nums
    if dim > 1:
        out[:, 1] = tag
    for j in range(2, dim):
        out[:, j] = np.sin(nums * (j + 1) * 0.001)
    return out


def _crash(path: str, name: str, batch: int, dim: int) -> None:
    from repspace import Store

    store = Store(path)
    space = store.create_space(name, dim=dim, metric="l2", exist_ok=True)
    b = len(space) // batch
    while True:
        space.add(crash_ids(b, batch), crash_vectors(b, batch, dim), metadata=[{"batch": b}] * batch)
        print(b, flush=True)
        b += 1


def _bigcrash(path: str, name: str, dim: int, big: int) -> None:
    """One small committed batch, then one huge batch (the parent kills us inside it)."""
    from repspace import Store

    store = Store(path)
    space = store.create_space(name, dim=dim, metric="ip", exist_ok=True)
    space.add(["small0", "small1"], crash_vectors(0, 2, dim))
    print("small", flush=True)
    x = crash_vectors(1, big, dim)
    ids = [f"big{i}" for i in range(big)]
    print("big", flush=True)
    t = time.monotonic()
    space.add(ids, x)
    print(f"big done {time.monotonic() - t:.3f}", flush=True)
    time.sleep(60)


def _seen(pace: str) -> int:
    """The last count a reader wrote to the pace file (0 before it wrote one)."""
    try:
        return int(Path(pace).read_text() or 0)
    except (OSError, ValueError):
        return 0


def _writer(path: str, name: str, prefix: str, start: int, nbatches: int, batch: int, dim: int, sleep: float,
            pace: str = "") -> None:
    """Add ``nbatches`` numbered batches. With a ``pace`` file, wait (at most 10 s) after each
    batch until the reader has seen it, so that the reader meets every intermediate state
    however busy the machine is (without, a starved reader may see only the first and last)."""
    from repspace import Store

    store = Store(path)
    space = store.create_space(name, dim=dim, metric="l2", exist_ok=True)
    tag = float(ord(prefix[0]))
    for b in range(start, start + nbatches):
        nums = np.arange(b * batch, (b + 1) * batch)
        space.add([f"{prefix}{n}" for n in nums], numbered_vectors(nums, dim, tag))
        if sleep:
            time.sleep(sleep)
        give_up = time.monotonic() + 10.0
        while pace and _seen(pace) < (b + 1) * batch and time.monotonic() < give_up:
            time.sleep(0.001)
    store.close()
    print("done", flush=True)


def _reader(path: str, name: str, batch: int, dim: int, expected: int, deadline_s: float, pace: str = "") -> int:
    from repspace import Store

    store = Store(path)
    space = store.space(name)
    print("ready", flush=True)
    end = time.monotonic() + deadline_s
    counts: set[int] = set()
    violations: list[str] = []
    iterations = 0
    searches = 0
    while time.monotonic() < end:
        iterations += 1
        # Alternate between the long-lived handle and a brand-new connection.
        if iterations % 5 == 0:
            other = Store(path)
            snap = other.space(name).snapshot()
            other.close()
        else:
            snap = space.snapshot()
        n = len(snap.ids)
        counts.add(n)
        if pace:  # tell a pacing writer what has been seen (written whole, then renamed)
            Path(pace + ".tmp").write_text(str(n))
            os.replace(pace + ".tmp", pace)
        if n % batch:
            violations.append(f"count {n} is not a multiple of {batch}")
        if snap.vectors.shape != (n, dim) or len(snap.rows) != n:
            violations.append(f"shape {snap.vectors.shape} for {n} ids")
        else:
            nums = np.array([int(i[1:]) for i in snap.ids], dtype=np.int64)
            if not np.array_equal(np.sort(nums), np.arange(n)):
                violations.append(f"ids are not 0..{n - 1}")
            tag = float(ord(snap.ids[0][0])) if n else 0.0
            if not np.array_equal(snap.vectors, numbered_vectors(nums, dim, tag)):
                violations.append("vectors are not aligned with ids")
        if n and iterations % 3 == 0:
            probe = numbered_vectors(np.array([n - 1]), dim, float(ord(snap.ids[0][0])))[0]
            hits = space.search(probe, k=3, method="exact")
            searches += 1
            if len(hits) != min(3, n) or any(not h.id[1:].isdigit() for h in hits):
                violations.append(f"search for item {n - 1} returned {[h.id for h in hits]}")
        if violations or n >= expected:
            break
    print(json.dumps({"iterations": iterations, "searches": searches, "counts": sorted(counts),
                      "violations": violations[:5]}), flush=True)
    return 1 if violations else 0


def _opener(path: str, go: str) -> None:
    from pathlib import Path

    from repspace import Store

    print("ready", flush=True)
    while not Path(go).exists():
        time.sleep(0.0005)
    Store(path).close()


def main(argv: list[str]) -> int:
    mode = argv[0]
    try:
        if mode == "crash":
            _crash(argv[1], argv[2], int(argv[3]), int(argv[4]))
        elif mode == "bigcrash":
            _bigcrash(argv[1], argv[2], int(argv[3]), int(argv[4]))
        elif mode == "writer":
            _writer(argv[1], argv[2], argv[3], int(argv[4]), int(argv[5]), int(argv[6]), int(argv[7]), float(argv[8]),
                    *argv[9:10])
        elif mode == "reader":
            return _reader(argv[1], argv[2], int(argv[3]), int(argv[4]), int(argv[5]), float(argv[6]), *argv[7:8])
        elif mode == "opener":
            _opener(argv[1], argv[2])
        else:
            raise SystemExit(f"unknown mode {mode}")
    except Exception:
        traceback.print_exc()
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
