"""Read evaluation results back for a report: ``--json`` files, MTEB result files and folders, saved result ids.

A source is one of

* a JSON file printed by ``repspace eval ... --json``: a list of results
  (:meth:`TaskResult.to_dict`), one such result, ``{"results": [...],
  "comparisons": [...]}`` (several models, with their tested comparisons), or
  the list ``repspace eval results --json`` prints (each saved result's
  ``result``);
* an MTEB results file (``<task>.json`` as ``--output-dir`` or mteb itself
  writes it), or a folder holding such files (searched recursively,
  ``model_meta.json`` files skipped);
* the id of a result saved in a store (``--save``), as an int or a string of
  digits (``"3"`` or ``"#3"``) that names no file.

Each result becomes a :class:`Loaded`: the result, where it came from, the name
its file's comparisons gave it and those comparisons. Anything else is one
:class:`InputError` line naming the source.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from repspace.core.errors import InputError
from repspace.core.store import Store
from repspace.engines.eval import TaskResult
from repspace.engines.eval.mteb_format import NO_REVISION
from repspace.engines.eval.uncertainty import Comparison, Interval

#: What a result that is neither of repspace's shapes nor an MTEB file is told.
_SHAPES = ("a result of `repspace eval ... --json` (a result, a list of them, or {\"results\", \"comparisons\"}) "
           "or an MTEB results file")
#: The name of the model description mteb writes beside its result files: skipped in folders.
_MODEL_META = "model_meta.json"


@dataclass(frozen=True)
class Loaded:
    """One result read from a source.

    Attributes
    ----------
    result : TaskResult
    source : str
        Where it came from: the file's path, or ``#id`` of a saved result.
    batch : int
        The number of the document it was read from (a file, or a saved result);
        results of one ``{"results", "comparisons"}`` document share it.
    given_name : str or None
        The name the document's comparisons give it (``None`` without comparisons).
    comparisons : tuple of Comparison
        The document's comparisons (the same tuple for each of its results).
    origin : str
        The source as given (a folder's results share it); empty: :attr:`source`.
    """

    result: TaskResult
    source: str
    batch: int
    given_name: str | None = None
    comparisons: tuple[Comparison, ...] = ()
    origin: str = ""


def load_sources(sources: Sequence[str | Path | int], store: Callable[[], Store]) -> list[Loaded]:
    """Every result of ``sources``, in their order; ``store()`` gives the store the first saved id is read from.

    Raises
    ------
    InputError
        No source; a path that does not exist and is no id; a file that is not
        JSON or not a result; a folder without result files; an unknown id.
    """
    if not sources:
        raise InputError("no results given: name --json files, MTEB result folders or saved result ids")
    loaded: list[Loaded] = []
    for source in sources:
        if isinstance(source, int) and not isinstance(source, bool):
            loaded.append(_saved(store(), source, len(loaded)))
            continue
        path = Path(source)
        if path.is_dir():
            files = sorted(p for p in path.rglob("*.json") if p.name != _MODEL_META and p.is_file())
            if not files:
                raise InputError(f"no result files (*.json) in the folder {path}")
            for file in files:
                loaded += [replace(item, origin=str(source)) for item in _read_file(file, len(loaded))]
        elif path.is_file():
            loaded += _read_file(path, len(loaded))
        elif isinstance(source, str) and source.removeprefix("#").isdecimal():
            loaded.append(_saved(store(), int(source.removeprefix("#")), len(loaded)))
        else:
            raise InputError(f"no such file or folder: {path}")
    return loaded


def _saved(store: Store, result_id: int, batch: int) -> Loaded:
    by_id = {s.id: s for s in store.results()}
    if result_id not in by_id:
        raise InputError(f"no saved result with id {result_id} in {store.path} (repspace eval results lists them)")
    try:
        result = TaskResult.from_dict(by_id[result_id].result)
    except (InputError, ValueError, TypeError) as e:
        raise InputError(f"saved result #{result_id}: {e}") from None
    return Loaded(result, f"#{result_id}", batch)


def _read_file(path: Path, batch: int) -> list[Loaded]:
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError:
        raise InputError(f"{path} is not a result: not UTF-8 text") from None
    except ValueError as e:
        raise InputError(f"{path} is not a result: not JSON ({e})") from None
    try:
        return _document(data, path, batch)
    except (InputError, ValueError, TypeError, KeyError, AttributeError) as e:
        why = str(e) if isinstance(e, InputError) else f"expected {_SHAPES}"
        raise InputError(f"{path} is not a result: {why}") from None


def _document(data: Any, path: Path, batch: int) -> list[Loaded]:
    source = str(path)
    if isinstance(data, dict) and "results" in data and isinstance(data["results"], list):
        if not data["results"]:
            raise InputError("its list of results is empty")
        results = [_repspace_result(d) for d in data["results"]]
        comparisons = tuple(_comparison(c) for c in data.get("comparisons") or ())
        names = _given_names(comparisons, len(results))
        return [Loaded(r, source, batch, name, comparisons) for r, name in zip(results, names, strict=True)]
    if isinstance(data, list):
        if not data:
            raise InputError("an empty list holds no result")
        return [Loaded(_repspace_result(d), source, batch) for d in data]
    if isinstance(data, dict) and "repspace" in data:
        return [Loaded(_repspace_result(data), source, batch)]
    if isinstance(data, dict) and isinstance(data.get("scores"), dict):
        return [Loaded(r, source, batch) for r in _mteb_results(data, path)]
    raise InputError(f"expected {_SHAPES}")


def _repspace_result(data: Any) -> TaskResult:
    """A :meth:`TaskResult.to_dict` dict, or a saved result of ``eval results --json`` (its ``result``)."""
    if isinstance(data, dict) and isinstance(data.get("result"), dict) and "id" in data:
        data = data["result"]
    return TaskResult.from_dict(data)


def _comparison(data: Any) -> Comparison:
    if not isinstance(data, dict):
        raise InputError("a comparison must be an object with a, b and difference")
    try:
        def number(key: str) -> float | None:
            value = data.get(key)
            return None if value is None else float(value)

        return Comparison(str(data["a"]), str(data["b"]), float(data["difference"]), number("ci_low"),
                          number("ci_high"), number("p_value"), number("p_raw"))
    except (KeyError, TypeError, ValueError):
        raise InputError("a comparison must have a, b, difference and numbers or null for ci_low, ci_high, "
                         "p_value") from None


def _given_names(comparisons: tuple[Comparison, ...], n: int) -> list[str | None]:
    """The results' names as their comparisons give them: pairs (0, 1), (0, 2) ... (1, 2) ... in order."""
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    if not comparisons:
        return [None] * n
    if len(comparisons) != len(pairs):
        raise InputError(f"{len(comparisons)} comparisons for {n} results (every pair: {len(pairs)})")
    names: list[str | None] = [None] * n
    for (i, j), c in zip(pairs, comparisons, strict=True):
        for k, name in ((i, c.a), (j, c.b)):
            if names[k] not in (None, name):
                raise InputError(f"the comparisons name result {k + 1} both {names[k]!r} and {name!r}")
            names[k] = name
    return names


def _mteb_results(data: dict[str, Any], path: Path) -> list[TaskResult]:
    """Each split and subset of an MTEB results file; repspace's own block read back where it is there."""
    task = str(data["task_name"])
    out = []
    for split, entries in data["scores"].items():
        if not isinstance(entries, list) or not entries:
            raise InputError(f"split {split!r} holds no score entries")
        for entry in entries:
            block = entry.get("repspace") if isinstance(entry, dict) else None
            if isinstance(block, dict) and "main_metric" in block:
                scores = {k: v for k, v in entry.items() if k != "repspace"}
                out.append(TaskResult.from_dict({
                    "task_name": task, "dataset_revision": data.get("dataset_revision"),
                    "scores": {split: [scores]}, "evaluation_time": data.get("evaluation_time"),
                    "repspace": block}))
            else:
                out.append(_foreign(task, str(split), entry, data, path))
    return out


def _foreign(task: str, split: str, entry: dict[str, Any], data: dict[str, Any], path: Path) -> TaskResult:
    """An entry mteb wrote: its ``main_score`` is the main metric; the model named by ``model_meta.json``."""
    scores = {k: float(v) for k, v in entry.items() if isinstance(v, (int, float)) and not isinstance(v, bool)
              and k not in ("ci_low", "ci_high")}
    if "main_score" not in scores:
        raise InputError(f"a score entry of split {split!r} has no main_score")
    subset = str(entry.get("hf_subset") or "default")
    interval = None
    low, high = entry.get("ci_low"), entry.get("ci_high")
    if isinstance(low, (int, float)) and isinstance(high, (int, float)):
        interval = Interval(float(low), float(high), 0.95, 0)
    revision = data.get("dataset_revision")
    return TaskResult(task if subset == "default" else f"{task} [{subset}]", split, "main_score", scores,
                      float(data.get("evaluation_time") or 0.0), {"subject": _mteb_model(path)},
                      dataset_revision=None if revision in (None, NO_REVISION) else str(revision),
                      interval=interval)


def _mteb_model(path: Path) -> str:
    """The model of a file in mteb's layout: ``model_meta.json``'s name, else the folder ``org__model``."""
    meta = path.with_name(_MODEL_META)
    try:
        name = json.loads(meta.read_text(encoding="utf-8")).get("name") if meta.is_file() else None
    except (OSError, ValueError, AttributeError):
        name = None
    if isinstance(name, str) and name:
        return name
    parts = path.parent.parts
    if "results" in parts[:-1]:
        return parts[parts.index("results") + 1].replace("__", "/")
    return path.parent.name or path.stem
