"""Heads on frozen spaces: Matryoshka head and pair adapter on synthetic pairs (determinism, learning, errors)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.learn.heads import (
    HeadResult,
    distance_weights,
    pair_data,
    pair_spearman,
    pca_rotation,
    train_matryoshka_head,
    train_pair_adapter,
)

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


def spread_pairs(n: int, *, d: int = 16, signal: int = 4, nuisance_std: float = 1.2, seed: int = 0):
    """Pairs whose similarity lives in ``signal`` latent dimensions, rotated so it is spread over all ``d``.

    The other ``d - signal`` latent dimensions are independent noise on each side with a larger variance,
    so the plain prefixes and PCA's top directions both see mostly noise. Score = the cosine of the two
    signal parts, mapped to 0-5 (a head that keeps exactly the signal subspace ranks the pairs perfectly).
    """
    R, _ = np.linalg.qr(np.random.default_rng(1234).normal(size=(d, d)))  # the same space for every seed
    rng = np.random.default_rng(seed)
    c = rng.uniform(0, 1, size=n)
    sa = rng.normal(size=(n, signal))
    sb = c[:, None] * sa + np.sqrt(1 - c[:, None] ** 2) * rng.normal(size=(n, signal))
    na, nb = (nuisance_std * rng.normal(size=(n, d - signal)) for _ in range(2))
    A = np.hstack([sa, na]) @ R
    B = np.hstack([sb, nb]) @ R
    score = np.einsum("ij,ij->i", sa, sb) / np.linalg.norm(sa, axis=1) / np.linalg.norm(sb, axis=1)
    return A.astype(np.float32), B.astype(np.float32), 2.5 * (score + 1.0)


#: A small valid problem that the error cases spoil one argument at a time.
GOOD = spread_pairs(20, d=8, seed=3)


@pytest.fixture(scope="module")
def spread():
    return spread_pairs(1200, seed=0), spread_pairs(400, seed=0 + 1), spread_pairs(400, seed=2)


def prefix_spearman(head: HeadResult, data, k: int) -> float:
    A, B, s = data
    return pair_spearman(head.transform(A, dims=k), head.transform(B, dims=k), s)


def test_matryoshka_head_moves_a_spread_signal_into_the_first_dimensions(spread):
    train, dev, test = spread
    # the starting point (PCA-4 of the training vectors) sees mostly the high-variance noise
    V, b0 = pca_rotation(pair_data(*train))
    before = pair_spearman(test[0] @ V[:, :4] + b0[:4], test[1] @ V[:, :4] + b0[:4], test[2])
    plain = pair_spearman(test[0][:, :4], test[1][:, :4], test[2])
    head = train_matryoshka_head(*train, dims=(4, 8, None), dev=dev, epochs=12, lr=3e-2, seed=0)
    after = prefix_spearman(head, test, 4)
    assert before < 0.3 and plain < 0.3
    assert after > 0.7 and after > before + 0.4
    assert prefix_spearman(head, test, 16) > pair_spearman(*test) + 0.2
    assert head.recipe["selected_by"] == "dev" and head.best_epoch > 0
    # epoch 0 is the PCA start: its dev scores are PCA-k's
    start = head.history[0]["dev_spearman_by_dim"]
    assert start[4] == pytest.approx(pair_spearman(dev[0] @ V[:, :4] + b0[:4], dev[1] @ V[:, :4] + b0[:4], dev[2]))
    assert head.history[0]["train_loss"] is None
    assert head.history[head.best_epoch]["dev_spearman"] == max(h["dev_spearman"] for h in head.history)


def test_pca_rotation_is_sklearn_pca_up_to_sign(spread):
    from sklearn.decomposition import PCA

    A, B, _ = spread[0]
    V, b = pca_rotation(pair_data(A, B, np.arange(len(A))))
    X = np.concatenate([A, B]).astype(np.float64)
    pca = PCA().fit(X)
    signs = np.sign(np.sum(V * pca.components_.T, axis=0))
    np.testing.assert_allclose(V * signs, pca.components_.T, atol=1e-6)
    np.testing.assert_allclose(b, -X.mean(axis=0) @ V, atol=1e-10)
    assert np.all(V[np.abs(V).argmax(axis=0), np.arange(16)] > 0)


def test_same_seed_one_thread_is_bit_identical_and_another_seed_is_not(spread):
    train, dev, _ = spread
    kw = {"dims": (4, None), "epochs": 2, "dev": dev, "threads": 1}
    a = train_matryoshka_head(*train, seed=3, **kw)
    b = train_matryoshka_head(*train, seed=3, **kw)
    c = train_matryoshka_head(*train, seed=4, **kw)
    assert a.W.tobytes() == b.W.tobytes() and a.b.tobytes() == b.b.tobytes()
    assert a.history == b.history and a.recipe == b.recipe
    assert not np.array_equal(a.W, c.W)
    for loss in ("margin", "contrastive"):
        x = train_pair_adapter(*train, loss=loss, positive_threshold=3.5, epochs=2, seed=9)
        y = train_pair_adapter(*train, loss=loss, positive_threshold=3.5, epochs=2, seed=9)
        assert x.W.tobytes() == y.W.tobytes() and x.b.tobytes() == y.b.tobytes()
        assert x.recipe["deterministic"] is True


def test_training_leaves_torch_global_state_alone(spread):
    import torch

    train = spread[0]
    threads, det = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    rng_state = torch.random.get_rng_state().clone()
    train_pair_adapter(*train, loss="margin", positive_threshold=3.5, epochs=1, threads=1)
    train_matryoshka_head(*train, dims=(4, None), epochs=1, threads=1)
    assert torch.get_num_threads() == threads
    assert torch.are_deterministic_algorithms_enabled() == det
    assert torch.equal(torch.random.get_rng_state(), rng_state)


@pytest.mark.parametrize("loss", ["contrastive", "margin"])
def test_pair_adapter_starts_at_identity_and_its_loss_decreases(spread, loss):
    train, dev, _ = spread
    seen = []
    head = train_pair_adapter(*train, loss=loss, positive_threshold=3.5, epochs=6, lr=3e-3, seed=1,
                              progress=lambda *a: seen.append(a))
    losses = [h["train_loss"] for h in head.history[1:]]
    assert len(losses) == 6 and losses[-1] < losses[0]
    assert head.W.shape == (16, 16) and head.b.shape == (16,) and head.W.dtype == np.float64
    assert seen[0] == ("train", 0, 6) and seen[-1] == ("train", 6, 6)
    assert head.recipe["selected_by"] == "last epoch" and head.best_epoch == 6
    assert not head.W.flags.writeable
    # with a dev set, epoch 0 is the identity map: the dev score of the raw vectors
    with_dev = train_pair_adapter(*train, loss=loss, positive_threshold=3.5, epochs=1, dev=dev)
    assert with_dev.history[0]["dev_spearman"] == pytest.approx(pair_spearman(*dev))
    if loss == "margin":
        assert "beta" in head.history[-1] and head.recipe["params"]["alpha"] == 0.2
        assert head.recipe["n_positive"] == int((train[2] >= 3.5).sum())


def test_pair_adapter_improves_the_spread_space(spread):
    train, dev, test = spread
    head = train_pair_adapter(*train, loss="contrastive", positive_threshold=4.0, epochs=20, lr=1e-2, dev=dev)
    assert prefix_spearman(head, test, 16) > pair_spearman(*test) + 0.2


def test_early_stopping_returns_the_best_epoch(spread):
    train, dev, _ = spread
    # a learning rate so large that the dev score peaks after one epoch, then falls
    seen = []
    head = train_pair_adapter(*train, loss="contrastive", positive_threshold=3.5, epochs=10, lr=1.0, patience=2,
                              dev=dev, progress=lambda *a: seen.append(a))
    assert head.recipe["epochs_run"] < 10 and head.recipe["selected_by"] == "dev"
    assert seen[-1] == ("train", 10, 10)  # the bar completes when training stops early
    best = head.best_epoch
    assert best < head.recipe["epochs_run"]
    assert head.history[best]["dev_spearman"] == max(h["dev_spearman"] for h in head.history)
    # the map returned is the best epoch's, not the last one's
    assert pair_spearman(head.transform(dev[0]), head.transform(dev[1]), dev[2]) == pytest.approx(
        head.history[best]["dev_spearman"], abs=1e-6)


def test_recipe_and_result(spread):
    import torch

    train, dev, _ = spread
    head = train_matryoshka_head(pair_data(*train), dims=(4, 8, None), dev=dev, epochs=1, weight_decay=0.5,
                                 seed=11)
    r = head.recipe
    assert r["method"] == "matryoshka" and r["dims"] == [4, 8, 16] and r["threads"] == 1
    assert r["deterministic"] is True and r["n_pairs"] == 1200 and r["d"] == 16 and r["n_dev_pairs"] == 400
    assert r["train_fingerprint"] == pair_data(*train).fingerprint != r["dev_fingerprint"]
    assert r["torch_version"] == torch.__version__ and r["numpy_version"] == np.__version__
    assert {k: r["params"][k] for k in ("loss", "init", "seed", "weight_decay", "scale", "lr", "batch_size")} == {
        "loss": "cosent", "init": "pca", "seed": 11, "weight_decay": 0.5, "scale": 10.0, "lr": 1e-3,
        "batch_size": 64}
    json.dumps(head.to_dict())
    two = train_matryoshka_head(*GOOD, epochs=1, threads=2).recipe
    assert two["threads"] == 2 and two["deterministic"] is False
    assert "matryoshka" in repr(head) and "16 -> 16" in repr(head)
    z = head.transform(train[0], dims=4)
    assert z.shape == (1200, 4) and z.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(z, axis=1), 1.0, atol=1e-5)
    raw = head.transform(train[0][:3], normalize=False)
    np.testing.assert_allclose(raw, train[0][:3].astype(np.float64) @ head.W + head.b, rtol=1e-5, atol=1e-5)


def test_cosine_loss_and_identity_init(spread):
    train, dev, test = spread
    head = train_matryoshka_head(*train, dims=(4, None), loss="cosine", init="identity", epochs=10, lr=1e-2,
                                 dev=dev)
    assert head.recipe["params"]["loss"] == "cosine" and head.recipe["params"]["init"] == "identity"
    assert head.history[0]["dev_spearman_by_dim"][4] == pytest.approx(
        pair_spearman(dev[0][:, :4], dev[1][:, :4], dev[2]), abs=1e-6)
    assert prefix_spearman(head, test, 4) > 0.6


def test_default_dims_follow_the_dimension():
    A, B, s = spread_pairs(64, d=40, seed=5)
    head = train_matryoshka_head(A, B, s, epochs=1)
    assert head.recipe["dims"] == [32, 40]


def test_distance_weights_follow_wu_et_al():
    import torch

    dist = torch.tensor([[0.2, 0.4, 0.8, 1.0, 1.2, 1.5]], dtype=torch.float64)
    mask = torch.ones_like(dist, dtype=torch.bool)
    w = distance_weights(dist, 8, mask)[0]
    n = 8.0

    def inv_q(d):
        return d ** (2 - n) * (1 - d * d / 4) ** ((3 - n) / 2)

    expected = torch.tensor([inv_q(0.5), inv_q(0.5), inv_q(0.8), inv_q(1.0), inv_q(1.2), 0.0], dtype=torch.float64)
    torch.testing.assert_close(w / w.sum(), expected / expected.sum())
    # masked candidates get nothing; a row with nothing within 1.4 draws uniformly among its mask
    mask2 = torch.tensor([[False, True, True, True, True, True]])
    assert distance_weights(dist, 8, mask2)[0, 0] == 0
    far = torch.tensor([[1.5, 1.6, 1.7]], dtype=torch.float64)
    torch.testing.assert_close(distance_weights(far, 8, torch.tensor([[True, False, True]]))[0],
                               torch.tensor([1.0, 0.0, 1.0], dtype=torch.float64))


@pytest.mark.parametrize(("call", "message"), [
    (lambda: train_matryoshka_head(GOOD[0], GOOD[1][:, :4], GOOD[2]), r"A has shape \(20, 8\) and B \(20, 4\)"),
    (lambda: train_matryoshka_head(GOOD[0], GOOD[1], GOOD[2][:5]), "scores must be a 1-d array of 20 numbers"),
    (lambda: train_matryoshka_head(GOOD[0][:1], GOOD[1][:1], GOOD[2][:1]), "need at least 2 pairs, got 1"),
    (lambda: train_matryoshka_head(np.where(np.eye(20, 8) > 0, np.nan, GOOD[0]), GOOD[1], GOOD[2]),
     "A has NaN or infinite values"),
    (lambda: train_matryoshka_head(GOOD[0], GOOD[1], np.r_[np.nan, GOOD[2][1:]]), "scores has NaN"),
    (lambda: train_matryoshka_head(*GOOD, dims=(4, 16)), "dims: 16 is larger than the 8 dimensions"),
    (lambda: train_matryoshka_head(*GOOD, dims=(0, 4)), "each of dims must be a positive integer"),
    (lambda: train_matryoshka_head(*GOOD, dims=(4, None), dim_weights=[1.0]), "dim_weights must give 2"),
    (lambda: train_matryoshka_head(GOOD[0], GOOD[1], np.ones(20)), "every training score is the same"),
    (lambda: train_matryoshka_head(*GOOD, init="random"), "init must be one of pca, identity"),
    (lambda: train_matryoshka_head(*GOOD, loss="mse"), "loss must be one of cosent, cosine"),
    (lambda: train_matryoshka_head(*GOOD, seed=-1), "seed must be an integer"),
    (lambda: train_matryoshka_head(*GOOD, threads=0), "threads must be a positive integer"),
    (lambda: train_matryoshka_head(*GOOD, lr=0), "lr must be a positive number"),
    (lambda: train_matryoshka_head(*GOOD, epochs=0), "epochs must be a positive integer"),
    (lambda: train_matryoshka_head(*GOOD, dev=(GOOD[0][:, :4], GOOD[1][:, :4], GOOD[2])),
     "dev has 4 dimensions; the training pairs have 8"),
    (lambda: train_matryoshka_head(*GOOD, dev=GOOD[0]), "dev must be a PairData or a tuple"),
    (lambda: train_matryoshka_head(GOOD[0], GOOD[1]), "give A, B and scores"),
    (lambda: train_pair_adapter(*GOOD, loss="triplet"), "loss must be one of contrastive, margin"),
    (lambda: train_pair_adapter(*GOOD, loss="margin", positive_threshold=9.0), "no training pair scores >= "),
    (lambda: train_pair_adapter(*GOOD, loss="margin", negative_threshold=4.5), "negative_threshold .* below"),
    (lambda: train_pair_adapter(*GOOD, positive_threshold=-1.0), "must be above the lowest training score"),
    (lambda: train_pair_adapter(*GOOD, margin=-1.0), "margin must be a positive number"),
])
def test_bad_input_is_one_input_error_line(call, message):
    with pytest.raises(InputError, match=message) as info:
        call()
    assert "\n" not in str(info.value)


def test_transform_checks():
    head = train_matryoshka_head(*GOOD, epochs=1)
    with pytest.raises(InputError, match="the head maps 8 dimensions; X has 4"):
        head.transform(GOOD[0][:, :4])
    with pytest.raises(InputError, match="dims must be at most 8, not 9"):
        head.transform(GOOD[0], dims=9)
