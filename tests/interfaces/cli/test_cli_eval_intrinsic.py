"""``repspace eval evalrank`` and ``repspace eval weat``: the engine's figures through the command, --json, --save,
and one error line (exit 2) for bad input."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from _cli_process import one_error_line, run
from _data_subsets import glove_words, sts_head

from repspace import Store
from repspace.engines.eval import WordVectors, evalrank, load_sts, load_word_pairs, weat

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)

SETS = {"flowers": "rose tulip daisy lily violet orchid iris poppy",
        "insects": "ant spider fly bee moth wasp beetle cricket",
        "pleasant": "love peace friend happy gift health honest lucky",
        "unpleasant": "death filth murder poison crash grief prison disaster"}


@pytest.fixture(scope="module")
def glove_store(tmp_path_factory) -> tuple[str, WordVectors]:
    """A store holding the 20,000 most frequent GloVe 6B 50d words as space ``glove`` (ids are the words)."""
    words, vectors = glove_words(20000)
    db = str(tmp_path_factory.mktemp("glove") / "s.db")
    with Store(db) as store:
        store.create_space("glove", dim=50).add(words, vectors)
    return db, WordVectors(words, vectors)


@pytest.fixture()
def set_files(tmp_path: Path) -> list[str]:
    files = []
    for name, words in SETS.items():
        (tmp_path / f"{name}.txt").write_text("\n".join(words.split()) + "\n")
        files.append(str(tmp_path / f"{name}.txt"))
    return files


def test_evalrank_on_a_space_equals_the_engine_and_is_saved(capsys, glove_store, shared_data):
    db, wv = glove_store
    path = shared_data / "word-sim" / "EN-SIMLEX-999.txt"
    code, out, err = run(capsys, "-q", "--store", db, "eval", "evalrank", str(path), "--space", "glove", "--save",
                         "--json", "--background", "1000")
    assert code == 0, err
    (result,) = json.loads(out)
    expected = evalrank(wv, load_word_pairs(path), background=1000)
    entry = result["scores"]["test"][0]
    assert result["task_name"] == "evalrank:EN-SIMLEX-999" and entry["main_score"] == expected.main_score
    assert entry["ci_low"] == expected.interval.low and entry["hits_at_10"] == expected.scores["hits_at_10"]
    assert result["repspace"]["space"] == "glove" and result["repspace"]["top_share"] == 0.25
    assert result["repspace"]["pool_size"] == expected.info["pool_size"]
    code, out, _ = run(capsys, "--store", db, "eval", "results", "glove", "--json")
    saved = [s for s in json.loads(out) if s["task_name"] == "evalrank:EN-SIMLEX-999"]
    assert len(saved) == 1 and saved[0]["result"] == result


def test_evalrank_table_of_an_sts_file_with_an_encoder(capsys, tmp_path, shared_data):
    path = sts_head(shared_data, tmp_path / "stsb-head-test.csv", 200)
    code, out, err = run(capsys, "-q", "eval", "evalrank", str(path), "--encoder", "static", "--min-score", "3.5",
                         "--bootstrap", "0")
    assert code == 0, err
    from repspace.engines.encoders import get_encoder

    expected = evalrank(get_encoder("static"), load_sts(path), min_score=3.5, bootstrap=0)
    assert "mrr (main)" in out and f"{expected.main_score:.4f}" in out and "hits_at_3" in out
    as_words = tmp_path / "pairs.tsv"  # --kind overrides the suffix
    as_words.write_text(path.read_text())
    code, out, err = run(capsys, "-q", "eval", "evalrank", str(as_words), "--kind", "sts", "--encoder", "static",
                         "--json", "--bootstrap", "0")
    assert code == 0, err
    assert json.loads(out)[0]["repspace"]["min_score"] == 4.0


def test_weat_on_a_space_equals_the_engine(capsys, glove_store, set_files):
    db, wv = glove_store
    code, out, err = run(capsys, "--store", db, "eval", "weat", "--space", "glove", "--x", set_files[0],
                         "--y", set_files[1], "--a", set_files[2], "--b", set_files[3], "--json")
    assert code == 0, err
    (result,) = json.loads(out)
    expected = weat(wv, *set_files)
    entry = result["scores"]["test"][0]
    assert result["task_name"] == "weat:flowers-insects-pleasant-unpleasant"
    assert entry["main_score"] == expected.main_score and entry["p_value"] == expected.scores["p_value"]
    info = result["repspace"]
    assert info["p_value_method"] == "exact" and info["partitions"] == math.comb(info["n_x"] + info["n_y"], info["n_x"])
    assert info["oov"] == expected.info["oov"] and sum(info["oov"].values()) > 0  # not all in the first 20,000 words
    assert entry["main_score"] > 0  # flowers nearer pleasant words than insects are, in GloVe too
    code, out, err = run(capsys, "--store", db, "eval", "weat", "--space", "glove", "--x", set_files[0],
                         "--y", set_files[1], "--a", set_files[2], "--b", set_files[3], "--permutations", "1000")
    assert code == 0, err
    assert "effect_size (main)" in out and "p_value" in out and "monte-carlo, over 1,000 partitions" in err


@pytest.mark.parametrize("args, fragments", [
    (["evalrank", "{ws}", "--space", "glove", "--min-score", "11"], ["no positive pair in ws", "a score >= 11"]),
    (["evalrank", "{ws}", "--space", "glove", "--top-share", "0.2"], ["top 20% of its 4 pairs rounds down to none"]),
    (["evalrank", "{ws}", "--space", "glove", "--min-score", "5", "--top-share", "0.1"], ["not both"]),
    (["evalrank", "{ws}", "--space", "glove", "--kind", "csv"], ["kind must be one of sts, wordsim"]),
    (["evalrank", "{ws}", "--encoder", "static", "--background", "10"], ["--background takes words from a --space"]),
    (["evalrank", "{sts}", "--space", "glove", "--background", "10"], ["--background applies to word pairs"]),
    (["evalrank", "{ws}", "--encoder", "static", "--space", "glove"], ["not both"]),
    (["evalrank", "{ws}", "--encoder", "static", "--encoder", "minilm"], ["scores one model"]),
    (["weat", "--space", "glove", "--x", "{ws}", "--y", "{nope}", "--a", "{ws}", "--b", "{ws}"], ["does not exist"]),
    (["weat", "--space", "glove", "--x", "{oov}", "--y", "{ws}", "--a", "{ws}", "--b", "{ws}"],
     ["none of the 2 words of set X (oov)"]),
])
def test_bad_input_is_one_error_line_exit_2(capsys, glove_store, tmp_path, args, fragments):
    db, _ = glove_store
    ws = tmp_path / "ws.txt"
    ws.write_text("cat kitten 9.5\ncar truck 9.0\ncat car 1.0\ndog cat 6.0\n")
    oov = tmp_path / "oov.txt"
    oov.write_text("qqqzx\nzzqxq\n")
    sts = tmp_path / "sts.csv"
    sts.write_text("a cat,a kitten,5\na car,a truck,4\n")
    values = {"{ws}": str(ws), "{nope}": str(tmp_path / "nope.txt"), "{oov}": str(oov), "{sts}": str(sts)}
    r = run(capsys, "-q", "--store", db, "eval", *[values.get(a, a) for a in args])
    one_error_line(r, 2, *fragments)


def test_help_has_examples(capsys):
    for command in ("evalrank", "weat"):
        code, out, _ = run(capsys, "eval", command, "--help")
        assert code == 0 and "repspace eval " + command in out


def test_weat_looks_phrases_up_whole_in_a_space(capsys, tmp_path):
    """Phrases: a space whose ids hold spaces is looked up whole, as one line of a word-set file."""
    db = str(tmp_path / "s.db")
    rng = np.random.default_rng(0)
    ids = ["red rose", "tulip", "fire ant", "wasp", "true love", "peace", "dirty filth", "death"]
    with Store(db) as store:
        store.create_space("p", dim=4).add(ids, rng.standard_normal((8, 4)))
    files = []
    for i, name in enumerate(("x", "y", "a", "b")):
        (tmp_path / f"{name}.txt").write_text("\n".join(ids[2 * i:2 * i + 2]) + "\n")
        files += [f"--{name}", str(tmp_path / f"{name}.txt")]
    code, out, err = run(capsys, "-q", "--store", db, "eval", "weat", "--space", "p", *files, "--json")
    assert code == 0, err
    assert json.loads(out)[0]["repspace"]["oov"] == {"x": 0, "y": 0, "a": 0, "b": 0}
