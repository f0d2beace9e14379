"""``repspace layers profile`` end to end: JSON equal to the library, the HTML page, one error line for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli_process import one_error_line, run_quiet

from repspace.workflows.layer_profile import profile_layers

TEXTS = ["A man is playing a flute.", "Stocks fell sharply on Monday.", "Hi", "Two dogs run through tall grass."]


@pytest.fixture()
def texts(tmp_path: Path) -> Path:
    path = tmp_path / "texts.txt"
    path.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    return path


@pytest.mark.slow  # loads MiniLM
def test_json_and_html_equal_the_library_and_draw_one_line_per_model(capsys, texts, tmp_path):
    page = tmp_path / "profile.html"
    code, out, err = run_quiet(capsys, "layers", "profile", "--encoder", "hf-layers:minilm", "--texts", str(texts),
                               "--layers", "0,-1", "--alpha", "2", "--bootstrap", "50", "--json", "--html", str(page))
    assert code == 0, err
    [data] = json.loads(out)["profiles"]
    direct = profile_layers("hf-layers:minilm", TEXTS, layers=[0, -1], alphas=[2], bootstrap=50).to_dict()
    assert data == direct
    assert [row["layer"] for row in data["layers"]] == [0, 6] and data["layers"][0]["neighbourhood_overlap"] is None
    html = page.read_text(encoding="utf-8")
    assert html.count("<svg") == 7 and "<script" not in html  # 6 figures (+ the alpha-entropy), no task
    code, out, err = run_quiet(capsys, "layers", "profile", "--encoder", "hf-layers:minilm", "--texts", str(texts),
                               "--layers", "-1", "--bootstrap", "0", "--no-shuffle", "--augment", "none")
    assert code == 0, err
    assert "ID~" not in out and "inv" not in out.split("\n")[2] and "H: prompt entropy" in out


def test_bad_input_is_one_error_line(capsys, texts, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", encoding="utf-8")
    base = ("layers", "profile", "--texts", str(texts))
    one_error_line(run_quiet(capsys, *base, "--encoder", "static"), 2, "one vector per text", "hf-layers")
    one_error_line(run_quiet(capsys, "layers", "profile", "--encoder", "hf-layers:minilm", "--texts", str(empty)),
                   2, "holds no texts")
    one_error_line(run_quiet(capsys, *base, "--encoder", "hf-layers:minilm", "--task", "nli", str(texts)),
                   2, "task must be one of sts")
    one_error_line(run_quiet(capsys, *base, "--encoder", "hf-layers:minilm", "--alpha", "0"), 2, "alpha")
    one_error_line(run_quiet(capsys, *base, "--encoder", "hf-layers:minilm", "--encoder", "hf-layers:minilm"),
                   2, "named twice")
    one_error_line(run_quiet(capsys, *base, "--encoder", "hf-layers:minilm", "--augment", "typo"), 2, "perturbation")
    one_error_line(run_quiet(capsys, *base, "--encoder", "hf-layers:minilm", "--invariance", "nce"),
                   2, "unknown invariance figure")
    one_error_line(run_quiet(capsys, *base, "--encoder", "hf-layers:minilm", "--invariance", "all", "--augment",
                             "none"), 2, "name an augmentation")


@pytest.mark.slow  # loads MiniLM
def test_invariance_figures_in_json_equal_the_library(capsys, texts):
    code, out, err = run_quiet(capsys, "layers", "profile", "--encoder", "hf-layers:minilm", "--texts", str(texts),
                               "--layers", "-1", "--invariance", "infonce,dime", "--group", "3", "--bootstrap", "0",
                               "--json")
    assert code == 0, err
    [data] = json.loads(out)["profiles"]
    direct = profile_layers("hf-layers:minilm", TEXTS, layers=[-1], invariance="infonce,dime", group=3, bootstrap=0)
    assert data == direct.to_dict() and data["skipped"]["infonce"] == 1 and data["layers"][0]["dime"]["n"] == 1
