"""The TLDR transform: a fitted linear map, deterministic for a seed, that keeps GloVe's neighbours.

The map is checked against its own state multiplied out in numpy (it is linear: nothing else
happens at transform time), refitting with the same seed gives the same bits, and on real GloVe
vectors its reduced space keeps at least as many 10-NN as a seeded Gaussian random projection of
the same width (PCA's figure is recorded beside it, not asserted: TLDR may lose to PCA here, see
BENCHMARKS.md).
"""

from __future__ import annotations

import numpy as np
import pytest
from _data_subsets import glove_rows

from repspace.core.errors import InputError
from repspace.core.exact import exact_search, normalize_rows
from repspace.engines.transforms import PCA, TLDR, parse_transforms, transforms_from_bytes, transforms_to_bytes

pytestmark = pytest.mark.numerics


@pytest.fixture(scope="module")
def small() -> tuple[np.ndarray, TLDR]:
    X = np.random.default_rng(3).standard_normal((500, 8)) @ np.diag([4.0, 3, 2, 1, 1, 0.5, 0.5, 0.2])
    return X, TLDR(n_components=3, epochs=2).fit(X)


def test_transform_is_the_linear_map_of_its_state(small):
    X, t = small
    expected = (X - t.mean_) @ t.components_.T  # float64, written out
    assert t.components_.shape == (3, 8) and t.mean_.shape == (8,)
    np.testing.assert_allclose(t.transform(X), expected, rtol=1e-6, atol=1e-5)
    a, b = X[:10], X[10:20]  # linear up to the mean's offset: T(a + b) = T(a) + T(b) + mean @ W.T
    np.testing.assert_allclose(t.transform(a + b), t.transform(a) + t.transform(b) + t.mean_ @ t.components_.T,
                               rtol=1e-5, atol=1e-4)


def test_same_seed_same_map_and_another_seed_another(small):
    X, t = small
    again = TLDR(n_components=3, epochs=2).fit(X)
    assert np.array_equal(again.components_, t.components_) and np.array_equal(again.mean_, t.mean_)
    other = TLDR(n_components=3, epochs=2, random_state=1).fit(X)
    assert not np.allclose(other.components_, t.components_)


def test_state_round_trip_and_spec(small):
    X, t = small
    (back,) = transforms_from_bytes(transforms_to_bytes([t]))
    assert np.array_equal(back.transform(X), t.transform(X))
    assert t.to_spec() == "tldr3" and parse_transforms("center,TLDR16")[1].n_components == 16
    assert t.fit_info_["rows"] == 500 and len(t.fit_info_["losses"]) == 2


@pytest.mark.parametrize("spec, message", [
    ("tldr0", "at least 1"),
    ("tldr", "tldr needs its output dimensions"),
])
def test_bad_specs(spec, message):
    with pytest.raises(InputError, match=message):
        parse_transforms(spec)


def test_more_components_than_dimensions_is_refused(small):
    X, _ = small
    with pytest.raises(InputError, match="n_components=9 is more than the 8 dimensions"):
        TLDR(n_components=9).fit(X)


def _kept(base: np.ndarray, reduced: np.ndarray, queries: slice, k: int = 10) -> float:
    """Share of each query row's true cosine 10-NN (itself excluded) found by the reduced vectors."""
    def top(x):
        x = normalize_rows(np.ascontiguousarray(x, dtype=np.float32))
        return exact_search(x[queries], x, k + 1, "ip")[1][:, 1:]
    truth, got = top(base), top(reduced)
    return float(np.mean([len(set(a) & set(b)) / k for a, b in zip(truth, got)]))


def test_glove_keeps_at_least_the_neighbours_of_a_random_projection(shared_data):
    X = normalize_rows(glove_rows(0, 4000))
    D, queries = 8, slice(0, 500)
    t = TLDR(n_components=D, epochs=5).fit(X)
    random = X @ np.random.default_rng(0).standard_normal((50, D))
    pca = PCA(n_components=D).fit_transform(X)
    ours, rand, ref = _kept(X, t.transform(X), queries), _kept(X, random, queries), _kept(X, pca, queries)
    print(f"GloVe 4,000 x 50 -> {D}: 10-NN kept tldr {ours:.3f}, pca {ref:.3f}, random {rand:.3f}")
    assert ours >= rand, (ours, rand, ref)
