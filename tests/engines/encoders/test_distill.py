"""distill_static: a real model2vec distillation of MiniLM (once per module) and of a tiny real BERT.

The MiniLM distillation is checked against MiniLM itself: the static model's
cosine similarities must rank sentence pairs like MiniLM's do. The tiny BERT
(random weights, MiniLM's tokenizer) exercises the folder layouts, refusals,
atomic replacement and determinism in seconds.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import spearmanr

from repspace.core.errors import ConflictError, EncoderError, InputError, NotFoundError
from repspace.engines.encoders import get_encoder, model_fingerprint

pytest.importorskip("skeletoken", reason="model2vec's distill extra (skeletoken) is not installed")

from repspace.engines.encoders.distill import distill_static, read_distill_record  # noqa: E402

pytestmark = pytest.mark.slow  # model2vec's distill imports transformers; MiniLM's distillation takes ~1 min

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json")


def make_tiny_bert(folder: Path, minilm_dir: Path, *, seed: int = 0, hidden: int = 32) -> Path:
    """A real (randomly initialised) 2-layer BERT with MiniLM's tokenizer, saved as a transformers folder."""
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(seed)
    config = BertConfig(vocab_size=30522, hidden_size=hidden, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=2 * hidden, max_position_embeddings=64)
    folder.mkdir(parents=True, exist_ok=True)
    BertModel(config).eval().save_pretrained(folder)
    for name in TOKENIZER_FILES:
        shutil.copy(minilm_dir / name, folder / name)
    return folder


def leftovers(parent: Path) -> list[str]:
    """Hidden temporary siblings a write may have left behind."""
    return sorted(p.name for p in parent.iterdir() if p.name.startswith("."))


@pytest.fixture(scope="module")
def distilled(tmp_path_factory, minilm_dir) -> tuple[Path, list[tuple[str, int, int]]]:
    """MiniLM distilled to 64 dimensions (about a minute on one core), with the progress calls it made."""
    calls: list[tuple[str, int, int]] = []
    out = tmp_path_factory.mktemp("distill") / "minilm-m2v-64"
    folder = distill_static("minilm", out, pca_dims=64, progress=lambda *a: calls.append(a))
    return folder, calls


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, minilm_dir) -> Path:
    return make_tiny_bert(tmp_path_factory.mktemp("tiny") / "tiny-bert", minilm_dir)


# ---------------------------------------------------------------------------
# MiniLM


def test_minilm_distilled_encodes_at_the_pca_dimension(distilled, sentences):
    folder, _ = distilled
    enc = get_encoder(f"model2vec:{folder}")
    vecs = enc.encode(sentences)
    assert vecs.shape == (len(sentences), 64) and vecs.dtype == np.float32
    # model2vec's normalize=True, computed in float16 like the stored vectors (measured: within 2.5e-4 of 1)
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-3)
    assert enc.provenance()["model"] == str(folder)


def test_minilm_distilled_ranks_pairs_like_minilm(distilled, stsb_rows):
    """The static model's pair cosines follow MiniLM's and the gold scores (measured 0.78 and 0.72 on these pairs)."""
    folder, _ = distilled
    left, right, gold = [r[0] for r in stsb_rows], [r[1] for r in stsb_rows], [r[2] for r in stsb_rows]

    def pair_cosines(spec: str) -> np.ndarray:
        enc = get_encoder(spec)
        a, b = enc.encode(left), enc.encode(right)
        return np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))

    static, teacher = pair_cosines(f"model2vec:{folder}"), pair_cosines("minilm")
    assert spearmanr(static, teacher).statistic > 0.6
    assert spearmanr(static, gold).statistic > 0.5
    assert spearmanr(teacher, gold).statistic > spearmanr(static, gold).statistic  # the student is worse


def test_minilm_distilled_record_and_vocabulary(distilled, minilm_dir):
    folder, calls = distilled
    record = read_distill_record(folder)
    assert record["source"] == "minilm"
    assert record["source_folder"] == str(minilm_dir)
    assert record["source_fingerprint"] == model_fingerprint(minilm_dir)
    assert (record["pca_dims"], record["dim"], record["pooling"], record["dtype"]) == (64, 64, "mean", "float16")
    assert record["model2vec_version"] == "model2vec==0.10.0" and record["seconds"] > 0

    # The vocabulary is MiniLM's, less the [unusedN] placeholders and the special tokens that
    # only frame a sequence (model2vec drops them), read independently from the two files.
    teacher = [line.rstrip("\n") for line in (minilm_dir / "vocab.txt").open(encoding="utf-8")]
    expected = {t for t in teacher if not re.fullmatch(r"\[unused\d+\]", t)} - {"[CLS]", "[SEP]", "[MASK]"}
    student = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
    assert set(student) == expected and record["vocab_size"] == len(expected) == 29525

    # Progress: one phase, counting every token once, up to the vocabulary size.
    assert {c[0] for c in calls} == {"tokens"} and all(c[2] == len(expected) for c in calls)
    done = [c[1] for c in calls]
    assert done == sorted(done) and done[-1] == len(expected)


# ---------------------------------------------------------------------------
# the tiny BERT: layouts, determinism, refusals, replacement


