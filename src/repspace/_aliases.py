"""The short import paths of earlier versions, kept working: ``repspace.search`` is ``repspace.workflows.search``.

The modules live in folders named after their layer (``core/``, ``engines/``,
``workflows/``, ``interfaces/``); users' code and the README import the short
paths. A meta-path finder resolves ``repspace.<short>[.<sub>...]`` to the first
of its targets that has that module and hands back *the same module object*
(``repspace.geometry is repspace.engines.geometry``), so nothing is loaded twice
and classes stay identical.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from types import ModuleType
from typing import Any

#: short name -> where it lives now, tried in order (``search``: the stored-space functions, then the engines).
ALIASES: dict[str, tuple[str, ...]] = {
    "errors": ("repspace.core.errors",),
    "space": ("repspace.core.space",),
    "filters": ("repspace.core.filters",),
    "store": ("repspace.workflows.store", "repspace.core.store"),
    "encoders": ("repspace.engines.encoders",),
    "geometry": ("repspace.engines.geometry",),
    "compare": ("repspace.engines.compare",),
    "align": ("repspace.engines.align",),
    "transforms": ("repspace.engines.transforms",),
    "eval": ("repspace.engines.eval",),
    "search": ("repspace.workflows.search", "repspace.engines.search"),
    "evaluate": ("repspace.workflows.evaluate",),
    "ingest": ("repspace.workflows.ingest",),
    "cli": ("repspace.interfaces.cli",),
    "reports": ("repspace.interfaces.reports",),
}


class _Loader(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: Any) -> ModuleType:
        return importlib.import_module(self.target)

    def exec_module(self, module: ModuleType) -> None:  # already executed by its own import
        pass


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        parts = fullname.split(".")
        if len(parts) < 2 or parts[0] != "repspace" or parts[1] not in ALIASES:
            return None
        rest = ".".join(parts[2:])
        for base in ALIASES[parts[1]]:
            name = f"{base}.{rest}" if rest else base
            try:
                found = importlib.util.find_spec(name)
            except ModuleNotFoundError:
                found = None
            if found is not None:
                return importlib.util.spec_from_loader(fullname, _Loader(name))
        return None


def install() -> None:
    """Put the finder on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.append(_Finder())
