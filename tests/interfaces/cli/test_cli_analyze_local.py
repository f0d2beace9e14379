"""``repspace analyze similarity-ci|local-topology`` end to end: JSON equal to the library, metadata saved, one
error line for bad input and nothing stored changed."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _cli_process import one_error_line, run, store_dump

from repspace import Store
from repspace.analyze import local_topology, similarity_ci, spread_out


@pytest.fixture()
def db(tmp_path: Path, glove_vectors) -> str:
    x = np.ascontiguousarray(glove_vectors[:400], np.float32)
    path = str(tmp_path / "s.db")
    with Store(path) as store:
        store.create_space("glove", dim=50).add([f"w{i}" for i in range(400)], x,
                                                metadata=[{"word": f"g{i % 40}", "topic": i % 3}
                                                          for i in range(400)])
        store.create_space("other", dim=50).add([f"o{i}" for i in range(300)],
                                                np.ascontiguousarray(glove_vectors[1000:1300], np.float32))
        store.create_space("l2", dim=50, metric="l2").add(["z0", "z1"], x[:2])
    return path


def test_similarity_ci_json_equals_the_library(capsys, db, glove_vectors):
    code, out, err = run(capsys, "--store", db, "analyze", "similarity-ci", "glove", "--a", "w0,w1,w2,w3",
                         "--b", "w10,w11,nope", "--c", "w20,w21,w22", "--resamples", "200", "--pairs", "5000",
                         "--json")
    assert code == 0, err
    d = json.loads(out)
    x = np.asarray(glove_vectors[:400], np.float32).astype(np.float64)
    direct = similarity_ci(x[0:4], x[10:12], x[20:23], resamples=200)
    assert d["ci"] == json.loads(json.dumps(direct.to_dict()))
    assert d["spread"] == json.loads(json.dumps(spread_out(x, pairs=5000).to_dict()))
    assert d["missing"] == {"a": [], "b": ["nope"], "c": []}
    code, out, err = run(capsys, "--store", db, "analyze", "similarity-ci", "glove", "--by", "word", "--a", "g0",
                         "--b", "g1", "--c", "g2", "--resamples", "100", "--pairs", "0")
    assert code == 0 and "order flips" in out and "non-matching" not in out, err


def test_local_topology_json_equals_the_library_and_saves(capsys, db, glove_vectors):
    code, out, err = run(capsys, "--store", db, "analyze", "local-topology", "glove", "-k", "7", "--save", "lt",
                         "--json")
    assert code == 0, err
    d = json.loads(out)
    x = np.asarray(glove_vectors[:400], np.float32)
    direct = local_topology(x, k=7)
    assert {k: v for k, v in d.items() if k not in ("space", "against", "label_field", "same_id_excluded", "saved", "fields")} \
        == json.loads(json.dumps(direct.to_dict()))
    assert d["saved"] == 400 and d["fields"] == ["lt_kdist", "lt_mean_kdist", "lt_local_id", "lt_entropy"]
    with Store(db) as store:
        meta = store.space("glove").get(["w5"])[0].metadata
    assert meta["lt_local_id"] == round(float(direct.local_id[5]), 6) and meta["word"] == "g5"
    code, out, err = run(capsys, "--store", db, "analyze", "local-topology", "glove", "--against", "other", "-k",
                         "5")
    assert code == 0 and "against other" in out, err
    code, out, err = run(capsys, "--store", db, "analyze", "local-topology", "glove", "--label-field", "topic",
                         "-k", "5", "--json")
    assert code == 0, err
    labels = [i % 3 for i in range(400)]
    assert json.loads(out)["features"] == json.loads(json.dumps(local_topology(x, k=5, labels=labels).to_dict()))[
        "features"]


@pytest.mark.parametrize("args, fragment", [
    (["similarity-ci", "glove", "--a", "x,y", "--b", "w1"], "none of"),
    (["similarity-ci", "glove", "--a", "w0,,w1", "--b", "w1"], "none empty"),
    (["similarity-ci", "glove", "--by", "word", "--a", "zz", "--b", "g1"], "no item has word"),
    (["similarity-ci", "glove", "--a", "w0", "--b", "w1", "--over", "words"], "over must be one of"),
    (["similarity-ci", "glove", "--a", "w0", "--b", "w1", "--level", "1.5"], "level"),
    (["local-topology", "glove", "-k", "1"], "k must be"),
    (["local-topology", "l2", "-k", "2"], "needs at least 3"),
    (["local-topology", "glove", "--against", "l2"], "metric"),
    (["local-topology", "glove", "--label-field", "nothing"], "field"),
    (["local-topology", "glove", "--save", " "], "prefix"),
])
def test_bad_input_is_one_error_line_and_changes_nothing(capsys, db, args, fragment):
    before = store_dump(db)
    one_error_line(run(capsys, "--store", db, "analyze", *args), 2, fragment)
    assert store_dump(db) == before


def test_learn_checkpoints_then_track_them(capsys, tmp_path, lee_path):
    db = str(tmp_path / "t.db")
    code, out, err = run(capsys, "--store", db, "learn", "word2vec", str(lee_path), "--space", "lee", "--epochs",
                         "3", "--min-count", "10", "--vector-size", "20", "--checkpoints", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["checkpoints"] == ["lee@epoch1", "lee@epoch2", "lee@epoch3"] and len(d["epoch_loss"]) == 3
    code, out, err = run(capsys, "--store", db, "analyze", "track", *d["checkpoints"], "-k", "10", "--json")
    assert code == 0, err
    assert [s["space"] for s in json.loads(out)["spaces"]] == d["checkpoints"]
    before = store_dump(db)
    one_error_line(run(capsys, "--store", db, "learn", "word2vec", str(lee_path), "--space", "lee2",
                       "--checkpoints", "--checkpoint-name", "x"), 2, "each epoch differently")
    assert store_dump(db) == before
