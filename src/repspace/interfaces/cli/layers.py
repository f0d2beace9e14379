"""``repspace layers ...``: read a model layer by layer and token by token."""

from __future__ import annotations

from repspace.interfaces.cli._app import command_group

layers_app = command_group("layers", "Read a model layer by layer and token by token: profile, lens, grid, pooling, "
                                     "deviation, moments.")
