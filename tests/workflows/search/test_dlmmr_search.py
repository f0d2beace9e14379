"""DL-MMR through ``search_space`` and ``repspace search --mmr --mmr-length``: the pool's picks as the formula
gives them."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _cli_process import run, store_dump

from repspace import Store
from repspace.engines.search.dlmmr import length_mmr
from repspace.workflows.search import search_space

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa".split()


@pytest.fixture()
def db(tmp_path):
    path = str(tmp_path / "s.db")
    rng = np.random.default_rng(4)
    n = 120
    texts = [" ".join(rng.choice(WORDS, size=int(rng.integers(1, 60)))) for _ in range(n)]
    with Store(path) as store:
        sp = store.create_space("docs", dim=8)
        sp.add([f"d{i}" for i in range(n)], rng.standard_normal((n, 8)), texts=texts,
               metadata=[{"chars": len(t), "label": "x"} for t in texts])
    return path


@pytest.mark.parametrize("field", ["text", "chars"])
def test_search_equals_length_mmr_over_the_nearest_pool(db, field):
    with Store(db) as store:
        sp = store.space("docs")
        q = sp.vectors_of(["d0"])[0]
        res = search_space(sp, q, k=5, mmr=0.3, mmr_length=field)
        # the pool: the 50 nearest by brute force (cosine), lengths read back from the items
        ids = [f"d{i}" for i in range(120)]
        items = sp.get(ids)
        x = sp.vectors_of(ids).astype(np.float64)
        cos = x @ q / (np.linalg.norm(x, axis=1) * np.linalg.norm(q))
        pool = np.argsort(-cos, kind="stable")[:50]
        lengths = [len(items[i].text.split()) if field == "text" else items[i].metadata["chars"] for i in pool]
        _, rows = length_mmr(q, x[pool], pool, lengths, 5, lambda_=0.3)
        assert [h.id for h in res.hits] == [f"d{r}" for r in rows]
        assert res.plan.method.endswith(f"dl-mmr ({field})")
        plain = search_space(sp, q, k=5, mmr=0.3)
        assert [h.id for h in plain.hits] != [h.id for h in res.hits]  # the length term changes the picks


def test_cli_search_with_mmr_length(capsys, db):
    code, out, err = run(capsys, "--store", db, "search", "docs", "--id", "d1", "--mmr", "0.5", "--mmr-length",
                         "text", "-k", "4", "--json")
    assert code == 0, err
    assert len(json.loads(out)) == 4


@pytest.mark.parametrize("args, message", [
    (["--mmr-length", "text"], "applies to mmr"),
    (["--mmr", "0.5", "--mmr-length", "label"], "not a number"),
    (["--mmr", "0.5", "--mmr-length", "nope"], "not a number"),
])
def test_bad_input_is_one_error_line(capsys, db, args, message):
    before = store_dump(db)
    code, out, err = run(capsys, "--store", db, "search", "docs", "--id", "d1", *args)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and message in err.lower() and len(err.strip().splitlines()) == 1, err
    assert store_dump(db) == before
