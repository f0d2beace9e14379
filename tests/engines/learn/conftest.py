"""Models trained once per session on the Lee background corpus (``lee_path``, ``gensim_data``: tests/conftest.py, tests/_gensim_data.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _gensim_data import gensim_data


@pytest.fixture(scope="session")
def lee(lee_path):
    from repspace.engines.learn import read_text_corpus

    return read_text_corpus(lee_path)


@pytest.fixture(scope="session")
def lee_skipgram(lee):
    """Skip-gram, 50 dimensions, 20 epochs, min_count 2, seed 1 (about 3 s on one core)."""
    from repspace.engines.learn import train_word2vec

    return train_word2vec(lee, sg=True, vector_size=50, epochs=20, min_count=2, seed=1)


@pytest.fixture(scope="session")
def wordsim_path() -> Path:
    """WordSim-353 (353 pairs, tab-separated, ``#`` comments), as gensim's wheel ships it."""
    return gensim_data("wordsim353.tsv")
