"""``repspace diagnose`` end to end: a table with readings, JSON in METRICS.md names, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from repspace import Store
from repspace.cli import main
from repspace.geometry.diagnose import diagnose


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture()
def db(tmp_path: Path, glove_vectors) -> str:
    x = np.ascontiguousarray(glove_vectors[:2000], np.float32)
    path = str(tmp_path / "s.db")
    with Store(path) as store:
        store.create_space("glove", dim=50).add([f"w{i}" for i in range(2000)], x)
        store.create_space("tiny", dim=50).add(["a", "b"], x[:2])
    return path


def test_json_equals_the_engine_on_the_stored_vectors(capsys, db):
    code, out, err = run(capsys, "--store", db, "diagnose", "glove", "--json")
    assert code == 0, err
    data = json.loads(out)
    with Store(db) as store:
        direct = diagnose(store.space("glove").vectors()).to_dict()
    assert data["n"] == 2000 and data["metric"] == "cosine"
    for key in ("hubness.k_skewness", "isotropy.isoscore", "intrinsic_dimension.twonn", "rank.effective_rank"):
        assert data[key] == pytest.approx(direct[key])
    assert data["hubness.knn"]["method"] == "exact"


def test_table_and_readings(capsys, db):
    code, out, err = run(capsys, "--store", db, "diagnose", "glove", "-k", "5")
    assert code == 0, err
    assert "hubness.k_skewness" in out and "intrinsic dimension" in out


@pytest.mark.parametrize("args, message", [
    (["diagnose", "nope"], "no space"),
    (["diagnose", "tiny"], "needs more than 10"),
])
def test_bad_input_is_one_line(capsys, db, args, message):
    code, out, err = run(capsys, "--store", db, *args)
    assert code != 0 and message in err and len(err.strip().splitlines()) == 1
