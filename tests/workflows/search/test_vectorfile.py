"""The rescoring tier: a memory-mapped copy of a space's vectors, kept in step with the store."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from _data_subsets import glove_rows

import repspace.workflows.search.persist as persist_mod
from repspace import InputError
from repspace.workflows.search import knn
from repspace.workflows.search.vectorfile import (
    VectorFile,
    ensure_vector_file,
    vector_file_paths,
)

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


@pytest.fixture(autouse=True)
def _no_memory_cache(monkeypatch):
    monkeypatch.setattr(persist_mod, "_MEMORY", {})


def test_built_extended_and_dead_rows_zero(store):
    sp = store.create_space("v", dim=50)
    x = glove_rows(0, 3000)
    sp.add([f"w{i}" for i in range(2000)], x[:2000])
    got = ensure_vector_file(sp)
    assert got.action == "built" and got.index.ntotal == 2000
    assert got.index.normalized  # cosine, float32: stored as searched
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    np.testing.assert_allclose(got.index.read(np.arange(2000)), x[:2000], rtol=1e-6, atol=1e-7)
    sp.delete(["w5", "w1999"])
    sp.add([f"w{i}" for i in range(2000, 3000)], x[2000:])
    again = ensure_vector_file(sp)
    assert again.action == "extended" and again.index.ntotal == 3000
    rows = np.array([2999, 0, 2000, 5, 5])  # any order, repeats
    np.testing.assert_allclose(again.index.read(rows), np.stack([x[2999], x[0], x[2000], x[5], x[5]]), atol=1e-7)
    assert ensure_vector_file(sp).action == "loaded"
    # a space rebuilt after many deletions: dead rows are written as zeros
    sp.delete([f"w{i}" for i in range(0, 3000, 2) if i != 0])
    rebuilt = ensure_vector_file(sp)
    assert rebuilt.action == "rebuilt"
    assert not rebuilt.index.read(np.array([2])).any()
    np.testing.assert_allclose(rebuilt.index.read(np.array([3, 2999])), x[[3, 2999]], atol=1e-7)


def test_float16_space_keeps_its_dtype(store):
    sp = store.create_space("h", dim=50, dtype="float16")
    sp.add([f"w{i}" for i in range(100)], glove_rows(0, 100))
    vf = ensure_vector_file(sp).index
    assert vf.nbytes == 100 * 50 * 2 and not vf.normalized  # raw: rounding in float16 would cost precision
    np.testing.assert_array_equal(vf.read(np.arange(100)), sp.read_rows(np.arange(100)))


def test_a_damaged_file_or_stamp_is_rebuilt_not_trusted(store):
    sp = store.create_space("d", dim=50, metric="l2")
    x = glove_rows(0, 500)
    sp.add([f"w{i}" for i in range(500)], x)
    ensure_vector_file(sp)
    path, stamp = vector_file_paths(sp)
    with open(path, "r+b") as f:
        f.truncate(path.stat().st_size - 3)  # not whole rows
    got = ensure_vector_file(sp)
    assert got.action == "rebuilt"
    np.testing.assert_array_equal(got.index.read(np.arange(500)), x)
    stamp.write_text(stamp.read_text().replace('"vectors"', '"other"'))
    assert ensure_vector_file(sp).action == "rebuilt"


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_rescoring_reads_the_tier_not_the_store(store, monkeypatch, dtype):
    """float32: FAISS scores the shortlists in the mapped file; float16: one gather of their union."""
    sp = store.create_space("r", dim=50, dtype=dtype)
    x = glove_rows(0, 4000)
    sp.add([f"w{i}" for i in range(4000)], x)
    q = glove_rows(30_000, 40)
    expected = knn(sp, q, 10, method="exact")
    fetched = []
    original = VectorFile.read

    def counting(self, rows):
        fetched.append(len(rows))
        return original(self, rows)

    monkeypatch.setattr(VectorFile, "read", counting)
    knn(sp, q[:1], 10, index="int8>rescore4")  # builds the index (reading the store) and the tier
    fetched.clear()
    monkeypatch.setattr(type(sp), "read_rows", lambda *a, **k: pytest.fail("rescoring read the store"))
    got = knn(sp, q, 10, index="int8>rescore4")
    if dtype == "float32":
        assert fetched == []  # scored in place
    else:
        assert len(fetched) == 1 and fetched[0] <= 40 * 40
    np.testing.assert_array_equal(got.rows, expected.rows)
    np.testing.assert_allclose(got.scores, expected.scores, rtol=1e-6, atol=1e-6)


def test_a_reader_keeps_its_file_while_another_process_extends_it(store, tmp_path):
    sp = store.create_space("p", dim=50, metric="ip")
    x = glove_rows(0, 2000)
    sp.add([f"w{i}" for i in range(1000)], x[:1000])
    reader = ensure_vector_file(sp).index
    before = reader.read(np.arange(1000))  # mapped now
    script = textwrap.dedent(f"""
        import numpy as np
        from repspace import Store
        from repspace.workflows.search.vectorfile import ensure_vector_file
        x = np.load({str(tmp_path / 'x.npy')!r})
        with Store({str(store.path)!r}) as s:
            sp = s.space("p")
            sp.add([f"w{{i}}" for i in range(1000, 2000)], x[1000:])
            print(ensure_vector_file(sp).action)
    """)
    np.save(tmp_path / "x.npy", x)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "extended"
    np.testing.assert_array_equal(reader.read(np.arange(1000)), before)  # the old mapping is intact
    fresh = ensure_vector_file(store.space("p"))
    assert fresh.action == "loaded" and fresh.index.ntotal == 2000
    np.testing.assert_array_equal(fresh.index.read(np.arange(2000)), x)


def test_bad_rows(tmp_path):
    vf = VectorFile(tmp_path / "v.bin", 2, "float32")
    vf.add(np.ones((2, 2), "float32"), np.array([0, 1]))
    with pytest.raises(InputError, match="rows must increase from 2"):
        vf.add(np.ones((1, 2), "float32"), np.array([1]))
    with pytest.raises(InputError, match="expected"):
        vf.add(np.ones((1, 3), "float32"), np.array([4]))
    vf.save(tmp_path / "v.bin")
    with pytest.raises(InputError, match="outside the 2 rows"):
        vf.read(np.array([2]))
