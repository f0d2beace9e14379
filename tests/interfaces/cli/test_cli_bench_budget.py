"""``repspace bench search SPACE --budget 64MB``: the table and the choice, ``--json``, bad input."""

from __future__ import annotations

import json

import numpy as np
from _cli_process import one_error_line, run_quiet, store_dump
from _data_subsets import glove_rows

from repspace.workflows.bench_budget import bench_budget

SPECS = ("--spec", "exact", "--spec", "int8>rescore4", "--spec", "binary>rescore8")


def _space(store):
    sp = store.create_space("v", dim=50)
    sp.add([f"w{i}" for i in range(1000)], glove_rows(0, 1000))
    return sp


def test_table_json_and_the_choice(capsys, store):
    sp = _space(store)
    args = ("--store", str(store.path), "bench", "search", "v", "--budget", "100kB", "--queries", "50", *SPECS)
    r = run_quiet(capsys, *args, "--json")
    got = json.loads(r.out)
    same = bench_budget(sp, "100kB", ["exact", "int8>rescore4", "binary>rescore8"], queries=50).to_dict()
    # the float matrix (200,000 bytes) is left out; int8 (1,000 × 58 bytes + ranges) fits and is exact enough
    assert r.code == 0 and got["budget_bytes"] == 100_000 and got["chosen"] == "int8>rescore4"
    assert [s["spec"] for s in got["skipped"]] == ["exact"] and got["skipped"][0]["lower_bound_bytes"] == 200_000
    assert [(x["spec"], x["fits"], x["memory_bytes"]) for x in got["results"]] == [
        (x["spec"], x["fits"], x["memory_bytes"]) for x in same["results"]]
    assert np.isclose(got["results"][0]["recall"], same["results"][0]["recall"])
    r = run_quiet(capsys, *args)
    assert r.code == 0 and "budget 97.7 KiB" in r.out and "skipped" in r.out
    assert "chosen: int8>rescore4 (recall@10 " in r.out


def test_bad_budgets_are_one_error_line_and_change_nothing(capsys, store):
    _space(store)
    before = store_dump(store.path)
    base = ("--store", str(store.path), "bench", "search", "v", *SPECS)
    one_error_line(run_quiet(capsys, *base, "--budget", "64XB"), 2, "budget '64XB' is not a size")
    one_error_line(run_quiet(capsys, *base, "--budget", "1kB"), 2, "a budget of 1.0 KiB is below every candidate",
                   "binary>rescore8")
    one_error_line(run_quiet(capsys, *base, "--budget", "-3MB"), 2, "is not a size")
    assert store_dump(store.path) == before and not list((store.path.parent).glob("*.indexes/*/*"))
