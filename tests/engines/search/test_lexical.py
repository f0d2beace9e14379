"""BM25 (bm25s) over texts keyed by rows: hand-computed scores, masks, persistence, stamps, Cranfield."""

from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np
import pytest

import repspace.engines.search.lexical as lex
import repspace.workflows.search.lexical as lex_cache
from repspace.core.errors import InputError, NotFoundError
from repspace.engines.search.lexical import LexicalIndex, LexicalParams, read_meta
from repspace.workflows.search.lexical import ensure_lexical, lexical_folder

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)

PLAIN = {"stemmer": None, "stopwords": None}

# Four documents, words of two letters or more (the tokenizer drops single letters).
DOCS = ["apple banana apple", "banana cherry", "apple cherry cherry date", "date"]
ROWS = np.array([3, 4, 8, 20])


@pytest.fixture(autouse=True)
def _no_memory_cache(monkeypatch):
    """Each test starts with an empty in-process index cache (what a new process has)."""
    monkeypatch.setattr(lex_cache, "_MEMORY", {})


def hand_bm25(docs, query, k1, b, method="lucene"):
    """Classic BM25 of every document, from the textbook formulas (whitespace tokens)."""
    toks = [d.split() for d in docs]
    n = len(toks)
    avgdl = sum(len(t) for t in toks) / n
    out = []
    for t in toks:
        tf = Counter(t)
        score = 0.0
        for term in query.split():
            df = sum(term in set(u) for u in toks)
            if df == 0 or tf[term] == 0:
                continue
            if method == "lucene":
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            elif method == "robertson":
                idf = math.log(max(1.0, (n - df + 0.5) / (df + 0.5)))
            else:  # atire
                idf = math.log(n / df)
            norm = k1 * (1 - b + b * len(t) / avgdl)
            score += idf * tf[term] * (k1 + 1) / (tf[term] + norm)
        out.append(score)
    return np.array(out)


def expected_ranking(scores, rows, k):
    hit = scores > 0
    s, r = scores[hit], rows[hit]
    order = np.lexsort((r, -s))[:k]
    return s[order], r[order]


QUERIES = ["apple", "cherry", "apple cherry", "date banana", "cherry cherry date", "durian", "apple durian"]


@pytest.mark.parametrize("k1,b", [(1.5, 0.75), (1.2, 0.5), (0.9, 1.0), (2.0, 0.0)])
@pytest.mark.parametrize("method", ["lucene", "robertson", "atire"])
def test_scores_equal_hand_computed_bm25(k1, b, method):
    ix = LexicalIndex.build(DOCS, ROWS, method=method, k1=k1, b=b, **PLAIN)
    scores, rows = ix.search(QUERIES, k=4)
    assert scores.dtype == np.float32 and rows.dtype == np.int64 and scores.shape == rows.shape == (7, 4)
    for j, q in enumerate(QUERIES):
        want_s, want_r = expected_ranking(hand_bm25(DOCS, q, k1, b, method), ROWS, 4)
        n = len(want_r)
        assert rows[j, :n].tolist() == want_r.tolist(), q
        np.testing.assert_allclose(scores[j, :n], want_s, rtol=2e-6)
        assert (rows[j, n:] == -1).all() and (scores[j, n:] == 0).all()


def test_hand_example_values():
    """The 4-document corpus worked through by hand for 'apple' (k1=1.5, b=0.75)."""
    ix = LexicalIndex.build(DOCS, ROWS, **PLAIN)
    s, r = ix.search(["apple"], k=4)
    # N=4, df(apple)=2: idf = ln(1 + 2.5/2.5) = ln 2; avgdl = 10/4 = 2.5
    idf = math.log(2)
    d0 = idf * 2 * 2.5 / (2 + 1.5 * (0.25 + 0.75 * 3 / 2.5))  # tf=2, |d|=3
    d2 = idf * 1 * 2.5 / (1 + 1.5 * (0.25 + 0.75 * 4 / 2.5))  # tf=1, |d|=4
    assert r.tolist() == [[3, 8, -1, -1]]
    np.testing.assert_allclose(s[0, :2], [d0, d2], rtol=1e-6)


def test_robertson_idf_zero_documents_are_not_returned():
    # With robertson, idf(apple) = ln(max(1, 2.5/2.5)) = 0: matching documents score 0 and are left out.
    ix = LexicalIndex.build(DOCS, ROWS, method="robertson", **PLAIN)
    assert ix.search(["apple"], k=3)[1].tolist() == [[-1, -1, -1]]


