"""Gaussian spaces: ``repspace ingest SPACE FILE --mean-col M --variance-col V`` and search by KL divergence.

The ranking and the scores equal the brute-force ``gaussian_kl`` of every item (an independent closed form),
exactly and through HNSW (``--index hnsw32``); bad input is one error line and nothing is stored."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _cli_process import one_error_line, run_quiet, store_dump

from repspace import Store
from repspace.engines.search.gaussian import gaussian_kl

pytestmark = pytest.mark.numerics

N, D = 400, 8


def _write(path, mean, var, ids=None):
    with open(path, "w") as f:
        for i, (m, v) in enumerate(zip(mean, var)):
            f.write(json.dumps({"id": ids[i] if ids else f"g{i}", "mean": m, "var": v}) + "\n")


@pytest.fixture(scope="module")
def gauss(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gauss")
    rng = np.random.default_rng(5)
    mean = rng.normal(size=(N, D))
    var = np.exp(rng.normal(scale=0.5, size=(N, D)))
    _write(folder / "g.jsonl", mean.tolist(), var.tolist())
    db = folder / "s.db"
    return db, folder / "g.jsonl", mean, var


def test_ranking_equals_brute_force_kl(gauss, capsys):
    db, path, mean, var = gauss
    r = run_quiet(capsys, "--store", str(db), "ingest", "g", str(path), "--mean-col", "mean", "--variance-col", "var")
    assert r.code == 0, r.err
    sp = Store(db).space("g")
    assert sp.provenance["gaussian"]["dim"] == D and sp.dim == 2 * D + 2
    for q in (0, 7, 123):
        ref = np.array([gaussian_kl(mean[q], var[q], mean[j], var[j]) for j in range(N)]).ravel()
        order = [j for j in np.argsort(ref, kind="stable") if j != q][:10]
        hits = sp.search(id=f"g{q}", k=10, method="exact")
        # float32 rows: a KL of ~10 is recovered to ~1e-3 (the norm M² ~ 1e3 times float32's 6e-8, squared terms)
        np.testing.assert_allclose([h.score for h in hits], ref[order], atol=5e-3)
        assert [h.id for h in hits][:5] == [f"g{j}" for j in order][:5]
        vec = np.concatenate([mean[q], var[q]])
        by_vec = sp.search(vec, k=10, method="exact")
        assert by_vec[0].id == f"g{q}" and abs(by_vec[0].score) < 5e-3
        hnsw = sp.search(id=f"g{q}", k=10, index="hnsw32")
        assert len({h.id for h in hnsw} & {f"g{j}" for j in order}) >= 9
    out = run_quiet(capsys, "--store", str(db), "search", "g", "--gaussian",
                    json.dumps({"mean": mean[3].tolist(), "variance": var[3].tolist()}), "-k", "1", "--json")
    assert json.loads(out.out)[0]["id"] == "g3"


@pytest.mark.parametrize("bad, fragment", [
    ({"var": [0.0, 1.0]}, "variance must be a finite number > 0"),
    ({"var": [-1.0, 1.0]}, "variance must be a finite number > 0"),
    ({"mean": [float("nan"), 0.0]}, "NaN"),
    ({"var": [1.0, 1.0, 1.0]}, "a mean of 2 numbers and a variance of 3"),
    ({"mean": "x"}, "is not a non-empty list of numbers"),
])
def test_bad_input_is_one_line_and_stores_nothing(tmp_path, capsys, bad, fragment):
    rows = [{"id": "a", "mean": [0.0, 0.0], "var": [1.0, 1.0]}, {"id": "b", "mean": [1.0, 0.0], "var": [1.0, 2.0]}]
    rows[1].update(bad)
    path = tmp_path / "g.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows).replace("NaN", "NaN") + "\n")
    db = tmp_path / "s.db"
    Store(db).close()
    before = store_dump(db)
    r = run_quiet(capsys, "--store", str(db), "ingest", "g", str(path), "--mean-col", "mean", "--variance-col", "var")
    one_error_line(r, 2, fragment)
    assert store_dump(db) == before
