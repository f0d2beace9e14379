"""Static pruning: quality scores from their definitions, the kept share, the new space, and the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _cli_process import run, store_dump

from repspace import Store
from repspace.engines.search.pruning import kept_rows, quality_scores
from repspace.workflows.search.prune import prune_space

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


def test_scores_equal_their_definitions():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((80, 6)) * rng.uniform(0.5, 2.0, (80, 1))
    np.testing.assert_allclose(quality_scores(x, "norm"), [np.sqrt(sum(v * v for v in row)) for row in x], rtol=1e-12)
    unit = x / np.linalg.norm(x, axis=1, keepdims=True)
    centre = unit.mean(axis=0) / np.linalg.norm(unit.mean(axis=0))
    np.testing.assert_allclose(quality_scores(x, "centroid"), unit @ centre, atol=1e-6)  # float32 rows, |cos| <= 1
    # k-occurrence by a double loop over cosine similarities
    sims = unit @ unit.T
    counts = np.zeros(80)
    for i in range(80):
        order = [j for j in np.argsort(-sims[i], kind="stable") if j != i][:5]
        counts[order] += 1
    assert quality_scores(x, "hubness", k=5).tolist() == counts.tolist()
    assert quality_scores(x, "hubness", k=5).sum() == 80 * 5
    a, b = quality_scores(x, "random", seed=3), quality_scores(x, "random", seed=3)
    assert a.tolist() == b.tolist() and a.tolist() != quality_scores(x, "random", seed=4).tolist()


@pytest.mark.parametrize("drop, kept", [(0.0, 10), (0.25, 8), (0.5, 5), (0.99, 0)])
def test_kept_rows_drop_the_lowest(drop, kept):
    scores = np.arange(10)[::-1].astype(float)  # row 0 best
    assert kept_rows(scores, drop).tolist() == list(range(kept))


@pytest.fixture()
def db(tmp_path):
    path = str(tmp_path / "s.db")
    rng = np.random.default_rng(0)
    x = np.vstack([rng.standard_normal((95, 8)) + 3.0, rng.standard_normal((5, 8)) - 3.0])  # 5 far-off items
    with Store(path) as store:
        store.create_space("docs", dim=8).add([f"d{i}" for i in range(100)], x, texts=[f"t{i}" for i in range(100)],
                                              metadata=[{"n": i} for i in range(100)])
    return path


def test_prune_writes_the_kept_items_whole(db):
    with Store(db) as store:
        sp = store.space("docs")
        res = prune_space(sp, 0.05, "centroid", out="docs-pruned")
        assert set(res.dropped_ids) == {f"d{i}" for i in range(95, 100)}
        new = store.space("docs-pruned")
        assert new.info().count == 95 and sp.info().count == 100
        item = new.get(["d7"])[0]
        assert (item.text, item.metadata) == ("t7", {"n": 7})
        np.testing.assert_array_equal(new.vectors_of(["d7"]), sp.vectors_of(["d7"]))
        assert res.to_dict()["kept"] == 95


def test_cli_prune_and_bad_input(capsys, db):
    code, out, err = run(capsys, "--store", db, "index", "prune", "docs", "--drop", "0.05", "--json")
    assert code == 0, err
    assert json.loads(out)["out"] is None and len(json.loads(out)["dropped_ids"]) == 5
    before = store_dump(db)
    for args, message, want in [(["--drop", "1.5"], "--drop", 2), (["--drop", "0.1", "--by", "length"], "--by", 2),
                                (["--drop", "0.1", "--out", "docs"], "already exists", 4)]:  # 4: a conflict
        code, out, err = run(capsys, "--store", db, "index", "prune", "docs", *args)
        assert code == want and out == "" and err.startswith("error: ") and message in err, err
        assert len(err.strip().splitlines()) == 1
    assert store_dump(db) == before