def test_bm25s_weights_agree_up_to_the_k1_plus_1_factor():
    ix = LexicalIndex.build(DOCS, ROWS, k1=1.2, **PLAIN)
    s, r = ix.search(["apple cherry"], k=4)
    raw = ix.model.get_scores(["apple", "cherry"])  # bm25s (Lucene >= 8 form, no k1 + 1)
    by_row = dict(zip(ix.rows.tolist(), raw * 2.2))
    for score, row in zip(s[0], r[0]):
        if row >= 0:
            assert score == pytest.approx(by_row[row], rel=1e-6)


@pytest.mark.parametrize("method", ["bm25l", "bm25+"])
def test_other_variants_rank_like_bm25s(method):
    rng = np.random.default_rng(3)
    words = [f"w{i:02d}" for i in range(25)]
    docs = [" ".join(rng.choice(words, rng.integers(2, 12))) for _ in range(60)]
    ix = LexicalIndex.build(docs, np.arange(60), method=method, **PLAIN)
    s, r = ix.search(["w01 w02", "w07"], k=60)
    for j, q in enumerate(["w01 w02", "w07"]):
        full = ix.model.get_scores(q.split())
        matched = np.array([set(q.split()) & set(d.split()) != set() for d in docs])
        got = r[j][r[j] >= 0]
        assert set(got.tolist()) == set(np.flatnonzero(matched).tolist())
        np.testing.assert_allclose(s[j][: len(got)], full[got], rtol=1e-5)


def test_stemming_and_stopwords():
    ix = LexicalIndex.build(["The cats were running", "a dog runs", "the the the"], [0, 1, 2])
    _s, r = ix.search(["cat", "running dogs", "the"], k=3)
    assert r[0].tolist() == [0, -1, -1]
    assert set(r[1, :2].tolist()) == {0, 1}  # 'run' in both, 'dog' only in 1
    assert r[1, 0] == 1
    assert r[2].tolist() == [-1, -1, -1]  # only a stop word
    plain = LexicalIndex.build(["The cats were running", "a dog runs"], [0, 1], **PLAIN)
    assert plain.search(["cat"], k=2)[1].tolist() == [[-1, -1]]


def test_equal_scores_go_to_the_lower_row_and_rows_may_come_unsorted():
    ix = LexicalIndex.build(["red fox", "blue", "red fox", "red fox"], [9, 1, 4, 6], **PLAIN)
    assert ix.rows.tolist() == [1, 4, 6, 9]
    s, r = ix.search(["fox"], k=2)
    assert r.tolist() == [[4, 6]] and s[0, 0] == s[0, 1]
    assert ix.search("blue", k=1)[1].tolist() == [[1]]  # a lone string is one query


def corpus(n, rng, vocab=30):
    words = [f"t{i}" for i in range(vocab)]
    return [" ".join(rng.choice(words, rng.integers(1, 10))) for _ in range(n)]


def test_allowed_mask_is_applied_before_the_top_k():
    rng = np.random.default_rng(7)
    docs = corpus(300, rng)
    rows = np.arange(300) * 2 + 1  # odd rows only
    ix = LexicalIndex.build(docs, rows, **PLAIN)
    queries = ["t1 t2", "t3", "t4 t5 t6", "t29"]
    _all_s, all_r = ix.search(queries, k=300)
    for density in (0.5, 0.1, 0.02):
        mask = rng.random(700) < density
        _s, r = ix.search(queries, k=10, allowed=mask)
        for j in range(len(queries)):
            full = all_r[j][all_r[j] >= 0]
            want = full[mask[full]][:10]
            assert r[j, : len(want)].tolist() == want.tolist()
            assert (r[j, len(want):] == -1).all()
            if mask[full].sum() >= 10:
                assert (r[j] >= 0).all()  # still k of them when that many match
    # Rows past the end of the mask are not allowed; an all-False mask finds nothing.
    short = np.ones(101, bool)
    assert ix.search(["t1"], k=300, allowed=short)[1].max() <= 100
    assert (ix.search(["t1"], k=5, allowed=np.zeros(700, bool))[1] == -1).all()


