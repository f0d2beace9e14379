"""Round trips: what goes in comes back, aligned, at the stored precision."""

from __future__ import annotations

import json

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repspace import Store


def test_float32_vectors_come_back_bit_identical(store, rng):
    sp = store.create_space("f32", dim=7, metric="l2")
    x = rng.standard_normal((300, 7)).astype(np.float32)
    # Awkward values too: subnormals, signed zeros, extremes of float32.
    x[0] = [np.float32(1e-45), -0.0, 0.0, np.finfo(np.float32).max, np.finfo(np.float32).min, 1.0, -1.0]
    ids = [f"id{i}" for i in range(300)]
    res = sp.add(ids, x)
    assert (res.added, res.replaced, res.updated, res.unchanged) == (300, 0, 0, 0)
    snap = sp.snapshot()
    assert snap.ids == ids
    assert snap.vectors.dtype == np.float32 and snap.vectors.shape == (300, 7)
    assert snap.vectors.tobytes() == x.tobytes()
    assert sp.vectors_of(ids[::-1]).tobytes() == x[::-1].tobytes()
    # A second Store on the same file (a new connection) sees the same bytes.
    other = Store(store.path)
    try:
        assert other.space("f32").vectors().tobytes() == x.tobytes()
    finally:
        other.close()


def test_float64_input_is_stored_as_float32(store, rng):
    sp = store.create_space("f64", dim=5)
    x = rng.standard_normal((20, 5))  # float64
    sp.add([str(i) for i in range(20)], x)
    assert np.array_equal(sp.vectors(), x.astype(np.float32))


def test_integer_input_is_accepted(store):
    sp = store.create_space("ints", dim=3, metric="l2")
    sp.add(["a", "b"], np.array([[1, 2, 3], [-4, 5, 6]], dtype=np.int64))
    assert sp.vectors().tolist() == [[1.0, 2.0, 3.0], [-4.0, 5.0, 6.0]]


def test_single_1d_vector_for_single_id(store):
    sp = store.create_space("one", dim=3)
    sp.add(["only"], np.array([1.0, 2.0, 3.0]))
    assert sp.vectors().shape == (1, 3)
    assert sp.vectors()[0].tolist() == [1.0, 2.0, 3.0]


def test_float16_within_half_precision(store, rng):
    sp = store.create_space("f16", dim=16, dtype="float16")
    x = (rng.standard_normal((500, 16)) * 10).astype(np.float32)
    x[0, :3] = [65504.0, -65504.0, 6e-8]  # float16 max and a subnormal
    sp.add([f"i{i}" for i in range(500)], x)
    back = sp.vectors()
    assert back.dtype == np.float32
    # Exactly what float16 rounding gives ...
    assert np.array_equal(back, x.astype(np.float16).astype(np.float32))
    # ... which is within half precision of the input (relative 2^-11 for normal values).
    normal = np.abs(x) >= np.finfo(np.float16).tiny
    assert np.all(np.abs(back - x)[normal] <= np.abs(x[normal]) * 2.0**-11)
    assert not np.array_equal(back, x)  # it really was rounded
    # The rows on disk take 2 bytes per value.
    (nbytes,) = store.db.conn.execute("SELECT sum(length(data)) FROM blocks").fetchone()
    assert nbytes == 500 * 16 * 2


def test_ids_row_aligned_with_vectors_after_changes(store, rng):
    sp = store.create_space("align", dim=4, metric="l2")
    model: dict[str, np.ndarray] = {}
    for step in range(6):
        ids = [f"s{step}-{i}" for i in range(50)] + [f"s0-{i}" for i in range(step, 50, 7)]
        ids = list(dict.fromkeys(ids))
        x = rng.standard_normal((len(ids), 4)).astype(np.float32)
        sp.add(ids, x)
        model.update(zip(ids, x))
        gone = [f"s{step}-{i}" for i in range(0, 50, 9)]
        sp.delete(gone)
        for g in gone:
            model.pop(g)
    snap = sp.snapshot()
    assert sorted(snap.ids) == sorted(model)
    assert np.all(np.diff(snap.rows) > 0)
    for i, item_id in enumerate(snap.ids):
        assert snap.vectors[i].tobytes() == model[item_id].tobytes()
    assert sp.ids() == snap.ids and sp.rows().tolist() == snap.rows.tolist()
    assert [it.row for it in sp.get(snap.ids)] == snap.rows.tolist()


def test_texts_and_metadata_round_trip(store):
    sp = store.create_space("meta", dim=2)
    texts = ["plain", "ünïcödé ✓ 中文 𝄞 emoji 🎉", "", None, "line\nbreak\ttab \"quotes\" 'single'", "nul\x00inside"]
    metas = [
        {"year": 2021, "lang": "en"},
        {"nested": {"a": [1, 2, {"b": None}], "c": {"d": {"e": "deep"}}}, "ключ": "значение"},
        {},
        None,
        {"float": 1.5, "neg": -3, "bool": True, "big": 2**62, "list": [], "s": "𝄞\u2028"},
        {"np": np.float32(0.5), "arr": np.arange(3)},
    ]
    ids = ["t0", "t1", "t2", "t3", "t4", "t5"]
    sp.add(ids, np.ones((6, 2)), texts=texts, metadata=metas)
    expected_meta = [m if m is not None else {} for m in metas[:5]] + [{"np": 0.5, "arr": [0, 1, 2]}]
    got = sp.get(ids)
    assert [it.id for it in got] == ids
    assert [it.text for it in got] == texts
    assert [it.metadata for it in got] == expected_meta
    by_row = sp.items(sp.rows())
    assert [by_row[r].text for r in sorted(by_row)] == texts
    assert [by_row[r].metadata for r in sorted(by_row)] == expected_meta
    # iter_items gives the same, with vectors.
    seen = []
    for items, vecs in sp.iter_items(batch=4):
        assert len(items) == len(vecs) <= 4
        seen += [(it.id, it.text, it.metadata) for it in items]
    assert seen == list(zip(ids, texts, expected_meta))


