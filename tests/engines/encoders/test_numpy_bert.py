"""The numpy path of sentence-transformers BERT folders: the vectors of sentence-transformers, without its imports."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from repspace.engines.encoders._models import clear_models
from repspace.engines.encoders._numpy_bert import load
from repspace.engines.encoders.sentence_transformers import (
    QUICK_MAX_TEXTS,
    SentenceTransformerEncoder,
)

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)

EDGE = ["", "   leading and trailing spaces   ", "x " * 600, "Ünïcödé, ça marche 😀 — naïve café", "A.", "?!"]


@pytest.mark.slow  # loads sentence-transformers as the reference
def test_vectors_equal_sentence_transformers(minilm_dir: Path, mixed_lengths: list[str]) -> None:
    from sentence_transformers import SentenceTransformer

    texts = mixed_lengths + EDGE
    ours = load(minilm_dir).encode(texts, batch_size=8)
    ref = SentenceTransformer(str(minilm_dir), device="cpu", local_files_only=True).encode(texts)
    assert np.abs(ours - ref).max() < 1e-5
    one_by_one = np.vstack([load(minilm_dir).encode([t]) for t in texts])
    assert np.abs(one_by_one - ref).max() < 1e-5  # padding in a batch changes nothing
    prompted = load(minilm_dir).encode(texts[:4], prompt="query: ")
    ref_prompted = SentenceTransformer(str(minilm_dir), device="cpu", local_files_only=True).encode(
        texts[:4], prompt="query: ")
    assert np.abs(prompted - ref_prompted).max() < 1e-5


def _copy(minilm_dir: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "m"
    shutil.copytree(minilm_dir, folder)
    return folder


@pytest.mark.parametrize("change", ["relu", "prompts", "dense", "max_pooling", "no_max_length"])
def test_folders_it_cannot_reproduce_are_left_to_sentence_transformers(minilm_dir, tmp_path, change):
    folder = _copy(minilm_dir, tmp_path)
    assert load(folder) is not None
    load.cache_clear()

    def edit(name: str, fn) -> None:
        path = folder / name
        data = json.loads(path.read_text())
        fn(data)
        path.write_text(json.dumps(data))

    if change == "relu":
        edit("config.json", lambda c: c.update(hidden_act="relu"))
    elif change == "prompts":
        edit("config_sentence_transformers.json", lambda c: c.update(prompts={"query": "query: "}))
    elif change == "dense":
        edit("modules.json", lambda m: m.append({"idx": 3, "name": "3", "path": "3_Dense",
                                                 "type": "sentence_transformers.models.Dense"}))
    elif change == "max_pooling":
        edit("1_Pooling/config.json", lambda c: c.update(pooling_mode_mean_tokens=False, pooling_mode_max_tokens=True))
    else:
        edit("sentence_bert_config.json", lambda c: c.pop("max_seq_length"))
    assert load(folder) is None
    load.cache_clear()


@pytest.mark.slow  # loads sentence-transformers to compare
def test_the_encoder_says_the_same_either_way(minilm_dir: Path, sentences: list[str]) -> None:
    clear_models()
    enc = SentenceTransformerEncoder(minilm_dir, spec="minilm")
    quick = (enc.provenance(), enc.dim, enc.normalizes, enc.asymmetric, enc.encode_queries(sentences[:3]))
    assert enc._quick() is not None  # nothing above loaded sentence-transformers
    many = enc.encode(sentences[: QUICK_MAX_TEXTS + 1])  # more texts: sentence-transformers from here on
    assert enc._quick() is None
    assert (enc.provenance(), enc.dim, enc.normalizes, enc.asymmetric) == quick[:4]
    np.testing.assert_allclose(enc.encode_queries(sentences[:3]), quick[4], atol=1e-5)
    np.testing.assert_allclose(many[:3], quick[4], atol=1e-5)


def test_a_cold_text_search_imports_no_model_library(tmp_path: Path, minilm_dir: Path, sentences: list[str]) -> None:
    """The CLI's one-query path: the hits, and none of torch, transformers, sentence-transformers, scikit-learn."""
    from repspace.workflows.ingest import ingest_records
    from repspace.workflows.ingest.readers import Records
    from repspace.workflows.store import Store

    db = tmp_path / "s.db"
    with Store(db) as store:
        texts = sentences[:12]
        ingest_records(store, "docs", Records("t", [f"d{i}" for i in range(12)], texts, None, [{}] * 12, []),
                       encoder="minilm", batch_size=4)
        want = [h.id for h in store.space("docs").search(texts[3], k=3)]
    code = (
        "import json, sys\n"
        "from repspace.interfaces.cli import main\n"
        f"sys.argv = ['repspace', '--store', {str(db)!r}, 'search', 'docs', {texts[3]!r}, '-k', '3', '--json']\n"
        "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
        "heavy = [m for m in ('torch', 'transformers', 'sentence_transformers', 'sklearn') if m in sys.modules]\n"
        "print(json.dumps(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True).stdout
    hits, heavy = out.rsplit("\n", 2)[0], json.loads(out.strip().splitlines()[-1])
    assert heavy == []
    assert [h["id"] for h in json.loads(hits)] == want
