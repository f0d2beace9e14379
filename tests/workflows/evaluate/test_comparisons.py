"""Several models in one run (``run(encoder=[...], space=[...])``) and comparisons of saved results: on a seeded
subset of the real STS-B test split, with the static model and two stored spaces made from its vectors (noisier,
and cut to 8 principal components), checked against scipy's Spearman, Holm's procedure and a plain numpy
randomization loop."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from repspace import InputError
from repspace.engines.encoders import get_encoder
from repspace.engines.eval import TaskResult
from repspace.engines.eval.uncertainty import holm
from repspace.store import Store
from repspace.workflows.evaluate import compare_saved, run

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)

#: Randomizations of both tests (ours and the loop's).
PERMUTATIONS = 2000


@pytest.fixture(scope="module")
def stsb(tmp_path_factory, shared_data) -> tuple[Path, Store]:
    """300 seeded pairs of STS-B test, and a store with two spaces over their sentences."""
    folder = tmp_path_factory.mktemp("stsb")
    rows = list(csv.reader((shared_data / "stsb" / "stsb-en-test.csv").open(newline="", encoding="utf-8")))
    pick = np.sort(np.random.default_rng(0).choice(len(rows), 300, replace=False))
    path = folder / "stsb-test-300.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([rows[i] for i in pick])
    texts = list(dict.fromkeys([rows[i][0] for i in pick] + [rows[i][1] for i in pick]))
    v = get_encoder("static").encode(texts)
    centred = v - v.mean(axis=0)
    store = Store(folder / "s.db")
    for name, x in (("noisy", v + np.random.default_rng(1).normal(0, 0.03, v.shape)),
                    ("pca8", centred @ np.linalg.svd(centred, full_matrices=False)[2][:8].T)):
        store.create_space(name, dim=x.shape[1]).add([f"t{i}" for i in range(len(texts))], x.astype(np.float32),
                                                     texts=texts)
    yield path, store
    store.close()


def _loop_p_value(gold: np.ndarray, a: np.ndarray, b: np.ndarray, n: int, seed: int) -> float:
    """The paired randomization test written out: swap each pair's (ranked) scores between the models at random,
    count differences of Spearman at least as large as the observed one."""
    ra, rb = stats.rankdata(a), stats.rankdata(b)
    observed = abs(stats.spearmanr(gold, ra).statistic - stats.spearmanr(gold, rb).statistic)
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(n):
        swap = rng.random(len(gold)) < 0.5
        x, y = np.where(swap, rb, ra), np.where(swap, ra, rb)
        hits += abs(stats.spearmanr(gold, x).statistic - stats.spearmanr(gold, y).statistic) >= observed - 1e-12
    return (hits + 1) / (n + 1)


def test_three_models_on_stsb_are_compared_pair_by_pair(stsb):
    path, store = stsb
    report = run("sts", path, store=store, encoder="static", space=["noisy", "pca8"], bootstrap=PERMUTATIONS,
                 seed=4)
    names = [r.info["subject"] for r in report.results]
    assert names == ["static", "space noisy", "space pca8"]
    cs = report.comparisons
    assert [(c.a, c.b) for c in cs] == [(names[0], names[1]), (names[0], names[2]), (names[1], names[2])]
    main = {r.info["subject"]: r.main_score for r in report.results}
    gold = report.results[0].units.array("gold")
    for c in cs:
        assert c.difference == pytest.approx(main[c.a] - main[c.b], abs=1e-12)
        assert c.ci_low <= c.difference <= c.ci_high
    # the main scores are scipy's Spearman of the units
    for r in report.results:
        assert r.main_score == pytest.approx(stats.spearmanr(gold, r.units.array("cosine")).statistic, abs=1e-12)
    np.testing.assert_array_equal([c.p_value for c in cs], holm([c.p_raw for c in cs]))
    # the static model against its noisier copy: a close call, checked against a plain randomization loop
    ours = cs[0].p_raw
    theirs = _loop_p_value(gold, report.results[0].units.array("cosine"), report.results[1].units.array("cosine"),
                           PERMUTATIONS, seed=99)
    assert 0.005 < theirs < 0.2  # not at the floor of 1 / 2001: the check has something to check
    tolerance = 4 * math.sqrt(2 * theirs * (1 - theirs) / PERMUTATIONS) + 2 / PERMUTATIONS
    assert abs(ours - theirs) <= tolerance, (ours, theirs)
    d = report.to_dict()
    assert list(d) == ["results", "comparisons"] and len(d["results"]) == 3
    assert list(d["comparisons"][0]) == ["a", "b", "difference", "ci_low", "ci_high", "p_value", "p_raw"]
    again = run("sts", path, store=store, encoder="static", space=["noisy", "pca8"], bootstrap=PERMUTATIONS, seed=4)
    assert again.comparisons == cs  # seeded


def test_one_model_has_no_comparisons_and_bootstrap_0_gives_differences_alone(stsb):
    path, store = stsb
    one = run("sts", path, store=store, space="noisy", bootstrap=0)
    assert one.comparisons == [] and isinstance(one.to_dict(), list)
    two = run("sts", path, store=store, space=["noisy", "pca8"], bootstrap=0)
    (c,) = two.comparisons
    assert (c.ci_low, c.ci_high, c.p_value, c.p_raw) == (None, None, None, None)
    assert c.difference == pytest.approx(two.results[0].main_score - two.results[1].main_score, abs=1e-12)


def test_saved_results_compare_as_the_live_run_did(stsb, tmp_path):
    path, store = stsb
    live = run("sts", path, store=store, encoder="static", space="pca8", bootstrap=300, seed=2, save=True)
    saved = compare_saved(store, live.saved, n_resamples=300, seed=2)
    assert saved.comparisons == live.comparisons
    assert [r.to_dict() for r in saved.results] == [r.to_dict() for r in live.results]
    assert compare_saved(store, task="sts", n_resamples=300, seed=2).comparisons == live.comparisons


@pytest.mark.parametrize("kwargs, message", [
    ({"encoder": ["nope:a", "nope:b"], "dims": "16"}, "drop --dims/--precision"),
    ({"encoder": ["nope:a", "nope:b"], "layer": "all"}, "one layer of each"),
    ({"encoder": ["nope:a", "nope:a"]}, "nope:a is given twice"),
])
def test_several_models_refuse_what_does_not_combine_before_any_model_loads(tmp_path, kwargs, message):
    path = tmp_path / "p.csv"
    path.write_text("a cat,a kitten,5\na car,a dog,0\n")
    with pytest.raises(InputError, match=message) as info:
        run("sts", path, **kwargs)
    assert "\n" not in str(info.value)
    with pytest.raises(InputError, match="clustering has none"):
        run("clustering", None, encoder=["nope:a", "nope:b"])


def test_saved_results_that_cannot_be_compared_are_one_clear_line(tmp_path, shared_data):
    store = Store(tmp_path / "s.db")
    with pytest.raises(InputError, match="no saved results to compare"):
        compare_saved(store)
    path = tmp_path / "stsb-head.csv"
    path.write_text("\n".join((shared_data / "stsb" / "stsb-en-test.csv").read_text(encoding="utf-8")
                              .splitlines()[:60]) + "\n", encoding="utf-8")
    (first,) = run("sts", path, store=store, encoder="static", save=True, bootstrap=0).saved
    words = shared_data / "word-sim" / "EN-RG-65.txt"
    (other,) = run("wordsim", words, store=store, encoder="static", save=True, bootstrap=0).saved
    old = run("sts", path, encoder="static", bootstrap=0).results[0].with_units(None)  # as saved before units
    old_id = store.save_result(old.to_dict(), subject="static")
    cases = [
        ({"ids": [first]}, "comparing needs at least 2 models, got 1"),
        ({"ids": [first, 99]}, "no saved result with id 99"),
        ({"ids": [first, first]}, "repeated"),
        ({}, r"saved results of 2 tasks \(sts:stsb-head \(test\), wordsim:EN-RG-65 \(test\)\)"),
        ({"ids": [first, other]}, "results of different tasks cannot be compared"),
        ({"ids": [first, old_id]}, f"saved result #{old_id} carries no per-unit scores"),
    ]
    for kwargs, message in cases:
        with pytest.raises(InputError, match=message) as info:
            compare_saved(store, **kwargs)
        assert "\n" not in str(info.value)
    assert isinstance(TaskResult.from_dict(store.results()[0].result), TaskResult)
    store.close()
