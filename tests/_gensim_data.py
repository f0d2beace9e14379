"""The test data gensim's wheel ships (the Lee corpus, WordSim-353, ...), found by name."""

from __future__ import annotations

from pathlib import Path

import pytest


def gensim_data(name: str) -> Path:
    """The path of one of gensim's test files; the test skips when this install lacks it."""
    from gensim.test.utils import datapath

    path = Path(datapath(name))
    if not path.is_file():
        pytest.skip(f"gensim's test data {name} is absent from this install")
    return path
