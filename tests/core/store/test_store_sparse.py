"""Sparse spaces in the store: CSR blocks round-trip, upsert rules, refusals that change nothing.

The rows read back are compared with the scipy matrix they were written from (an independent
holder of the same CSR), and every refused batch leaves the database byte for byte as it was
(``state_of``: every table read through a separate SQLite connection).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sps

from repspace.core.errors import ConflictError, InputError
from repspace.core.sparse import SparseRows
from repspace.core.store._rows import BLOCK_BYTES


def _random_csr(rng, n: int, n_features: int, density: float) -> sps.csr_array:
    m = sps.random_array((n, n_features), density=density, format="csr", dtype=np.float32, rng=rng)
    m.data = (m.data + 0.01).astype(np.float32)  # strictly positive: every stored entry is a non-zero
    m.sort_indices()
    return m


def _equal(a: SparseRows, b: sps.csr_array) -> bool:
    b = b.tocsr()
    b.sort_indices()
    return (a.indptr.tolist() == b.indptr.tolist() and a.indices.tolist() == b.indices.tolist()
            and a.values.tobytes() == b.data.astype(np.float32).tobytes())


def test_rows_round_trip_across_blocks_and_deletes(store, rng):
    m = _random_csr(rng, 3000, 5000, 0.1)  # ~1.2 MB of entries per 1000 rows: several blocks
    assert m.nnz * 8 > 2 * BLOCK_BYTES
    sp = store.create_space("s", dim=5000, metric="ip", layout="sparse")
    ids = [f"d{i}" for i in range(3000)]
    assert sp.add(ids, m).added == 3000
    rows, data = sp.sparse_rows()
    assert rows.tolist() == list(range(3000)) and _equal(data, m)
    assert sp.info().layout == "sparse" and sp.info().to_dict()["layout"] == "sparse"
    sp.delete(ids[::3])
    rows, data = sp.sparse_rows()
    keep = [i for i in range(3000) if i % 3]
    assert rows.tolist() == keep and _equal(data, m[keep])
    picked = [2999, 5, 1001]
    assert _equal(sp.sparse_of([ids[i] for i in picked]), m[picked])
    assert sp.ids() == [ids[i] for i in keep]


def test_upsert_keeps_identical_rows_and_replaces_changed_ones(store):
    sp = store.create_space("s", dim=4, metric="cosine", layout="sparse")
    first = SparseRows.from_pairs([([0], [1.0]), ([1, 3], [0.5, 0.25])], 4)
    sp.add(["a", "b"], first, texts=["x", None])
    again = SparseRows.from_pairs([([3, 1], [0.25, 0.5]), ([0], [1.0]), ([2], [3.0])], 4)  # b same (unsorted)
    r = sp.add(["b", "a", "c"], again, texts=[None, "y", None])
    assert (r.added, r.replaced, r.updated, r.unchanged) == (1, 0, 1, 1)
    r = sp.add(["a"], SparseRows.from_pairs([([0], [2.0])], 4))
    assert r.replaced == 1
    rows, data = sp.sparse_rows()
    assert rows.tolist() == [1, 2, 3] and data.row(2) == ([0], [2.0])


def test_feature_names_and_empty_rows_are_kept(store):
    sp = store.create_space("s", dim=3, metric="ip", layout="sparse", features=["a", "b", "c"])
    sp.add(["x", "y"], SparseRows.from_pairs([([], []), ([2, 1], [0.0, 1.0])], 3))
    assert sp.feature_names() == ["a", "b", "c"]
    _, data = sp.sparse_rows()
    assert data.row(0) == ([], []) and data.row(1) == ([1], [1.0])  # an explicit zero is not stored


BAD = [
    (SparseRows.from_pairs([([0], [-1.0])], 4), "negative weight -1"),
    (SparseRows.from_pairs([([0], [float("nan")])], 4), "nan weight"),
    (SparseRows.from_pairs([([0], [float("inf")])], 4), "inf weight"),
    (SparseRows.from_pairs([([4], [1.0])], 4), "feature index 4, beyond the vocabulary of 4 features"),
    (SparseRows.from_pairs([([-1], [1.0])], 4), "feature index -1, beyond"),
    (SparseRows.from_pairs([([1, 1], [1.0, 2.0])], 4), "feature index 1 twice"),
    (SparseRows.from_pairs([([1], [1e39])], 4), "beyond float32's range"),
    (SparseRows(np.array([0, 2]), np.array([1, 2]), np.array([1.0]), 4), "2 indices and 1 values"),
    (np.ones((1, 4)), "give its rows as SparseRows or a scipy sparse matrix"),
    (sps.csr_array(np.ones((1, 5), dtype=np.float32)), "have 5 columns"),
]


@pytest.mark.parametrize("rows, message", BAD, ids=[m for _, m in BAD])
def test_bad_rows_are_refused_whole_and_change_nothing(store, state_of, rows, message):
    sp = store.create_space("s", dim=4, metric="ip", layout="sparse")
    sp.add(["keep"], SparseRows.from_pairs([([0], [1.0])], 4))
    before = state_of(store)
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(".", r"\.")):
        sp.add(["new"], rows)
    assert state_of(store) == before


def test_negative_weights_when_allowed_and_dense_reads_refused(store):
    sp = store.create_space("s", dim=4, metric="ip", layout="sparse")
    sp.add(["a"], SparseRows.from_pairs([([0], [-1.0])], 4), allow_negative=True)
    with pytest.raises(InputError, match="holds sparse vectors .4 features.: reading vectors needs dense"):
        sp.vectors()
    with pytest.raises(InputError, match="holds sparse vectors"):
        sp.snapshot()
    dense = store.create_space("d", dim=2)
    with pytest.raises(InputError, match="allow_negative applies to sparse spaces only"):
        dense.add(["a"], [[1.0, 0.0]], allow_negative=True)
    with pytest.raises(InputError, match="holds dense vectors"):
        dense.sparse_rows()


def test_a_sparse_space_needs_ip_or_cosine_float32_and_valid_names(store):
    with pytest.raises(InputError, match="inner product or cosine, not l2"):
        store.create_space("s", dim=4, metric="l2", layout="sparse")
    with pytest.raises(InputError, match="float32 weights"):
        store.create_space("s", dim=4, metric="ip", layout="sparse", dtype="float16")
    with pytest.raises(InputError, match="3 feature names for a vocabulary of 4"):
        store.create_space("s", dim=4, layout="sparse", features=["a", "b", "c"])
    with pytest.raises(InputError, match="control character"):
        store.create_space("s", dim=2, layout="sparse", features=["a", "b\x1b"])
    with pytest.raises(InputError, match="given twice"):
        store.create_space("s", dim=2, layout="sparse", features=["a", "a"])
    with pytest.raises(ConflictError, match="layout=dense"):
        store.create_space("d", dim=4)
        store.create_space("d", dim=4, layout="sparse", exist_ok=True)
    assert [s.name for s in store.spaces()] == ["d"]
