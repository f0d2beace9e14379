"""Set queries over stored spaces (:func:`repspace.workflows.search.set_search.set_search`) against a brute-force
numpy computation on real GloVe vectors: exact, HNSW, filtered, and on an l2 space; the analogy check; the
refusals (one line each, before the store is read)."""

from __future__ import annotations

import numpy as np
import pytest
from _data_subsets import glove_words

from repspace import Store
from repspace.core.errors import InputError, NotFoundError
from repspace.workflows.search.set_request import SetQuery
from repspace.workflows.search.set_search import set_search

pytestmark = pytest.mark.numerics

#: GloVe words in the space (the most frequent), and a tolerance for scores computed from float32 unit vectors:
#: each cosine is off by at most about dim * 2**-24 (3e-6 for 50 dimensions), times at most one per example.
N_WORDS, DIM = 20_000, 50
TOL = 1e-5
QUERIES = [(["king", "woman"], ["man"]), (["paris", "germany"], ["france"]), (["music"], []),
           ([], ["the", "of"]), (["walking", "swam"], ["walked"])]


@pytest.fixture(scope="module")
def glove(tmp_path_factory):
    ids, x = glove_words(N_WORDS)
    store = Store(tmp_path_factory.mktemp("sets") / "s.db")
    meta = [{"len": len(w)} for w in ids]
    store.create_space("glove", dim=DIM, metric="cosine").add(ids, x, metadata=meta)
    store.create_space("glove_l2", dim=DIM, metric="l2").add(ids[:3000], x[:3000], metadata=meta[:3000])
    yield store, ids, x
    store.close()


def _brute(ids: list[str], x: np.ndarray, pos: list[str], neg: list[str], keep: np.ndarray | None = None):
    """Σ cos(x, b) - Σ cos(x, c) for every word, in float64 from the raw vectors; examples (and rows not kept)
    at -inf."""
    row = {w: i for i, w in enumerate(ids)}
    u = x.astype(np.float64) / np.linalg.norm(x.astype(np.float64), axis=1, keepdims=True)
    s = sum((u @ u[row[w]] for w in pos), np.zeros(len(ids))) - sum((u @ u[row[w]] for w in neg), np.zeros(len(ids)))
    s[[row[w] for w in pos + neg]] = -np.inf
    if keep is not None:
        s[~keep] = -np.inf
    return s


def _check_exact(hits, ids, s, k) -> None:
    """The hits' scores are the brute-force scores of those words, and the best k of them (ties within TOL)."""
    row = {w: i for i, w in enumerate(ids)}
    got = np.array([h.score for h in hits])
    np.testing.assert_allclose(got, s[[row[h.id] for h in hits]], rtol=0, atol=TOL)
    np.testing.assert_allclose(got, np.sort(s)[::-1][:k], rtol=0, atol=TOL)


@pytest.mark.parametrize("pos, neg", QUERIES)
def test_exact_set_search_equals_brute_force(glove, pos, neg) -> None:
    store, ids, x = glove
    res = set_search(store.space("glove"), all_of=pos, none_of=neg, k=10, method="exact")
    assert len(res) == 10 and not {h.id for h in res} & set(pos + neg)
    _check_exact(res.hits, ids, _brute(ids, x, pos, neg), 10)
    assert res.plan.method == "exact" and res.plan.reason.startswith("SetCSE: summed cosine")


def test_analogies_rank_the_answer_first(glove) -> None:
    """king + woman - man -> queen, paris + germany - france -> berlin (3CosAdd, which the series is)."""
    sp = glove[0].space("glove")
    assert set_search(sp, all_of=["king", "woman"], none_of=["man"], k=1)[0].id == "queen"
    assert set_search(sp, all_of=["paris", "germany"], none_of=["france"], k=1)[0].id == "berlin"


def test_hnsw_and_a_filter(glove) -> None:
    store, ids, x = glove
    sp = store.space("glove")
    pos, neg = ["king", "woman"], ["man"]
    s = _brute(ids, x, pos, neg)
    top = set(np.argsort(-s)[:10].tolist())
    res = set_search(sp, SetQuery.of(pos, neg, k=10, method="hnsw"))
    assert res.plan.method == "hnsw"
    found = {ids.index(h.id) for h in res}
    assert len(found & top) >= 9, (found, top)  # recall@10 of the exact answer
    long_words = np.array([len(w) >= 6 for w in ids])
    res = set_search(sp, all_of=pos, none_of=neg, k=10, where="len >= 6", method="exact")
    assert all(len(h.id) >= 6 for h in res)
    _check_exact(res.hits, ids, _brute(ids, x, pos, neg, keep=long_words), 10)


def test_an_l2_space_scores_cosine_exactly(glove) -> None:
    store, ids, x = glove
    sp = store.space("glove_l2")
    res = set_search(sp, all_of=["king", "woman"], none_of=["man"], k=10)
    _check_exact(res.hits, ids[:3000], _brute(ids[:3000], x[:3000], ["king", "woman"], ["man"]), 10)
    assert res.plan.method == "exact" and "l2 space" in res.plan.reason
    with pytest.raises(InputError, match="needs a cosine space"):
        set_search(sp, all_of=["king"], method="hnsw")


@pytest.mark.parametrize("kwargs, error, fragment", [
    ({}, InputError, "at least one example"),
    ({"all_of": ["king"], "none_of": ["king"]}, InputError, "in both all_of and none_of"),
    ({"all_of": ["king", "king"]}, InputError, "twice in all_of"),
    ({"all_of": "king"}, InputError, "not a string"),
    ({"all_of": ["king"], "k": 0}, InputError, "k must be"),
    ({"all_of": ["king"], "method": "exact", "index": "hnsw32"}, InputError, "not both"),
    ({"all_of": ["king"], "where": "len >"}, InputError, "filter"),
    ({"all_of": ["king", "no-such-word-xyz"]}, NotFoundError, "no-such-word-xyz"),
    ({"all_of": ["king"], "colour": "red"}, TypeError, "colour"),
])
def test_bad_queries_are_one_error(glove, kwargs, error, fragment) -> None:
    with pytest.raises(error) as e:
        set_search(glove[0].space("glove"), **kwargs)
    assert fragment in str(e.value) and "\n" not in str(e.value)


def test_a_query_object_or_keywords_not_both(glove) -> None:
    sp = glove[0].space("glove")
    with pytest.raises(InputError, match="not both"):
        set_search(sp, SetQuery.of(["king"]), k=3)
    assert SetQuery.of(["king"], ["man"], k=3, where="len > 3").to_dict() == {
        "all_of": ["king"], "none_of": ["man"], "k": 3, "where": "len > 3", "method": "auto", "index": None,
        "ef": None}
