"""The public surface: one module per capability (``repspace.search``, ``repspace.compare`` ...).

Each re-exports the supported names of the layers with ``__all__``. These tests
hold the promises users rely on: every listed name imports, is the very object
its implementation defines (no copy, no module loaded twice), and every
function and class says what it does with a runnable example; docs/API.md
lists every module and name.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path

import pytest

import repspace

SRC = Path(repspace.__file__).resolve().parent
API_PAGE = SRC.parents[1] / "docs" / "API.md"
LAYERS = ("repspace.core.", "repspace.engines.", "repspace.workflows.", "repspace.interfaces.")
PUBLIC = sorted(p.stem for p in SRC.glob("*.py") if p.stem != "__init__")


def _names(module: str) -> list[tuple[str, object]]:
    mod = importlib.import_module(f"repspace.{module}")
    return [(name, getattr(mod, name)) for name in mod.__all__]


def test_the_public_modules_are_the_capabilities() -> None:
    assert PUBLIC == ["align", "analyze", "compare", "diagnose", "distributed", "embed", "errors", "evaluate",
                      "explore", "interpret", "layers", "learn", "search", "store", "transforms"]


@pytest.mark.parametrize("module", PUBLIC)
def test_every_public_name_is_its_implementation(module: str) -> None:
    mod = importlib.import_module(f"repspace.{module}")
    assert mod.__doc__ and ">>>" in mod.__doc__, f"repspace.{module} has no example in its docstring"
    assert len(mod.__all__) == len(set(mod.__all__))
    for name, obj in _names(module):
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue  # constants: their module documents them
        assert obj.__module__.startswith(LAYERS), f"repspace.{module}.{name} is defined in {obj.__module__}"
        home = importlib.import_module(obj.__module__)
        assert getattr(home, obj.__qualname__) is obj, f"repspace.{module}.{name} is not {obj.__module__}'s"


@pytest.mark.parametrize("module", PUBLIC)
def test_every_public_function_and_class_has_an_example(module: str) -> None:
    missing = [name for name, obj in _names(module)
               if (inspect.isclass(obj) or inspect.isfunction(obj)) and ">>>" not in (inspect.getdoc(obj) or "")]
    assert missing == [], f"repspace.{module}: no docstring example for {', '.join(missing)}"


def test_no_module_is_loaded_twice() -> None:
    for module in PUBLIC:
        importlib.import_module(f"repspace.{module}")
    by_file: dict[str, list[str]] = {}
    for name, mod in list(sys.modules.items()):
        file = getattr(mod, "__file__", None)
        if name.startswith("repspace") and file:
            by_file.setdefault(str(Path(file).resolve()), []).append(name)
            assert mod.__spec__ is not None and mod.__spec__.name == name, f"{name}'s spec names {mod.__spec__}"
    assert [names for names in by_file.values() if len(names) > 1] == []


@pytest.mark.parametrize("old", ["geometry", "eval", "encoders", "ingest", "cli", "reports", "space", "filters"])
def test_the_old_short_paths_are_gone(old: str) -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(f"repspace.{old}")


def test_the_api_page_lists_every_module_and_name() -> None:
    page = API_PAGE.read_text(encoding="utf-8")
    for module in PUBLIC:
        assert f"## repspace.{module}" in page, f"docs/API.md has no section for repspace.{module}"
        section = page.split(f"## repspace.{module}", 1)[1].split("\n## ", 1)[0]
        missing = [name for name, _ in _names(module) if f"`{name}`" not in section]
        assert missing == [], f"docs/API.md, repspace.{module}: {', '.join(missing)} not listed"


#: Public dataclasses that are inputs, settings or handles rather than results, so they need no ``to_dict``
#: (or, for RayRun, a record filled in while a job runs): data sets, parameters, stored-state handles.
NOT_RESULTS = {
    "Records", "StsPairs", "BeirData", "WordVectors", "WordPairs", "Analogies", "LabelledTexts", "PairLabels",
    "RerankingData", "BitextPairs", "SummarizationData",
    "FittedTransform", "MtebTask", "Subject", "Dictionary", "TokenStates", "FDEConfig", "HNSWParams", "IndexSpec",
    "ShardEntry", "Snapshot", "RayRun",
}


@pytest.mark.parametrize("module", PUBLIC)
def test_every_public_result_is_a_frozen_dataclass_with_to_dict(module: str) -> None:
    import dataclasses

    off = []
    for name, obj in _names(module):
        if inspect.isclass(obj) and dataclasses.is_dataclass(obj) and name not in NOT_RESULTS:
            if not obj.__dataclass_params__.frozen or not callable(getattr(obj, "to_dict", None)):
                off.append(name)
    assert off == [], f"repspace.{module}: results that are not frozen dataclasses with to_dict: {off}"
