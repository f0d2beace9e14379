"""The Lee background corpus that gensim's wheel ships, and models trained on it once per session."""

from __future__ import annotations

from pathlib import Path

import pytest


def gensim_data(name: str) -> Path:
    """A file of gensim's test data (the wheel ships the Lee corpus, WordSim-353, ...)."""
    from gensim.test.utils import datapath

    path = Path(datapath(name))
    if not path.is_file():
        pytest.skip(f"gensim's test data {name} is absent from this install")
    return path


@pytest.fixture(scope="session")
def lee_path() -> Path:
    """lee_background.cor: 300 news stories, one per line (58,152 tokens under the default tokeniser)."""
    return gensim_data("lee_background.cor")


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
