"""Export to Parquet: everything round-trips, readable by pyarrow, pandas, polars and LanceDB."""

from __future__ import annotations

import json
import os
import sqlite3
import stat

import numpy as np
import pyarrow as pa
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


# ---------------------------------------------------------------- file modes and places


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002], ids=oct)
def test_file_mode_follows_the_umask_like_open(store, tmp_path, umask):
    sp = store.create_space("u", dim=2)
    sp.add(["a"], [[1.0, 2.0]])
    folder = tmp_path / "out"
    folder.mkdir()
    target = folder / "u.parquet"
    target.write_bytes(b"old")
    os.chmod(target, 0o600)  # an existing file is replaced by one with the mode a new file gets
    old = os.umask(umask)
    try:
        export_parquet(sp, target)
        with open(folder / "by_open", "w"):
            pass
    finally:
        os.umask(old)
    mode = stat.S_IMODE(os.stat(target).st_mode)
    assert mode == 0o666 & ~umask == stat.S_IMODE(os.stat(folder / "by_open").st_mode)
    assert pq.read_table(target).column("id").to_pylist() == ["a"]
    assert sorted(p.name for p in folder.iterdir()) == ["by_open", "u.parquet"]  # no temporary file left


def test_missing_folder_is_created(store, tmp_path):
    sp = store.create_space("f", dim=2)
    sp.add(["a"], [[1.0, 2.0]])
    out = export_parquet(sp, tmp_path / "new" / "deeper" / "f.parquet")
    assert out["rows"] == 1 and pq.read_table(tmp_path / "new" / "deeper" / "f.parquet").num_rows == 1


def test_a_file_in_the_way_of_the_folder_is_one_error(store, tmp_path):
    sp = store.create_space("f", dim=2)
    (tmp_path / "afile").write_text("x")
    with pytest.raises(InputError, match="cannot create the folder") as e:
        export_parquet(sp, tmp_path / "afile" / "f.parquet")
    assert "\n" not in str(e.value)
    (tmp_path / "dir.parquet").mkdir()
    with pytest.raises(InputError, match="is a folder"):
        export_parquet(sp, tmp_path / "dir.parquet")


# ---------------------------------------------------------------- vectors, metric and loaders


@pytest.mark.parametrize("metric, distance", [("cosine", "cosine"), ("ip", "dot"), ("l2", "l2")])
def test_vector_field_names_the_metric(store, tmp_path, metric, distance):
    sp = store.create_space("m", dim=3, metric=metric)
    sp.add(["a", "b"], np.eye(3)[:2])
    out = export_parquet(sp, tmp_path / "m.parquet")
    schema = pq.read_schema(tmp_path / "m.parquet")
    field = schema.field("vector")
    assert field.metadata == {b"metric": metric.encode(), b"distance_type": distance.encode()}
    assert field.type == pa.list_(pa.float32(), 3)
    assert json.loads(schema.metadata[b"repspace"])["metric"] == metric and out["metric"] == metric


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_pandas_and_polars_loaders_give_the_stored_vectors_bit_for_bit(store, tmp_path, dtype):
    import pandas as pd
    import polars as pl

    sp = store.create_space("v", dim=7, dtype=dtype)
    x = np.random.default_rng(3).standard_normal((40, 7)).astype(np.float32)
    x[0, 0], x[1, 1] = -0.0, np.float32(1e-40)  # a negative zero and a subnormal (float16 flushes it) survive
    sp.add([f"i{i}" for i in range(40)], x)
    export_parquet(sp, tmp_path / "v.parquet")
    stored = sp.vectors()
    from_pandas = np.stack(pd.read_parquet(tmp_path / "v.parquet").vector)
    from_polars = pl.read_parquet(tmp_path / "v.parquet")["vector"].to_numpy()
    for got in (from_pandas, from_polars):
        assert got.dtype == np.float32 and got.shape == (40, 7)
        assert got.view(np.uint32).tobytes() == np.ascontiguousarray(stored).view(np.uint32).tobytes()


