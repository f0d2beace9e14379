"""One progress callable serves every workflow: the same ``(phase, done, total)`` reports."""

from __future__ import annotations

import numpy as np

from repspace.workflows.ingest import ingest_records
from repspace.workflows.ingest.readers import Records
from repspace.workflows.search import build_index
from repspace.workflows.transform import derive_space


class Recorder:
    """A progress callback that keeps every report and checks the contract as it goes."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int, int]] = []

    def __call__(self, phase: str, done: int, total: int) -> None:
        assert isinstance(phase, str) and 0 <= done <= total, (phase, done, total)
        previous = [d for p, d, _ in self.calls if p == phase]
        assert not previous or done >= previous[-1], "done is cumulative within a phase"
        self.calls.append((phase, done, total))

    def last(self, phase: str) -> tuple[int, int]:
        done, total = [(d, t) for p, d, t in self.calls if p == phase][-1]
        return done, total


def test_ingest_transform_and_index_report_through_one_callable(store) -> None:
    texts = [f"sentence number {i} about {w}" for i, w in enumerate(["cats", "dogs", "trains", "maps"] * 30)]
    rec = Recorder()
    records = Records("test", [f"t{i}" for i in range(len(texts))], texts, None, [{} for _ in texts], [])
    ingest_records(store, "docs", records, encoder="static", batch_size=16, progress=rec)
    assert rec.last("encode") == (120, 120) and rec.last("write") == (120, 120)

    rec.calls.clear()
    derive_space(store, "docs", "docs-centred", "center", progress=rec)
    assert {p for p, _, _ in rec.calls} == {"write"} and rec.last("write") == (120, 120)

    rec.calls.clear()
    vectors = np.random.default_rng(0).standard_normal((300, 8)).astype(np.float32)
    space = store.create_space("v", dim=8, metric="cosine")
    space.add([f"v{i}" for i in range(300)], vectors)
    build_index(space, "hnsw16", progress=rec)
    assert {p for p, _, _ in rec.calls} == {"index"} and rec.last("index") == (300, 300)
