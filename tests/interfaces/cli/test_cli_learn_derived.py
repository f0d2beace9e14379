"""``repspace learn retrofit|matryoshka|adapter|cca`` end to end, and bad input as one line."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from _cli_process import run

from repspace import Store
from repspace.engines.encoders import get_encoder


@pytest.fixture()
def db(tmp_path) -> str:
    return str(tmp_path / "s.db")


@pytest.mark.parametrize("command", ["retrofit", "matryoshka", "adapter", "cca"])
def test_help_has_examples(capsys, command):
    code, out, _ = run(capsys, "learn", command, "--help")
    assert code == 0 and "Examples:" in out and f"repspace learn {command}" in out


def test_retrofit_with_a_lexicon_file(capsys, db, tmp_path):
    X = np.random.default_rng(0).normal(size=(6, 4))
    Store(db).create_space("w", dim=4).add(["cat", "kitten", "dog", "puppy", "car", "tree"], X)
    lex = tmp_path / "lex.txt"
    lex.write_text("cat kitten\nkitten cat\ndog puppy\npuppy dog\n")
    code, out, err = run(capsys, "--store", db, "learn", "retrofit", "w", "--lexicon", str(lex), "--space", "w-rf")
    assert code == 0, err
    assert "retrofitted 4 words (4 edges)" in err
    s = Store(db)
    before, after = s.space("w").vectors_of(["cat", "kitten"]), s.space("w-rf").vectors_of(["cat", "kitten"])
    assert np.linalg.norm(after[0] - after[1]) < np.linalg.norm(before[0] - before[1])
    code, _, err = run(capsys, "--store", db, "learn", "retrofit", "w", "--lexicon", str(tmp_path / "nope.txt"),
                       "--space", "w-rf2")
    assert code == 2 and err.count("\n") == 1 and "nope.txt" in err
    assert sorted(i.name for i in Store(db).spaces()) == ["w", "w-rf"]


def test_matryoshka_and_adapter_heads_on_sts_pairs(capsys, db, tmp_path, shared_data):
    rows = list(csv.reader((shared_data / "stsb" / "stsb-en-train.csv").open(encoding="utf-8")))[:400]
    pairs = tmp_path / "pairs.csv"
    with pairs.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    texts = sorted({s for r in rows[:50] for s in r[:2]})
    enc = get_encoder("static")
    Store(db).create_space("docs", dim=enc.dim, provenance=enc.provenance()).add(
        [f"t{i}" for i in range(len(texts))], enc.encode(texts), texts=texts)
    code, out, err = run(capsys, "--store", db, "learn", "matryoshka", "docs", "--pairs", str(pairs), "--space",
                         "mrl", "--dims", "16,32", "--epochs", "2", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["method"] == "matryoshka" and report["recipe"]["derived_from"]["recipe"]["dims"] == [16, 32, 64]
    code, out, err = run(capsys, "--store", db, "search", "mrl", texts[0], "-k", "1", "--json")
    assert code == 0 and json.loads(out)[0]["text"] == texts[0]
    code, out, err = run(capsys, "--store", db, "learn", "adapter", "docs", "--pairs", str(pairs), "--space", "ad",
                         "--loss", "margin", "--epochs", "1")
    assert code == 0, err
    assert "ad: " in err and "adapter head on 400 pairs" in err
    code, _, err = run(capsys, "--store", db, "learn", "matryoshka", "docs", "--pairs", str(pairs), "--space", "x",
                       "--dims", "16,abc")
    assert code == 2 and "--dims" in err


def test_cca_between_two_spaces(capsys, db):
    rng = np.random.default_rng(1)
    z = rng.normal(size=(200, 2))
    ids = [f"i{k}" for k in range(200)]
    s = Store(db)
    s.create_space("a", dim=6).add(ids, z @ rng.normal(size=(2, 6)) + 0.2 * rng.normal(size=(200, 6)))
    s.create_space("b", dim=5).add(ids, z @ rng.normal(size=(2, 5)) + 0.2 * rng.normal(size=(200, 5)))
    code, out, err = run(capsys, "--store", db, "learn", "cca", "a", "b", "--space-a", "a-cca", "--space-b", "b-cca",
                         "--components", "2", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["a"]["dim"] == 2 and d["b"]["dim"] == 2 and min(d["a"]["details"]["correlations"]) > 0.8
