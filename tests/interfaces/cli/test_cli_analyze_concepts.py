"""``repspace analyze hierarchy|circular|topics|parallelograms`` end to end: JSON equal to the engines on the same
vectors, tables, and one error line for bad input (nothing stored changes)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _cli_process import one_error_line, run, store_dump
from _data_subsets import glove_words

from repspace import Store
from repspace.engines.analyze import circularity, parallelograms, topic_geometry

DAYS = "monday,tuesday,wednesday,thursday,friday,saturday,sunday"
QUADS = ["man,woman,king,queen", "france,paris,italy,rome", "boy,girl,brother,sister"]


@pytest.fixture(scope="module")
def words():
    return glove_words(30000)


@pytest.fixture()
def db(tmp_path: Path, words) -> str:
    ids, x = words
    path = str(tmp_path / "s.db")
    with Store(path) as store:
        store.create_space("glove", dim=50).add(ids, x)
        store.create_space("tagged", dim=50).add(ids[:400], x[:400], metadata=[{"initial": w[0]} for w in ids[:400]])
    return path


def _json(capsys, db: str, *args: str) -> dict:
    code, out, err = run(capsys, "--store", db, "analyze", *args, "--json")
    assert code == 0, err
    return json.loads(out)


def test_hierarchy_json_is_the_library_and_the_table_shows_both_rows(capsys, db):
    from repspace.analyze import hierarchy_space

    d = _json(capsys, db, "hierarchy", "glove", "--root", "animal.n.01", "--depth", "2", "--min-words", "10",
              "--shuffles", "2")
    with Store(db) as store:
        direct = hierarchy_space(store.space("glove"), root="animal.n.01", depth=2, min_words=10, shuffles=2)
    assert d == json.loads(json.dumps(direct.to_dict()))
    assert d["n_pairs"] >= 3 and d["baseline"]["shuffles"] == 2
    code, out, err = run(capsys, "--store", db, "analyze", "hierarchy", "glove", "--root", "animal.n.01",
                         "--depth", "2", "--min-words", "10", "--shuffles", "1")
    assert code == 0 and "shuffled" in out and "most orthogonal" in out, err


def test_circular_json_is_the_engine_on_the_days(capsys, db, words):
    ids, x = words
    d = _json(capsys, db, "circular", "glove", "--items", DAYS, "--permutations", "200")
    days = DAYS.split(",")
    direct = circularity(x[[ids.index(w) for w in days]], days, permutations=200)
    assert d == {"space": "glove", **json.loads(json.dumps(direct.to_dict()))}
    code, out, err = run(capsys, "--store", db, "analyze", "circular", "glove", "--items", DAYS)
    assert code == 0 and "resultant R" in out and "saturday" in out, err


def test_topics_json_is_the_engine_over_the_labelled_items(capsys, db, words):
    ids, x = words
    d = _json(capsys, db, "topics", "tagged", "--label-field", "initial", "--normalize")
    direct = topic_geometry(x[:400], [w[0] for w in ids[:400]], normalize=True)
    assert d == {"space": "tagged", "label_field": "initial", **json.loads(json.dumps(direct.to_dict()))}
    code, out, err = run(capsys, "--store", db, "analyze", "topics", "tagged", "--label-field", "initial")
    assert code == 0 and "separation" in out, err


def test_parallelograms_json_is_the_engine(capsys, db, words):
    ids, x = words
    args = [a for q in QUADS for a in ("--quad", q)]
    d = _json(capsys, db, "parallelograms", "glove", *args, "--distractors", "1", "--draws", "4")
    quads = [q.split(",") for q in QUADS]
    Q = x[[ids.index(w) for q in quads for w in q]].astype(np.float64).reshape(3, 4, 50)
    direct = parallelograms(Q, quads, distractors=1, draws=4)
    assert d == {"space": "glove", **json.loads(json.dumps(direct.to_dict()))}
    code, out, err = run(capsys, "--store", db, "analyze", "parallelograms", "glove", *args)
    assert code == 0 and "king" in out and "mean" in out, err


@pytest.mark.parametrize("args, fragment", [
    (["hierarchy", "glove", "--root", "felines.n.01"], "not a noun synset"),
    (["hierarchy", "glove", "--root", "dog"], "synset name"),
    (["hierarchy", "glove", "--root", "abyssinian.n.01", "--depth", "1"], "no (parent, child) pair"),
    (["hierarchy", "glove", "--min-words", "1"], "min_words"),
    (["circular", "glove", "--items", "monday,tuesday,wednesday"], "at least 4"),
    (["circular", "glove", "--items", "monday,tuesday,xyzzyday,thursday"], "'xyzzyday'"),
    (["circular", "glove", "--items", "monday,,tuesday"], "none empty"),
    (["circular", "glove", "--items", "monday,tuesday,monday,friday"], "named twice"),
    (["topics", "tagged", "--label-field", "nope"], "no item"),
    (["topics", "glove", "--label-field", "initial"], "no item"),
    (["parallelograms", "glove", "--quad", "man,woman,king,queen"], "at least 2 quadruples"),
    (["parallelograms", "glove", "--quad", "man,woman,king", "--quad", "a,b,c,d"], "4 words"),
    (["parallelograms", "glove", "--quad", "man,woman,king,qqqx", "--quad", "a,b,c,d"], "'qqqx'"),
    (["parallelograms", "glove", "--quad", QUADS[0], "--quad", QUADS[1], "--distractors", "50"], "distractors"),
])
def test_bad_input_is_one_error_line_and_changes_nothing(capsys, db, args, fragment):
    before = store_dump(db)
    one_error_line(run(capsys, "--store", db, "analyze", *args), 2, fragment)
    assert store_dump(db) == before
