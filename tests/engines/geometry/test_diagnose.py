"""diagnose(): every metric in one call, consistent with the per-metric functions, with readings."""

from __future__ import annotations

import json

import numpy as np
import pytest

from repspace.engines.geometry import hubness, intrinsic_dimension, isotropy, norms, spectrum, uniformity
from repspace.engines.geometry.diagnose import diagnose

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


@pytest.fixture(scope="module")
def glove(glove_vectors) -> np.ndarray:
    return np.ascontiguousarray(glove_vectors[:3000], dtype=np.float32)


def test_diagnosis_equals_the_metrics_computed_one_by_one(glove):
    r = diagnose(glove, k=10)
    d = r.to_dict()
    assert d["n"] == 3000 and d["d"] == 50
    assert d["hubness.k_skewness"] == pytest.approx(hubness(glove, k=10).k_skewness)
    assert d["isotropy.isoscore"] == pytest.approx(isotropy(glove).isoscore)
    assert d["intrinsic_dimension.twonn"] == pytest.approx(intrinsic_dimension(glove).twonn)
    assert d["rank.effective_rank"] == pytest.approx(spectrum(glove).effective_rank)
    assert d["norms.mean"] == pytest.approx(norms(glove).mean)
    assert d["uniformity"]["value"] == pytest.approx(uniformity(glove).value)
    assert "alignment" not in d
    json.dumps(d)  # the --json shape is JSON
    assert all(isinstance(s, str) and s for s in r.readings)


def test_readings_name_the_problem_and_the_repair():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2000, 20))
    x[:, 3] += 25.0  # one dimension dominating every cosine: anisotropy through a rogue dimension
    r = diagnose(x)
    text = " ".join(r.readings)
    assert "anisotropic" in text and "centring" in text
    assert "rogue dimension" in text and "all-but-the-top" in text and "largest: 3" in text
    calm = diagnose(rng.standard_normal((2000, 20)))
    assert not any("anisotropic" in s or "rogue" in s for s in calm.readings)


def test_alignment_with_positive_pairs():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((300, 8))
    r = diagnose(a, positives=(a, a + 0.01 * rng.standard_normal(a.shape)))
    assert 0 <= r.alignment < 0.01


def test_unit_rows_share_one_graph_with_the_same_results(glove_vectors):
    from repspace.engines.geometry import hubness, intrinsic_dimension

    x = np.asarray(glove_vectors[:2000], np.float64)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    shared = diagnose(x, k=10)
    hub = hubness(x, k=10, metric="cosine")
    intr = intrinsic_dimension(x)
    assert np.array_equal(shared.hubness.k_occurrence, hub.k_occurrence)
    assert shared.hubness.k_skewness == pytest.approx(hub.k_skewness, abs=1e-12)
    assert shared.intrinsic_dimension.twonn == pytest.approx(intr.twonn, rel=1e-6)
    assert shared.intrinsic_dimension.mle == pytest.approx(intr.mle, rel=1e-6)
    assert np.allclose(shared.intrinsic_dimension.local, intr.local, rtol=1e-5)
    with_dupes = np.vstack([x, x[:3]])  # duplicates: intrinsic dimension needs its own graph of distinct rows
    d2 = diagnose(with_dupes, k=10)
    assert d2.intrinsic_dimension.duplicates_removed == 3
    assert d2.intrinsic_dimension.twonn == pytest.approx(intrinsic_dimension(with_dupes).twonn, rel=1e-9)


def test_shared_graph_with_many_duplicates_gives_the_distinct_points_estimates(glove_vectors):
    from repspace.engines.geometry import intrinsic_dimension

    x = np.asarray(glove_vectors[:1500], np.float64)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    # 300 rows twice more, and one row 25 more times: some points' 20 neighbours are mostly copies
    dup = np.vstack([x, x[:300], x[:300], np.repeat(x[5:6], 25, axis=0)])
    shared = diagnose(dup, k=10).intrinsic_dimension
    alone = intrinsic_dimension(dup)
    assert shared.duplicates_removed == alone.duplicates_removed == 625
    assert shared.twonn == pytest.approx(alone.twonn, rel=1e-6)
    assert shared.mle == pytest.approx(alone.mle, rel=1e-6)
    assert np.allclose(shared.local, alone.local, rtol=1e-5)