def test_allowed_must_be_a_boolean_mask():
    ix = LexicalIndex.build(DOCS, ROWS, **PLAIN)
    with pytest.raises(InputError, match="boolean mask"):
        ix.search(["apple"], k=2, allowed=np.array([3, 8]))
    with pytest.raises(InputError, match="boolean mask"):
        ix.search(["apple"], k=2, allowed=np.ones((2, 21), bool))


def test_search_in_many_blocks_is_the_same(monkeypatch):
    rng = np.random.default_rng(11)
    docs = corpus(120, rng)
    ix = LexicalIndex.build(docs, np.arange(120), **PLAIN)
    queries = [" ".join(rng.choice([f"t{i}" for i in range(30)], 3)) for _ in range(25)]
    s1, r1 = ix.search(queries, k=7)
    monkeypatch.setattr(lex, "SEARCH_BLOCK", 250)  # two queries per block
    s2, r2 = ix.search(queries, k=7)
    assert np.array_equal(r1, r2) and np.array_equal(s1, s2)


def test_empty_and_tokenless_corpora():
    for ix in (LexicalIndex.build([], [], **PLAIN), LexicalIndex.build(["the a", ""], [0, 1])):
        s, r = ix.search(["the apple", ""], k=3)
        assert r.tolist() == [[-1] * 3] * 2 and (s == 0).all()
    assert LexicalIndex.build([], []).search([], k=2)[1].shape == (0, 2)


def test_save_load_round_trip(tmp_path):
    ix = LexicalIndex.build(DOCS, ROWS, k1=1.2, b=0.6)
    folder = tmp_path / "ix"
    ix.save(folder, stamp={"note": 1})
    back = LexicalIndex.load(folder)
    assert back.params == ix.params and back.build_id == ix.build_id and back.stamp == {"note": 1}
    assert back.rows.tolist() == ROWS.tolist()
    for a, b in zip(ix.search(QUERIES, k=4), back.search(QUERIES, k=4)):
        assert np.array_equal(a, b)
    # Saving again replaces the folder whole, leaving nothing else beside it.
    other = LexicalIndex.build(["zebra"], [0])
    other.save(folder)
    assert LexicalIndex.load(folder).search(["zebra"], k=1)[1].tolist() == [[0]]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ix"]
    # Empty indexes round-trip too.
    LexicalIndex.build([], []).save(tmp_path / "empty")
    assert len(LexicalIndex.load(tmp_path / "empty")) == 0


def test_unicode_texts_round_trip(tmp_path):
    ix = LexicalIndex.build(["Café crème à Zürich", "Straße und Brücke", "東京 大阪"], [0, 1, 2], stemmer=None)
    ix.save(tmp_path / "u")
    back = LexicalIndex.load(tmp_path / "u")
    assert back.search(["zürich", "brücke", "東京"], k=1)[1].tolist() == [[0], [1], [2]]


def test_load_sees_one_whole_index_when_replaced_while_reading(tmp_path, monkeypatch):
    folder = tmp_path / "ix"
    old = LexicalIndex.build(["old words"], [0])
    new = LexicalIndex.build(["new words"], [5])
    old.save(folder)
    real = LexicalIndex._load_files.__func__
    calls = []

    def replaced_midway(cls, f, meta):
        out = real(cls, f, meta)
        if not calls:  # another writer swaps in a new index while the first read is under way
            new.save(folder)
        calls.append(1)
        return out

    monkeypatch.setattr(LexicalIndex, "_load_files", classmethod(replaced_midway))
    got = LexicalIndex.load(folder)
    assert len(calls) == 2 and got.build_id == new.build_id and got.rows.tolist() == [5]


def test_load_refuses_missing_damaged_or_foreign_folders(tmp_path):
    with pytest.raises(NotFoundError):
        LexicalIndex.load(tmp_path / "nothing")
    LexicalIndex.build(DOCS, ROWS).save(tmp_path / "a")
    (tmp_path / "a" / "rows.npy").write_bytes(b"junk")
    with pytest.raises(InputError, match="damaged"):
        LexicalIndex.load(tmp_path / "a")
    LexicalIndex.build(DOCS, ROWS).save(tmp_path / "b")
    meta = json.loads((tmp_path / "b" / "lexical.json").read_text())
    (tmp_path / "b" / "lexical.json").write_text(json.dumps({**meta, "format": 999}))
    with pytest.raises(InputError, match="format"):
        LexicalIndex.load(tmp_path / "b")