@pytest.mark.parametrize("metric", ["cosine", "ip", "l2"])
def test_lancedb_with_the_metadata_distance_ranks_like_exact_search(store, tmp_path, glove_vectors, metric):
    import lancedb

    n = 5000
    x, queries = np.array(glove_vectors[:n]), np.array(glove_vectors[n:n + 60])  # queries not in the space
    sp = store.create_space("g", dim=50, metric=metric)
    sp.add([f"w{i}" for i in range(n)], x)
    export_parquet(sp, tmp_path / "g.parquet")
    table = pq.read_table(tmp_path / "g.parquet")
    distance = table.schema.field("vector").metadata[b"distance_type"].decode()
    tbl = lancedb.connect(tmp_path / "lance").create_table("g", table)
    agree = default_agrees = 0
    for q in queries:
        ours = [h.id for h in sp.search(q, k=10, method="exact")]
        agree += ours == tbl.search(q).distance_type(distance).limit(10).to_arrow().column("id").to_pylist()
        default_agrees += ours == tbl.search(q).limit(10).to_arrow().column("id").to_pylist()
    assert agree == len(queries)  # measured: 60 of 60 for each metric
    if metric != "l2":  # the reason to write the metric down: LanceDB's default (L2) ranks otherwise
        assert default_agrees < len(queries) // 2


# ---------------------------------------------------------------- flattening


HOSTILE = [
    {"n": 1, "mixed": 1, "big": 2**70, "same": {"a": 1, "b": "x"}, "differ": {"a": 1}, "ünï 名": "x", "": 1,
     "a.b": 2, "a`b": 3, "_rowid": 4, "_distance": 5, "text": "t", "id": 5, "metadata_id": 9, "vector": [1],
     "metadata": {"m": 1}, "f": 1, "tags": ["a", "b"], "empty": {}, "none": None, "nolist": [], "flag": True,
     "boolfloat": True, "u64": 2**63},
    {"n": 2, "mixed": "1", "big": 3, "same": {"a": 2, "b": "y"}, "differ": {"a": 2, "b": 3}, "ünï 名": "y",
     "f": 2.5, "tags": [], "flag": False, "boolfloat": 1.5, "exact": 2**53 + 1},
    {"mixed": True, "same": {"a": 3, "b": "z"}, "differ": {"b": {"c": [1]}}, "exact": 0.5, "flag": None,
     "deep": {"x": [[[1]]]}},
    {},
]


def _hostile_space(store):
    sp = store.create_space("h", dim=3, metric="cosine")
    sp.add(["a", "b", "c", "d"], np.arange(12, dtype=np.float32).reshape(4, 3) + 1, texts=["ta", None, "tc", "td"],
           metadata=HOSTILE)
    return sp


def test_flatten_types_what_one_type_holds_and_writes_the_rest_as_json(store, tmp_path):
    sp = _hostile_space(store)
    out = export_parquet(sp, tmp_path / "h.parquet")
    t = pq.read_table(tmp_path / "h.parquet")
    assert out["columns"] == t.column_names
    col = {name: t.column(name).to_pylist() for name in t.column_names}
    types = {f.name: f.type for f in t.schema}
    # the fixed columns are untouched
    assert col["id"] == ["a", "b", "c", "d"] and col["text"] == ["ta", None, "tc", "td"]
    assert [json.loads(m) for m in col["metadata"]] == [json.loads(json.dumps(m)) for m in HOSTILE]
    # typed: one Arrow type holds every value; a missing key is null
    assert (types["n"], col["n"]) == (pa.int64(), [1, 2, None, None])
    assert (types["f"], col["f"]) == (pa.float64(), [1.0, 2.5, None, None])
    assert (types["flag"], col["flag"]) == (pa.bool_(), [True, False, None, None])
    assert (types["ünï 名"], col["ünï 名"]) == (pa.string(), ["x", "y", None, None])
    assert col["tags"] == [["a", "b"], [], None, None] and types["tags"] == pa.list_(pa.string())
    assert col["same"] == [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}, {"a": 3, "b": "z"}, None]
    assert pa.types.is_struct(types["same"]) and pa.types.is_struct(types["deep"])
    assert col["deep"] == [None, None, {"x": [[[1]]]}, None]
    # JSON text: mixed types, ints beyond int64 or float64, objects whose keys differ, {} and keys only ever empty
    for key in ("mixed", "big", "u64", "differ", "empty", "none", "nolist", "boolfloat", "exact"):
        assert types[key] == pa.string(), key
        assert [None if v is None else json.loads(v) for v in col[key]] == [m.get(key) for m in HOSTILE], key
    assert col["big"][0] == str(2**70) and col["exact"][1] == str(2**53 + 1)
    # names that cannot be used as they are get the prefix, repeated until free
    renamed = {"": "metadata_", "a.b": "metadata_a_b", "a`b": "metadata_a_b", "_rowid": "metadata__rowid",
               "_distance": "metadata__distance", "text": "metadata_text", "id": "metadata_metadata_id",
               "vector": "metadata_vector", "metadata": "metadata_metadata"}
    assert col["metadata_id"] == [9, None, None, None]  # a key already named so keeps its name
    assert col["metadata_"] == [1, None, None, None] and col["metadata__rowid"] == [4, None, None, None]
    assert col["metadata_text"] == ["t", None, None, None] and col["metadata_metadata_id"] == [5, None, None, None]
    assert col["metadata_metadata"] == [{"m": 1}, None, None, None]
    assert {col["metadata_a_b"][0], col["metadata_metadata_a_b"][0]} == {2, 3}
    assert len(t.column_names) == len(set(t.column_names)) == 3 + len({k for m in HOSTILE for k in m}) + 1
    assert not set(renamed) & (set(t.column_names) - {"id", "text", "vector", "metadata"})


