"""``repspace eval sts --layer all --dims ...``: the layer x dimension grid, each cell equal to the run of that
one layer with that one truncation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repspace.interfaces.cli import main


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["-q", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture()
def sts_file(tmp_path: Path, shared_data: Path) -> Path:
    lines = (shared_data / "stsb" / "stsb-en-test.csv").read_text(encoding="utf-8").splitlines()[:60]
    path = tmp_path / "stsb-small-test.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _cells(results: list[dict]) -> dict[tuple[int, str], float]:
    out = {}
    for r in results:
        info = r["repspace"]
        codec = info["codec"]
        name = "full" if codec["dims"] is None else f"{codec['method']}{codec['dims']}"
        out[(info["layer"], name)] = r["scores"]["test"][0]["main_score"]
    return out


@pytest.mark.slow  # loads MiniLM (hf-layers)
def test_layer_grid_cells_equal_single_layer_single_dims_runs(capsys, sts_file, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a grid writes no plot: nothing may appear here
    code, out, err = run(capsys, "eval", "sts", str(sts_file), "--encoder", "hf-layers:minilm", "--layer", "all",
                         "--dims", "16,full", "--json")
    assert code == 0, err
    grid = _cells(json.loads(out))
    assert {layer for layer, _ in grid} == set(range(7)) and {c for _, c in grid} == {"prefix16", "pca16", "full"}
    assert list(tmp_path.iterdir()) == [sts_file]
    for layer in (0, 3, 6):
        code, out, err = run(capsys, "eval", "sts", str(sts_file), "--encoder", "hf-layers:minilm", "--layer",
                             str(layer), "--dims", "16", "--plot", str(tmp_path / f"l{layer}.png"), "--json")
        assert code == 0, err
        single = _cells(json.loads(out))
        assert set(single) == {(layer, "prefix16"), (layer, "pca16")}
        for key, score in single.items():
            assert grid[key] == pytest.approx(score, abs=1e-6)
    assert grid[(6, "full")] > grid[(0, "full")]  # the layers really differ
    code, out, err = run(capsys, "eval", "sts", str(sts_file), "--encoder", "hf-layers:minilm", "--layer", "all",
                         "--dims", "16,full")
    assert code == 0, err
    lines = out.splitlines()
    row = next(ln for ln in lines if "pca16" in ln)
    assert "L0" in out and "L6" in out and f"{grid[(6, 'pca16')]:.4f}" in row and f"{grid[(0, 'pca16')]:.4f}" in row


def test_a_plot_of_the_grid_is_one_clear_error(capsys, sts_file, tmp_path):
    code, out, err = run(capsys, "eval", "sts", str(sts_file), "--encoder", "hf-layers:minilm", "--layer", "all",
                         "--dims", "16", "--plot", str(tmp_path / "g.png"))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "one layer" in err
    assert not (tmp_path / "g.png").exists()
