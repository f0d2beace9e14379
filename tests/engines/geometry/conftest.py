"""Fixtures shared by the geometry tests."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture(scope="module")
def glove8000(glove_vectors) -> np.ndarray:
    """The 8,000 most frequent GloVe 6B 50-d word vectors (real data), an in-memory copy per test module."""
    return np.array(glove_vectors[:8000])