def test_sentence_transformers_layout_with_transformer_in_a_subfolder(tmp_path, tiny):
    st = tmp_path / "st-model"
    shutil.copytree(tiny, st / "0_Transformer")
    (st / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "0_Transformer", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    ]))
    folder = distill_static(f"st:{st}", tmp_path / "out", pca_dims=8)
    record = read_distill_record(folder)
    assert record["transformer_folder"] == str(st / "0_Transformer") and record["source_folder"] == str(st)
    assert get_encoder(f"model2vec:{folder}").encode(["a cat", "a dog"]).shape == (2, 8)


def test_distillation_is_deterministic_and_pca_none_keeps_the_dimension(tmp_path, tiny):
    a = distill_static(str(tiny), tmp_path / "a", pca_dims=16)
    b = distill_static(str(tiny), tmp_path / "b", pca_dims=16)
    assert (a / "model.safetensors").read_bytes() == (b / "model.safetensors").read_bytes()
    full = distill_static(tiny, tmp_path / "full", pca_dims=None)
    assert read_distill_record(full)["dim"] == 32 and read_distill_record(full)["pca_dims"] is None
    assert leftovers(tmp_path) == []
    umask = os.umask(0)
    os.umask(umask)
    assert a.stat().st_mode & 0o777 == 0o777 & ~umask  # not left private by mkdtemp
    assert {p.stat().st_mode & 0o777 for p in a.iterdir()} == {0o666 & ~umask}


def test_existing_out_is_refused_and_left_unchanged(tmp_path, tiny):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    with pytest.raises(ConflictError, match="exists and is not empty") as info:
        distill_static(tiny, out, pca_dims=8)
    assert "\n" not in str(info.value)
    assert [p.name for p in out.iterdir()] == ["keep.txt"] and (out / "keep.txt").read_text() == "mine"
    assert leftovers(tmp_path) == []


def test_overwrite_replaces_and_an_empty_out_is_used(tmp_path, tiny, static_dir):
    out = tmp_path / "out"
    out.mkdir()
    folder = distill_static(tiny, out, pca_dims=8)  # empty: no overwrite needed
    assert read_distill_record(folder)["dim"] == 8
    enc = get_encoder(f"model2vec:{folder}")
    assert enc.dim == 8  # loaded and cached in this process
    (out / "extra.txt").write_text("old")
    folder = distill_static(tiny, out, pca_dims=4, overwrite=True)
    assert not (out / "extra.txt").exists() and read_distill_record(folder)["dim"] == 4
    assert get_encoder(f"model2vec:{folder}").encode(["a cat"]).shape == (1, 4)  # not the cached 8-d model
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize(
    ("source", "error", "message"),
    [
        ("{tmp}/nope", NotFoundError, "does not exist"),
        ("{tmp}/empty", InputError, "no config.json"),
        ("{static}", InputError, "already a model2vec static model"),
    ],
)
def test_bad_sources_are_one_line_errors(tmp_path, static_dir, source, error, message):
    (tmp_path / "empty").mkdir()
    with pytest.raises(error, match=message) as info:
        distill_static(source.format(tmp=tmp_path, static=static_dir), tmp_path / "out")
    assert "\n" not in str(info.value) and not (tmp_path / "out").exists()


def test_bad_options_are_refused_before_loading(tmp_path, tiny):
    for options, message in [
        ({"pca_dims": 33}, "larger than the model's 32 dimensions"),
        ({"pca_dims": 0}, "positive integer"),
        ({"pca_dims": 8, "sif_coefficient": 1.5}, r"\(0, 1\)"),
        ({"pca_dims": 8, "pooling": "max"}, "pooling must be one of"),
    ]:
        with pytest.raises(InputError, match=message):
            distill_static(tiny, tmp_path / "out", **options)
    with pytest.raises(InputError, match="would replace the source"):
        distill_static(tiny, tiny, pca_dims=8, overwrite=True)
    with pytest.raises(InputError, match="would replace the source"):
        distill_static(tiny, tiny.parent, pca_dims=8, overwrite=True)
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="not a folder"):
        distill_static(tiny, tmp_path / "file", pca_dims=8)
    assert not (tmp_path / "out").exists()


def test_broken_weights_are_an_encoder_error(tmp_path, tiny):
    broken = tmp_path / "broken"
    shutil.copytree(tiny, broken)
    (broken / "model.safetensors").write_bytes(b"not a safetensors file")
    with pytest.raises(EncoderError, match="loading the model for source") as info:
        distill_static(broken, tmp_path / "out", pca_dims=8)
    assert "\n" not in str(info.value) and leftovers(tmp_path) == [] and not (tmp_path / "out").exists()


def test_a_killed_distillation_leaves_the_old_model_intact(tmp_path, tiny):
    """SIGKILL a real child process mid-distillation: OUT keeps the previous model, nothing else is left."""
    out = distill_static(tiny, tmp_path / "out", pca_dims=8)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    script = textwrap.dedent(f"""
        import sys, time
        from repspace.engines.encoders.distill import distill_static

        def progress(phase, done, total):
            print("started", flush=True)
            time.sleep(60)  # hold the distillation here until the parent kills us

        distill_static({str(tiny)!r}, {str(out)!r}, pca_dims=4, overwrite=True, progress=progress)
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "started"
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == -signal.SIGKILL
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert leftovers(tmp_path) == []
