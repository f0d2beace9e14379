"""``repspace layers lens`` and ``repspace layers grid``: what they print, and one error line for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests._cli_process import one_error_line, run_quiet
from tests._data_subsets import sts_head

ENC = "hf-layers:minilm"


@pytest.mark.slow  # loads MiniLM
def test_lens_prints_each_tokens_top_tokens_per_layer(capsys):
    r = run_quiet(capsys, "layers", "lens", "--encoder", ENC, "--text", "The capital of France is Paris.",
                  "--layer", "0,-1", "-k", "4", "--json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    assert data["tokens"] == ["the", "capital", "of", "france", "is", "paris", "."]
    assert [row["layer"] for row in data["layers"]] == [0, 6] and data["tuned"] is None
    assert [t["top"][0]["token"] for t in data["layers"][0]["tokens"]] == data["tokens"]  # layer 0 reads back
    assert all(len(t["top"]) == 4 for row in data["layers"] for t in row["tokens"])
    r = run_quiet(capsys, "layers", "lens", "--encoder", ENC, "--text", "paris", "--layer", "0", "-k", "2")
    assert r.code == 0 and "L0" in r.out and "paris" in r.out, r


@pytest.mark.slow  # loads MiniLM
def test_tuned_lens_reports_its_fit(capsys, tmp_path, shared_data):
    texts = tmp_path / "texts.txt"
    lines = (shared_data / "stsb" / "stsb-en-dev.csv").read_text(encoding="utf-8").splitlines()[:40]
    texts.write_text("\n".join(line.split(",")[0] for line in lines) + "\n", encoding="utf-8")
    r = run_quiet(capsys, "layers", "lens", "--encoder", ENC, "--text", "A man plays a guitar.", "--tuned",
                  str(texts), "--ridge", "0.1", "--json")
    assert r.code == 0, r.err
    tuned = json.loads(r.out)["tuned"]
    assert [f["layer"] for f in tuned["fits"]] == [0, 1, 2, 3, 4, 5] and tuned["n_held_out"] == 8
    r = run_quiet(capsys, "layers", "lens", "--encoder", ENC, "--text", "A man plays a guitar.", "--tuned",
                  str(texts), "--ridge", "0.1")
    assert r.code == 0 and "tuned lens" in r.out and "KL tuned" in r.out, r


@pytest.mark.slow  # loads MiniLM
def test_grid_prints_the_grid_the_best_cells_and_writes_the_heat_map(capsys, tmp_path, shared_data, monkeypatch):
    monkeypatch.chdir(tmp_path)
    pairs = sts_head(shared_data, tmp_path / "sts.csv", 60)
    r = run_quiet(capsys, "layers", "grid", "--encoder", ENC, "--task", "sts", str(pairs), "--dims", "16,full",
                  "--bootstrap", "50", "--json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    assert len(data["cells"]) == 14 and [b["budget"] for b in data["best"]] == [64, 1536]
    assert Path(data["plot"]).name == "sts-layer-grid.png" and (tmp_path / "sts-layer-grid.png").exists()
    r = run_quiet(capsys, "layers", "grid", "--encoder", ENC, "--task", "sts", str(pairs), "--dims", "16,full",
                  "--bootstrap", "0", "--plot", str(tmp_path / "h.png"))
    assert r.code == 0 and "best cell per budget" in r.out and "L6" in r.out and "384d" in r.out, r
    cell = next(c for c in data["cells"] if c["layer"] == 6 and c["dims"] == 384)
    assert f"{cell['score']:.4f}" in r.out


@pytest.mark.parametrize("args, fragment", [
    (["lens", "--encoder", "static", "--text", "a cat"], "hf-layers"),
    (["lens", "--encoder", ENC, "--text", "a cat", "--layer", "9"], "layer 9 is out of range"),
    (["lens", "--encoder", ENC, "--text", "a cat", "--layer", "two"], "--layer must be"),
    (["lens", "--encoder", ENC], "give --text TEXT or --space NAME"),
    (["lens", "--encoder", ENC, "--text", "a", "--space", "s"], "give --text TEXT or --space NAME"),
    (["lens", "--encoder", ENC, "--text", "a", "--id", "x"], "--id names stored items"),
    (["grid", "--encoder", ENC, "--task", "sts", "PAIRS", "--dims", "64,512"], "--dims 512 above the width"),
    (["grid", "--encoder", "static", "--task", "sts", "PAIRS"], "no layers"),
])
def test_bad_input_is_one_error_line(capsys, tmp_path, shared_data, args, fragment):
    pairs = sts_head(shared_data, tmp_path / "sts.csv", 10)
    args = [str(pairs) if a == "PAIRS" else a for a in args]
    one_error_line(run_quiet(capsys, "layers", *args), 2, fragment)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sts.csv"]  # no heat map


def test_an_empty_tuned_lens_file_is_one_error_line(capsys, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n", encoding="utf-8")
    one_error_line(run_quiet(capsys, "layers", "lens", "--encoder", ENC, "--text", "a cat", "--tuned", str(empty)),
                   2, "empty.txt holds no texts")


@pytest.mark.slow  # loads MiniLM
def test_lens_hides_special_tokens_unless_all_tokens(capsys):
    base = ("layers", "lens", "--encoder", ENC, "--text", "Two dogs run through tall grass.", "--special", "--json")
    hidden = json.loads(run_quiet(capsys, *base).out)
    shown = json.loads(run_quiet(capsys, *base, "--all-tokens").out)
    assert hidden["all_tokens"] is False and shown["all_tokens"] is True

    def tops(data):
        return [t["token"] for row in data["layers"] for tok in row["tokens"] for t in tok["top"]]

    assert any(t.startswith("[") and t.endswith("]") for t in tops(shown))
    assert not any(t.startswith("[") and t.endswith("]") for t in tops(hidden))
