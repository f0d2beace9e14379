"""Export to Parquet: everything round-trips, readable by pyarrow."""

from __future__ import annotations

import json

import numpy as np
import pyarrow.parquet as pq
import pytest

from repspace.core.errors import InputError
from repspace.workflows.export import export_parquet


def test_round_trip_with_mixed_metadata(store, tmp_path):
    sp = store.create_space("mix", dim=4, metric="ip", provenance={"encoder": "precomputed"})
    rng = np.random.default_rng(1)
    x = rng.standard_normal((50, 4)).astype(np.float32)
    meta = [{"n": i, "odd": i % 2 == 1, "mixed": i if i % 3 else "str", "nested": {"a": [i]}} for i in range(50)]
    texts = [f"text {i} ünïcode" if i % 5 else None for i in range(50)]
    sp.add([f"i{i}" for i in range(50)], x, texts=texts, metadata=meta)
    sp.delete(["i0", "i10"])
    export_parquet(sp, tmp_path / "m.parquet")
    t = pq.read_table(tmp_path / "m.parquet")
    keep = [i for i in range(50) if i not in (0, 10)]
    assert t.column("id").to_pylist() == [f"i{i}" for i in keep]
    assert t.column("text").to_pylist() == [texts[i] for i in keep]
    np.testing.assert_array_equal(np.array(t.column("vector").to_pylist(), dtype=np.float32), x[keep])
    assert t.column("n").to_pylist() == keep
    assert [json.loads(m) for m in t.column("metadata").to_pylist()] == [meta[i] for i in keep]
    assert t.schema.field("vector").type.list_size == 4
    info = json.loads(t.schema.metadata[b"repspace"])
    assert info["metric"] == "ip" and info["count"] == 48


def test_refuses_other_suffixes(store, tmp_path):
    sp = store.create_space("e", dim=2)
    with pytest.raises(InputError):
        export_parquet(sp, tmp_path / "x.csv")
