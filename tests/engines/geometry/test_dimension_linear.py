"""Linear beside nonlinear intrinsic dimension (repspace.engines.geometry.dimension_linear) against numpy's eigenvalues
and the project's TwoNN/MLE, on GloVe and on planted manifolds."""

from __future__ import annotations

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.geometry.dimension_linear import linear_nonlinear_id, pca_dimension
from repspace.engines.geometry import mle, twonn

pytestmark = pytest.mark.numerics


def test_pca_counts_equal_numpy_eigenvalues_and_the_estimators(glove_vectors):
    X = np.asarray(glove_vectors[:2000], dtype=np.float64)
    lam = np.sort(np.linalg.eigvalsh(np.cov(X.T, ddof=0)))[::-1]
    share = np.cumsum(lam) / lam.sum()
    r = linear_nonlinear_id(X)
    for p in (0.9, 0.95, 0.99):
        expected = int(np.argmax(share >= p)) + 1
        assert r.pca[f"p{round(p * 100)}"] == expected == pca_dimension(X, p)
    assert r.twonn == pytest.approx(twonn(X), rel=1e-9) and r.mle == pytest.approx(mle(X), rel=1e-9)
    assert r.linear_to_nonlinear == pytest.approx(r.pca["p99"] / r.twonn, rel=1e-9)


def test_a_curved_manifold_is_linearly_wide_and_nonlinearly_thin():
    # a 1-d helix-like curve through 10 dimensions: many principal components, TwoNN near 1
    t = np.random.default_rng(0).uniform(0, 6 * np.pi, 3000)
    X = np.stack([np.cos((j + 1) * t / 3) for j in range(5)] + [np.sin((j + 1) * t / 3) for j in range(5)], axis=1)
    r = linear_nonlinear_id(X)
    assert r.pca["p90"] >= 8 and r.twonn == pytest.approx(1.0, abs=0.15) and r.linear_to_nonlinear > 8


def test_constant_rows_are_refused():
    with pytest.raises(InputError, match="do not vary"):
        linear_nonlinear_id(np.ones((50, 3)))
