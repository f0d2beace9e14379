"""``repspace analyze ricci|capacity`` end to end: JSON equal to the library, saved metadata, one error line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _cli_process import one_error_line, run, store_dump

from repspace import Store
from repspace.engines.analyze import capacity, knn_ricci


@pytest.fixture()
def db(tmp_path: Path, glove_vectors) -> str:
    x = np.ascontiguousarray(glove_vectors[:300], np.float32)
    path = str(tmp_path / "s.db")
    with Store(path) as store:
        store.create_space("glove", dim=50).add([f"w{i}" for i in range(300)], x)
        store.create_space("later", dim=50).add([f"w{i}" for i in range(50, 300)], x[50:] * 2)
        store.create_space("pair", dim=50).add(["a", "b"], x[:2])
    return path


def test_ricci_json_equals_the_library_and_save_writes_each_items_curvature(capsys, db):
    code, out, err = run(capsys, "--store", db, "analyze", "ricci", "glove", "-k", "6", "--save", "kappa", "--json")
    assert code == 0, err
    data = json.loads(out)
    with Store(db) as store:
        sp = store.space("glove")
        direct = knn_ricci(sp.vectors(), 6)
        stored = [it.metadata["kappa"] for it in sp.get([f"w{i}" for i in range(300)])]
    assert data["mean_curvature"] == pytest.approx(direct.edge_curvature.mean(), abs=1e-12)
    assert data["n_edges"] == len(direct.edges) and data["saved"] == 300 and data["field"] == "kappa"
    assert np.allclose(stored, direct.node_curvature, atol=5e-7)
    code, out, err = run(capsys, "--store", db, "search", "glove", "--id", "w0", "--where",
                         f"kappa < {min(stored) + 1e-9}", "--json")
    assert code == 0, err
    assert [h["id"] for h in json.loads(out)] == [f"w{int(np.argmin(stored))}"]


def test_ricci_against_and_tables(capsys, db):
    code, out, err = run(capsys, "--store", db, "analyze", "ricci", "glove", "--against", "later", "-k", "5",
                         "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["n_shared"] == 250 and d["node_difference"]["mean_abs"] < 1e-12  # scaled: the same cosine graph
    code, out, err = run(capsys, "--store", db, "analyze", "ricci", "glove", "-k", "5")
    assert code == 0 and "mean_curvature" in out and "most negative" in out, err


def test_capacity_json_equals_the_library(capsys, db):
    code, out, err = run(capsys, "--store", db, "analyze", "capacity", "glove", "--json")
    assert code == 0, err
    with Store(db) as store:
        direct = capacity(store.space("glove").vectors())
    assert json.loads(out) == {"space": "glove", **json.loads(json.dumps(direct.to_dict()))}
    code, out, err = run(capsys, "--store", db, "analyze", "capacity", "glove")
    assert code == 0 and "epsilon" in out, err


@pytest.mark.parametrize("args, fragment", [
    (["ricci", "glove", "-k", "0"], "k"),
    (["ricci", "glove", "-k", "300"], "needs more than 300"),
    (["ricci", "pair", "-k", "1"], "at least 3"),
    (["ricci", "glove", "--alpha", "1"], "alpha"),
    (["ricci", "glove", "--save", " "], "metadata key"),
    (["ricci", "glove", "--against", "later", "--save", "kappa"], "does not combine"),
    (["capacity", "glove", "--pairs", "1"], "pairs"),
])
def test_bad_input_is_one_error_line_and_changes_nothing(capsys, db, args, fragment):
    before = store_dump(db)
    one_error_line(run(capsys, "--store", db, "analyze", *args), 2, fragment)
    assert store_dump(db) == before


def test_an_unknown_space_is_one_error_line(capsys, db):
    before = store_dump(db)
    one_error_line(run(capsys, "--store", db, "analyze", "ricci", "nope"), 3, "no space 'nope'")
    assert store_dump(db) == before
