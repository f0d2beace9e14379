"""Real processes: SIGKILL in the middle of an ingest, a reader beside a writer, two writers."""

from __future__ import annotations

import json
import os
import queue
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from _store_worker import crash_ids, crash_vectors, numbered_vectors

from repspace import Store

WORKER = Path(__file__).parents[2] / "_store_worker.py"

pytestmark = pytest.mark.slow

CRASH_BATCH, CRASH_DIM = 2000, 32


class Child:
    """A worker process whose stdout lines arrive on a queue (so waits can time out)."""

    def __init__(self, *args: object) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(WORKER), *map(str, args)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self._t = threading.Thread(target=self._pump, daemon=True)
        self._t.start()

    def _pump(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line.strip())
        self.lines.put(None)

    def next_line(self, timeout: float = 30.0) -> str:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            self.kill()
            pytest.fail(f"worker printed nothing for {timeout}s")
        if line is None:
            self.proc.wait()
            pytest.fail(f"worker exited with {self.proc.returncode}: {self.proc.stderr.read()}")
        return line

    def rest(self) -> list[str]:
        """Lines printed before the process ended (call after it ended)."""
        self._t.join(timeout=10)
        out = []
        while True:
            line = self.lines.get_nowait() if not self.lines.empty() else None
            if line is None:
                return out
            out.append(line)

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def wait(self, timeout: float = 60.0) -> int:
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail("worker did not finish in time")


def _verify_crash_store(path: Path, at_least: int) -> int:
    """Check the store after a kill; return the number of whole batches it holds."""
    con = sqlite3.connect(path)
    try:
        assert con.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert con.execute("PRAGMA foreign_key_check").fetchall() == []
    finally:
        con.close()
    with Store(path) as store:
        space = store.space("crash")
        snap = space.snapshot()
        n = len(snap.ids)
        assert n % CRASH_BATCH == 0, f"partial batch: {n} items"
        batches = n // CRASH_BATCH
        # Every batch printed is in; at most one more (committed, killed before printing).
        assert at_least <= batches <= at_least + 1, (at_least, batches)
        expected_ids = [i for b in range(batches) for i in crash_ids(b, CRASH_BATCH)]
        assert snap.ids == expected_ids
        expected = np.vstack([crash_vectors(b, CRASH_BATCH, CRASH_DIM) for b in range(batches)]) if batches else None
        if batches:
            assert snap.vectors.tobytes() == expected.tobytes()
            assert space.get([f"b{batches - 1:05d}-0000"])[0].metadata == {"batch": batches - 1}
        info = space.info()
        assert info.next_row == n and info.dead_rows == 0 and info.generation == batches
        # No block beyond the committed rows.
        (rows_in_blocks,) = store.db.conn.execute("SELECT coalesce(sum(n_rows), 0) FROM blocks").fetchone()
        assert rows_in_blocks == n
        return batches


def test_sigkill_mid_ingest_keeps_whole_batches(tmp_path):
    path = tmp_path / "crash.db"
    seed = random.randrange(1 << 30)
    rnd = random.Random(seed)
    committed = 0
    for attempt in range(4):
        child = Child("crash", path, "crash", CRASH_BATCH, CRASH_DIM)
        wanted = rnd.randint(2, 4)
        printed = [int(child.next_line()) for _ in range(wanted)]
        assert printed == list(range(committed, committed + wanted)), (seed, printed)
        time.sleep(rnd.uniform(0.0, 0.04))  # somewhere inside the next batch, probably
        child.kill()
        assert child.proc.returncode == -signal.SIGKILL, f"seed {seed}: {child.proc.stderr.read()}"
        printed += [int(x) for x in child.rest()]
        committed = _verify_crash_store(path, printed[-1] + 1)
    # Further writes work, and the next child continues where the store is.
    with Store(path) as store:
        sp = store.space("crash")
        sp.add(crash_ids(committed, CRASH_BATCH), crash_vectors(committed, CRASH_BATCH, CRASH_DIM),
               metadata=[{"batch": committed}] * CRASH_BATCH)
        sp.delete(crash_ids(0, CRASH_BATCH)[:10])
        assert len(sp) == (committed + 1) * CRASH_BATCH - 10
        assert np.array_equal(sp.vectors_of(crash_ids(committed, CRASH_BATCH)[-3:]),
                              crash_vectors(committed, CRASH_BATCH, CRASH_DIM)[-3:])


