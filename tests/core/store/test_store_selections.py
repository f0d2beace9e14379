"""Filter selections of a stored space: cached per generation, always equal to the SQL reference."""

from __future__ import annotations

import numpy as np
import pytest
from _filter_cases import FIELDS, _make_rows, exprs
from hypothesis import HealthCheck, given, settings

from repspace import Store
from repspace.core.filters import parse
from repspace.core.store import _selections


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """The filter tests' hostile rows (every JSON type, odd keys, big integers) as a real stored space."""
    rows = [(i or "empty-id", t, m) for i, t, m in _make_rows()]  # the store refuses an empty id
    store = Store(tmp_path_factory.mktemp("sel") / "s.db")
    space = store.create_space("h", dim=4, metric="l2")
    vectors = np.random.default_rng(0).standard_normal((len(rows), 4)).astype(np.float32)
    space.add([r[0] for r in rows], vectors, texts=[r[1] for r in rows], metadata=[r[2] for r in rows])
    space.delete([rows[5][0], rows[17][0]])  # dead rows must never be selected
    yield space
    store.close()


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                    HealthCheck.function_scoped_fixture])
@given(exprs)
def test_random_filters_equal_the_sql_reference(hostile, expr):
    got = hostile.filter_rows(str(expr))
    want = hostile.filter_rows_sql(str(expr))
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.int64 and not got.flags.writeable


def test_every_field_of_the_hostile_data_agrees(hostile):
    for path in FIELDS:
        text = ".".join(f"`{k.replace('`', '``')}`" for k in path)
        for form in (f"{text}", f"{text} is null", f"{text} > 0", f"{text} >= 'a'", f"{text} like '%e%'"):
            np.testing.assert_array_equal(hostile.filter_rows(form), hostile.filter_rows_sql(form), err_msg=form)


def test_repeats_are_lookups_and_new_filters_reuse_the_columns(store):
    _selections.clear()
    space = store.create_space("s", dim=2, metric="l2")
    n = 2000
    space.add([f"i{i}" for i in range(n)], np.ones((n, 2), np.float32),
              metadata=[{"sel": i % 100, "lang": ["en", "de"][i % 2]} for i in range(n)])
    before = dict(_selections.STATS)
    a = space.filter_rows("sel = 0")
    assert _selections.STATS["read"] == before["read"] + 1  # the first filter reads its column
    b = space.filter_rows("sel = 0")
    assert b is a and _selections.STATS["cached"] == before["cached"] + 1
    c = space.filter_rows("sel < 10 and not sel = 3")  # another filter on the same field: no read
    assert _selections.STATS["read"] == before["read"] + 1 and _selections.STATS["columns"] == before["columns"] + 1
    assert len(a) == 20 and len(c) == 180
    space.filter_rows("lang = 'de' and sel < 10")  # a new field: read once
    assert _selections.STATS["read"] == before["read"] + 2


def test_every_write_is_seen_at_once(store, tmp_path):
    space = store.create_space("w", dim=2, metric="l2")
    space.add(["a", "b", "c"], np.zeros((3, 2), np.float32), metadata=[{"x": 1}, {"x": 2}, {"x": 3}])
    assert space.filter_rows("x >= 2").tolist() == [1, 2]
    space.delete(["b"])
    assert space.filter_rows("x >= 2").tolist() == [2]
    space.add(["d"], np.zeros((1, 2), np.float32), metadata=[{"x": 9}])
    assert space.filter_rows("x >= 2").tolist() == [2, 3]
    space.update_metadata(["a"], [{"x": 5}])
    assert space.filter_rows("x >= 2").tolist() == [0, 2, 3]
    other = Store(store.path)  # another connection, as another process would write
    try:
        other.space("w").update_metadata(["c"], [{"x": 0}])
    finally:
        other.close()
    assert space.filter_rows("x >= 2").tolist() == [0, 3]
    assert space.filter_rows("x >= 2").tolist() == space.filter_rows_sql("x >= 2").tolist()


def test_a_selection_cannot_be_changed_by_its_caller(store):
    space = store.create_space("r", dim=2, metric="l2")
    space.add(["a", "b"], np.zeros((2, 2), np.float32), metadata=[{"x": 1}, {"x": 1}])
    rows = space.filter_rows("x = 1")
    with pytest.raises(ValueError):
        rows[0] = 7
    assert space.filter_rows(parse("x = 1").__str__()).tolist() == [0, 1]


def test_threads_evicting_each_other_still_get_the_reference(store, monkeypatch):
    """Tiny caches and four threads: every entry is evicted under the others' feet; results stay exact."""
    import threading

    monkeypatch.setattr(_selections._COLUMNS, "max_bytes", 1)  # the caches' own bounds, restored after
    monkeypatch.setattr(_selections._SELECTIONS, "max_entries", 1)
    _selections.clear()
    space = store.create_space("t", dim=2, metric="l2")
    n = 3000
    space.add([f"i{i}" for i in range(n)], np.ones((n, 2), np.float32),
              metadata=[{"a": i % 7, "b": i % 11, "c": str(i % 5)} for i in range(n)])
    filters = ["a < 3", "b >= 5", "c = '2'", "a = 1 and b < 4", "not c in ('1', '3')", "a > 2 or b = 0"]
    want = {f: space.filter_rows_sql(f).tolist() for f in filters}
    errors: list[BaseException] = []

    def work(offset: int) -> None:
        try:
            for i in range(60):
                f = filters[(i + offset) % len(filters)]
                assert space.filter_rows(f).tolist() == want[f], f
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
