"""Shared fixtures for the encoder tests: real sentences and each model loaded once.

Models are loaded once per test session (``get_encoder`` caches them in the
process, and the direct reference models are session fixtures).
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest

# Nothing may reach a hub: make the Hugging Face libraries fail fast instead.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

#: ../shared/data beside the repository (CI lays a copy there), as in tests/conftest.py: this file is
#: <repo>/tests/engines/encoders/conftest.py, so the repository is parents[3].
STSB_TEST = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "stsb" / "stsb-en-test.csv"


@pytest.fixture(scope="package", autouse=True)
def _one_torch_thread():
    """Run the encoder tests on one torch thread, then restore the setting.

    The models here are tiny and the batches small: on a 2-core runner that is
    busy with anything else, torch's spinning worker threads make a forward
    pass several times slower than on one thread. Results do not depend on it.
    """
    from repspace.engines.encoders import set_threads

    before = set_threads(None)
    set_threads(1)
    yield
    set_threads(before)


@pytest.fixture(scope="session")
def stsb_rows() -> list[tuple[str, str, float]]:
    """The first 50 rows of the STS-B test split (sentence1, sentence2, score)."""
    if not STSB_TEST.is_file():
        pytest.skip(f"STS-B data not found at {STSB_TEST} (the shared data folder is absent)")
    rows = []
    with STSB_TEST.open(newline="", encoding="utf-8") as fh:
        for record in csv.reader(fh):
            rows.append((record[0], record[1], float(record[2])))
            if len(rows) == 50:
                break
    return rows


@pytest.fixture(scope="session")
def sentences(stsb_rows: list[tuple[str, str, float]]) -> list[str]:
    """50 real, short sentences."""
    return [row[0] for row in stsb_rows]


@pytest.fixture(scope="session")
def mixed_lengths(stsb_rows: list[tuple[str, str, float]]) -> list[str]:
    """Short and long texts interleaved, so that sorting by length reorders them."""
    short = [row[1] for row in stsb_rows[:8]]
    long = [" ".join(row[0] for row in stsb_rows[i : i + 6]) for i in range(10, 50, 5)]
    texts = [t for pair in zip(short, long) for t in pair]
    texts.insert(3, "Hi.")
    return texts


@pytest.fixture(scope="session")
def minilm_dir() -> Path:
    from repspace.engines.encoders.registry import minilm_folder

    return minilm_folder()


@pytest.fixture(scope="session")
def static_dir() -> Path:
    from repspace.engines.encoders.static import static_model_folder

    return static_model_folder()


@pytest.fixture(scope="module")
def raw(minilm_dir: Path):
    """MiniLM's tokenizer and AutoModel loaded directly with transformers, independently of repspace."""
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(minilm_dir), local_files_only=True)
    model = AutoModel.from_pretrained(str(minilm_dir), local_files_only=True).eval()
    return tokenizer, model
