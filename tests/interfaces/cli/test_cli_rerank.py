"""``repspace rerank train|apply``: a run on Cranfield (static encoder), and bad input as one error line."""

from __future__ import annotations

import json

import pytest
from _cli_process import one_error_line, run_quiet, store_dump
from _cranfield_space import cranfield_store

#: Ingesting Cranfield and training a model takes over ~10 s.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cran(shared_data, tmp_path_factory):
    folder = tmp_path_factory.mktemp("cran_cli")
    return cranfield_store(shared_data, folder), shared_data / "cranfield-beir", folder


@pytest.fixture(scope="module")
def model(cran):
    db, qrels, folder = cran
    path = folder / "ranker.json"
    from repspace.interfaces.cli import main

    assert main(["-q", "--store", str(db), "rerank", "train", "cran", "--qrels", str(qrels), "--out", str(path),
                 "--bootstrap", "0", "--json"]) == 0
    return path


def test_train_then_apply(cran, model, capsys):
    db, _, _ = cran
    capsys.readouterr()
    recipe = json.loads(model.read_text())["recipe"]
    assert recipe["space"]["name"] == "cran" and recipe["features"][0] == "dense_score"
    r = run_quiet(capsys, "--store", str(db), "rerank", "apply", "cran", str(model), "heat transfer", "wing flutter",
                  "-k", "4", "--json")
    assert r.code == 0, r.err
    res = json.loads(r.out)
    assert [x["query"] for x in res["results"]] == ["heat transfer", "wing flutter"]
    hits = res["results"][0]["hits"]
    assert len(hits) == 4 and all(1 <= h["dense_rank"] <= 100 for h in hits)
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)


def test_bad_input_is_one_error_line(cran, model, capsys, tmp_path):
    db, qrels, _ = cran
    before = store_dump(db)
    out = tmp_path / "m.json"
    base = ["--store", str(db), "rerank"]
    cases = [
        (["train", "cran", "--qrels", str(tmp_path / "absent"), "--out", str(out)], 2, "does not exist"),
        (["train", "cran", "--qrels", str(qrels), "--out", str(tmp_path)], 2, "is a folder"),
        (["train", "cran", "--qrels", str(qrels), "--out", str(out), "--test-fraction", "0.9"], 2, "sum < 1"),
        (["train", "cran", "--qrels", str(qrels), "--out", str(out), "--split", "dev"], 2, "no qrels for split"),
        (["train", "cran", "--qrels", str(qrels), "--out", str(out), "--candidates", "0"], 2, "candidates"),
        (["train", "nospace", "--qrels", str(qrels), "--out", str(out)], 3, "nospace"),
        (["apply", "cran", str(tmp_path / "absent.json"), "x"], 3, "no reranker model"),
        (["apply", "cran", str(qrels / "queries.jsonl"), "x"], 2, "not a reranker model"),
        (["apply", "cran", str(model), "   "], 2, "non-empty"),
        (["apply", "cran", str(model), "x", "-k", "0"], 2, "k"),
    ]
    for args, code, fragment in cases:
        one_error_line(run_quiet(capsys, *base, *args), code, fragment)
    assert not out.exists()
    assert store_dump(db) == before


def test_model_refused_on_another_space(cran, model, capsys, tmp_path):
    db, _, folder = cran
    data = tmp_path / "other.jsonl"
    data.write_text(json.dumps({"id": "a", "text": "a swept wing"}) + "\n")
    assert run_quiet(capsys, "--store", str(db), "ingest", "other", str(data), "--encoder", "static").code == 0
    before = store_dump(db)
    r = run_quiet(capsys, "--store", str(db), "rerank", "apply", "other", str(model), "wing")
    one_error_line(r, 2, "was trained for space 'cran', not 'other'")
    assert store_dump(db) == before
