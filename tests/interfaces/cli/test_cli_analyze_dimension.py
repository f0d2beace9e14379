"""``repspace analyze limit|dimension|track`` end to end: JSON equal to the library, one error line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _cli_process import one_error_line, run, store_dump

from repspace import Store
from repspace.analyze import limit_curve, linear_nonlinear_id, space_quality


@pytest.fixture()
def db(tmp_path: Path, glove_vectors) -> str:
    x = np.ascontiguousarray(glove_vectors[:300], np.float32)
    rng = np.random.default_rng(0)
    path = str(tmp_path / "s.db")
    with Store(path) as store:
        store.create_space("glove", dim=50).add([f"w{i}" for i in range(300)], x,
                                                metadata=[{"sample": i // 3} for i in range(300)])
        later = x + 0.05 * rng.standard_normal(x.shape).astype(np.float32)
        store.create_space("later", dim=50).add([f"w{i}" for i in range(300)], later,
                                                metadata=[{"sample": i // 3} for i in range(300)])
    return path


def test_limit_json_equals_the_library(capsys):
    code, out, err = run(capsys, "analyze", "limit", "--n", "6,10", "--json")
    assert code == 0, err
    assert json.loads(out) == json.loads(json.dumps(limit_curve([6, 10]).to_dict()))
    code, out, err = run(capsys, "analyze", "limit", "--n", "6")
    assert code == 0 and "paper's d" in out, err


def test_dimension_json_equals_the_library(capsys, db):
    code, out, err = run(capsys, "--store", db, "analyze", "dimension", "glove", "--json")
    assert code == 0, err
    with Store(db) as store:
        direct = linear_nonlinear_id(store.space("glove").vectors())
    assert json.loads(out) == {"space": "glove", **json.loads(json.dumps(direct.to_dict()))}
    code, out, err = run(capsys, "--store", db, "analyze", "dimension", "glove")
    assert code == 0 and "TwoNN" in out, err


def test_track_json_equals_the_library_per_space(capsys, db):
    code, out, err = run(capsys, "--store", db, "analyze", "track", "glove", "later", "--views-field", "sample",
                         "--json")
    assert code == 0, err
    d = json.loads(out)
    with Store(db) as store:
        for row, name in zip(d["spaces"], ("glove", "later")):
            direct = space_quality(store.space(name).vectors(), [i // 3 for i in range(300)])
            assert row == {"space": name, **json.loads(json.dumps(direct.to_dict()))}
    code, out, err = run(capsys, "--store", db, "analyze", "track", "glove", "later")
    assert code == 0 and "LiDAR" in out, err


@pytest.mark.parametrize("args, fragment", [
    (["track", "glove"], "at least 2 spaces"),
    (["track", "glove", "later", "--views-field", "nothing"], "has a field"),
    (["limit", "--n", "6,x"], "comma-separated integers"),
    (["limit", "--n", "3", "--k", "3"], "k must be below n"),
    (["limit", "--n", "6", "--loss", "mse"], "loss"),
    (["dimension"], "give a space"),
    (["dimension", "glove", "--encoder", "hf-layers:minilm"], "not both"),
])
def test_bad_input_is_one_error_line_and_changes_nothing(capsys, db, args, fragment):
    before = store_dump(db)
    one_error_line(run(capsys, "--store", db, "analyze", *args), 2, fragment)
    assert store_dump(db) == before