@pytest.mark.parametrize("kwargs,match", [
    ({"method": "bm26"}, "BM25 method must be one of"),
    ({"k1": -1}, "k1"),
    ({"k1": float("nan")}, "k1"),
    ({"b": 1.5}, "b must be"),
    ({"b": "0.5"}, "b must be a number"),
    ({"stemmer": "klingon"}, "unknown stemmer"),
    ({"stopwords": "xx"}, "unknown stop-word list"),
])
def test_bad_parameters(kwargs, match):
    with pytest.raises(InputError, match=match):
        LexicalIndex.build(DOCS, ROWS, **kwargs)


def test_bad_inputs():
    with pytest.raises(InputError, match="one row per text"):
        LexicalIndex.build(DOCS, ROWS[:3])
    with pytest.raises(InputError, match="distinct"):
        LexicalIndex.build(DOCS, [1, 1, 2, 3])
    with pytest.raises(InputError, match="≥ 0"):
        LexicalIndex.build(DOCS, [-1, 1, 2, 3])
    with pytest.raises(InputError, match="integers"):
        LexicalIndex.build(DOCS, [0.5, 1, 2, 3])
    with pytest.raises(InputError, match="not a string"):
        LexicalIndex.build(["a", None], [0, 1])
    with pytest.raises(InputError, match="not one string"):
        LexicalIndex.build("apple", [0])
    ix = LexicalIndex.build(DOCS, ROWS)
    with pytest.raises(InputError, match="positive integer"):
        ix.search(["apple"], k=0)
    with pytest.raises(InputError, match="not a string"):
        ix.search([["apple"]], k=1)


# ------------------------------------------------------------------ over a store
def _space(store, name="lex"):
    sp = store.create_space(name, dim=2)
    sp.add(["a", "b", "c", "d"], np.eye(2)[[0, 1, 0, 1]],
           texts=["cats purr softly", "dogs bark loudly", None, "cats and dogs"])
    return sp


@pytest.fixture
def builds(monkeypatch):
    """Counts LexicalIndex.build calls."""
    calls = []
    real = LexicalIndex.build.__func__

    def counting(cls, *args, **kwargs):
        calls.append(1)
        return real(cls, *args, **kwargs)

    monkeypatch.setattr(LexicalIndex, "build", classmethod(counting))
    return calls


def test_ensure_lexical_builds_reuses_and_rebuilds(store, builds):
    sp = _space(store)
    ix = ensure_lexical(sp)
    assert len(builds) == 1 and len(ix) == 3  # the item without text is skipped
    info = sp.info()
    folder = store.index_dir / sp.uid / "bm25-lucene-k1_1.5-b0.75-english-en"
    assert lexical_folder(sp, LexicalParams()) == folder
    stamp = read_meta(folder)["stamp"]
    assert stamp == {"format": lex.FORMAT, "space_uid": sp.uid, "generation": info.generation,
                     "next_row": info.next_row, "dead_rows": info.dead_rows,
                     "params": LexicalParams().to_dict(), "n_docs": 3}
    assert ix.search(["cat"], k=3)[1].tolist() == [[3, 0, -1]]  # the shorter text first

    # Unchanged space: the same object from memory, or the same build from disk.
    assert ensure_lexical(sp) is ix and len(builds) == 1
    lex_cache._MEMORY.clear()
    again = ensure_lexical(sp)
    assert again is not ix and again.build_id == ix.build_id and len(builds) == 1

    # An add rebuilds (the new item counts in N and avgdl, and is found).
    sp.add(["e"], [[1.0, 1.0]], texts=["parrots talk"])
    after_add = ensure_lexical(sp)
    assert len(builds) == 2 and after_add.build_id != ix.build_id
    assert after_add.search(["parrot"], k=1)[1].tolist() == [[4]]
    assert read_meta(folder)["stamp"]["generation"] == sp.info().generation

    # A delete rebuilds; the deleted item is gone.
    sp.delete(["a"])
    after_delete = ensure_lexical(sp)
    assert len(builds) == 3 and len(after_delete) == 3
    assert after_delete.search(["cat"], k=3)[1].tolist() == [[3, -1, -1]]

    # A text edit (same vector) changes the generation only: rebuilt too.
    sp.add(["d"], [[0.0, 1.0]], texts=["hamsters"])
    assert ensure_lexical(sp).search(["cat"], k=3)[1].tolist() == [[-1, -1, -1]]
    assert len(builds) == 4
    ensure_lexical(sp)
    assert len(builds) == 4


