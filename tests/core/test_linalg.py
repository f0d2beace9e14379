"""The package's one SVD: gesdd, then gesvd where gesdd does not converge."""

from __future__ import annotations

import numpy as np
import pytest

from repspace.core import linalg

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


def test_falls_back_to_gesvd_when_gesdd_does_not_converge(monkeypatch):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((30, 8)) @ rng.standard_normal((8, 20))  # rank 8 of 20
    want_u, want_s, want_vt = np.linalg.svd(a, full_matrices=False)
    calls = []

    def failing(*args, **kwargs):
        calls.append(kwargs)
        raise np.linalg.LinAlgError("SVD did not converge")

    monkeypatch.setattr(linalg.np.linalg, "svd", failing)
    u, s, vt = linalg.svd(a, full_matrices=False)
    assert calls and u.shape == want_u.shape and vt.shape == want_vt.shape
    np.testing.assert_allclose(s, want_s, atol=1e-10)
    np.testing.assert_allclose(u * s @ vt, a, atol=1e-10)
    np.testing.assert_allclose(linalg.svd(a, compute_uv=False), want_s, atol=1e-10)


def test_non_finite_input_is_still_an_error():
    with pytest.raises((np.linalg.LinAlgError, ValueError)):
        linalg.svd(np.array([[np.nan, 1.0], [0.0, 1.0]]))
