"""``repspace interpret pursuit|attribute|match`` end to end on real GloVe words, over dictionaries fitted by
``repspace interpret sae``: each equal to the engine on the kept models, bad input one error line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from repspace import Store
from repspace.engines.interpret import attribute_pair, match_latents, matching_pursuit, sae_metrics, stability
from repspace.interfaces.cli import main
from repspace.workflows.demo import glove_records
from repspace.workflows.dictionary import load_dictionary

N = 1500
D0, D1 = "sae-64-k4-s0", "sae-64-k4-s1"


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["-q", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> str:
    rec = glove_records()
    path = str(tmp_path_factory.mktemp("dict") / "s.db")
    with Store(path) as store:
        store.create_space("glove", dim=50).add(rec.ids[:N], np.asarray(rec.vectors[:N], dtype=np.float32))
    for seed in (0, 1):
        assert main(["-q", "--store", path, "interpret", "sae", "glove", "--latents", "64", "-k", "4", "--epochs",
                     "3", "--seed", str(seed), "--json"]) == 0
    return path


def _dictionary(db: str, name: str):
    with Store(db) as store:
        sp = store.space("glove")
        return load_dictionary(sp, name), sp.ids(), sp.vectors()


@pytest.mark.parametrize("extra, positive", [([], False), (["-k", "8", "--positive"], True)])
def test_pursuit_equals_the_engine(capsys, db, extra, positive):
    code, out, err = run(capsys, "--store", db, "interpret", "pursuit", "glove", "--dictionary", D0, *extra, "--json")
    assert code == 0, err
    got = json.loads(out)
    d, _, x = _dictionary(db, D0)
    X = d.prepare(x)
    k = 8 if extra else 4
    mp = matching_pursuit(X, d.model, k, positive=positive)
    sq = (mp.residual_norms ** 2).sum(axis=0)
    X64 = X.astype(np.float64)
    fvu = sq[-1] / ((X64 - X64.mean(axis=0)) ** 2).sum()
    assert (got["k"], got["n"], got["positive"]) == (k, N, positive)
    assert got["residual_shares"] == pytest.approx((sq / sq[0]).tolist())
    assert got["fvu_pursuit"] == pytest.approx(fvu) and got["fvu_sae"] == pytest.approx(sae_metrics(d.model, X).fvu)
    assert got["amortisation_gap"] == pytest.approx(got["fvu_sae"] - got["fvu_pursuit"])
    code, out, err = run(capsys, "--store", db, "interpret", "pursuit", "glove", "--dictionary", D0, *extra)
    assert code == 0 and "matching pursuit" in out and f"{fvu:.4f}" in out, err


def test_attribute_equals_the_engine_and_sums_to_the_cosine(capsys, db):
    code, out, err = run(capsys, "--store", db, "interpret", "attribute", "glove", "man", "woman", "--dictionary",
                         D0, "--top", "100", "--json")
    assert code == 0, err
    got = json.loads(out)
    d, ids, x = _dictionary(db, D0)
    X = d.prepare(x)
    want = attribute_pair(d.model, X[ids.index("man")], X[ids.index("woman")]).to_dict()
    assert got["cosine"] == pytest.approx(want["cosine"]) and got["bias"] == pytest.approx(want["bias"])
    assert [r["latent"] for r in got["latents"]] == [r["latent"] for r in want["latents"]]
    assert sum(r["contribution"] for r in got["latents"]) + got["bias"] == pytest.approx(got["cosine"], abs=1e-9)
    code, out, err = run(capsys, "--store", db, "interpret", "attribute", "glove", "man", "woman", "--dictionary",
                         D0, "--top", "2")
    assert code == 0 and f"{want['cosine']:.4f}" in out, err


def test_match_equals_the_engine(capsys, db):
    code, out, err = run(capsys, "--store", db, "interpret", "match", "glove", D0, "glove", D1, "--per-latent",
                         "--json")
    assert code == 0, err
    got = json.loads(out)
    a, _, _ = _dictionary(db, D0)
    b, _, _ = _dictionary(db, D1)
    want = match_latents(a.model, b.model).to_dict(per_latent=True)
    assert got["match"]["matches"] == [{**m, "cosine": pytest.approx(m["cosine"])} for m in want["matches"]]
    assert got["match"]["share_mutual"] == pytest.approx(want["share_mutual"])
    assert got["one_to_one"] == pytest.approx(stability(a.model, b.model).to_dict())
    code, out, err = run(capsys, "--store", db, "interpret", "match", "glove", D0, "glove", D0, "--json")
    same = json.loads(out)
    assert code == 0 and same["match"]["share_mutual"] == 1.0 and same["one_to_one"]["share_matched"] == 1.0
    code, out, err = run(capsys, "--store", db, "interpret", "match", "glove", D0, "glove", D1)
    assert code == 0 and "mutual best matches" in out, err


@pytest.mark.parametrize("args, code, message", [
    (["pursuit", "glove", "--dictionary", "sae-9-k9-s9"], 3, "no dictionary 'sae-9-k9-s9'"),
    (["pursuit", "glove", "--dictionary", D0, "-k", "0"], 2, "k"),
    (["pursuit", "glove", "--dictionary", "../x"], 2, "x"),
    (["attribute", "glove", "man", "zzzqqq", "--dictionary", D0], 2, "zzzqqq"),
    (["match", "glove", D0, "glove", "nope"], 3, "nope"),
])
def test_bad_input_is_one_line_and_writes_nothing(capsys, db, args, code, message):
    with Store(db) as store:
        before = sorted(p.name for p in (Path(store.index_dir) / store.space("glove").uid / "dictionaries").iterdir())
    got, out, err = run(capsys, "--store", db, "interpret", *args)
    assert got == code and out == ""
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and message in lines[0], err
    with Store(db) as store:
        after = sorted(p.name for p in (Path(store.index_dir) / store.space("glove").uid / "dictionaries").iterdir())
        assert [s.name for s in store.spaces()] == ["glove"]
    assert after == before
