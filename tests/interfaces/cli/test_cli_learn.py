"""``repspace learn`` end to end: learn from gensim's Lee corpus and Cranfield, search, and bad input as one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli_process import run

from repspace import Store


@pytest.fixture()
def db(tmp_path) -> str:
    return str(tmp_path / "s.db")


def learned_files(db: str) -> list[Path]:
    return sorted(Path(db + ".indexes").glob("*/learn/*"))


@pytest.mark.parametrize("args", [["learn"], ["learn", "word2vec"], ["learn", "fasttext"], ["learn", "doc2vec"]])
def test_every_command_has_help_with_examples(capsys, args):
    code, out, _ = run(capsys, *args, "--help")
    assert code == 0 and "Examples:" in out and "repspace learn" in out


def test_fasttext_help_explains_the_smaller_bucket(capsys):
    code, out, _ = run(capsys, "learn", "fasttext", "--help")
    assert code == 0 and "2,000,000" in out and "200000" in out


def test_word2vec_then_search_by_text_and_by_id(capsys, db, lee_path):
    code, out, err = run(capsys, "--store", db, "learn", "word2vec", str(lee_path), "--space", "w2v", "--sg",
                         "--vector-size", "32", "--epochs", "5", "--min-count", "2", "--seed", "3", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["space"] == "w2v" and report["method"] == "word2vec" and report["dim"] == 32
    assert report["seed"] == 3 and report["workers"] == 1 and report["deterministic"] is True
    assert report["recipe"]["encoder"] == "learn:word2vec" and report["recipe"]["params"]["sg"] == 1
    assert Path(report["model_path"]).is_file()
    code, out, err = run(capsys, "--store", db, "search", "w2v", "israeli palestinian", "-k", "5", "--json")
    assert code == 0, err
    ids = [h["id"] for h in json.loads(out)]
    assert {"israeli", "palestinian"} & set(ids), ids
    code, out, err = run(capsys, "--store", db, "search", "w2v", "--id", "government", "-k", "3", "--json")
    assert code == 0 and len(json.loads(out)) == 3 and "government" not in [h["id"] for h in json.loads(out)]


def test_fasttext_answers_a_misspelled_word(capsys, db, lee_path):
    code, out, err = run(capsys, "--store", db, "learn", "fasttext", str(lee_path), "--space", "ft", "--sg",
                         "--vector-size", "50", "--epochs", "10", "--min-count", "2", "--bucket", "50000", "--json")
    assert code == 0, err
    assert json.loads(out)["recipe"]["params"]["bucket"] == 50_000
    code, out, err = run(capsys, "--store", db, "search", "ft", "governmnet", "-k", "5", "--json")
    assert code == 0, err
    assert "government" in [h["id"] for h in json.loads(out)]


def test_fasttext_with_the_default_settings(capsys, db, lee_path):
    code, out, err = run(capsys, "--store", db, "learn", "fasttext", str(lee_path), "--space", "ft", "--min-count", "2",
                         "--epochs", "1", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["recipe"]["params"]["bucket"] == 200_000 and report["dim"] == 100


def test_doc2vec_on_cranfield_jsonl_finds_a_documents_own_text(capsys, db, shared_data, tmp_path):
    rows = (shared_data / "cranfield-beir" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:400]
    corpus = tmp_path / "cran.jsonl"
    corpus.write_text("\n".join(rows) + "\n", encoding="utf-8")
    code, out, err = run(capsys, "--store", db, "learn", "doc2vec", str(corpus), "--space", "cran", "--id-field",
                         "_id", "--dbow", "--vector-size", "50", "--epochs", "20", "--min-count", "2", "--json")
    assert code == 0, err
    assert json.loads(out)["n"] == sum(1 for r in rows if json.loads(r)["text"].strip())
    docs = [json.loads(r) for r in rows[::40]]
    firsts = 0
    for doc in docs:
        code, out, err = run(capsys, "--store", db, "search", "cran", doc["text"], "-k", "3", "--json")
        assert code == 0, err
        firsts += json.loads(out)[0]["id"] == doc["_id"]
    assert firsts >= 0.8 * len(docs)


@pytest.mark.parametrize("args, message", [
    (["learn", "word2vec", "EMPTY", "--space", "x"], "is empty"),
    (["learn", "fasttext", "LEE", "--space", "x", "--min-count", "100000"], "no token occurs at least"),
    (["learn", "doc2vec", "LEE", "--space", "taken"], "space 'taken' already exists"),
    (["learn", "glove", "LEE", "--space", "x"], "No such command 'glove'"),
    (["learn", "word2vec", "--space", "x"], "give a corpus file or a space"),
    (["learn", "word2vec", "LEE", "--space", "x", "--format", "csv"], "corpus_format must be one of auto, text, jsonl"),
    (["learn", "word2vec", "NOPE", "--space", "x"], "does not exist"),
])
def test_bad_input_is_one_line_and_stores_nothing(capsys, db, tmp_path, lee_path, args, message):
    code, _, err = run(capsys, "--store", db, "learn", "word2vec", str(lee_path), "--space", "taken", "--vector-size", "4",
                       "--epochs", "1", "--min-count", "20")
    assert code == 0, err
    files = learned_files(db)
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n")
    paths = {"EMPTY": str(empty), "LEE": str(lee_path), "NOPE": str(tmp_path / "nope.txt")}
    code, out, err = run(capsys, "--store", db, *[paths.get(a, a) for a in args])
    assert code != 0 and message in err and len(err.strip().splitlines()) == 1, err
    with Store(db) as store:
        assert [s.name for s in store.spaces()] == ["taken"]
    assert learned_files(db) == files


def test_a_swapped_model_file_is_one_error_line_on_a_text_query(capsys, db, lee_path):
    paths = []
    for name, seed in (("a", "0"), ("b", "1")):
        code, out, err = run(capsys, "--store", db, "learn", "word2vec", str(lee_path), "--space", name, "--seed", seed,
                             "--vector-size", "8", "--epochs", "1", "--min-count", "3", "--json")
        assert code == 0, err
        paths.append(Path(json.loads(out)["model_path"]))
    paths[0].write_bytes(paths[1].read_bytes())
    code, out, err = run(capsys, "--store", db, "search", "a", "government")
    assert code != 0 and "SHA-256" in err and len(err.strip().splitlines()) == 1, err


def test_tokenizer_options_are_part_of_the_recipe(capsys, db, tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("NASA flew to Mars in 2021\nnasa and ESA plan a Mars base\n" * 10)
    code, out, err = run(capsys, "--store", db, "learn", "word2vec", str(corpus), "--space", "w", "--keep-case",
                         "--token-pattern", r"[A-Za-z0-9]+", "--min-len", "1", "--min-count", "1",
                         "--vector-size", "4", "--epochs", "1", "--json")
    assert code == 0, err
    tok = json.loads(out)["recipe"]["tokenizer"]
    assert tok == {"lowercase": False, "pattern": "[A-Za-z0-9]+", "min_len": 1, "max_len": 15}
    ids = set(Store(db).space("w").ids())
    assert {"NASA", "nasa", "2021", "a"} <= ids
    code, _, err = run(capsys, "--store", db, "learn", "word2vec", str(corpus), "--space", "w2", "--token-pattern",
                       "([", "--min-count", "1")
    assert code == 2 and err.count("\n") == 1
