"""Top-k sparse autoencoder: sentence-transformers' forward pass, autograd's gradients, planted dictionaries.

The forward pass is checked against sentence-transformers' ``SparseAutoEncoder``
module given the same weights; the hand-written gradients of the training step
against torch autograd on the same loss (MSE + AuxK); training against a
planted dictionary (random unit atoms mixed k at a time), which it must
recover; the metrics against their formulas written out (OpenAI's NMSE as in
``sparse_autoencoder/loss.py``).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import scipy.sparse as sp
import torch
import torch.nn.functional as F
from sklearn.base import clone

from repspace.core.errors import InputError
from repspace.core.estimators import NotFittedError
from repspace.engines.interpret.sae import pursuit as pursuit_module
from repspace.engines.interpret.sae import train as train_module
from repspace.engines.interpret.sae import (
    LatentMatch,
    SaeMetrics,
    SparseAutoencoder,
    Stability,
    attribute_pair,
    match_latents,
    matching_pursuit,
    sae_metrics,
    stability,
    top_items,
)


def planted(n_atoms: int, d: int, k: int, n: int, seed: int = 0, noise: float = 0.01
            ) -> tuple[np.ndarray, np.ndarray]:
    """``n`` rows, each ``k`` distinct random unit atoms with magnitudes in [0.5, 1.5], plus Gaussian noise."""
    rng = np.random.default_rng(seed)
    atoms = rng.standard_normal((n_atoms, d))
    atoms /= np.linalg.norm(atoms, axis=1, keepdims=True)
    support = np.argsort(rng.random((n, n_atoms)), axis=1)[:, :k]
    mags = rng.uniform(0.5, 1.5, (n, k))
    X = np.einsum("nk,nkd->nd", mags, atoms[support]) + noise * rng.standard_normal((n, d))
    return X.astype(np.float32), atoms


def recovered(atoms: np.ndarray, model: SparseAutoencoder, threshold: float = 0.9) -> float:
    """Share of true atoms whose best cosine with a learned decoder row reaches ``threshold``."""
    return float(np.mean((atoms @ model.components_.T).max(axis=1) >= threshold))


def with_weights(n_latents: int, d: int, k: int, seed: int = 0, *, tied: bool = False) -> SparseAutoencoder:
    """An SAE given random weights (non-zero biases, unit decoder rows), as ``fit`` would leave them."""
    rng = np.random.default_rng(seed)
    model = SparseAutoencoder(n_latents=n_latents, k=k)
    dec = rng.standard_normal((n_latents, d)).astype(np.float32)
    dec /= np.linalg.norm(dec, axis=1, keepdims=True)
    model.components_ = dec
    model.encoder_ = dec.copy() if tied else rng.standard_normal((n_latents, d)).astype(np.float32) * 0.3
    model.latent_bias_ = (0.1 * rng.standard_normal(n_latents)).astype(np.float32)
    model.pre_bias_ = (0.2 * rng.standard_normal(d)).astype(np.float32)
    model.samples_since_fired_ = np.zeros(n_latents, np.int64)
    model.dead_latents_ = np.zeros(n_latents, bool)
    model.n_features_in_ = d
    return model


@pytest.fixture(scope="module")
def small_planted() -> tuple[np.ndarray, np.ndarray, SparseAutoencoder, SparseAutoencoder]:
    """128 atoms in 64-d, k = 4, 10,000 rows; two SAEs of different seeds (about 5 s each)."""
    X, atoms = planted(128, 64, 4, 10_000)
    a = SparseAutoencoder(n_latents=128, k=4, epochs=20, batch_size=64, lr=5e-3, seed=0).fit(X)
    b = SparseAutoencoder(n_latents=128, k=4, epochs=20, batch_size=64, lr=5e-3, seed=1).fit(X)
    return X, atoms, a, b


@pytest.fixture(scope="module")
def fitted() -> tuple[np.ndarray, SparseAutoencoder]:
    rng = np.random.default_rng(3)
    X = rng.standard_normal((600, 10)).astype(np.float32)
    return X, SparseAutoencoder(n_latents=40, k=5, epochs=4, batch_size=64).fit(X)


# -- sentence-transformers' SparseAutoEncoder: the same forward pass -----------------------------


def st_module(n_latents: int, d: int, k: int, encoder: np.ndarray, latent_bias: np.ndarray,
              pre_bias: np.ndarray) -> torch.nn.Module:
    from sentence_transformers.sparse_encoder.modules import SparseAutoEncoder as StSAE

    st = StSAE(input_dim=d, hidden_dim=n_latents, k=k, k_aux=0)
    with torch.no_grad():
        st.encoder.weight.copy_(torch.from_numpy(encoder))  # (hidden, input): nn.Linear's layout, as ours
        st.latent_bias.copy_(torch.from_numpy(latent_bias))
        st.pre_bias.copy_(torch.from_numpy(pre_bias))
    return st.eval()


@pytest.mark.numerics
def test_codes_equal_sentence_transformers() -> None:
    n_latents, d, k = 96, 24, 6
    model = with_weights(n_latents, d, k)
    X = np.random.default_rng(1).standard_normal((300, d)).astype(np.float32)
    st = st_module(n_latents, d, k, model.encoder_, model.latent_bias_, model.pre_bias_)
    with torch.inference_mode():
        theirs = st({"sentence_embedding": torch.from_numpy(X)})["sentence_embedding"].numpy()
    ours = model.transform(X, dense=True)
    np.testing.assert_allclose(ours, theirs, atol=1e-5, rtol=0)
    assert ((theirs != 0) == (ours != 0)).all()
    np.testing.assert_array_equal(model.transform(X).toarray(), ours)


@pytest.mark.numerics
def test_reconstruction_equals_sentence_transformers_decoder() -> None:
    n_latents, d, k = 96, 24, 6
    model = with_weights(n_latents, d, k, seed=2)
    X = np.random.default_rng(3).standard_normal((200, d)).astype(np.float32)
    # its decoder is the encoder's transpose (tied): a module whose encoder holds our decoder decodes as ours
    st_dec = st_module(n_latents, d, k, model.components_, model.latent_bias_, model.pre_bias_)
    with torch.no_grad():
        theirs = st_dec.decode(torch.from_numpy(model.transform(X, dense=True))).numpy()
    np.testing.assert_allclose(model.reconstruct(X), theirs, atol=1e-5, rtol=0)


@pytest.mark.numerics
def test_tied_forward_equals_sentence_transformers() -> None:
    n_latents, d, k = 64, 16, 4
    model = with_weights(n_latents, d, k, seed=4, tied=True)
    X = np.random.default_rng(5).standard_normal((150, d)).astype(np.float32)
    st = st_module(n_latents, d, k, model.encoder_, model.latent_bias_, model.pre_bias_)
    with torch.no_grad():
        out = st({"sentence_embedding": torch.from_numpy(X)})
    np.testing.assert_allclose(model.transform(X, dense=True), out["sentence_embedding"].numpy(), atol=1e-5, rtol=0)
    np.testing.assert_allclose(model.reconstruct(X), out["decoded_embedding_k"].numpy(), atol=1e-5, rtol=0)


@pytest.mark.numerics
def test_trained_model_equals_sentence_transformers(fitted) -> None:
    X, model = fitted
    st = st_module(model.n_latents, X.shape[1], model.k, model.encoder_, model.latent_bias_, model.pre_bias_)
    with torch.inference_mode():
        theirs = st({"sentence_embedding": torch.from_numpy(X)})["sentence_embedding"].numpy()
    np.testing.assert_allclose(model.transform(X, dense=True), theirs, atol=1e-5, rtol=0)


# -- the training step: hand-written gradients against autograd ----------------------------------


class _Recorder:
    def step(self, grads: list[torch.Tensor]) -> None:
        self.grads = [g.clone() for g in grads]


@pytest.mark.numerics
@pytest.mark.parametrize("multik", [0, 12])
def test_gradients_equal_autograd(multik: int) -> None:
    """MSE + AuxK (+ the Multi-TopK term of CSR, the top 12 latents reconstructing too, weighted 1/8)."""
    n, d, bsz, k, auxk, coef, scale = 50, 12, 16, 4, 8, 1 / 32, 0.7
    gen = torch.Generator().manual_seed(1)
    start = {"w_enc": torch.randn(n, d, generator=gen), "w_dec": F.normalize(torch.randn(n, d, generator=gen), dim=1),
             "b_lat": 0.1 * torch.randn(n, generator=gen), "b_pre": 0.1 * torch.randn(d, generator=gen)}
    batch = torch.randn(bsz, d, generator=gen)
    since = torch.full((n,), 3, dtype=torch.int64)
    since[::3] = 100  # a third of the latents dead before the step
    p = {"k": k, "auxk": auxk, "auxk_coef": coef, "dead_window": 5, "multik": multik, "multik_coef": 1 / 8}
    rec = _Recorder()
    params = {name: t.clone() for name, t in start.items()}
    with torch.no_grad():
        mse, aux = train_module.train_step(torch, F, params, rec, batch, since.clone(), p, scale)

    q = {name: t.clone().requires_grad_() for name, t in start.items()}
    xc = batch - q["b_pre"]
    pre = F.linear(xc, q["w_enc"], q["b_lat"])
    top = torch.topk(pre, k)
    z = torch.zeros_like(pre).scatter(1, top.indices, torch.relu(top.values))
    recon = z @ q["w_dec"] + q["b_pre"]
    loss_mse = ((recon - batch) ** 2).sum(dim=1).mean() * scale
    after = since + bsz
    after[top.indices[top.values > 0]] = 0
    dead = after >= p["dead_window"]
    aux_top = torch.topk(pre.masked_fill(~dead, -math.inf), min(auxk, int(dead.sum())))
    za = torch.zeros_like(pre).scatter(1, aux_top.indices, torch.relu(aux_top.values))
    resid = (batch - recon).detach()
    loss_aux = ((za @ q["w_dec"] - resid) ** 2).sum() / ((resid - resid.mean(dim=0)) ** 2).sum()
    loss = loss_mse + coef * loss_aux
    if multik:
        wide = torch.topk(pre, multik)
        zw = torch.zeros_like(pre).scatter(1, wide.indices, torch.relu(wide.values))
        loss = loss + ((zw @ q["w_dec"] + q["b_pre"] - batch) ** 2).sum(dim=1).mean() * scale / 8
    loss.backward()
    g_dec = q["w_dec"].grad
    w = q["w_dec"].detach()
    g_dec = g_dec - (g_dec * w).sum(dim=1, keepdim=True) * w  # the parallel component is removed
    want = [q["w_enc"].grad, g_dec, q["b_lat"].grad, q["b_pre"].grad]
    assert mse == pytest.approx(float(loss_mse.detach()), rel=1e-5)
    assert aux == pytest.approx(float(loss_aux.detach()), rel=1e-5)
    assert int(dead.sum()) > 0
    for got, ref in zip(rec.grads, want, strict=True):
        np.testing.assert_allclose(got.numpy(), ref.numpy(), atol=1e-5 * float(ref.abs().max()), rtol=0)


@pytest.mark.numerics
def test_adam_equals_torch() -> None:
    gen = torch.Generator().manual_seed(0)
    p_ours = torch.randn(5, 3, generator=gen)
    p_torch = p_ours.clone().requires_grad_()
    ours = train_module.Adam([p_ours], lr=0.01)
    theirs = torch.optim.Adam([p_torch], lr=0.01, eps=train_module.ADAM_EPS)
    for _ in range(5):
        g = torch.randn(5, 3, generator=gen)
        ours.step([g])
        p_torch.grad = g.clone()
        theirs.step()
    np.testing.assert_allclose(p_ours.numpy(), p_torch.detach().numpy(), atol=1e-6)


# -- training ------------------------------------------------------------------------------------


def test_planted_dictionary_small(small_planted) -> None:
    X, atoms, a, b = small_planted
    assert recovered(atoms, a) >= 0.9
    assert recovered(atoms, b) >= 0.9
    np.testing.assert_allclose(np.linalg.norm(a.components_, axis=1), 1.0, atol=1e-5)
    assert sae_metrics(a, X).fvu < 0.1


def test_planted_dictionary_512_atoms_384d() -> None:
    # the goal: 512 unit atoms in 384-d, k = 8, 50,000 rows; >= 90% recovered at cosine >= 0.9
    # (95.5% in about 10 s on a 2-core machine)
    X, atoms = planted(512, 384, 8, 50_000)
    model = SparseAutoencoder(n_latents=512, k=8, epochs=6, batch_size=128, lr=5e-3).fit(X)
    assert recovered(atoms, model) >= 0.9
    assert sae_metrics(model, X).fvu < 0.1


def test_stability(small_planted) -> None:
    _, _, a, b = small_planted
    same = stability(a, a)
    assert same.mean_cosine == pytest.approx(1.0, abs=1e-6) and same.share_matched == 1.0
    np.testing.assert_array_equal(same.cols, np.arange(a.n_latents))
    other = stability(a, b)
    assert isinstance(other, Stability)
    assert other.mean_cosine > 0.85 and other.share_matched > 0.85
    assert sorted(other.cols.tolist()) == list(range(b.n_latents))  # one to one
    d = other.to_dict(per_latent=True)
    assert json.loads(json.dumps(d))["n_matched"] == a.n_latents and len(d["pairs"]) == a.n_latents


def test_deterministic_per_seed() -> None:
    X = np.random.default_rng(0).standard_normal((300, 8))
    one = SparseAutoencoder(n_latents=16, k=3, epochs=2, batch_size=50, seed=7).fit(X)
    two = SparseAutoencoder(n_latents=16, k=3, epochs=2, batch_size=50, seed=7).fit(X)
    three = SparseAutoencoder(n_latents=16, k=3, epochs=2, batch_size=50, seed=8).fit(X)
    np.testing.assert_array_equal(one.components_, two.components_)
    np.testing.assert_array_equal(one.encoder_, two.encoder_)
    assert not np.array_equal(one.components_, three.components_)


def test_dead_latents_are_tracked() -> None:
    rng = np.random.default_rng(0)
    X = np.repeat(rng.standard_normal((4, 6)), 25, axis=0)  # 100 rows, 4 distinct points
    model = SparseAutoencoder(n_latents=256, k=2, epochs=30, batch_size=20, dead_window=500).fit(X)
    assert model.dead_latents_.dtype == bool and model.dead_latents_.shape == (256,)
    assert model.dead_latents_.mean() > 0.5
    m = sae_metrics(model, X)
    assert m.dead_fraction > 0.5
    assert m.dead_fraction_train == pytest.approx(model.dead_latents_.mean())
    assert model.history_[-1]["dead_fraction"] == pytest.approx(model.dead_latents_.mean())
    assert model.history_[-1]["auxk_loss"] > 0  # AuxK ran on the dead ones


def test_history_progress_and_validation() -> None:
    rng = np.random.default_rng(1)
    X, V = rng.standard_normal((200, 5)), rng.standard_normal((50, 5))
    seen: list[tuple[str, int, int]] = []
    model = SparseAutoencoder(n_latents=10, k=2, epochs=3, batch_size=64,
                              progress=lambda *a: seen.append(a)).fit(X, X_val=V)
    assert [h["epoch"] for h in model.history_] == [1, 2, 3]
    assert model.history_[-1]["val_fvu"] == pytest.approx(sae_metrics(model, V).fvu, rel=1e-5)
    assert seen[0] == ("sae", 0, 600) and seen[-1] == ("sae", 600, 600)
    assert model.n_steps_ == 12 and model.fit_seconds_ > 0
    json.dumps(model.history_)


def test_k_above_dimension_is_allowed() -> None:
    X = np.random.default_rng(0).standard_normal((100, 3))
    model = SparseAutoencoder(n_latents=12, k=6, epochs=2, batch_size=32).fit(X)
    assert model.transform(X).getnnz(axis=1).max() <= 6


def test_sklearn_clone_and_params() -> None:
    model = SparseAutoencoder(n_latents=8, k=2, epochs=1)
    twin = clone(model)
    assert twin.get_params() == model.get_params()
    with pytest.raises(NotFittedError, match="not fitted"):
        twin.transform(np.zeros((2, 3)))


# -- transform, inverse, metrics ----------------------------------------------------------------


def test_transform_and_inverse(fitted) -> None:
    X, model = fitted
    codes = model.transform(X)
    assert sp.isspmatrix_csr(codes) and codes.dtype == np.float32 and codes.shape == (len(X), 40)
    assert codes.getnnz(axis=1).max() <= 5 and (codes.data > 0).all()
    np.testing.assert_array_equal(codes.toarray(), model.transform(X, dense=True))
    rec = model.reconstruct(X)
    assert rec.dtype == np.float32
    np.testing.assert_allclose(model.inverse_transform(codes), rec, atol=1e-5)
    np.testing.assert_allclose(model.inverse_transform(codes.toarray()), rec, atol=1e-5)
    np.testing.assert_array_equal(model.fit_transform(X).shape, codes.shape)


@pytest.mark.numerics
def test_metrics_against_formulas(fitted) -> None:
    X, model = fitted
    m = sae_metrics(model, X)
    rec = model.reconstruct(X).astype(np.float64)
    x = X.astype(np.float64)
    assert m.fvu == pytest.approx(((x - rec) ** 2).sum() / ((x - x.mean(axis=0)) ** 2).sum(), rel=1e-5)
    # OpenAI sparse_autoencoder/loss.py normalized_mean_squared_error, written out
    nmse = (((rec - x) ** 2).mean(axis=1) / (x ** 2).mean(axis=1)).mean()
    assert m.nmse == pytest.approx(nmse, rel=1e-5)
    codes = model.transform(X)
    assert m.l0 == pytest.approx(codes.getnnz(axis=1).mean())
    fired = np.asarray((codes != 0).sum(axis=0)).ravel()
    np.testing.assert_allclose(m.density, fired / len(X))
    assert m.dead_fraction == pytest.approx(np.mean(fired == 0))
    d = m.to_dict(per_latent=True)
    hist = d["density_histogram"]
    assert sum(hist["counts"]) + hist["never_fired"] == model.n_latents
    assert len(hist["log10_edges"]) == len(hist["counts"]) + 1 and hist["log10_edges"][-1] == 0.0
    assert hist["log10_edges"][0] <= math.log10(1 / len(X))
    assert isinstance(m, SaeMetrics) and json.loads(json.dumps(d))["k"] == 5


@pytest.mark.numerics
def test_top_items_against_brute_force(fitted) -> None:
    X, model = fitted
    codes = model.transform(X, dense=True)
    latents = [0, 7, 39]
    got = top_items(model, X, latents, n=6)
    for item, j in zip(got, latents, strict=True):
        order = np.lexsort((np.arange(len(X)), -codes[:, j].astype(np.float64)))
        want = [r for r in order[:6] if codes[r, j] > 0]
        assert item.latent == j and item.rows.tolist() == want
        np.testing.assert_array_equal(item.activations, codes[want, j])
    single = top_items(model, X, 7, n=6)
    assert single.rows.tolist() == got[1].rows.tolist()
    assert single.to_dict()["latent"] == 7


# -- matching, pursuit, attribution -------------------------------------------------------------


def test_match_latents_recovers_a_permutation() -> None:
    rng = np.random.default_rng(0)
    D = rng.standard_normal((30, 8))
    perm = rng.permutation(30)
    m = match_latents(D, 2.0 * D[perm])
    assert isinstance(m, LatentMatch)
    np.testing.assert_array_equal(perm[m.best], np.arange(30))
    np.testing.assert_allclose(m.cosine, 1.0)
    assert m.mutual.all()
    # against a smaller dictionary, several latents share one match, and not every match is mutual
    m2 = match_latents(D, D[:5])
    assert m2.best.max() < 5 and not m2.mutual.all()
    brute = D / np.linalg.norm(D, axis=1, keepdims=True) @ (D[:5] / np.linalg.norm(D[:5], axis=1, keepdims=True)).T
    np.testing.assert_array_equal(m2.best, brute.argmax(axis=1))
    assert m2.to_dict()["n"] == 30


def test_matching_pursuit_properties(fitted) -> None:
    X, model = fitted
    mp = matching_pursuit(X, model, k=5)
    assert sp.isspmatrix_csr(mp.codes) and mp.codes.getnnz(axis=1).max() <= 5
    assert (np.diff(mp.residual_norms, axis=1) <= 1e-9).all()
    rec = mp.codes.toarray().astype(np.float64) @ model.components_.astype(np.float64) + model.pre_bias_
    np.testing.assert_allclose(np.linalg.norm(X - rec, axis=1), mp.residual_norms[:, -1], atol=1e-4)
    pos = matching_pursuit(X, model, k=5, positive=True, dense=True)
    assert (pos.codes >= 0).all() and ((pos.codes != 0).sum(axis=1) <= 5).all()
    assert (np.diff(pos.residual_norms, axis=1) <= 1e-9).all()


def test_matching_pursuit_recovers_orthogonal_codes() -> None:
    rng = np.random.default_rng(0)
    Q, _ = np.linalg.qr(rng.standard_normal((20, 20)))
    codes = np.zeros((50, 20))
    for row in codes:
        row[rng.choice(20, 3, replace=False)] = rng.uniform(1, 2, 3)
    mp = matching_pursuit(codes @ Q.T, Q.T, k=3, dense=True)  # atoms are the columns of Q
    np.testing.assert_allclose(mp.codes, codes, atol=1e-5)
    np.testing.assert_allclose(mp.residual_norms[:, -1], 0.0, atol=1e-9)


@pytest.mark.numerics
def test_matching_pursuit_without_gram_matches() -> None:
    rng = np.random.default_rng(2)
    D, X = rng.standard_normal((12, 6)), rng.standard_normal((20, 6))
    with_gram = matching_pursuit(X, D, k=4)
    old = pursuit_module._GRAM_LIMIT
    pursuit_module._GRAM_LIMIT = 0
    try:
        without = matching_pursuit(X, D, k=4)
    finally:
        pursuit_module._GRAM_LIMIT = old
    np.testing.assert_allclose(with_gram.codes.toarray(), without.codes.toarray(), atol=1e-6)


def test_attribution_sums_to_the_cosine(fitted) -> None:
    X, model = fitted
    rec = model.reconstruct(X[:6]).astype(np.float64)
    for i, j in [(0, 1), (2, 3), (4, 4), (5, 0)]:
        r = attribute_pair(model, X[i], X[j])
        cos = rec[i] @ rec[j] / (np.linalg.norm(rec[i]) * np.linalg.norm(rec[j]))
        assert r.cosine == pytest.approx(cos, abs=1e-6)
        assert r.contributions.sum() + r.bias == pytest.approx(cos, abs=1e-6)
        assert (np.diff(r.contributions) <= 0).all()
        active = set(np.flatnonzero(model.transform(X[[i, j]], dense=True).any(axis=0)).tolist())
        assert set(r.latents.tolist()) == active
    d = attribute_pair(model, X[0], X[1]).to_dict()
    assert json.loads(json.dumps(d))["cosine"] == pytest.approx(d["cosine"])


def test_attribution_of_orthogonal_latents() -> None:
    # disjoint latents on orthogonal atoms and no bias: the cosine and every contribution are 0
    model = with_weights(4, 4, 1, tied=True)
    model.components_ = np.eye(4, dtype=np.float32)
    model.encoder_ = np.eye(4, dtype=np.float32)
    model.latent_bias_[:] = 0
    model.pre_bias_[:] = 0
    r = attribute_pair(model, [2.0, 0, 0, 0], [0, 3.0, 0, 0])
    assert r.cosine == 0.0 and r.bias == 0.0 and np.allclose(r.contributions, 0.0)
    same = attribute_pair(model, [2.0, 0, 0, 0], [5.0, 0, 0, 0])
    assert same.cosine == pytest.approx(1.0) and same.latents.tolist() == [0]


# -- bad input: one line each ---------------------------------------------------------------------


def _one_line(excinfo: pytest.ExceptionInfo) -> str:
    msg = str(excinfo.value)
    assert "\n" not in msg and msg
    return msg


@pytest.mark.parametrize(("params", "match"), [
    ({"n_latents": 4, "k": 5}, "k must be at most n_latents"),
    ({"n_latents": 0, "k": 1}, "n_latents must be a positive integer"),
    ({"n_latents": 4, "k": 0}, "k must be a positive integer"),
    ({"n_latents": 4, "k": 2, "epochs": 0}, "epochs"),
    ({"n_latents": 4, "k": 2, "lr": -1.0}, "lr must be a positive number"),
    ({"n_latents": 4, "k": 2, "lr": float("nan")}, "lr must be a positive number"),
    ({"n_latents": 4, "k": 2, "auxk": 9}, "auxk must be at most"),
    ({"n_latents": 4, "k": 2, "lr_decay": 1.5}, "lr_decay"),
    ({"n_latents": 4, "k": 2, "pre_bias_init": "mode"}, "pre_bias_init"),
    ({"n_latents": 4, "k": 2, "batch_size": True}, "batch_size"),
])
def test_bad_parameters(params: dict, match: str) -> None:
    with pytest.raises(InputError, match=match) as e:
        SparseAutoencoder(**params).fit(np.ones((10, 3)))
    _one_line(e)


def test_bad_data(fitted) -> None:
    X, model = fitted
    bad = X.copy()
    bad[7, 2] = np.nan
    with pytest.raises(InputError, match=r"NaN or infinite values \(row 7\)") as e:
        SparseAutoencoder(n_latents=4, k=2).fit(bad)
    _one_line(e)
    with pytest.raises(InputError, match="fitted on 10 dimensions; X has 9") as e:
        model.transform(X[:, :9])
    _one_line(e)
    with pytest.raises(InputError, match="NaN") as e:
        model.transform(bad)
    with pytest.raises(InputError, match="2-d array") as e:
        model.reconstruct(X[0])
    with pytest.raises(InputError, match="X_val") as e:
        SparseAutoencoder(n_latents=4, k=2, epochs=1).fit(X, X_val=X[:, :3])
    with pytest.raises(InputError, match="40 columns") as e:
        model.inverse_transform(np.zeros((2, 39)))
    _one_line(e)
    with pytest.raises(InputError, match="latent must be an integer in") as e:
        top_items(model, X, 40)
    with pytest.raises(InputError, match="one vector of length 10") as e:
        attribute_pair(model, X[:2], X[0])
    with pytest.raises(InputError, match="dimensions") as e:
        match_latents(model, np.ones((3, 4)))
    with pytest.raises(InputError, match="zero row") as e:
        stability(np.eye(3), np.zeros((2, 3)))
    with pytest.raises(InputError, match="k must be a positive integer") as e:
        matching_pursuit(X, model, k=0)
    with pytest.raises(InputError, match="must be a SparseAutoencoder") as e:
        sae_metrics("model", X)  # type: ignore[arg-type]
    _one_line(e)
