"""``repspace analyze compat-head|doc-profile`` end to end: JSON equal to the library, one error line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _cli_process import one_error_line, run, store_dump

from repspace import Store
from repspace.workflows.analyze import compat_head_spaces, doc_profile_space


@pytest.fixture()
def db(tmp_path: Path, glove_vectors) -> str:
    x = np.ascontiguousarray(glove_vectors[:240], np.float32)
    labels = np.argmax(x[:, :3], axis=1)  # three classes read off real vectors
    meta = [{"c": int(c), "doc": f"d{i // 6}", "pos": i % 6} for i, c in enumerate(labels)]
    rotated = x @ np.linalg.qr(np.random.default_rng(0).normal(size=(50, 50)))[0].astype(np.float32)
    path = str(tmp_path / "s.db")
    with Store(path) as store:
        store.create_space("old", dim=50).add([f"w{i}" for i in range(240)], x, metadata=meta)
        store.create_space("new", dim=50).add([f"w{i}" for i in range(240)], rotated, metadata=meta)
        store.create_space("other", dim=50).add(["a", "b"], x[:2])
    return path


def test_compat_head_json_equals_the_library(capsys, db):
    code, out, err = run(capsys, "--store", db, "analyze", "compat-head", "old", "new", "--label-field", "c",
                         "--json")
    assert code == 0, err
    with Store(db) as store:
        direct = compat_head_spaces(store.space("old"), store.space("new"), "c")
    d = json.loads(out)
    assert d == json.loads(json.dumps(direct.to_dict()))
    # a rotated new model: raw new queries miss the old index, through the heads they find it
    assert d["after"]["cross"] > d["before"]["cross"] and d["n_classes"] == 3
    code, out, err = run(capsys, "--store", db, "analyze", "compat-head", "old", "new", "--label-field", "c")
    assert code == 0 and "criteria on 72 held out" in out, err


def test_doc_profile_json_equals_the_library(capsys, db):
    code, out, err = run(capsys, "--store", db, "analyze", "doc-profile", "old", "--doc-field", "doc",
                         "--position-field", "pos", "--json")
    assert code == 0, err
    with Store(db) as store:
        direct = doc_profile_space(store.space("old"), "doc", "pos")
    d = json.loads(out)
    assert d == json.loads(json.dumps(direct.to_dict())) and d["n_documents"] == 40
    code, out, err = run(capsys, "--store", db, "analyze", "doc-profile", "old", "--doc-field", "doc",
                         "--position-field", "pos", "--doc", "d3")
    assert code == 0 and "1 documents, 6 sentences" in out and "d3" in out, err


@pytest.mark.parametrize("args, code, fragment", [
    (["compat-head", "old", "--label-field", "c"], 2, "Missing argument"),
    (["compat-head", "old", "other", "--label-field", "c"], 2, "share no item"),
    (["compat-head", "old", "new", "--label-field", "nope"], 2, "field 'nope'"),
    (["compat-head", "old", "new", "--label-field", "c", "--test-fraction", "1"], 2, "test_fraction"),
    (["doc-profile", "old", "--doc-field", "doc", "--position-field", "doc"], 2, "both 'doc'"),
    (["doc-profile", "old", "--doc-field", "doc", "--position-field", "pos", "--doc", "zz"], 2, "in the documents"),
])
def test_bad_input_is_one_error_line_and_changes_nothing(capsys, db, args, code, fragment):
    before = store_dump(db)
    one_error_line(run(capsys, "--store", db, "analyze", *args), code, fragment)
    assert store_dump(db) == before
