"""The example stores: seeded data exactly as documented, and a pair whose shared items keep every distance."""

import numpy as np
import pytest

from repspace.store import example_pair, example_space, example_store, example_vectors


def test_example_space_holds_the_documented_seeded_rows_ids_texts_and_metadata():
    sp = example_space(5, 3, seed=7, texts=[f"t{j}" for j in range(5)], metadata=[{"j": j} for j in range(5)])
    expected = np.random.default_rng(7).standard_normal((5, 3))
    assert sp.ids() == ["i0", "i1", "i2", "i3", "i4"]
    np.testing.assert_allclose(sp.vectors(), expected, rtol=1e-6, atol=1e-6)  # stored as float32
    assert sp.filter_rows("j >= 3").tolist() == [3, 4]


def test_example_space_takes_given_vectors_a_store_a_name_and_a_metric():
    store = example_store()
    sp = example_space(store=store, name="mine", vectors=np.eye(4)[:3], metric="l2")
    assert (len(sp), sp.dim, sp.metric) == (3, 4, "l2")
    assert [s.name for s in store.spaces()] == ["mine"]


def test_example_pair_is_a_rotated_subset_with_the_same_gram_matrix():
    a, b = example_pair(30, 20, 6)
    xa, xb = a.vectors().astype(np.float64), b.vectors().astype(np.float64)
    assert b.ids() == a.ids()[:20]
    tol = 50 * np.finfo(np.float32).eps * np.sqrt(6)
    np.testing.assert_allclose(xb @ xb.T, xa[:20] @ xa[:20].T, atol=tol * np.abs(xa).max() ** 2 * 6)
    assert not np.allclose(xa[:20], xb, atol=0.1)  # rotated, not copied


def test_example_vectors_is_the_default_rng_stream():
    assert np.array_equal(example_vectors(4, 2, seed=3), np.random.default_rng(3).standard_normal((4, 2)))
    with pytest.raises(ValueError):
        example_vectors(-1, 2)
