"""``repspace transform`` end to end: a derived space from a stored one, and bad input as one line."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _cli_process import run

from repspace import Store


@pytest.fixture()
def db(tmp_path, glove_vectors) -> str:
    path = str(tmp_path / "s.db")
    with Store(path) as store:
        store.create_space("glove", dim=50).add([f"w{i}" for i in range(1000)],
                                               np.ascontiguousarray(glove_vectors[:1000], np.float32))
    return path


def test_transform_then_diagnose_the_derived_space(capsys, db):
    code, out, err = run(capsys, "--store", db, "transform", "glove", "glove-abtt", "--spec", "center,abtt3", "--json")
    assert code == 0, err
    info = json.loads(out)
    assert info["name"] == "glove-abtt" and info["count"] == 1000 and info["dim"] == 50
    assert info["provenance"]["transforms_spec"] == "center,abtt3"
    code, out, err = run(capsys, "--store", db, "diagnose", "glove", "--json")
    before = json.loads(out)
    code, out, err = run(capsys, "--store", db, "diagnose", "glove-abtt", "--json")
    after = json.loads(out)
    assert code == 0, err
    # removing the mean and the top directions makes the space more isotropic
    assert abs(after["isotropy.mean_cosine"]["value"]) < abs(before["isotropy.mean_cosine"]["value"])


@pytest.mark.parametrize("args, message", [
    (["transform", "glove", "g2", "--spec", "whiten0"], "whiten"),
    (["transform", "nope", "g2", "--spec", "center"], "no space"),
    (["transform", "glove", "glove", "--spec", "center"], "already exists"),
    (["transform", "glove", "g2", "--spec", "pca999"], "n_components=999"),
])
def test_bad_input_is_one_line_and_changes_nothing(capsys, db, args, message):
    code, out, err = run(capsys, "--store", db, *args)
    assert code != 0 and message in err and len(err.strip().splitlines()) == 1, err
    with Store(db) as store:
        assert [s.name for s in store.spaces()] == ["glove"]
