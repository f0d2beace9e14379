"""The ``>>>`` examples of every encoder module run and pass."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "repspace.engines.encoders",
    "repspace.engines.encoders.base",
    "repspace.engines.encoders.registry",
    "repspace.core.threads",
    "repspace.engines.encoders.static",
    "repspace.engines.encoders.sentence_transformers",
    "repspace.engines.encoders.hf_layers",
    "repspace.engines.encoders.tokens",
]


@pytest.mark.slow
@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