def test_flattened_hostile_file_opens_in_pandas_polars_and_lancedb(store, tmp_path):
    import lancedb
    import pandas as pd
    import polars as pl

    sp = _hostile_space(store)
    export_parquet(sp, tmp_path / "h.parquet")
    table = pq.read_table(tmp_path / "h.parquet")
    assert list(pd.read_parquet(tmp_path / "h.parquet").columns) == table.column_names
    assert pl.read_parquet(tmp_path / "h.parquet").columns == table.column_names
    tbl = lancedb.connect(tmp_path / "lance").create_table("h", table)
    hits = tbl.search(np.array([1, 2, 3], dtype=np.float32)).distance_type("cosine").limit(4).to_arrow()
    assert hits.column("id").to_pylist()[0] == "a" and "metadata__rowid" in hits.column_names


def test_no_flatten_writes_the_four_fixed_columns(store, tmp_path):
    sp = _hostile_space(store)
    out = export_parquet(sp, tmp_path / "h.parquet", flatten=False)
    t = pq.read_table(tmp_path / "h.parquet")
    assert out["columns"] == t.column_names == ["id", "text", "vector", "metadata"]
    assert [json.loads(m) for m in t.column("metadata").to_pylist()] == [json.loads(json.dumps(m)) for m in HOSTILE]


def _nested(levels: int) -> dict:
    """Metadata ``levels`` deep: the object itself, then objects and lists in turn."""
    value: object = 1
    for i in range(levels - 1):
        value = [value] if i % 2 else {"k": value}
    return {"deep": value, "n": levels}


@pytest.mark.parametrize("levels", [32, 33, 99, 500])
def test_stores_written_before_the_nesting_bound_export_readable_files(store, tmp_path, levels):
    sp = store.create_space("old", dim=2)
    sp.add(["a", "b"], [[1.0, 0.0], [0.0, 1.0]], metadata=[{"n": 0}, {"n": 1}])
    deep = _nested(levels)
    with sqlite3.connect(store.path) as c:  # as an older repspace accepted it: the real file, no validation
        c.execute("UPDATE items SET meta = ? WHERE item_id = 'b'", (json.dumps(deep),))
    for flatten in (True, False):
        export_parquet(sp, tmp_path / "old.parquet", flatten=flatten)
        t = pq.read_table(tmp_path / "old.parquet")
        assert json.loads(t.column("metadata").to_pylist()[1]) == deep
        if flatten:
            assert t.column("n").to_pylist() == [0, levels]
            deep_type = t.schema.field("deep").type
            assert (deep_type == pa.string()) == (levels > 32)  # typed while readers can open it
            if levels > 32:
                assert json.loads(t.column("deep").to_pylist()[1]) == deep["deep"]
