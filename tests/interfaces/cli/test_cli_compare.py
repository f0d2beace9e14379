"""``repspace compare`` end to end."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _cli_process import run

from repspace import Store


@pytest.fixture()
def db(tmp_path, glove_vectors) -> str:
    path = str(tmp_path / "s.db")
    x = np.ascontiguousarray(glove_vectors[:800], np.float32)
    with Store(path) as store:
        store.create_space("a", dim=50).add([f"w{i}" for i in range(800)], x)
        store.create_space("b", dim=50).add([f"w{i}" for i in range(800)], x - x.mean(axis=0))
    return path


def test_compare_json_table_and_changed(capsys, db):
    code, out, err = run(capsys, "--store", db, "compare", "a", "b", "--json", "--changed", "3")
    assert code == 0, err
    data = json.loads(out)
    assert data["n_shared"] == 800 and len(data["changed"]) == 3
    assert data["cka_linear"] == pytest.approx(1.0)  # centring does not change linear CKA
    assert data["mutual_knn"]["value"] < 1.0  # but it moves cosine neighbourhoods
    code, out, err = run(capsys, "--store", db, "compare", "a", "b", "--measures", "cka_linear,procrustes")
    assert code == 0, err
    assert "cka_linear" in out and "800 shared" in out


@pytest.mark.parametrize("args, message", [
    (["compare", "a", "nope"], "no space"),
    (["compare", "a", "b", "--measures", "soup"], "unknown measure"),
    (["compare", "a", "b", "-k", "0"], "k"),
])
def test_bad_input_is_one_line(capsys, db, args, message):
    code, out, err = run(capsys, "--store", db, *args)
    assert code != 0 and message in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.slow  # loads MiniLM (hf-layers)
def test_layer_by_layer_matrix_and_heatmap(capsys, tmp_path):
    texts = tmp_path / "t.txt"
    texts.write_text("\n".join(f"a sentence about topic {i % 5} and item {i}" for i in range(40)), encoding="utf-8")
    png = tmp_path / "layers.png"
    code, out, err = run(capsys, "compare", "--encoder", "hf-layers:minilm", "--layers", "0,3,6", "--texts",
                         str(texts), "--heatmap", str(png), "--json")
    assert code == 0, err
    m = json.loads(out)
    values = np.array(m["values"])
    assert m["rows"] == m["cols"] and len(m["rows"]) == 3 and m["n"] == 40
    assert np.allclose(values.diagonal(), 1.0) and np.allclose(values, values.T)
    assert values[0, 1] > values[0, 2]  # layer 0 is nearer layer 3 than layer 6
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    code, out, err = run(capsys, "compare", "--encoder", "hf-layers:minilm", "--layers", "0,6", "--texts",
                         str(texts), "--other", "static", "--measure", "mutual_knn", "-k", "5", "--json")
    assert code == 0, err
    m = json.loads(out)
    assert m["cols"] == ["static"] and len(m["values"]) == 2 and 0.0 <= m["values"][0][0] <= 1.0


@pytest.mark.parametrize("args, message", [
    (["compare", "--encoder", "hf-layers:minilm"], "needs --texts"),
    (["compare", "a", "--encoder", "hf-layers:minilm", "--texts", "x.txt"], "not both"),
    (["compare", "a"], "give two spaces"),
])
def test_bad_layer_requests(capsys, db, args, message):
    code, out, err = run(capsys, "--store", db, *args)
    assert code != 0 and message in err and len(err.strip().splitlines()) == 1, err
