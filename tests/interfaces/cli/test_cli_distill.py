"""``repspace distill`` end to end on a tiny real BERT folder: JSON, the written model in use, one-line errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from _cli_process import run

pytest.importorskip("skeletoken", reason="model2vec's distill extra (skeletoken) is not installed")

pytestmark = pytest.mark.slow  # builds and distils a (tiny) transformer


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    """A real (randomly initialised) 2-layer, 32-d BERT with MiniLM's tokenizer: distils in seconds."""
    import torch
    from transformers import BertConfig, BertModel

    from repspace.engines.encoders.registry import minilm_folder

    folder = tmp_path_factory.mktemp("tiny") / "tiny-bert"
    torch.manual_seed(0)
    config = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64)
    BertModel(config).eval().save_pretrained(folder)
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        shutil.copy(minilm_folder() / name, folder / name)
    return folder


def test_distill_json_then_ingest_and_search_with_it(capsys, tmp_path, tiny):
    out = tmp_path / "m2v"
    code, stdout, _ = run(capsys, "distill", str(tiny), str(out), "--pca-dims", "16", "--json")
    assert code == 0
    result = json.loads(stdout)
    assert result["folder"] == str(out.resolve()) and result["encoder"] == f"model2vec:{out.resolve()}"
    assert (result["dim"], result["pca_dims"], result["vocab_size"]) == (16, 16, 29525)
    assert result["source_folder"] == str(tiny.resolve())

    # The suggested next step: ingest texts with the distilled model, then search them.
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"id": str(i), "text": t}) + "\n" for i, t in enumerate(
        ["A man is playing a flute.", "A woman slices an onion.", "The cat sleeps on the sofa."])))
    db = str(tmp_path / "s.db")
    code, stdout, err = run(capsys, "--store", db, "ingest", "docs", str(docs), "--encoder", result["encoder"],
                            "--json")
    assert code == 0, err
    code, stdout, _ = run(capsys, "--store", db, "info", "docs", "--json")
    info = json.loads(stdout)
    assert (info["count"], info["dim"]) == (3, 16)
    assert info["provenance"]["encoder"] == result["encoder"]
    code, stdout, _ = run(capsys, "--store", db, "search", "docs", "A man is playing a flute.", "-k", "1", "--json")
    assert code == 0 and json.loads(stdout)[0]["id"] == "0"  # the identical text comes first


def test_distill_prints_where_dimension_vocabulary_and_time(capsys, tmp_path, tiny):
    code, stdout, _ = run(capsys, "--quiet", "distill", f"st:{tiny}", str(tmp_path / "m2v"), "--no-pca")
    assert code == 0
    assert f"wrote {(tmp_path / 'm2v').resolve()}: 32-d, 29,525 tokens," in stdout
    assert f"--encoder model2vec:{(tmp_path / 'm2v').resolve()}" in stdout


def test_existing_out_is_refused_unless_overwrite(capsys, tmp_path, tiny):
    out = tmp_path / "m2v"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    code, stdout, err = run(capsys, "distill", str(tiny), str(out), "--pca-dims", "8")
    assert code == 4 and stdout == ""
    assert err.startswith("error: output folder") and "--overwrite" in err and err.count("\n") == 1
    assert [p.name for p in out.iterdir()] == ["notes.txt"]

    code, stdout, _ = run(capsys, "distill", str(tiny), str(out), "--pca-dims", "8", "--overwrite", "--json")
    assert code == 0 and json.loads(stdout)["dim"] == 8 and not (out / "notes.txt").exists()


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["{tmp}/no-such-model"], 3, "error: source '{tmp}/no-such-model' does not exist"),
        (["{tmp}"], 2, "is not a transformers or sentence-transformers model folder (no config.json)"),
        (["{tiny}", "--pca-dims", "64"], 2, "error: pca_dims 64 is larger than the model's 32 dimensions"),
    ],
)
def test_bad_input_is_one_line_and_non_zero(capsys, tmp_path, tiny, args, code, message):
    fill = {"tmp": str(tmp_path), "tiny": str(tiny)}
    argv = [a.format(**fill) for a in args]
    got, stdout, err = run(capsys, "distill", argv[0], str(tmp_path / "out"), *argv[1:])
    assert got == code and stdout == ""
    assert message.format(**fill) in err and err.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_pca_dims_below_one_is_refused(capsys, tmp_path, tiny):
    code, _, err = run(capsys, "distill", str(tiny), str(tmp_path / "out"), "--pca-dims", "0")
    assert code == 2 and err == "error: pca_dims must be a positive integer or None, not 0\n"
