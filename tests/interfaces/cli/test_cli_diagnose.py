"""``repspace diagnose`` end to end: a table with readings, JSON in METRICS.md names, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _cli_process import run

from repspace import Store
from repspace.engines.geometry.diagnose import diagnose


@pytest.fixture()
def db(tmp_path: Path, glove_vectors) -> str:
    x = np.ascontiguousarray(glove_vectors[:2000], np.float32)
    path = str(tmp_path / "s.db")
    with Store(path) as store:
        store.create_space("glove", dim=50).add([f"w{i}" for i in range(2000)], x)
        store.create_space("tiny", dim=50).add(["a", "b"], x[:2])
    return path


def test_json_equals_the_engine_on_the_stored_vectors(capsys, db):
    code, out, err = run(capsys, "--store", db, "diagnose", "glove", "--json")
    assert code == 0, err
    data = json.loads(out)
    with Store(db) as store:
        direct = diagnose(store.space("glove").vectors()).to_dict()
    assert data["n"] == 2000 and data["metric"] == "cosine"
    for key in ("hubness.k_skewness", "isotropy.isoscore", "intrinsic_dimension.twonn", "rank.effective_rank"):
        assert data[key] == pytest.approx(direct[key])
    assert data["hubness.knn"]["method"] == "exact"


def test_table_and_readings(capsys, db):
    code, out, err = run(capsys, "--store", db, "diagnose", "glove", "-k", "5")
    assert code == 0, err
    assert "hubness.k_skewness" in out and "intrinsic dimension" in out


@pytest.mark.parametrize("args, message", [
    (["diagnose", "nope"], "no space"),
    (["diagnose", "tiny"], "needs more than 10"),
])
def test_bad_input_is_one_line(capsys, db, args, message):
    code, out, err = run(capsys, "--store", db, *args)
    assert code != 0 and message in err and len(err.strip().splitlines()) == 1


def test_save_then_filter_by_k_occurrence(capsys, db):
    code, out, err = run(capsys, "--store", db, "diagnose", "glove", "--save", "--json")
    assert code == 0, err
    k_occ = json.loads(out)
    with Store(db) as store:
        sp = store.space("glove")
        stored = [it.metadata["k_occurrence"] for it in sp.get([f"w{i}" for i in range(2000)])]
    top = sorted(stored)[-5]
    code, out, err = run(capsys, "--store", db, "search", "glove", "--id", "w0", "-k", "2000",
                         "--where", f"k_occurrence >= {top}", "--json")
    assert code == 0, err
    hits = json.loads(out)
    assert len(hits) == sum(1 for i, s in enumerate(stored) if s >= top and i != 0)
    assert all(h["metadata"]["k_occurrence"] >= top for h in hits)
    with Store(db) as store:
        hubs = [it.metadata["hub"] for it in store.space("glove").get([f"w{i}" for i in range(2000)])]
    assert sum(hubs) == k_occ["hubness.n_hubs"] and sum(stored) == 2000 * 10  # each item lists 10 neighbours


@pytest.mark.slow  # loads MiniLM (hf-layers)
def test_layers_table_and_json(capsys, tmp_path):
    texts = tmp_path / "t.txt"
    texts.write_text("\n".join(f"a sentence about topic {i % 7} and item {i}" for i in range(30)), encoding="utf-8")
    code, out, err = run(capsys, "diagnose", "--encoder", "hf-layers:minilm", "--layers", "0,-1",
                         "--texts", str(texts), "-k", "5", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert [row["layer"] for row in data["layers"]] == [0, 6] and data["layers"][0]["n"] == 30
    code, out, err = run(capsys, "diagnose", "--encoder", "hf-layers:minilm", "--layers", "0,6",
                         "--texts", str(texts), "-k", "5")
    assert code == 0, err
    assert "30 texts" in out and "layer 6:" in out and "intrinsic dimension" in out


@pytest.mark.parametrize("args, message", [
    (["diagnose", "--encoder", "hf-layers:minilm"], "needs --texts"),
    (["diagnose", "glove", "--encoder", "hf-layers:minilm", "--texts", "x.txt"], "not both"),
    (["diagnose", "--encoder", "hf-layers:minilm", "--texts", "x.txt", "--save"], "--save"),
    (["diagnose", "--encoder", "hf-layers:minilm", "--texts", "x.txt", "--layers", "1,two"], "--layers"),
    (["diagnose", "--encoder", "minilm", "--texts", "__texts__"], "one vector per text"),
    (["diagnose"], "give a space"),
])
def test_bad_encoder_input_is_one_line(capsys, db, tmp_path, args, message):
    texts = tmp_path / "t.txt"
    texts.write_text("\n".join(f"text {i}" for i in range(20)), encoding="utf-8")
    args = [str(texts) if a == "__texts__" else a for a in args]
    code, out, err = run(capsys, "--store", db, *args)
    assert code != 0 and message in err and len(err.strip().splitlines()) == 1


def test_search_with_hubness_reduction(capsys, db):
    code, out, err = run(capsys, "--store", db, "search", "glove", "--id", "w3", "-k", "5", "--hubness", "csls",
                         "--explain", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert len(data["hits"]) == 5 and "csls" in data["plan"]["method"]
    assert all(h["id"] != "w3" for h in data["hits"])
    code, out, err = run(capsys, "--store", db, "search", "glove", "--id", "w3", "--hubness", "nope")
    assert code != 0 and "unknown hubness reduction" in err and len(err.strip().splitlines()) == 1


@pytest.mark.slow  # loads MiniLM (hf-layers) for the layers' report
def test_html_report_of_a_space_and_of_layers(capsys, db, tmp_path):
    page = tmp_path / "glove.html"
    code, out, err = run(capsys, "--store", db, "diagnose", "glove", "--html", str(page))
    assert code == 0, err
    html = page.read_text(encoding="utf-8")
    assert html.count("<svg") == 4 and "space glove" in html and "http://www.w3.org/2000/svg" in html
    texts = tmp_path / "t.txt"
    texts.write_text("\n".join(f"a sentence about topic {i % 7} and item {i}" for i in range(30)), encoding="utf-8")
    layers = tmp_path / "layers.html"
    code, out, err = run(capsys, "diagnose", "--encoder", "hf-layers:minilm", "--layers", "0,3,6",
                         "--texts", str(texts), "-k", "5", "--html", str(layers))
    assert code == 0, err
    html = layers.read_text(encoding="utf-8")
    assert html.count("<svg") > 4 and "layer 6" in html
