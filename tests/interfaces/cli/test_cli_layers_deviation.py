"""``repspace layers deviation`` and ``repspace layers moments``: what they print, one error line for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests._cli_process import one_error_line, run_quiet

ENC = "hf-layers:minilm"
SAMPLE = Path(__file__).resolve().parents[2] / "data" / "senteval-probing" / "past_present.txt"


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    ref = tmp_path / "ref.txt"
    ref.write_text("a man plays a guitar\na woman is cooking\ntwo dogs run in a park\na child reads a book\n")
    texts = tmp_path / "texts.txt"
    texts.write_text("a man plays a piano\ndef f(x): return x ** 2\n")
    return ref, texts


@pytest.mark.slow  # loads MiniLM
def test_deviation_prints_the_per_layer_table_and_json(capsys, files):
    ref, texts = files
    r = run_quiet(capsys, "layers", "deviation", "--encoder", ENC, "--reference", str(ref), "--texts", str(texts),
                  "-k", "2", "--layer", "0,-1", "--json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    assert [row["layer"] for row in data["layers"]] == [0, 6] and len(data["items"]) == 2
    assert data["items"][1]["z"][1] > data["items"][0]["z"][1]  # code lies further from the sentences
    r = run_quiet(capsys, "layers", "deviation", "--encoder", ENC, "--reference", str(ref), "--texts", str(texts),
                  "-k", "2", "--layer", "-1")
    assert r.code == 0 and "share > p95" in r.out and f"{data['layers'][1]['mean_z']:.4g}" in r.out, r


@pytest.mark.slow  # loads MiniLM
def test_moments_prints_the_three_probes(capsys):
    r = run_quiet(capsys, "layers", "moments", "--encoder", ENC, "--labels", str(SAMPLE), "--layer", "0",
                  "--rank", "2", "--cv", "3", "--json")
    assert r.code == 0, r.err
    rows = json.loads(r.out)["rows"]
    assert [row["features"] for row in rows] == ["mean", "mean+var", "mean+var+lowrank"]
    r = run_quiet(capsys, "layers", "moments", "--encoder", ENC, "--labels", str(SAMPLE), "--layer", "0",
                  "--rank", "2", "--cv", "3")
    assert r.code == 0 and "mean+var+lowrank" in r.out and f"{rows[0]['score']:.4f}" in r.out, r


def test_bad_input_is_one_error_line(capsys, files, tmp_path):
    ref, texts = files
    empty = tmp_path / "empty.txt"
    empty.write_text("\n")
    one_error_line(run_quiet(capsys, "layers", "deviation", "--encoder", ENC, "--reference", str(empty),
                             "--texts", str(texts)), 2, "no texts")
    one_error_line(run_quiet(capsys, "layers", "deviation", "--encoder", ENC, "--reference", str(ref),
                             "--texts", str(texts), "-k", "4"), 2, "k must be")
    one_error_line(run_quiet(capsys, "layers", "deviation", "--encoder", ENC, "--reference", str(ref),
                             "--texts", str(texts), "-k", "2", "--write-metadata", "x"), 2, "stored space")


@pytest.mark.slow  # loads MiniLM's config
def test_a_layer_out_of_range_is_one_error_line(capsys, files):
    ref, texts = files
    one_error_line(run_quiet(capsys, "layers", "deviation", "--encoder", ENC, "--reference", str(ref),
                             "--texts", str(texts), "-k", "2", "--layer", "9"), 2, "layer")
    one_error_line(run_quiet(capsys, "layers", "moments", "--encoder", ENC, "--labels", str(SAMPLE),
                             "--layer", "9"), 2, "layer")
