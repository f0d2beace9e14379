"""``repspace interpret probe|axis|erase`` end to end on real GloVe words: equal to the engines, bad input is one
line, an erased space cannot be probed above the majority rate."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _cli_process import run_quiet
from _data_subsets import glove_words

from repspace import Store
from repspace.engines.interpret import axis, probe

N = 3000


@pytest.fixture(scope="module")
def words() -> tuple[list[str], np.ndarray]:
    return glove_words(N)


@pytest.fixture()
def db(tmp_path: Path, words) -> str:
    ids, x = words
    path = str(tmp_path / "s.db")
    meta = [{"digits": w.isdigit(), "length": len(w), "kind": "number" if w.isdigit() else "word",
             **({"one": "same"} if True else {})} for w in ids]
    with Store(path) as store:
        store.create_space("glove", dim=50).add(ids, x, metadata=meta)
    return path


def test_probe_json_equals_the_engine(capsys, db, words):
    code, out, err = run_quiet(capsys, "--store", db, "interpret", "probe", "glove", "--label-field", "digits",
                               "--json")
    assert code == 0, err
    got = json.loads(out)
    ids, x = words
    want = probe(x, np.array(["true" if w.isdigit() else "false" for w in ids], dtype=object)).to_dict()
    assert got["score"] == pytest.approx(want["score"]) and got["control_score"] == pytest.approx(want["control_score"])
    assert got["score"] > 0.95 and got["selectivity"] > 0.0 and got["label_field"] == "digits"
    code, out, err = run_quiet(capsys, "--store", db, "interpret", "probe", "glove", "--label-field", "length",
                               "--kind", "ridge")
    assert code == 0 and "selectivity" in out, err


def test_axis_scores_every_item_and_saves_them(capsys, db, words):
    code, out, err = run_quiet(capsys, "--store", db, "interpret", "axis", "glove", "--pos", "good,great",
                               "--neg", "bad,poor", "--save", "goodness", "--against", "length", "--json")
    assert code == 0, err
    got = json.loads(out)
    ids, x = words
    where = {w: i for i, w in enumerate(ids)}
    ax = axis(x[[where["good"], where["great"]]], x[[where["bad"], where["poor"]]])
    scores = ax.score(x)
    assert got["top"][0]["id"] == ids[int(np.argmax(scores))] and got["saved"] == N
    assert set(got["significance"]) >= {"rho", "random_p95", "p_value"}
    with Store(db) as store:
        (it,) = store.space("glove").get(["best"])
    assert it.metadata["goodness"] == pytest.approx(scores[where["best"]], abs=1e-6)
    assert it.metadata["goodness"] > 0.2  # "best" lies on the good side


def test_erase_leaves_nothing_a_linear_probe_can_find(capsys, db):
    code, out, err = run_quiet(capsys, "--store", db, "interpret", "erase", "glove", "--label-field", "kind",
                               "--out", "glove-erased", "--json")
    assert code == 0, err
    got = json.loads(out)
    assert got["count"] == N and got["probe_after"]["score"] <= got["probe_after"]["majority"] + 0.02
    with Store(db) as store:
        sp = store.space("glove-erased")
        assert sp.provenance["derived_from"]["spec"] == "leace:kind"
        x = sp.vectors()
        kinds = np.array([it.metadata["kind"] for it in sp.get(sp.ids())])
    np.testing.assert_allclose(x[kinds == "number"].mean(0), x[kinds == "word"].mean(0), atol=1e-4)


@pytest.mark.parametrize("args, message", [
    (["probe", "glove", "--label-field", "one"], "class"),
    (["probe", "glove", "--label-field", "nope"], "nope"),
    (["probe", "glove", "--label-field", "digits", "--cv", "100000"], "fold"),
    (["probe", "glove", "--label-field", "digits", "--kind", "bogus"], "bogus"),
    (["axis", "glove", "--pos", "good", "--neg", "good"], "same"),
    (["axis", "glove", "--pos", "not a stored word", "--neg", "bad"], "not a stored word"),
    (["erase", "glove", "--label-field", "one", "--out", "x"], "class"),
    (["erase", "glove", "--label-field", "kind", "--out", "glove"], "glove"),
])
def test_bad_input_is_one_line_and_changes_nothing(capsys, db, args, message):
    code, out, err = run_quiet(capsys, "--store", db, "interpret", *args)
    assert code != 0 and out == ""
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and message in lines[0], err
    with Store(db) as store:
        assert [s.name for s in store.spaces()] == ["glove"]
        (it,) = store.space("glove").get(["good"])
        assert "goodness" not in it.metadata