def test_unicode_and_odd_ids_round_trip(store):
    sp = store.create_space("ids", dim=2)
    ids = ["ä", "中文", "𝄞", "with space", "quote'\"", "a\u2028b", "x" * 1024, "0", "-1", "%_like"]
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    sp.add(ids, x)
    assert sp.ids() == ids
    assert np.array_equal(sp.vectors_of(ids), x)
    assert sp.delete(["%_like"]) == 1  # no LIKE-pattern surprises
    assert len(sp) == 9


def test_integer_ids_are_stored_as_strings(store):
    sp = store.create_space("intids", dim=2)
    sp.add([1, np.int64(2)], np.eye(2))
    assert sp.ids() == ["1", "2"]


def test_empty_space_snapshot(store):
    sp = store.create_space("empty", dim=9, dtype="float16")
    snap = sp.snapshot()
    assert snap.ids == [] and snap.vectors.shape == (0, 9) and snap.vectors.dtype == np.float32
    assert snap.rows.shape == (0,) and snap.next_row == 0
    assert sp.rows().shape == (0,)
    rows, vecs = sp.live_rows()
    assert rows.shape == (0,) and vecs.shape == (0, 9)
    assert sp.read_rows([]).shape == (0, 9)
    assert list(sp.iter_items()) == []
    assert len(sp) == 0
    # Emptied by deletes: still (0, dim).
    sp.add(["a"], np.ones((1, 9)))
    sp.delete(["a"])
    assert sp.snapshot().vectors.shape == (0, 9)
    assert sp.info().next_row == 1 and sp.info().dead_rows == 1


def test_empty_batch_is_a_no_op(store):
    sp = store.create_space("nop", dim=3)
    res = sp.add([], np.empty((0, 3)))
    assert (res.added, res.replaced, res.updated, res.unchanged, res.generation) == (0, 0, 0, 0, 0)
    assert sp.info().generation == 0


def test_space_info_and_provenance_round_trip(store):
    prov = {"encoder": "st:all-MiniLM", "version": "1.2", "layer": -1, "opts": {"norm": True, "pool": "mean"}}
    sp = store.create_space("info", dim=384, metric="ip", dtype="float16", provenance=prov)
    info = sp.info()
    assert (info.name, info.dim, info.metric.value, info.dtype, info.count) == ("info", 384, "ip", "float16", 0)
    assert info.provenance == prov and sp.provenance == prov
    assert len(info.uid) == 32
    d = info.to_dict()
    assert d["metric"] == "ip" and json.loads(json.dumps(d))["provenance"] == prov
    assert [s.name for s in store.spaces()] == ["info"]


def test_metric_names_are_parsed(store):
    assert store.create_space("m1", 2, metric="COSINE").metric.value == "cosine"
    assert store.create_space("m2", 2, metric="dot").metric.value == "ip"
    assert store.create_space("m3", 2, metric="euclidean").metric.value == "l2"
    assert [s.name for s in store.spaces()] == ["m1", "m2", "m3"]


# Hypothesis: arbitrary JSON metadata and texts (no lone surrogates) round-trip.
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    texts=st.lists(st.none() | st.text(max_size=40), min_size=1, max_size=5),
    metas=st.lists(st.dictionaries(st.text(max_size=8), json_values, max_size=5), min_size=5, max_size=5),
)
def test_hypothesis_text_and_metadata_round_trip(store, texts, metas):
    sp = store.create_space("hyp", dim=2, exist_ok=True)
    ids = [f"h{i}" for i in range(len(texts))]
    metas = metas[: len(texts)]
    sp.add(ids, np.ones((len(ids), 2)), texts=texts, metadata=metas)
    got = sp.get(ids)
    assert [it.text for it in got] == texts
    assert [it.metadata for it in got] == [json.loads(json.dumps(m)) for m in metas]


def test_dump_and_existing_ids_agree_with_snapshot(store, rng):
    sp = store.create_space("dump", dim=3, metric="l2")
    x = rng.standard_normal((30, 3)).astype(np.float32)
    ids = [f"i{i}" for i in range(30)]
    sp.add(ids, x, texts=ids, metadata=[{"n": i} for i in range(30)])
    sp.delete(ids[::4])
    sp.add(["i1"], [[9.0, 9.0, 9.0]], metadata=[{"n": 1}])
    items, vecs = sp.dump()
    snap = sp.snapshot()
    assert [it.id for it in items] == snap.ids and [it.row for it in items] == snap.rows.tolist()
    assert np.array_equal(vecs, snap.vectors)
    assert [it.metadata["n"] for it in items] == [int(i[1:]) for i in snap.ids]
    assert sp.existing_ids(["i0", "i1", "i2", "zzz"]) == {"i1", "i2"}
