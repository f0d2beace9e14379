"""A compression sweep's intervals: each trade-off row and each grid cell carries the bootstrap interval of its
result's main score (None without one)."""

from __future__ import annotations

import pytest

from repspace.engines.encoders import get_encoder
from repspace.engines.eval._encode import TextCache
from repspace.engines.eval.compression import Codec, sweep_codecs
from repspace.engines.eval.sts import StsPairs, load_sts
from repspace.workflows.evaluate import EvalReport, evaluate, run
from repspace.workflows.evaluate._run import _tradeoff
from repspace.workflows.evaluate._subjects import Subject

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


@pytest.fixture(scope="module")
def stsb(shared_data) -> StsPairs:
    full = load_sts(shared_data / "stsb" / "stsb-en-test.csv")
    return StsPairs(full.sentences1[:100], full.sentences2[:100], full.scores[:100], "stsb100", "test")


def _codec_name(result) -> str:
    c = result.info["codec"]
    return Codec(c["dims"], c["method"], c["precision"]).name


def test_each_tradeoff_row_carries_its_result_s_interval(stsb, tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text("".join(f'"{a}","{b}",{s}\n' for a, b, s in zip(stsb.sentences1, stsb.sentences2, stsb.scores)))
    report = run("sts", path, encoder="static", dims="16,full", precision="float32,int8", bootstrap=200,
                 plot=tmp_path / "p.png")
    by_codec = {_codec_name(r): r for r in report.results}
    assert len(report.tradeoff) == len(by_codec) == 6
    for row in report.tradeoff:
        ci = by_codec[row["codec"]].interval
        assert ci is not None and ci.n_resamples == 200
        assert (row["ci_low"], row["ci_high"]) == (ci.low, ci.high)
        assert row["ci_low"] <= row["main_score"] <= row["ci_high"]
    report = run("sts", path, encoder="static", dims="16", bootstrap=0, plot=tmp_path / "q.png")
    assert all(row["ci_low"] is None and row["ci_high"] is None for row in report.tradeoff)


def test_the_grid_holds_each_cell_s_interval_beside_its_score(stsb):
    enc = get_encoder("static")
    subjects = [Subject(f"static@{i}", {"encoder": "static", "layer": i}, TextCache(enc.encode), enc.dim)
                for i in (0, 1)]
    codecs = sweep_codecs([16, None], ["float32"], full_dim=enc.dim)
    results = evaluate("sts", subjects, stsb, codecs=codecs, bootstrap=150, seed=4)
    results[-1] = results[-1].with_interval(None)  # a cell without an interval
    grid = EvalReport(results, tradeoff=_tradeoff(results, several=True)).grid()
    assert grid["subjects"] == ["static@0", "static@1"] and grid["layers"] == [0, 1]
    for r in results:
        i = grid["subjects"].index(r.info["subject"])
        j = grid["codecs"].index(_codec_name(r))
        assert grid["scores"][i][j] == r.main_score
        assert grid["intervals"][i][j] == (None if r.interval is None else [r.interval.low, r.interval.high])
    assert sum(ci is None for row in grid["intervals"] for ci in row) == 1
