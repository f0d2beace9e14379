"""Every bad input raises the documented error, in one line, and changes nothing."""

from __future__ import annotations

import math

import numpy as np
import pytest

from repspace import ConflictError, InputError, NotFoundError, RepspaceError, StoreError


@pytest.fixture
def populated(store):
    """A store with two spaces holding live and dead rows, texts and metadata."""
    a = store.create_space("main", dim=4, metric="cosine", provenance={"encoder": "precomputed"})
    a.add([f"m{i}" for i in range(30)], np.arange(120, dtype=np.float32).reshape(30, 4) + 1,
          texts=[f"text {i}" for i in range(30)], metadata=[{"i": i, "tags": ["x", i]} for i in range(30)])
    a.add(["m3"], [[9.0, 9.0, 9.0, 9.0]])  # a replaced row
    a.delete(["m7", "m8"])  # dead rows
    h = store.create_space("half", dim=3, metric="l2", dtype="float16")
    h.add(["h0", "h1"], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    return store


def _vec(n, dim=4, value=1.0):
    return np.full((n, dim), value, dtype=np.float32)


def _main(store):
    return store.space("main")


def _half(store):
    return store.space("half")


class _Weird:
    pass


BAD_ADDS = {
    # vectors
    "nan": (lambda s: _main(s).add(["n1", "n2"], np.array([[1, 2, 3, 4], [1, np.nan, 3, 4]], float)), InputError),
    "inf": (lambda s: _main(s).add(["n1", "n2"], np.array([[1, 2, 3, 4], [1, np.inf, 3, 4]], float)), InputError),
    "-inf": (lambda s: _main(s).add(["n1"], np.array([[-np.inf, 0, 0, 0]])), InputError),
    "float64_overflows_float32": (lambda s: _main(s).add(["n1"], np.array([[1e300, 0, 0, 0]])), InputError),
    "nan_last_of_many": (lambda s: _main(s).add([f"n{i}" for i in range(100)],
                                                np.vstack([_vec(99), [[0, 0, 0, np.nan]]])), InputError),
    "wrong_dim": (lambda s: _main(s).add(["n1", "n2"], _vec(2, dim=5)), InputError),
    "wrong_dim_1d": (lambda s: _main(s).add(["n1"], np.ones(3)), InputError),
    "3d_vectors": (lambda s: _main(s).add(["n1"], np.ones((1, 1, 4))), InputError),
    "scalar_vector": (lambda s: _main(s).add(["n1"], 1.0), InputError),
    "ragged_vectors": (lambda s: _main(s).add(["n1", "n2"], [[1, 2, 3, 4], [1, 2]]), InputError),
    "string_vectors": (lambda s: _main(s).add(["n1"], [["a", "b", "c", "d"]]), InputError),
    "complex_vectors": (lambda s: _main(s).add(["n1"], np.ones((1, 4), complex)), InputError),
    "too_few_vectors": (lambda s: _main(s).add(["n1", "n2", "n3"], _vec(2)), InputError),
    "too_many_vectors": (lambda s: _main(s).add(["n1"], _vec(2)), InputError),
    "float16_overflow": (lambda s: _half(s).add(["x"], [[1e6, 0.0, 0.0]]), InputError),
    "float16_negative_overflow": (lambda s: _half(s).add(["x", "y"], [[1.0, 1.0, 1.0], [0.0, -7e4, 0.0]]),
                                  InputError),
    # ids
    "empty_id": (lambda s: _main(s).add(["n1", ""], _vec(2)), InputError),
    "blank_id": (lambda s: _main(s).add(["   "], _vec(1)), InputError),
    "duplicate_ids": (lambda s: _main(s).add(["n1", "n2", "n1"], _vec(3)), InputError),
    "duplicate_existing_ids": (lambda s: _main(s).add(["m1", "m1"], _vec(2)), InputError),
    "int_and_str_same_id": (lambda s: _main(s).add([1, "1"], _vec(2)), InputError),
    "none_id": (lambda s: _main(s).add(["n1", None], _vec(2)), InputError),
    "float_id": (lambda s: _main(s).add([1.5], _vec(1)), InputError),
    "bytes_id": (lambda s: _main(s).add([b"n1"], _vec(1)), InputError),
    "tuple_id": (lambda s: _main(s).add([("n", 1)], _vec(1)), InputError),
    "bool_id": (lambda s: _main(s).add([True], _vec(1)), InputError),
    "surrogate_id": (lambda s: _main(s).add(["ok", "bad\udcff"], _vec(2)), InputError),
    "too_long_id": (lambda s: _main(s).add(["x" * 1025], _vec(1)), InputError),
    # texts
    "surrogate_text": (lambda s: _main(s).add(["n1", "n2"], _vec(2), texts=["fine", "bad \udcff"]), InputError),
    "surrogate_text_on_existing": (lambda s: _main(s).add(["m1"], _main(s).vectors_of(["m1"]), texts=["\ud800"]),
                                   InputError),
    "int_text": (lambda s: _main(s).add(["n1"], _vec(1), texts=[5]), InputError),
    "too_few_texts": (lambda s: _main(s).add(["n1", "n2"], _vec(2), texts=["a"]), InputError),
    "too_many_texts": (lambda s: _main(s).add(["n1"], _vec(1), texts=["a", "b"]), InputError),
    # metadata
    "list_metadata": (lambda s: _main(s).add(["n1"], _vec(1), metadata=[[1, 2]]), InputError),
    "string_metadata": (lambda s: _main(s).add(["n1"], _vec(1), metadata=['{"a": 1}']), InputError),
    "int_metadata": (lambda s: _main(s).add(["n1"], _vec(1), metadata=[3]), InputError),
    "set_in_metadata": (lambda s: _main(s).add(["n1"], _vec(1), metadata=[{"tags": {1, 2}}]), InputError),
    "nan_in_metadata": (lambda s: _main(s).add(["n1", "n2"], _vec(2), metadata=[{}, {"x": math.nan}]), InputError),
    "inf_in_metadata": (lambda s: _main(s).add(["n1"], _vec(1), metadata=[{"x": [1, math.inf]}]), InputError),
    "numpy_nan_in_metadata": (lambda s: _main(s).add(["n1"], _vec(1), metadata=[{"x": np.float32("nan")}]),
                              InputError),
    "object_in_metadata": (lambda s: _main(s).add(["n1"], _vec(1), metadata=[{"x": _Weird()}]), InputError),
    "surrogate_in_metadata": (lambda s: _main(s).add(["n1"], _vec(1), metadata=[{"k": "\udcff"}]), InputError),
    "surrogate_key_in_metadata": (lambda s: _main(s).add(["n1"], _vec(1), metadata=[{"\udcff": 1}]), InputError),
    "mixed_keys_in_metadata": (lambda s: _main(s).add(["n1"], _vec(1), metadata=[{1: "a", "b": 2}]), InputError),
    "circular_metadata": (lambda s: _main(s).add(["n1"], _vec(1), metadata=[_circular()]), InputError),
    "too_few_metadata": (lambda s: _main(s).add(["n1", "n2"], _vec(2), metadata=[{}]), InputError),
    # modes and conflicts
    "bad_on_conflict": (lambda s: _main(s).add(["n1"], _vec(1), on_conflict="replace"), InputError),
    "conflict": (lambda s: _main(s).add(["n1", "m2"], _vec(2), on_conflict="error"), ConflictError),
}


def _circular():
    d: dict = {}
    d["self"] = d
    return d


BAD_OTHERS = {
    "unknown_space": (lambda s: s.space("nope"), NotFoundError),
    "delete_unknown_space": (lambda s: s.delete_space("nope"), NotFoundError),
    "delete_unknown_ids": (lambda s: _main(s).delete(["m1", "zzz", "m2"]), NotFoundError),
    "delete_dead_id": (lambda s: _main(s).delete(["m7"]), NotFoundError),
    "get_unknown_id": (lambda s: _main(s).get(["m1", "zzz"]), NotFoundError),
    "vectors_of_unknown_id": (lambda s: _main(s).vectors_of(["zzz"]), NotFoundError),
    "read_rows_out_of_range": (lambda s: _main(s).read_rows([0, 10_000]), NotFoundError),
    "read_rows_negative": (lambda s: _main(s).read_rows([-1]), NotFoundError),
    "duplicate_space": (lambda s: s.create_space("main", dim=4), ConflictError),
    "exist_ok_other_dim": (lambda s: s.create_space("main", dim=5, exist_ok=True), ConflictError),
    "exist_ok_other_metric": (lambda s: s.create_space("main", dim=4, metric="l2", exist_ok=True), ConflictError),
    "bad_metric": (lambda s: s.create_space("new", dim=4, metric="manhattan"), InputError),
    "bad_dtype": (lambda s: s.create_space("new", dim=4, dtype="float64"), InputError),
    "bad_dtype_int8": (lambda s: s.create_space("new", dim=4, dtype="int8"), InputError),
    "zero_dim": (lambda s: s.create_space("new", dim=0), InputError),
    "negative_dim": (lambda s: s.create_space("new", dim=-3), InputError),
    "float_dim": (lambda s: s.create_space("new", dim=2.5), InputError),
    "bool_dim": (lambda s: s.create_space("new", dim=True), InputError),
    "string_dim": (lambda s: s.create_space("new", dim="4"), InputError),
}

BAD_NAMES = ["", "-lead", ".hidden", "_under", "has space", "a/b", "a\\b", "é", "x" * 129, "tab\t", "new\nline",
             "semi;colon", "star*", None, 5, b"bytes"]


def _check_refused(store, state_of, op, error):
    before = state_of(store)
    with pytest.raises(error) as e:
        op(store)
    assert isinstance(e.value, RepspaceError)
    msg = str(e.value)
    assert msg and "\n" not in msg, f"message is not one line: {msg!r}"
    assert state_of(store) == before


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.parametrize("case", sorted(BAD_ADDS))
def test_bad_add_is_refused_and_changes_nothing(populated, state_of, case):
    op, error = BAD_ADDS[case]
    _check_refused(populated, state_of, op, error)


@pytest.mark.parametrize("case", sorted(BAD_OTHERS))
def test_bad_call_is_refused_and_changes_nothing(populated, state_of, case):
    op, error = BAD_OTHERS[case]
    _check_refused(populated, state_of, op, error)


@pytest.mark.parametrize("name", BAD_NAMES, ids=repr)
def test_invalid_space_name(populated, state_of, name):
    _check_refused(populated, state_of, lambda s: s.create_space(name, dim=4), InputError)


@pytest.mark.parametrize("name", ["a", "0", "docs@layer3", "glove-6b.50d", "A:b+c_d", "x" * 128])
def test_valid_space_names(store, name):
    assert store.create_space(name, dim=2).name == name
    assert store.space(name).name == name


def test_error_messages_name_the_offender(populated):
    sp = populated.space("main")
    with pytest.raises(InputError, match="n2"):
        sp.add(["n1", "n2"], np.array([[1, 2, 3, 4], [1, np.nan, 3, 4]], float))
    with pytest.raises(InputError, match="dimension 5"):
        sp.add(["n1"], _vec(1, dim=5))
    with pytest.raises(InputError, match="'n1'"):
        sp.add(["n1", "n2", "n1"], _vec(3))
    with pytest.raises(NotFoundError, match="zzz") as e:
        sp.delete(["zzz"])
    assert str(e.value).startswith("1 id(s) not in space")  # no KeyError quoting
    with pytest.raises(NotFoundError, match="main"):
        populated.space("nope")
    assert issubclass(InputError, ValueError) and issubclass(NotFoundError, KeyError)


def test_delete_missing_ok_deletes_the_known_ones(populated):
    sp = populated.space("main")
    assert sp.delete(["m1", "zzz", "m1"], missing_ok=True) == 1
    assert "m1" not in sp.ids() and len(sp) == 27


def test_refused_batch_leaves_later_writes_working(populated):
    sp = populated.space("main")
    with pytest.raises(InputError):
        sp.add(["n1", "n2"], np.array([[1, 2, 3, 4], [np.nan, 0, 0, 0]]))
    # The transaction was not left open: a normal write and a read work.
    sp.add(["n1"], _vec(1))
    assert sp.ids()[-1] == "n1"
    with pytest.raises(ConflictError):
        sp.add(["n2", "n1"], _vec(2), on_conflict="error")  # raised inside the write transaction
    sp.add(["n2"], _vec(1, value=2.0))
    assert sp.ids()[-2:] == ["n1", "n2"]


def test_handle_of_deleted_space_raises_not_found(populated):
    sp = populated.space("half")
    populated.delete_space("half")
    for op in (lambda: sp.add(["z"], [[1.0, 1.0, 1.0]]), lambda: sp.snapshot(), lambda: sp.delete(["h0"]),
               lambda: sp.info(), lambda: sp.get(["h0"]), lambda: sp.read_rows([0])):
        with pytest.raises(NotFoundError):
            op()


@pytest.mark.parametrize("prov", [{"tags": {1, 2}}, {"x": math.nan}], ids=["set", "nan"])
def test_non_json_provenance_is_input_error(populated, state_of, prov):
    _check_refused(populated, state_of, lambda s: s.create_space("new", dim=4, provenance=prov), InputError)


def test_numpy_scalars_in_provenance_become_json_numbers(store):
    sp = store.create_space("np", dim=4, provenance={"dim": np.int64(384), "scale": np.float32(0.5)})
    assert sp.provenance == {"dim": 384, "scale": 0.5}


def test_store_error_is_the_documented_type():
    assert StoreError.exit_code == 6 and issubclass(StoreError, RepspaceError)
