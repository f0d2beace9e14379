"""Fixtures shared by the engine tests."""

from __future__ import annotations

import pytest

from repspace.core import arrays


@pytest.fixture()
def small_blocks(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    """Blocks of a few rows, so that the blocked loops run over many blocks.

    A block holds the test module's ``SMALL_BLOCK_ELEMENTS`` elements (each module picks its own: a few rows
    of its data).
    """
    monkeypatch.setattr(arrays, "BLOCK_ELEMENTS", request.module.SMALL_BLOCK_ELEMENTS)
