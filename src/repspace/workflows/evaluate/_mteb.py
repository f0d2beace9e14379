"""Evaluation results in MTEB's results layout (``repspace eval ... --output-dir DIR``).

``DIR`` is laid out as ``mteb run --output-folder DIR`` lays it out, so that
``mteb.ResultCache(DIR).load_results()`` and ``mteb.results.TaskResult.from_disk``
read it (the format helpers are in :mod:`repspace.engines.eval.mteb_format`)::

    DIR/results/<model>/<revision>/model_meta.json
    DIR/results/<model>/<revision>/<task>.json
    DIR/results/<model>/<revision>/experiments/<settings>/model_meta.json
    DIR/results/<model>/<revision>/experiments/<settings>/<task>.json

What is a model, a revision and an experiment:

- an encoder is the model ``repspace/<spec>`` (``repspace/minilm``,
  ``repspace/hf-layers_minilm``); its revision is 40 hex digits of a SHA-256 of
  its provenance without the local folder and the layer (the weights'
  fingerprint, the library and its version, pooling, normalisation, prompt,
  maximum length), so the same recipe on another machine lands in the same folder;
- a stored space is the model ``repspace/space-<name>``, revision ``<uid>-<generation>``;
- BM25 alone is the model ``repspace/bm25``, revision ``bm25s-<version>``;
- what an evaluation varies on top of the model is an experiment (mteb's
  ``experiment_kwargs``): ``layer``, ``transform``, ``codec``, ``index``,
  ``lexical`` and ``lexical_weight`` (hybrid), ``hubness`` and ``kappa``. A
  result without any of them goes in the revision folder itself. mteb loads
  experiments only when asked: ``load_results(load_experiments="match_name")``.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from repspace.core.errors import InputError
from repspace.engines.eval import TaskResult
from repspace.engines.eval.bitext import SCORE_KEYS as BITEXT_SCORES
from repspace.engines.eval.compression import Codec
from repspace.engines.eval.mteb_format import (
    model_meta,
    results_folder,
    safe_name,
    write_model_meta,
    write_task_result,
)
from repspace.engines.eval.retrieval import SCORE_KEYS as RANKING_SCORES
from repspace.engines.eval.summarization import SCORE_KEYS as SUMMARIZATION_SCORES
from repspace.workflows.evaluate._subjects import Subject

#: The repspace tasks that score as MTEB does, and MTEB's type of each (``--mteb-task`` accepts these only).
MTEB_TYPES = {"sts": "STS", "retrieval": "Retrieval", "reranking": "Reranking", "bitext": "BitextMining",
              "summarization": "Summarization"}
#: The scores of the tasks whose every score is known beforehand: an MTEB task naming another main score is refused.
_SCORES = {"reranking": RANKING_SCORES, "bitext": BITEXT_SCORES, "summarization": SUMMARIZATION_SCORES}
#: mteb's revision of a model whose revision is not known.
NO_MODEL_REVISION = "no_revision_available"
# The library of an encoder (its provenance's encoder_version) to mteb's framework names.
_FRAMEWORKS = {
    "sentence-transformers": ["Sentence Transformers", "PyTorch"],
    "transformers": ["Transformers", "PyTorch"],
    "model2vec": ["NumPy"],
}
# Provenance fields that do not change the vectors' recipe: the local folder, the layer (an experiment).
_NOT_REVISION = ("model", "layer")


@dataclass(frozen=True)
class MtebTask:
    """A task of mteb's registry that a repspace result stands for (``--mteb-task``).

    Attributes
    ----------
    name : str
        The registered name (``STSBenchmark``).
    main_metric : str
        MTEB's main score of the task (``cosine_spearman``).
    languages : tuple of str
        The languages of its default subset.
    splits : tuple of str
        The splits MTEB scores it on.

    Examples
    --------
    As :func:`lookup_mteb_task` reads it from mteb's registry:

    >>> t = MtebTask("STSBenchmark", "cosine_spearman", ("eng-Latn",), ("validation", "test"))
    >>> t.check_split("test")
    >>> t.check_split("train")
    Traceback (most recent call last):
    repspace.core.errors.InputError: MTEB scores STSBenchmark on validation, test; this data is the 'train' split
    """

    name: str
    main_metric: str
    languages: tuple[str, ...]
    splits: tuple[str, ...]

    def check_split(self, split: str) -> None:
        """Fail unless MTEB scores the task on ``split``."""
        if split not in self.splits:
            raise InputError(f"MTEB scores {self.name} on {', '.join(self.splits)}; this data is the "
                             f"{split!r} split")


def lookup_mteb_task(name: str, task: str) -> MtebTask:
    """Check a registered MTEB task name against mteb's registry and this repspace task.

    Parameters
    ----------
    name : str
        An MTEB task name (``STSBenchmark``, ``SciFact``).
    task : str
        The repspace task: one of :data:`MTEB_TYPES`, those whose scores
        repspace computes as MTEB does.

    Returns
    -------
    MtebTask

    Raises
    ------
    InputError
        When mteb is not installed, the name is not registered, its type is
        not this task's, it has no ``default`` subset (repspace writes one), its
        main score is not one this task computes, or MTEB scores it with a
        deprecated evaluator (SummEval: use ``SummEvalSummarization.v2``).

    Examples
    --------
    ``lookup_mteb_task("STSBenchmark", "sts")`` gives main metric ``cosine_spearman``,
    languages ``('eng-Latn',)`` and splits ``('test',)`` (with mteb installed).

    >>> lookup_mteb_task("STSBenchmark", "wordsim")
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: --mteb-task applies to sts, retrieval, reranking, bitext and summarization \
(scored as MTEB does), not to wordsim
    """
    if task not in MTEB_TYPES:
        *first, last = MTEB_TYPES
        raise InputError(f"--mteb-task applies to {', '.join(first)} and {last} (scored as MTEB does), not to {task}")
    if safe_name(name) != name:
        raise InputError(f"MTEB task name {name!r} must be letters, digits, '.', '_' and '-' only")
    try:
        import mteb
    except ImportError:
        raise InputError("--mteb-task checks the name against mteb's registry of tasks: install mteb "
                         "(pip install mteb==2.26.24), or leave --mteb-task out") from None
    try:
        found = mteb.get_task(name)
    except KeyError:
        raise InputError(f"mteb has no task {name!r} (names are case-sensitive, e.g. STSBenchmark)") from None
    meta = found.metadata
    if meta.type != MTEB_TYPES[task]:
        raise InputError(f"MTEB's {name} is a {meta.type} task, not {MTEB_TYPES[task]} ({task})")
    subsets = list(found.hf_subsets)
    if "default" not in subsets:
        raise InputError(f"MTEB's {name} has the subsets {', '.join(subsets[:5])}{'...' if len(subsets) > 5 else ''}; "
                         "repspace writes a single 'default' subset")
    evaluator = getattr(getattr(found, "evaluator", None), "__name__", "")
    if evaluator.startswith("Deprecated"):
        newer = getattr(meta, "superseded_by", None)
        raise InputError(f"MTEB scores {name} with its {evaluator} (it averages each correlation with its p-value), "
                         f"which repspace does not reproduce{f'; name {newer}' if newer else ''}")
    main = str(meta.main_score)
    if task in _SCORES and main not in _SCORES[task]:
        raise InputError(f"MTEB's main score of {name} is {main}, which repspace's {task} does not compute "
                         f"({', '.join(_SCORES[task][:6])}...)")
    langs = tuple(meta.hf_subsets_to_langscripts.get("default") or ())
    return MtebTask(name, main, langs, tuple(found.eval_splits))


def _revision(recipe: dict[str, Any]) -> str:
    text = json.dumps(recipe, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:40]


def _codec_name(codec: Any) -> str:
    if isinstance(codec, dict):
        return Codec(codec.get("dims"), codec.get("method", "prefix"), codec.get("precision", "float32")).name
    return str(codec)


def experiment_kwargs(info: dict[str, Any]) -> dict[str, Any]:
    """The settings a result varies on top of its model (mteb's ``experiment_kwargs``).

    Examples
    --------
    >>> experiment_kwargs({"encoder": "hf-layers:minilm", "layer": 3, "index": "exact",
    ...                    "codec": {"dims": 64, "method": "pca", "precision": "int8"}})
    {'layer': 3, 'codec': 'pca64,int8'}
    >>> experiment_kwargs({"encoder": "minilm", "layer": None, "index": "hnsw32,ef128", "transform": "abtt3"})
    {'transform': 'abtt3', 'index': 'hnsw32,ef128'}
    """
    kw: dict[str, Any] = {}
    if "encoder" in info and info.get("layer") is not None:
        kw["layer"] = info["layer"]
    if info.get("transform"):
        kw["transform"] = info["transform"]
    if info.get("codec") is not None:
        kw["codec"] = _codec_name(info["codec"])
    index = info.get("index")
    if info.get("lexical") == "hybrid":
        dense = str(index).split("+", 1)[0]
        if dense != "exact":
            kw["index"] = dense
        kw["lexical"] = "hybrid"
        kw["lexical_weight"] = info.get("lexical_weight", 1.0)
    elif index not in (None, "exact", "bm25"):
        kw["index"] = index
    hub = info.get("hubness_reduction")
    if isinstance(hub, dict):
        kw["hubness"] = hub.get("method")
        kw["kappa"] = hub.get("kappa")
    return kw


def model_of(result: TaskResult, dim: int | None = None) -> tuple[str, str, dict[str, Any]]:
    """The mteb model a result belongs to: ``(name, revision, model_meta)`` (see the module docstring).

    Examples
    --------
    >>> r = TaskResult("sts:toy", "test", "spearman", {"spearman": 0.5}, 1.0,
    ...                {"encoder": "static", "layer": None, "provenance": {"model_fingerprint": "ab", "model": "/x"}})
    >>> name, revision, meta = model_of(r, 64)
    >>> name, len(revision), meta["embed_dim"], meta["experiment_kwargs"]
    ('repspace/static', 40, 64, None)
    """
    info = result.info
    prov = info.get("provenance") if isinstance(info.get("provenance"), dict) else {}
    kwargs = experiment_kwargs(info)
    if info.get("index") == "bm25":
        try:
            version = metadata.version("bm25s")
        except metadata.PackageNotFoundError:  # pragma: no cover - bm25s is a dependency
            version = "unknown"
        name, revision = "repspace/bm25", safe_name(f"bm25s-{version}")
        meta = model_meta(name, revision, model_type=("sparse",), similarity_fn_name=None,
                          experiment_kwargs=kwargs or None)
        return name, revision, meta
    if info.get("space") is not None:
        name = f"repspace/space-{safe_name(str(info['space']))}"
        revision = safe_name(f"{info.get('space_uid', 'unknown')}-{info.get('generation', 'unknown')}")
    else:
        name = f"repspace/{safe_name(str(info.get('encoder', result.info.get('subject', 'unknown'))))}"
        recipe = {k: v for k, v in prov.items() if k not in _NOT_REVISION}
        revision = _revision(recipe) if recipe else NO_MODEL_REVISION
    library = str(prov.get("encoder_version", "")).split("==")[0]
    multivector = str(info.get("index", "")).startswith("muvera")
    meta = model_meta(
        name, revision, embed_dim=dim, max_tokens=prov.get("max_length"),
        framework=_FRAMEWORKS.get(library, []),
        use_instructions=bool(prov.get("prompt")) if prov else None,
        model_type=("late-interaction",) if multivector else ("dense",),
        experiment_kwargs=kwargs or None,
    )
    return name, revision, meta


def write_mteb(root: str | Path, results: Sequence[TaskResult], subjects: Sequence[Subject] = ()) -> list[Path]:
    """Write results in MTEB's results layout under ``root`` (one ``<task>.json`` each, and the ``model_meta.json``).

    A task file already there for the same model, settings, task and data
    keeps its other splits (see :func:`repspace.engines.eval.mteb_format.write_task_result`).

    Parameters
    ----------
    root : str or Path
        The folder (``mteb.ResultCache(root)`` reads it).
    results : sequence of TaskResult
        Carrying ``dataset_revision`` and ``languages`` (:meth:`TaskResult.with_mteb`).
    subjects : sequence of Subject
        The subjects the results measured (for the vectors' dimension).

    Returns
    -------
    list of Path
        The task files written, one per result.

    Examples
    --------
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> r = TaskResult("sts:toy", "test", "spearman", {"spearman": 0.5}, 1.0, {"encoder": "static"})
    >>> [p.relative_to(root).as_posix() for p in write_mteb(root, [r])]
    ['results/repspace__static/no_revision_available/sts_toy.json']
    """
    root = Path(root)
    if root.exists() and not root.is_dir():
        raise InputError(f"--output-dir {root} is a file, not a folder")
    dims = {s.label: s.dim for s in subjects}
    now = time.time()
    written: list[Path] = []
    for result in results:
        name, revision, meta = model_of(result, dims.get(result.info.get("subject", "")))
        folder = results_folder(root, name, revision, meta["experiment_kwargs"])
        path, _ = write_task_result(folder, result, date=now)
        write_model_meta(folder, meta)
        written.append(path)
    return written