def test_other_parameters_live_in_their_own_folder(store, builds):
    sp = _space(store)
    a = ensure_lexical(sp)
    b = ensure_lexical(sp, k1=1.2, stemmer=None)
    assert len(builds) == 2 and a.params != b.params
    assert {p.name for p in (store.index_dir / sp.uid).iterdir()} == {
        "bm25-lucene-k1_1.5-b0.75-english-en", "bm25-lucene-k1_1.2-b0.75-nostem-en"}
    assert ensure_lexical(sp, k1=1.2, stemmer=None) is b and len(builds) == 2
    with pytest.raises(InputError):
        ensure_lexical(sp, k1=-3)


@pytest.mark.parametrize("damage", ["stamp", "format", "rows", "meta", "weights", "missing"])
def test_untrustworthy_index_is_rebuilt(store, builds, damage):
    sp = _space(store)
    ix = ensure_lexical(sp)
    folder = lexical_folder(sp, LexicalParams())
    meta_path = folder / "lexical.json"
    meta = json.loads(meta_path.read_text())
    if damage == "stamp":
        meta["stamp"]["dead_rows"] += 1
        meta_path.write_text(json.dumps(meta))
    elif damage == "format":
        meta["format"] = 0
        meta_path.write_text(json.dumps(meta))
    elif damage == "rows":
        (folder / "rows.npy").write_bytes(b"not numpy")
    elif damage == "weights":
        np.save(folder / "indptr.csc.index.npy", np.array([0, 1, 2]))
    elif damage == "missing":
        (folder / "data.csc.index.npy").unlink()
    else:
        meta_path.write_text("{")
    lex_cache._MEMORY.clear()
    again = ensure_lexical(sp)
    assert len(builds) == 2 and again.build_id != ix.build_id
    assert again.search(["dog"], k=2)[1].tolist() == [[3, 1]]  # "cats and dogs" is shorter
    assert read_meta(folder)["stamp"]["n_docs"] == 3


def test_index_of_another_space_is_not_used(store, builds):
    sp1 = _space(store, "one")
    sp2 = _space(store, "two")  # same contents, other uid
    ensure_lexical(sp1)
    src, dst = lexical_folder(sp1, LexicalParams()), lexical_folder(sp2, LexicalParams())
    dst.parent.mkdir(parents=True)
    src.rename(dst)
    ensure_lexical(sp2)
    assert len(builds) == 2


def test_empty_space(store):
    sp = store.create_space("e", dim=2)
    assert len(ensure_lexical(sp)) == 0
    assert ensure_lexical(sp).search(["x"], k=2)[1].tolist() == [[-1, -1]]


# ------------------------------------------------------------ Cranfield, real data
@pytest.fixture(scope="module")
def cranfield(shared_data):
    from repspace.engines.eval import load_beir

    return load_beir(shared_data / "cranfield-beir")


@pytest.fixture(scope="module")
def bm25_run(cranfield):
    ix = LexicalIndex.build(list(cranfield.corpus_texts), np.arange(cranfield.n_documents))
    return ix.search(list(cranfield.query_texts), k=100)


def ndcg10(data, rows):
    from repspace.engines.eval.ranking import ranking_scores

    run = {qid: [data.corpus_ids[j] for j in row[:10] if j >= 0] for qid, row in zip(data.query_ids, rows)}
    return ranking_scores(run, data.qrels, ks=(10,))["ndcg_at_10"]


def test_cranfield_bm25_ndcg(cranfield, bm25_run):
    _scores, rows = bm25_run
    assert (rows[:, 0] >= 0).all()
    # Measured: 0.3732 (k1=1.5, b=0.75, English stemming and stop words).
    assert 0.35 <= ndcg10(cranfield, rows) <= 0.40
    # Without stemming and stop words it is worse (measured 0.3502).
    plain = LexicalIndex.build(list(cranfield.corpus_texts), np.arange(cranfield.n_documents), **PLAIN)
    plain_nd = ndcg10(cranfield, plain.search(list(cranfield.query_texts), k=10)[1])
    assert 0.32 <= plain_nd <= ndcg10(cranfield, rows) - 0.01
