"""Filter columns kept beside the store: read back by another process, never trusted for another state."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from _filter_cases import FIELDS, _make_rows

from repspace import Store
from repspace.core.filters.columns import Column
from repspace.core.store import _column_files, _selections
from repspace.core.store._column_files import column_file, load_column, save_column


def _forms(path):
    text = ".".join(f"`{k.replace('`', '``')}`" for k in path)
    return [f"{text}", f"{text} is null", f"{text} > 0", f"{text} = 1", f"{text} >= 'a'", f"{text} like '%e%'",
            f"{text} in (1, 'a', true)"]


@pytest.fixture
def hostile(tmp_path, monkeypatch):
    """The filter tests' hostile rows (every JSON type, odd keys, big integers), large enough to be persisted."""
    monkeypatch.setattr(_selections, "PERSIST_MIN_ITEMS", 10)
    rows = [(i or "empty-id", t, m) for i, t, m in _make_rows()]
    store = Store(tmp_path / "s.db")
    space = store.create_space("h", dim=4, metric="l2")
    vectors = np.random.default_rng(0).standard_normal((len(rows), 4)).astype(np.float32)
    space.add([r[0] for r in rows], vectors, texts=[r[1] for r in rows], metadata=[r[2] for r in rows])
    space.delete([rows[5][0], rows[17][0]])
    _selections.clear()
    yield space
    store.close()


def test_every_field_read_back_from_its_file_equals_the_sql(hostile):
    forms = [f for path in FIELDS for f in _forms(path)]
    first = [hostile.filter_rows(f) for f in forms]  # read from SQL, written beside the store
    files = list((hostile.store.index_dir / hostile.uid / "columns").glob("*.npz"))
    assert len(files) == len(FIELDS)
    _selections.clear()  # what a new process holds
    before = _selections.STATS["files"]
    for form, got in zip(forms, first):
        again = hostile.filter_rows(form)
        want = hostile.filter_rows_sql(form)
        np.testing.assert_array_equal(got, want, err_msg=form)
        np.testing.assert_array_equal(again, want, err_msg=form)
    assert _selections.STATS["files"] - before == len(FIELDS)  # every field came from its file


def test_a_file_of_another_state_or_a_damaged_one_is_not_trusted(hostile):
    assert hostile.filter_rows("n > 0").tolist() == hostile.filter_rows_sql("n > 0").tolist()
    (file,) = (hostile.store.index_dir / hostile.uid / "columns").glob("*.npz")
    stale = file.read_bytes()
    hostile.update_metadata(["id0100"], [{"n": 10**6}])  # an in-place change: same rows, new generation
    _selections.clear()
    before = _selections.STATS["files"]
    assert hostile.filter_rows("n > 0").tolist() == hostile.filter_rows_sql("n > 0").tolist()
    assert _selections.STATS["files"] == before  # the old file was not used ...
    assert file.read_bytes() != stale  # ... and was replaced by the new state's
    for damage in (b"", b"PK\x03\x04 not a zip", stale[: len(stale) // 2]):
        file.write_bytes(damage)
        _selections.clear()
        assert hostile.filter_rows("n > 0").tolist() == hostile.filter_rows_sql("n > 0").tolist()
        assert _selections.STATS["files"] == before


def test_small_spaces_write_nothing(store):
    space = store.create_space("s", dim=2, metric="l2")
    space.add([f"i{i}" for i in range(100)], np.ones((100, 2), np.float32), metadata=[{"x": i} for i in range(100)])
    assert len(space.filter_rows("x < 5")) == 5
    assert not (store.index_dir / space.uid / "columns").exists()


def test_round_trip_keeps_big_integers_and_strings(tmp_path):
    values = [2**63 - 1, -(2**60) - 3, 1.5, "é€😀", "", None, [], {}, True]
    types = ["integer", "integer", "real", "text", "text", None, "array", "object", "true"]
    col = Column.from_arrays(types, [v if not isinstance(v, (list, dict)) else ("[]" if v == [] else "{}")
                                     for v in values])
    state = ("u", 3, 9, 0)
    f = column_file(tmp_path, "u", ("a", "b"))
    save_column(f, state, ("a", "b"), np.arange(9), col)
    rows, back = load_column(f, state, ("a", "b"))
    assert rows.tolist() == list(range(9)) and dict(back.big) == dict(col.big) and len(col.big) == 2
    assert back.text.tolist() == col.text.tolist()
    for name in ("kind", "exact", "empty"):
        np.testing.assert_array_equal(getattr(back, name), getattr(col, name))
    np.testing.assert_array_equal(back.number, col.number)
    assert load_column(f, state, ("a",)) is None and load_column(f, ("v", 3, 9, 0), ("a", "b")) is None
    assert load_column(tmp_path / "absent.npz", state, ("a", "b")) is None


def test_another_process_filters_from_the_files(tmp_path):
    """A real second process reads the columns the first wrote, and answers as the SQL does."""
    n = _column_files.PERSIST_MIN_ITEMS
    store = Store(tmp_path / "s.db")
    space = store.create_space("big", dim=2, metric="l2")
    space.add([f"i{i}" for i in range(n)], np.zeros((n, 2), np.float32),
              metadata=[{"sel": i % 1000, "lang": ["en", "de", "fr"][i % 3]} for i in range(n)])
    want = space.filter_rows("sel < 10 and lang = 'de'")
    store.close()
    code = textwrap.dedent(f"""
        from repspace import Store
        from repspace.core.store import _selections
        sp = Store({str(tmp_path / "s.db")!r}).space("big")
        got = sp.filter_rows("sel < 10 and lang = 'de'")
        other = sp.filter_rows("sel >= 990 or lang = 'fr'")
        ref = sp.filter_rows_sql("sel >= 990 or lang = 'fr'")
        print(_selections.STATS["files"], got.tolist() == sp.filter_rows_sql("sel < 10 and lang = 'de'").tolist(),
              other.tolist() == ref.tolist(), len(got))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["2", "True", "True", str(len(want))]
