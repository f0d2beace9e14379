"""``repspace interpret universality|flow`` end to end: JSON equal to the library and to a direct computation on
the dictionaries' codes, one error line on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _cli_process import one_error_line, run, store_dump

from repspace import Store
from repspace.engines.compare import feature_correlations
from repspace.workflows.dictionary import fit_dictionary, load_dictionary
from repspace.workflows.dictionary_universality import flow_dictionaries, universality_dictionaries


@pytest.fixture()
def db(tmp_path: Path, glove_vectors) -> str:
    x = np.ascontiguousarray(glove_vectors[:600], np.float32)
    rng = np.random.default_rng(0)
    path = str(tmp_path / "s.db")
    ids = [f"w{i}" for i in range(600)]
    with Store(path) as store:
        store.create_space("a", dim=50).add(ids, x)
        store.create_space("b", dim=40).add(ids[::-1], (x @ rng.normal(size=(50, 40)))[::-1])  # another order
        store.create_space("c", dim=50).add(ids[:500], np.tanh(x[:500]))
        store.create_space("other", dim=50).add(["a", "b"], x[:2])
        for name in ("a", "b", "c"):
            fit_dictionary(store.space(name), 32, 4, epochs=3)
    return path


def test_universality_json_equals_the_library_and_direct_correlations(capsys, db):
    code, out, err = run(capsys, "--store", db, "interpret", "universality", "a", "sae-32-k4-s0", "b",
                         "sae-32-k4-s0", "--random", "4", "--json", "--per-feature")
    assert code == 0, err
    d = json.loads(out)
    with Store(db) as store:
        sa, sb = store.space("a"), store.space("b")
        direct = universality_dictionaries(sa, "sae-32-k4-s0", sb, "sae-32-k4-s0", n_random=4)
        # the pairs' correlations from each space's own codes, joined by id here
        da, dbb = load_dictionary(sa, "sae-32-k4-s0"), load_dictionary(sb, "sae-32-k4-s0")
        ids = sa.snapshot().ids
        ca = da.transform(sa.vectors_of(ids), dense=True)
        cb = dbb.transform(sb.vectors_of(ids), dense=True)
    assert d == json.loads(json.dumps(direct.to_dict(per_feature=True)))
    C, _, _ = feature_correlations(ca, cb)
    for p in d["match"]["pairs"]:
        assert abs(p["correlation"] - C[p["a"], p["b"]]) < 1e-9
    assert d["n_inputs"] == 600 and d["match"]["method"] == "hungarian"
    code, out, err = run(capsys, "--store", db, "interpret", "universality", "a", "sae-32-k4-s0", "b",
                         "sae-32-k4-s0", "--match", "max", "--random", "2")
    assert code == 0 and "(max) over 600 shared items" in out and "decoder" in out, err


def test_flow_json_equals_the_library(capsys, db):
    code, out, err = run(capsys, "--store", db, "interpret", "flow", "a:sae-32-k4-s0", "c:sae-32-k4-s0",
                         "b:sae-32-k4-s0", "--threshold", "0.3", "--json")
    assert code == 0, err
    with Store(db) as store:
        direct = flow_dictionaries([(store.space(s), "sae-32-k4-s0") for s in "acb"], threshold=0.3)
    d = json.loads(out)
    assert d == json.loads(json.dumps(direct.to_dict()))
    assert d["n_inputs"] == 500 and len(d["steps"]) == 2
    for s in d["steps"]:
        assert s["persists"] + s["dies"] == d["live"][s["layer"]]
    code, out, err = run(capsys, "--store", db, "interpret", "flow", "a:sae-32-k4-s0", "c:sae-32-k4-s0",
                         "--mode", "top1")
    assert code == 0 and "feature flow over 2 layers, 500 shared items (correlation ≥ 0.5, top1)" in out, err


@pytest.mark.parametrize("args, code, fragment", [
    (["universality", "a", "sae-32-k4-s0", "other", "sae-32-k4-s0"], 3, "no dictionary"),
    (["universality", "a", "sae-32-k4-s0", "b", "sae-32-k4-s0", "--match", "greedy"], 2, "hungarian, max"),
    (["universality", "a", "sae-32-k4-s0", "b", "sae-32-k4-s0", "--min-correlation", "1.5"], 2, "min_correlation"),
    (["flow", "a:sae-32-k4-s0"], 2, "at least two layers"),
    (["flow", "a:sae-32-k4-s0", "bsae"], 2, "SPACE:DICTIONARY"),
    (["flow", "a:sae-32-k4-s0", "b:sae-32-k4-s0", "--mode", "all"], 2, "threshold, top1"),
])
def test_bad_input_is_one_error_line_and_changes_nothing(capsys, db, args, code, fragment):
    before = store_dump(db)
    one_error_line(run(capsys, "--store", db, "interpret", *args), code, fragment)
    assert store_dump(db) == before
