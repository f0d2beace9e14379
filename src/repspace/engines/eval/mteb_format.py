"""MTEB's results format: what ``TaskResult.from_disk`` and ``ResultCache.load_results`` of mteb 2.x read.

mteb keeps one JSON object per task and model, in a results folder laid out as
``results/<org>__<model>/<revision>/<task>.json`` beside a ``model_meta.json``
describing the model; settings varied for an ablation (here: a layer, a
transform, a compression, an index) go one level deeper, under
``experiments/<experiment name>/``, each with its own ``model_meta.json``
whose ``experiment_kwargs`` name the settings. ``mteb run --output-folder DIR``
writes that layout under ``DIR``; :func:`write_results` writes the same.

These helpers need no mteb: they write what mteb 2.26.24 reads (the tests load
the files with mteb itself). A result file carries

- ``dataset_revision``: :func:`data_revision`, a SHA-256 of the data files
  (mteb writes the Hugging Face commit of its data set there);
- ``mteb_version``: :data:`MTEB_VERSION`, the mteb release whose format is
  written (mteb reads a file without one as a pre-1.11 file, and runs its
  1.12.48 pair-classification fix on older ones);
- ``languages`` of each score entry: ISO 639-3 code and ISO 15924 script
  (``eng-Latn``), as mteb's ``get_score`` averages only entries with a language;
- a ``repspace`` block inside the score entry (what was measured and how): mteb's
  ``TaskResult`` model drops unknown top-level fields but keeps every key of a
  score entry, as it does its own ``previous_results_model_meta``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.atomic import write_atomic
from repspace.core.errors import InputError

if TYPE_CHECKING:
    from repspace.engines.eval._results import TaskResult

#: The mteb release whose results format is written (``mteb_version`` of every file).
MTEB_VERSION = "2.26.24"
#: ``languages`` when none is given: every data set repspace ships is English.
DEFAULT_LANGUAGES: tuple[str, ...] = ("eng-Latn",)
#: ``dataset_revision`` of a result whose data did not come from files.
NO_REVISION = "unknown"
#: The files of a BEIR folder that :func:`data_revision` hashes (qrels: every split).
BEIR_FILES = ("corpus.jsonl", "queries.jsonl", "qrels/*.tsv")
#: The keys of the ``model_meta.json`` mteb 2.26.24 writes (``ModelMeta.to_dict()``).
MODEL_META_KEYS = (
    "loader_kwargs", "name", "revision", "release_date", "languages", "n_parameters",
    "n_active_parameters_override", "n_embedding_parameters", "memory_usage_mb", "max_tokens", "embed_dim",
    "license", "open_weights", "public_training_code", "public_training_data", "framework", "reference",
    "similarity_fn_name", "use_instructions", "training_datasets", "adapted_from", "superseded_by",
    "modalities", "model_type", "citation", "contacts", "experiment_kwargs", "output_dtypes",
    "extra_requirements_groups", "loader", "is_cross_encoder",
)

_LANGUAGE = re.compile(r"[a-z]{3}-[A-Z][a-z]{3}")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
# mteb's _serialize_experiment_kwargs_to_name: characters a folder name cannot hold.
_INVALID = set('<>:"|?*\\/\0')


def parse_languages(value: str | Iterable[str] | None) -> tuple[str, ...]:
    """Languages as mteb writes them: ISO 639-3 code, a dash, ISO 15924 script.

    Parameters
    ----------
    value : str, iterable of str or None
        ``"eng-Latn"``, ``"eng-Latn,deu-Latn"`` or a list; ``None`` gives
        :data:`DEFAULT_LANGUAGES`.

    Returns
    -------
    tuple of str
        Distinct, in the order given.

    Raises
    ------
    InputError
        For an empty list or a code of another shape (``en``, ``eng``, ``EN-latn``).

    Examples
    --------
    >>> parse_languages("eng-Latn, deu-Latn")
    ('eng-Latn', 'deu-Latn')
    >>> parse_languages(None)
    ('eng-Latn',)
    >>> parse_languages("en")
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: language 'en' is not an ISO 639-3 code and an ISO 15924 script such as eng-Latn
    """
    if value is None:
        return DEFAULT_LANGUAGES
    items = value.split(",") if isinstance(value, str) else list(value)
    out: list[str] = []
    for item in items:
        code = str(item).strip()
        if not _LANGUAGE.fullmatch(code):
            raise InputError(f"language {code!r} is not an ISO 639-3 code and an ISO 15924 script such as eng-Latn")
        if code not in out:
            out.append(code)
    if not out:
        raise InputError("no language given; write one such as eng-Latn")
    return tuple(out)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def data_revision(path: str | Path | Sequence[str | Path]) -> str:
    """A content hash of a data set's files: mteb's ``dataset_revision`` for data read from disk.

    Parameters
    ----------
    path : str, Path or sequence of them
        A data file, a BEIR folder, or several files that make one data set
        (the two sides of a bitext task).

    Returns
    -------
    str
        For a file, the SHA-256 of its bytes (``sha256sum FILE``). For a BEIR
        folder, the SHA-256 of the ``sha256sum`` lines (``<hash>  <path>``) of
        ``corpus.jsonl``, ``queries.jsonl`` and every ``qrels/*.tsv``, sorted by
        path: ``cd FOLDER && sha256sum corpus.jsonl qrels/*.tsv queries.jsonl | sha256sum``.
        Every split of a folder shares one revision, as a Hugging Face commit does.
        For several files, the SHA-256 of their ``sha256sum`` lines in the order given.

    Raises
    ------
    InputError
        When the path does not exist, or a folder holds none of those files.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "pairs.csv"
    >>> _ = p.write_bytes(b"a,b,1\\n")
    >>> data_revision(p) == hashlib.sha256(b"a,b,1\\n").hexdigest()
    True
    """
    if not isinstance(path, (str, Path)):
        files = [Path(p) for p in path]
        missing = [p for p in files if not p.is_file()]
        if missing or not files:
            raise InputError(f"data {missing[0] if missing else 'files'} do{'es' if missing else ''} not exist")
        lines = "".join(f"{_sha256(f)}  {f.name}\n" for f in files)
        return hashlib.sha256(lines.encode("utf-8")).hexdigest()
    path = Path(path)
    if path.is_file():
        return _sha256(path)
    if not path.is_dir():
        raise InputError(f"data {path} does not exist")
    files = sorted({f for pattern in BEIR_FILES for f in path.glob(pattern) if f.is_file()},
                   key=lambda f: f.relative_to(path).as_posix())
    if not files:
        raise InputError(f"{path} holds none of {', '.join(BEIR_FILES)}: nothing to take a revision of")
    lines = "".join(f"{_sha256(f)}  {f.relative_to(path).as_posix()}\n" for f in files)
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


def safe_name(text: str) -> str:
    """``text`` with every run of characters other than letters, digits, ``.``, ``_`` and ``-`` made one ``_``.

    Examples
    --------
    >>> safe_name("sts:stsb-en-test")
    'sts_stsb-en-test'
    """
    return _UNSAFE.sub("_", text).strip("_") or "_"


def _serialize(value: Any) -> str:
    if isinstance(value, (str, int, float, bool)) or value is None:
        text = str(value)
        for ch in _INVALID:
            text = text.replace(ch, "_")
        return text
    if isinstance(value, (list, tuple)):
        return f"[{','.join(_serialize(v) for v in value)}]"
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{k}:{_serialize(v)}" for k, v in sorted(value.items())) + "}"
    raise InputError(f"an experiment setting must be a JSON value, not {type(value).__name__}")


def experiment_name(kwargs: Mapping[str, Any] | None) -> str | None:
    """The folder mteb files an experiment under (``ModelMeta.experiment_name``), for JSON values.

    ``key_value`` pairs sorted by key and joined by ``__``; ``exp_`` and 16 hex
    digits of a SHA-256 when that is longer than 200 characters or a key holds
    a character a folder name cannot.

    Examples
    --------
    >>> experiment_name({"layer": 3, "codec": "pca64,int8"})
    'codec_pca64,int8__layer_3'
    >>> experiment_name({}) is None
    True
    """
    if not kwargs:
        return None
    text = "__".join(f"{key}_{_serialize(value)}" for key, value in sorted(kwargs.items()))
    if len(text) > 200 or any(c in _INVALID for c in text):
        return f"exp_{hashlib.sha256(text.encode()).hexdigest()[:16]}"
    return text


def model_meta(name: str, revision: str, *, embed_dim: int | None = None, max_tokens: float | None = None,
               framework: Sequence[str] = (), use_instructions: bool | None = None,
               experiment_kwargs: Mapping[str, Any] | None = None, model_type: Sequence[str] = ("dense",),
               similarity_fn_name: str | None = "cosine") -> dict[str, Any]:
    """A ``model_meta.json`` as mteb writes it (every key of ``ModelMeta.to_dict()``, unknowns as null).

    Parameters
    ----------
    name : str
        ``organisation/model``, as mteb requires.
    revision : str
        The model's revision (the folder the results go in).
    experiment_kwargs : mapping, optional
        Settings of an ablation (JSON values); they name the experiment folder.

    Examples
    --------
    >>> meta = model_meta("repspace/static", "abc", embed_dim=64)
    >>> meta["name"], meta["embed_dim"], meta["experiment_kwargs"]
    ('repspace/static', 64, None)
    """
    if name.count("/") != 1 or not all(name.split("/")):
        raise InputError(f"an mteb model name is 'organisation/model', not {name!r}")
    meta: dict[str, Any] = dict.fromkeys(MODEL_META_KEYS)
    meta.update(
        loader_kwargs={}, name=name, revision=revision, embed_dim=embed_dim, max_tokens=max_tokens,
        framework=list(framework), similarity_fn_name=similarity_fn_name, use_instructions=use_instructions,
        modalities=["text"], model_type=list(model_type),
        experiment_kwargs=dict(experiment_kwargs) if experiment_kwargs else None, is_cross_encoder=False,
    )
    return meta


def results_folder(root: str | Path, name: str, revision: str,
                   experiment_kwargs: Mapping[str, Any] | None = None) -> Path:
    """Where mteb's ``ResultCache(root)`` keeps a model's results (``get_task_result_path``'s folder).

    Examples
    --------
    >>> results_folder("out", "repspace/static", "abc", {"layer": 3}).as_posix()
    'out/results/repspace__static/abc/experiments/layer_3'
    """
    folder = Path(root) / "results" / name.replace("/", "__").replace(" ", "_") / revision
    exp = experiment_name(experiment_kwargs)
    return folder / "experiments" / exp if exp else folder


def _write_json(path: Path, data: Any, indent: int = 2) -> None:
    """Write atomically: a reader sees the old file or the new one, never half of one."""
    text = json.dumps(data, indent=indent, ensure_ascii=False, allow_nan=False, default=_json_default) + "\n"
    write_atomic(path, lambda f: f.write(text.encode("utf-8")), durable=True)


def _json_default(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _merged(old: Mapping[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """mteb's ``TaskResult.merge``: the new entries replace those of the same split and subset; times add up."""
    scores = {split: list(entries) for split, entries in old["scores"].items()}
    for split, entries in new["scores"].items():
        kept = {e["hf_subset"]: e for e in scores.get(split, [])}
        kept.update({e["hf_subset"]: e for e in entries})
        scores[split] = list(kept.values())
    out = dict(new, scores=scores)
    if old.get("evaluation_time") is not None:
        out["evaluation_time"] = float(old["evaluation_time"]) + float(new.get("evaluation_time") or 0.0)
    dates = [d for d in (old.get("date"), new.get("date")) if isinstance(d, (int, float))]
    out["date"] = max(dates) if dates else None
    return out


def write_task_result(folder: str | Path, result: TaskResult, *, date: float | None = None) -> tuple[Path, bool]:
    """Write one result as ``<folder>/<task>.json`` (:meth:`TaskResult.to_mteb`), merging a file already there.

    A file of the same task and ``dataset_revision`` keeps its other splits
    and subsets (mteb's ``TaskResult.merge``: this result's entry replaces one
    of the same split and subset, evaluation times add up); a file of other
    data, or one that is not a result, is replaced.

    Returns
    -------
    (Path, bool)
        The file, and whether it was merged with one already there.

    Examples
    --------
    >>> import tempfile
    >>> from repspace.engines.eval import TaskResult
    >>> r = TaskResult("sts:toy", "test", "spearman", {"spearman": 0.8}, 1.0, dataset_revision="abc")
    >>> path, merged = write_task_result(tempfile.mkdtemp(), r)
    >>> path.name, merged, json.loads(path.read_text())["scores"]["test"][0]["main_score"]
    ('sts_toy.json', False, 0.8)
    """
    data = result.to_mteb(date=date)
    path = Path(folder) / f"{data['task_name']}.json"
    merged = False
    if path.is_file():
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
            same = (isinstance(old, dict) and old.get("task_name") == data["task_name"]
                    and old.get("dataset_revision") == data["dataset_revision"] and isinstance(old.get("scores"), dict))
        except (OSError, ValueError):
            same = False
        if same:
            data, merged = _merged(old, data), True
    _write_json(path, data)
    return path, merged


def write_model_meta(folder: str | Path, meta: Mapping[str, Any]) -> Path:
    """Write ``<folder>/model_meta.json`` (mteb indents it by 4).

    Examples
    --------
    >>> import tempfile
    >>> write_model_meta(tempfile.mkdtemp(), model_meta("repspace/static", "abc")).name
    'model_meta.json'
    """
    path = Path(folder) / "model_meta.json"
    _write_json(path, dict(meta), indent=4)
    return path