def test_reader_never_sees_half_a_batch(tmp_path):
    path = tmp_path / "rw.db"
    batch, dim, nbatches = 500, 16, 40
    with Store(path) as store:
        store.create_space("rw", dim=dim, metric="l2")
    pace = tmp_path / "seen"  # the writer waits for the reader after each batch: every state is met
    reader = Child("reader", path, "rw", batch, dim, batch * nbatches, 20, pace)
    assert reader.next_line() == "ready"
    writer = Child("writer", path, "rw", "w", 0, nbatches, batch, dim, 0.0, pace)
    assert writer.wait() == 0, writer.proc.stderr.read()
    assert writer.rest() == ["done"]
    rc = reader.wait()
    summary = json.loads(reader.rest()[-1])
    assert rc == 0, (summary, reader.proc.stderr.read())
    assert summary["violations"] == []
    assert summary["counts"][-1] == batch * nbatches
    # The reader really ran while the writer wrote: it saw several intermediate states.
    assert len(summary["counts"]) >= 4, summary
    assert summary["searches"] >= 2
    assert all(c % batch == 0 for c in summary["counts"])


def test_processes_creating_one_new_store_together_all_succeed(tmp_path):
    # SQLite fails the switch of a brand-new file to WAL at once ("database is
    # locked", no busy handler) when another process makes the same switch; the
    # store must retry rather than fail. Released together, the openers collide
    # in roughly one round of three without the retry.
    for round_ in range(6):
        path, go = tmp_path / f"new{round_}.db", tmp_path / f"go{round_}"
        openers = [Child("opener", path, go) for _ in range(4)]
        for o in openers:
            assert o.next_line() == "ready"
        go.touch()
        for o in openers:
            assert o.wait() == 0, o.proc.stderr.read()
        with Store(path) as store:
            assert store.spaces() == []


def test_two_writers_at_once_lose_nothing(tmp_path):
    path = tmp_path / "ww.db"  # not created yet: both processes race to create it
    batch, dim, nbatches = 500, 8, 16
    writers = [Child("writer", path, "ww", prefix, 0, nbatches, batch, dim, 0.0) for prefix in ("a", "b")]
    for w in writers:
        assert w.wait() == 0, w.proc.stderr.read()
        assert w.rest() == ["done"]
    with Store(path) as store:
        assert [s.name for s in store.spaces()] == ["ww"]
        sp = store.space("ww")
        snap = sp.snapshot()
        assert len(snap.ids) == 2 * batch * nbatches
        assert sp.info().generation == 2 * nbatches
        nums = np.arange(batch * nbatches)
        for prefix in ("a", "b"):
            ids = [f"{prefix}{n}" for n in nums]
            assert np.array_equal(sp.vectors_of(ids), numbered_vectors(nums, dim, float(ord(prefix))))
        # Batches are contiguous in row order (each add is one transaction).
        firsts = [i[0] for i in snap.ids]
        runs = sum(1 for x, y in zip(firsts, firsts[1:]) if x != y) + 1
        assert runs <= 2 * nbatches
    con = sqlite3.connect(path)
    try:
        assert con.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        con.close()


def test_sigkill_inside_a_large_transaction_rolls_it_back(tmp_path):
    path = tmp_path / "big.db"
    dim = 256
    child = Child("bigcrash", path, "big", dim, 250_000)
    assert child.next_line() == "small"
    assert child.next_line() == "big"
    time.sleep(0.2)  # the 250,000-row batch (256 MB) takes seconds to validate and write
    child.kill()
    assert child.proc.returncode == -signal.SIGKILL
    assert child.rest() == [], "the big batch finished before the kill; the test proves nothing"
    con = sqlite3.connect(path)
    try:
        assert con.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        con.close()
    with Store(path) as store:
        sp = store.space("big")
        assert sp.ids() == ["small0", "small1"]
        assert sp.vectors().tobytes() == crash_vectors(0, 2, dim).tobytes()
        info = sp.info()
        assert (info.next_row, info.dead_rows, info.generation) == (2, 0, 1)
        (n_blocks,) = store.db.conn.execute("SELECT count(*) FROM blocks").fetchone()
        assert n_blocks == 1
        sp.add(["after"], np.ones((1, dim)))
        assert sp.ids() == ["small0", "small1", "after"]
