"""``repspace compare`` end to end."""

from __future__ import annotations

import json

import numpy as np
import pytest

from repspace import Store
from repspace.cli import main


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture()
def db(tmp_path, glove_vectors) -> str:
    path = str(tmp_path / "s.db")
    x = np.ascontiguousarray(glove_vectors[:800], np.float32)
    with Store(path) as store:
        store.create_space("a", dim=50).add([f"w{i}" for i in range(800)], x)
        store.create_space("b", dim=50).add([f"w{i}" for i in range(800)], x - x.mean(axis=0))
    return path


def test_compare_json_table_and_changed(capsys, db):
    code, out, err = run(capsys, "--store", db, "compare", "a", "b", "--json", "--changed", "3")
    assert code == 0, err
    data = json.loads(out)
    assert data["n_shared"] == 800 and len(data["changed"]) == 3
    assert data["cka_linear"] == pytest.approx(1.0)  # centring does not change linear CKA
    assert data["mutual_knn"]["value"] < 1.0  # but it moves cosine neighbourhoods
    code, out, err = run(capsys, "--store", db, "compare", "a", "b", "--measures", "cka_linear,procrustes")
    assert code == 0, err
    assert "cka_linear" in out and "800 shared" in out


@pytest.mark.parametrize("args, message", [
    (["compare", "a", "nope"], "no space"),
    (["compare", "a", "b", "--measures", "soup"], "unknown measure"),
    (["compare", "a", "b", "-k", "0"], "k"),
])
def test_bad_input_is_one_line(capsys, db, args, message):
    code, out, err = run(capsys, "--store", db, *args)
    assert code != 0 and message in err and len(err.strip().splitlines()) == 1, err
