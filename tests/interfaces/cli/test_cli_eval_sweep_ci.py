"""``repspace eval sts --dims ... --precision ...``: each sweep row's 95% interval in the trade-off table, in
--json beside each main score; and ``--layer all`` with ``--dims``: each grid cell's interval under its score,
the grid of 7 layers within 120 columns."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from _cli_process import cli, run_quiet
from _data_subsets import sts_head

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


def _codec(result: dict) -> str:
    codec = result["repspace"]["codec"]
    reduced = "" if codec["dims"] is None else f"{codec['method']}{codec['dims']}"
    precision = "" if codec["precision"] == "float32" else codec["precision"]
    return ",".join(p for p in (reduced, precision) if p) or "full"


def test_the_sweep_table_and_json_carry_each_interval(capsys, tmp_path, shared_data):
    path = sts_head(shared_data, tmp_path / "stsb-small-test.csv", 120)
    sweep = ["--encoder", "static", "--dims", "16,full", "--precision", "float32,int8", "--bootstrap", "200"]
    code, out, err = run_quiet(capsys, "eval", "sts", str(path), *sweep, "--plot", str(tmp_path / "a.png"), "--json")
    assert code == 0, err
    results = json.loads(out)
    entries = {_codec(r): r["scores"]["test"][0] for r in results}
    assert set(entries) == {"prefix16", "pca16", "full", "prefix16,int8", "pca16,int8", "int8"}
    for entry in entries.values():
        assert entry["ci_low"] <= entry["main_score"] <= entry["ci_high"] and entry["ci_low"] < entry["ci_high"]
    assert len({(e["ci_low"], e["ci_high"]) for e in entries.values()}) == len(entries)  # each its own interval

    code, out, err = run_quiet(capsys, "eval", "sts", str(path), *sweep, "--plot", str(tmp_path / "b.png"))
    assert code == 0, err
    header = next(line for line in out.splitlines() if "bytes/vector" in line)
    assert "95% CI" in header and header.index("spearman") < header.index("95% CI") < header.index("relative")
    for codec, entry in entries.items():
        (row,) = [line for line in out.splitlines() if re.search(rf"[│|]\s*{re.escape(codec)}\s*[│|]", line)]
        assert f"{entry['main_score']:.4f}" in row and f"[{entry['ci_low']:.4f}, {entry['ci_high']:.4f}]" in row
    assert (tmp_path / "b.png").stat().st_size > 1000

    code, out, err = run_quiet(capsys, "eval", "sts", str(path), *sweep[:-2], "--bootstrap", "0",
                               "--plot", str(tmp_path / "c.png"))
    assert code == 0, err
    assert "95% CI" not in out and "[" not in out  # no interval, no column


@pytest.mark.slow  # loads MiniLM (hf-layers)
def test_the_layer_grid_shows_each_cell_s_interval_within_120_columns(capsys, tmp_path, shared_data):
    path = sts_head(shared_data, tmp_path / "stsb-small-test.csv", 40)
    grid = ["--encoder", "hf-layers:minilm", "--layer", "all", "--dims", "16,full", "--precision", "float32,binary",
            "--bootstrap", "100"]
    code, out, err = run_quiet(capsys, "eval", "sts", str(path), *grid, "--json")
    assert code == 0, err
    cells = {(r["repspace"]["layer"], _codec(r)): r["scores"]["test"][0] for r in json.loads(out)}
    assert {layer for layer, _ in cells} == set(range(7))

    # a child process: the console reads COLUMNS when the CLI is imported, so a COLUMNS set around this test
    # process (a CI runner's) would win over one set here
    code, out, err = cli("eval", "sts", str(path), *grid, env={"COLUMNS": "120"})
    assert code == 0, err
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 120
    assert all(f"L{layer}" in out for layer in range(7))
    for codec in ("prefix16", "pca16", "full", "prefix16,binary", "pca16,binary", "binary"):
        (at,) = [i for i, line in enumerate(lines) if re.search(rf"[│|]\s*{re.escape(codec)}\s*[│|]", line)]
        scores = re.findall(r"-?\d\.\d{4}", lines[at])
        ends = re.findall(r"(-?\d*\.\d{3})–(-?\d*\.\d{3})", lines[at + 1])  # the next line: the intervals
        assert len(scores) == len(ends) == 7
        for layer, (score, (low, high)) in enumerate(zip(scores, ends, strict=True)):
            entry = cells[(layer, codec)]
            assert score == f"{entry['main_score']:.4f}"
            assert float(low) == pytest.approx(entry["ci_low"], abs=5e-4)  # printed to 3 decimals
            assert float(high) == pytest.approx(entry["ci_high"], abs=5e-4)
