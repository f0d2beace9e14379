"""``repspace analyze ideal-words|feature-audit|feature-norms|simplex`` end to end: JSON equal to the engines on
the same vectors, tables, and one error line for bad input (nothing stored changes)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from _cli_process import one_error_line, run, store_dump
from _data_subsets import glove_words

from repspace import Store
from repspace.engines.analyze import feature_audit, feature_norm_prediction, ideal_words

TENSES = ["walk,play,look,work,talk", "walked,played,looked,worked,talked", "walking,playing,looking,working,talking"]


@pytest.fixture(scope="module")
def words():
    return glove_words(30000)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory, words) -> str:
    """One store for the module: no command here writes to it (the error tests check that it is unchanged)."""
    ids, x = words
    path = str(tmp_path_factory.mktemp("features") / "s.db")
    meta = [{"log_rank": math.log(i + 1), "initial": w[0], "alpha": w.isalpha()} for i, w in enumerate(ids[:2000])]
    phrases = [f"{a} {o}" for a in ("red", "blue", "green") for o in ("car", "cup", "hat", "box")]
    rng = np.random.default_rng(0)
    with Store(path) as store:
        store.create_space("glove", dim=50).add(ids, x)
        store.create_space("tagged", dim=50).add(ids[:2000], x[:2000], metadata=meta)
        store.create_space("phrases", dim=8).add(phrases, rng.standard_normal((12, 8)))
    return path


def _json(capsys, db: str, *args: str) -> dict:
    code, out, err = run(capsys, "--store", db, "analyze", *args, "--json")
    assert code == 0, err
    return json.loads(out)


def test_ideal_words_json_is_the_engine_on_rows_and_on_a_template(capsys, db, words):
    ids, x = words
    args = [a for r in TENSES for a in ("--row", r)]
    d = _json(capsys, db, "ideal-words", "glove", *args)
    rows = [r.split(",") for r in TENSES]
    U = x[[ids.index(w) for r in rows for w in r]].reshape(3, 5, 50)
    direct = ideal_words(U, [r[0] for r in rows], rows[0])
    assert d == {"source": "glove", "template": None, **json.loads(json.dumps(direct.to_dict()))}
    assert d["held_out"]["ideal_words"]["mean_rank"] < d["held_out"]["mean"]["mean_rank"]
    d = _json(capsys, db, "ideal-words", "phrases", "--attributes", "red,blue,green", "--objects", "car,cup,hat,box",
              "--no-normalize")
    assert d["n_cells"] == 12 and d["normalized"] is False and d["template"] == "{attribute} {object}"
    code, out, err = run(capsys, "--store", db, "analyze", "ideal-words", "glove", *args)
    assert code == 0 and "ideal words" in out and "worst cells" in out, err


def test_feature_audit_json_is_the_engine(capsys, db, words):
    ids, x = words
    d = _json(capsys, db, "feature-audit", "tagged", "--feature", "log_rank", "--feature", "initial",
              "--feature", "alpha")
    feats = {"log_rank": [math.log(i + 1) for i in range(2000)], "initial": [w[0] for w in ids[:2000]],
             "alpha": ["true" if w.isalpha() else "false" for w in ids[:2000]]}
    direct = feature_audit(x[:2000], feats)
    assert d == {"space": "tagged", **json.loads(json.dumps(direct.to_dict()))}
    code, out, err = run(capsys, "--store", db, "analyze", "feature-audit", "tagged", "--feature", "log_rank")
    assert code == 0 and "log_rank" in out and "chance" in out, err


def test_feature_norms_json_is_the_engine(capsys, db, words, tmp_path):
    ids, x = words
    rng = np.random.default_rng(1)
    rows = [i for i, w in enumerate(ids) if w.isalpha()][:300]  # GloVe has "," and '"' among its words
    chosen = [ids[i] for i in rows]
    Y = x[rows].astype(np.float64) @ rng.standard_normal((50, 3)) + rng.standard_normal((300, 3))
    lines = ["word,a,b,c"] + [f"{w},{y[0]:.6f},{y[1]:.6f},{y[2]:.6f}" for w, y in zip(chosen, Y)]
    lines.append("qqqxnotaword,1,2,3")
    path = tmp_path / "norms.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    d = _json(capsys, db, "feature-norms", "glove", "--norms", str(path), "--components", "5", "--folds", "4")
    Yr = np.array([[float(v) for v in line.split(",")[1:]] for line in lines[1:301]])
    direct = feature_norm_prediction(x[rows], Yr, ["a", "b", "c"], components=5, folds=4)
    assert d == {"space": "glove", "norms_file": "norms.csv", "words": 301, "missing": 1,
                 **json.loads(json.dumps(direct.to_dict()))}
    assert d["mean_ridge_r2"] > 0.5
    code, out, err = run(capsys, "--store", db, "analyze", "feature-norms", "glove", "--norms", str(path))
    assert code == 0 and "PLSR" in out and "mean" in out, err


def test_simplex_json_is_the_workflow_and_the_table_reads(capsys, db):
    from repspace.analyze import simplex_space

    d = _json(capsys, db, "simplex", "glove", "--folds", "3")
    with Store(db) as store:
        direct = simplex_space(store.space("glove"), folds=3)
    assert d == json.loads(json.dumps(direct.to_dict()))
    assert d["k"] == 4 and d["affinely_independent"] is True
    code, out, err = run(capsys, "--store", db, "analyze", "simplex", "glove", "--synsets",
                         "dog.n.01,cat.n.01,horse.n.01", "--folds", "3")
    assert code == 0 and "affinely independent: yes" in out and "nearest vertex" in out, err


@pytest.mark.parametrize("args, fragment", [
    (["ideal-words", "glove"], "--attributes and --objects"),
    (["ideal-words"], "--attributes and --objects"),
    (["ideal-words", "--attributes", "red,blue", "--objects", "car,cup"], "give a space"),
    (["ideal-words", "glove", "--row", "walk,walked"], "at least 2 rows"),
    (["ideal-words", "glove", "--row", "walk,walked", "--row", "play"], "same number of cells"),
    (["ideal-words", "glove", "--row", "walk,qqqx", "--row", "play,played"], "'qqqx'"),
    (["ideal-words", "glove", "--row", "walk,walked", "--row", "play,played", "--attributes", "a,b"], "not both"),
    (["ideal-words", "glove", "--attributes", "red,blue", "--objects", "car,cup"], "'red car'"),
    (["ideal-words", "phrases", "--attributes", "red,blue", "--objects", "car", "--template", "{attribute}"],
     "template"),
    (["ideal-words", "phrases", "--attributes", "red,,blue", "--objects", "car,cup"], "none empty"),
    (["feature-audit", "tagged"], "--feature"),
    (["feature-audit", "tagged", "--feature", "nope"], "no item"),
    (["feature-audit", "tagged", "--feature", "initial", "--categorical", "log_rank"], "not one of the features"),
    (["feature-norms", "glove", "--norms", "/nonexistent/n.csv"], "cannot read"),
    (["simplex", "glove", "--synsets", "mammal.n.01"], "at least 2 categories"),
    (["simplex", "glove", "--synsets", "mammal.n.01,nope.n.01"], "not a noun synset"),
    (["simplex", "glove", "--synsets", "mammal.n.01,mammal.n.01"], "named twice"),
    (["simplex", "glove", "--synsets", "mammal.n.01,abyssinian.n.01"], "of its own"),
])
def test_bad_input_is_one_error_line_and_changes_nothing(capsys, db, args, fragment):
    before = store_dump(db)
    one_error_line(run(capsys, "--store", db, "analyze", *args), 2, fragment)
    assert store_dump(db) == before


@pytest.mark.parametrize("text, fragment", [
    ("word,a\ncat,1\ncat,2\n", "twice"),
    ("word,a\ncat,x\n", "not a number"),
    ("word,a\ncat,1,2\n", "columns"),
    ("word\ncat\n", "no norm column"),
    ("word,a\ncat,1\ndog,2\n", "the test needs"),
])
def test_bad_norm_files_are_one_error_line(capsys, db, tmp_path, text, fragment):
    path = tmp_path / "n.csv"
    path.write_text(text, encoding="utf-8")
    one_error_line(run(capsys, "--store", db, "analyze", "feature-norms", "glove", "--norms", str(path)), 2,
                   fragment)
