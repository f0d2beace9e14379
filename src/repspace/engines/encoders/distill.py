"""Distil a model2vec static model from a local transformer model, offline.

model2vec's distillation embeds every token of a transformer's vocabulary
once (``[CLS] token [SEP]`` through the model, mean-pooled), reduces the
vectors with PCA and weights them by an estimate of token frequency (SIF). The
result is a token-embedding table that encodes thousands of texts per second
on one CPU core, with no torch, and loads with
``get_encoder("model2vec:<folder>")``.

:func:`distill_static` wraps :func:`model2vec.distill.distill_from_model`:
model2vec does the distillation; this module adds what repspace needs around
it: the source named like an encoder (``minilm``) or as a local
sentence-transformers / transformers folder, loading with
``local_files_only=True`` (nothing is ever downloaded), an atomic write (a
crash leaves no half-written model) and a provenance record,
``repspace_distill.json``, in the written folder.

Examples
--------
>>> from repspace.engines.encoders.distill import RECORD_NAME, read_distill_record
>>> RECORD_NAME
'repspace_distill.json'
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from repspace.core.checks import check_choice, check_scalar
from repspace.core.errors import (
    ConflictError,
    EncoderError,
    InputError,
    NotFoundError,
    RepspaceError,
)
from repspace.core.progress import Progress
from repspace.engines.encoders._batches import one_line
from repspace.engines.encoders._fingerprint import model_fingerprint, package_version
from repspace.engines.encoders._models import quiet_hf_loading

__all__ = ["RECORD_NAME", "distill_static", "read_distill_record"]

#: The provenance file written into every distilled folder.
RECORD_NAME = "repspace_distill.json"

#: model2vec's pooling modes for the per-token forward pass.
POOLING_MODES = ("mean", "first", "last", "pooler")

# model2vec's progress bar is swapped for the caller's callback while distilling
# (a module attribute), so distillations in one process run one at a time.
_DISTILL_LOCK = threading.Lock()


def distill_static(
    source: str | Path,
    out: str | Path,
    *,
    pca_dims: int | None = 256,
    sif_coefficient: float | None = 1e-4,
    pooling: str = "mean",
    overwrite: bool = False,
    progress: Progress | None = None,
) -> Path:
    """Distil a model2vec static model from a local model and write it to ``out``.

    The vocabulary is the source tokenizer's own (less the ``[unusedN]``
    placeholders); vectors are stored as float16, as model2vec does by
    default. The run is deterministic: the forward passes are
    inference-only and the PCA is an eigendecomposition, so two runs on one
    machine write identical vectors.

    This wraps :func:`model2vec.distill.distill_from_model`, which does the
    distillation itself. What it adds: the source may be an encoder name or
    a sentence-transformers folder (whose transformer may sit in a subfolder,
    as named by its ``modules.json``); the model is loaded with
    ``local_files_only=True`` and remote code is never trusted; the folder is
    written into a temporary sibling of ``out`` and renamed into place, so a
    crash or an error leaves nothing half-written and a refused ``out`` is left
    untouched; and ``repspace_distill.json`` records what made it.

    Parameters
    ----------
    source : str or Path
        ``"minilm"`` (the bundled all-MiniLM-L6-v2), ``"st:<folder>"``, or
        the path of a local sentence-transformers or transformers folder
        (write ``./minilm`` for a folder named ``minilm``). Its tokenizer must
        have a ``tokenizer.json`` (a "fast" tokenizer).
    out : str or Path
        The folder to write. It must not exist, or be empty, unless
        ``overwrite`` is true.
    pca_dims : int or None, optional
        Dimension of the distilled vectors, by PCA (default 256); ``None``
        keeps the model's dimension without PCA. At most the model's hidden
        size.
    sif_coefficient : float or None, optional
        The SIF weighting coefficient, in (0, 1) (default ``1e-4``, model2vec's
        default); ``None`` weights every token equally.
    pooling : str, optional
        How each token's forward pass becomes one vector: ``"mean"`` (default),
        ``"first"`` (the ``[CLS]`` state), ``"last"`` or ``"pooler"``.
    overwrite : bool, optional
        Replace an existing non-empty ``out`` (default false). Encoders and
        models already loaded in this process are then forgotten
        (:func:`repspace.engines.encoders.clear_cache`), so none serves the old model.
    progress : Progress or None, optional
        Called as ``progress("tokens", done, total)`` as the vocabulary is
        embedded. Nothing is drawn when it is ``None``.

    Returns
    -------
    Path
        The absolute path of the written folder: ``config.json``,
        ``model.safetensors``, ``tokenizer.json``, model2vec's ``README.md``
        and ``modules.json``, and ``repspace_distill.json``.

    Raises
    ------
    NotFoundError
        If ``source`` is not an existing folder (or ``minilm`` is not
        installed).
    InputError
        If ``source`` is not a transformer model folder, ``out`` is a file,
        or an option is out of range.
    ConflictError
        If ``out`` exists and is not empty, and ``overwrite`` is false.
    EncoderError
        If model2vec's distillation dependencies are missing or the model
        fails to load or distil.

    See Also
    --------
    read_distill_record : Read the record of a distilled folder.

    Notes
    -----
    Distilling all-MiniLM-L6-v2 embeds its 29,525 tokens: about a minute on
    one CPU core, and uses about 1 GB of memory. The example below is
    therefore skipped in doctests; ``tests/encoders/test_distill.py``
    runs the same calls.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from repspace.engines.encoders import get_encoder
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "minilm-m2v-64"
    >>> folder = distill_static("minilm", out, pca_dims=64)  # doctest: +SKIP
    >>> get_encoder(f"model2vec:{folder}").encode(["A man plays a flute."]).shape  # doctest: +SKIP
    (1, 64)
    >>> read_distill_record(folder)["vocab_size"]  # doctest: +SKIP
    29525
    """
    started = time.perf_counter()
    label, folder = _resolve_source(source)
    transformer = _transformer_folder(folder, label)
    hidden = _hidden_size(transformer, label)
    pca = _check_pca_dims(pca_dims, hidden)
    sif = check_scalar(sif_coefficient, "sif_coefficient", float, low=0, high=1, include="neither", none=True)
    check_choice(pooling, "pooling", POOLING_MODES)
    target = Path(out).expanduser().absolute()
    if target.resolve() == folder or target.resolve() in folder.parents:
        raise InputError(f"output {str(target)!r} would replace the source model; choose another folder")
    replacing = _check_out(target, overwrite)

    model = _distill(transformer, label, pca, sif, pooling, progress)
    vocab_size, dim = len(model.tokens), int(model.dim)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        with _errors(label, "saving the model"):
            model.save_pretrained(tmp)
        record = {
            "source": label,
            "source_folder": str(folder),
            "transformer_folder": str(transformer),
            "source_fingerprint": model_fingerprint(folder),
            "pca_dims": pca,
            "sif_coefficient": sif,
            "pooling": pooling,
            "dtype": "float16",
            "dim": dim,
            "vocab_size": vocab_size,
            "model2vec_version": package_version("model2vec"),
            "transformers_version": package_version("transformers"),
            "torch_version": package_version("torch"),
            "repspace_version": package_version("repspace"),
            "seconds": round(time.perf_counter() - started, 3),
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        }
        (tmp / RECORD_NAME).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        _usual_modes(tmp)
        _move_into_place(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if replacing:
        from repspace.engines.encoders.registry import clear_cache

        clear_cache()
    return target.resolve()


def read_distill_record(folder: str | Path) -> dict[str, Any]:
    """The ``repspace_distill.json`` record of a folder written by :func:`distill_static`.

    Parameters
    ----------
    folder : str or Path
        A distilled model2vec folder.

    Returns
    -------
    dict
        ``source``, ``source_folder``, ``transformer_folder``,
        ``source_fingerprint``, ``pca_dims``, ``sif_coefficient``,
        ``pooling``, ``dtype``, ``dim``, ``vocab_size``, the versions of
        ``model2vec``, ``transformers``, ``torch`` and ``repspace``,
        ``seconds`` (wall time of the distillation) and ``created`` (UTC).

    Raises
    ------
    NotFoundError
        If the folder has no record.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     read_distill_record(d)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    repspace.core.errors.NotFoundError: no repspace_distill.json in ...
    """
    path = Path(folder).expanduser() / RECORD_NAME
    if not path.is_file():
        raise NotFoundError(f"no {RECORD_NAME} in {str(Path(folder))!r}; was it written by repspace distill?")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read {str(path)!r}: {one_line(exc)}") from exc


# ---------------------------------------------------------------------------
# checks, all made before the model is loaded


def _resolve_source(source: str | Path) -> tuple[str, Path]:
    """``(label, absolute folder)`` of a source."""
    text = str(source)
    if text == "minilm":
        from repspace.engines.encoders.bundled import minilm_folder

        return "minilm", minilm_folder()
    path = Path(text.removeprefix("st:")).expanduser()
    if not path.is_dir():
        what = "is not a folder" if path.exists() else "does not exist"
        raise NotFoundError(f"source {text!r} {what}; give 'minilm' or a local model folder")
    return text, path.resolve()


def _transformer_folder(folder: Path, label: str) -> Path:
    """The folder holding the transformer: the root, or the one ``modules.json`` names."""
    modules = folder / "modules.json"
    if modules.is_file():
        try:
            entries = json.loads(modules.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise InputError(f"source {label!r}: cannot read modules.json: {one_line(exc)}") from exc
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict) and str(entry.get("type", "")).endswith(".Transformer"):
                return (folder / str(entry.get("path", ""))).resolve()
    return folder


# Keys of a model2vec config.json (older ones, like the bundled static model's, have no model_type).
_MODEL2VEC_KEYS = frozenset({"normalize", "embedding_dtype", "vocabulary_quantization", "apply_pca", "hidden_dim"})


def _hidden_size(transformer: Path, label: str) -> int:
    config_path = transformer / "config.json"
    if not config_path.is_file():
        raise InputError(f"source {label!r} is not a transformers or sentence-transformers model folder "
                         "(no config.json)")
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise InputError(f"source {label!r}: cannot read config.json: {one_line(exc)}") from exc
    if config.get("model_type") == "model2vec" or (
        "model_type" not in config and _MODEL2VEC_KEYS.intersection(config)
    ):
        raise InputError(f"source {label!r} is already a model2vec static model; use --encoder model2vec:<folder>")
    if "model_type" not in config:
        raise InputError(f"source {label!r} is not a transformers model folder (config.json has no model_type)")
    for key in ("hidden_size", "d_model", "dim", "n_embd"):
        if isinstance(config.get(key), int):
            return int(config[key])
    raise InputError(f"source {label!r}: config.json gives no hidden size; is it a text transformer?")


def _check_pca_dims(pca_dims: int | None, hidden: int) -> int | None:
    if pca_dims is None:
        return None
    if isinstance(pca_dims, bool) or not isinstance(pca_dims, int) or pca_dims < 1:
        raise InputError(f"pca_dims must be a positive integer or None, not {pca_dims!r}")
    if pca_dims > hidden:
        raise InputError(f"pca_dims {pca_dims} is larger than the model's {hidden} dimensions")
    return pca_dims


def _check_out(target: Path, overwrite: bool) -> bool:
    """Whether an existing non-empty ``target`` will be replaced."""
    if not target.exists():
        return False
    if not target.is_dir():
        raise InputError(f"output {str(target)!r} exists and is not a folder")
    if not any(target.iterdir()):
        return False
    if not overwrite:
        raise ConflictError(f"output folder {str(target)!r} exists and is not empty; pass overwrite (--overwrite) "
                            "to replace it")
    return True


# ---------------------------------------------------------------------------
# the distillation and the write


def _distill(transformer: Path, label: str, pca: int | None, sif: float | None, pooling: str,
             progress: Progress | None) -> Any:
    with _errors(label, "loading model2vec's distillation"):
        try:
            from model2vec.distill import distill_from_model, inference
        except ImportError as exc:
            raise EncoderError(
                f"distilling needs model2vec's 'distill' extra, whose {exc.name or 'skeletoken'} is not installed; "
                "install it with: pip install 'skeletoken>=0.6,<0.7'"
            ) from exc
    with _errors(label, "loading the model"):
        import torch
        from transformers import AutoModel, AutoTokenizer

        with quiet_hf_loading():
            tokenizer = AutoTokenizer.from_pretrained(str(transformer), local_files_only=True, use_fast=True)
            model = AutoModel.from_pretrained(str(transformer), local_files_only=True, dtype=torch.float32)
        if not getattr(tokenizer, "is_fast", False):
            raise InputError(f"source {label!r} has no fast tokenizer (tokenizer.json), which model2vec needs")
    with _DISTILL_LOCK, _reporting(inference, progress), _errors(label, "distilling"):
        return distill_from_model(model=model, tokenizer=tokenizer, device="cpu", pca_dims=pca,
                                  sif_coefficient=sif, pooling=pooling)


def _usual_modes(folder: Path) -> None:
    """Give the folder and its files the modes the umask gives new ones.

    ``mkdtemp`` makes the folder private and model2vec writes
    ``model.safetensors`` private (0600); a model folder is usually shared.
    """
    umask = os.umask(0)
    os.umask(umask)
    folder.chmod(0o777 & ~umask)
    for path in folder.iterdir():
        if path.is_file():
            path.chmod(0o666 & ~umask)


def _move_into_place(tmp: Path, target: Path) -> None:
    """Rename the finished ``tmp`` to ``target``, replacing what is there."""
    if target.is_dir() and not any(target.iterdir()):
        target.rmdir()
    if not target.exists():
        os.replace(tmp, target)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
    os.replace(target, old / target.name)  # the old model is moved aside, then the new one in
    os.replace(tmp, target)
    shutil.rmtree(old, ignore_errors=True)


@contextmanager
def _errors(label: str, action: str) -> Iterator[None]:
    """Turn any non-repspace exception inside the block into one-line :class:`EncoderError`."""
    try:
        yield
    except RepspaceError:
        raise
    except Exception as exc:
        raise EncoderError(f"{action} for source {label!r} failed: {one_line(exc)}") from exc


class _Bar:
    """Stands in for model2vec's tqdm bar: forwards ``update`` to a progress callback."""

    def __init__(self, progress: Progress | None, total: int | None = None, **_: Any) -> None:
        self.progress, self.total, self.done = progress, int(total or 0), 0

    def update(self, n: int = 1) -> None:
        self.done += int(n)
        if self.progress is not None:
            self.progress("tokens", self.done, self.total)

    def close(self) -> None:
        pass


@contextmanager
def _reporting(inference: Any, progress: Progress | None) -> Iterator[None]:
    """Replace model2vec's progress bar (``inference.tqdm``) while distilling: it draws nothing itself."""
    if not hasattr(inference, "tqdm"):
        yield
        return
    before = inference.tqdm
    inference.tqdm = lambda *args, **kwargs: _Bar(progress, **kwargs)
    try:
        yield
    finally:
        inference.tqdm = before
