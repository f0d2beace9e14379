"""Static-embedding encoders backed by a local model2vec folder.

A model2vec model is a token-embedding table: a text's vector is the (weighted)
mean of its tokens' vectors, optionally normalised. It runs thousands of texts
per second on one CPU core, with no torch involved.

The ``static`` encoder is the 64-dimensional model shipped in the
``tokenlearn-static-model`` package; :func:`static_model_folder` finds its
folder without importing that package (which would load its Rust extension).

Examples
--------
>>> from repspace.engines.encoders import get_encoder
>>> get_encoder("static").encode(["A man is playing a flute."]).shape
(1, 64)
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import numpy as np

from repspace.core.errors import NotFoundError
from repspace.engines.encoders._batches import encode_in_chunks, encoding_errors
from repspace.engines.encoders._fingerprint import check_folder, package_version
from repspace.engines.encoders._folder import FolderEncoder
from repspace.engines.encoders._models import shared_model
from repspace.engines.encoders._options import opt_bool
from repspace.engines.encoders.base import Tick

__all__ = ["StaticEncoder", "static_model_folder"]


def static_model_folder() -> Path:
    """The model2vec folder shipped in the ``tokenlearn-static-model`` package.

    The package's import location is looked up with
    :func:`importlib.util.find_spec`, which does not execute the package (so
    its Rust extension is not loaded).

    Returns
    -------
    Path
        ``<site-packages>/static_model/model``.

    Raises
    ------
    NotFoundError
        If the package is not installed or the folder is missing.

    Examples
    --------
    >>> sorted(p.name for p in static_model_folder().iterdir())
    ['config.json', 'model.safetensors', 'tokenizer.json']
    """
    spec = importlib.util.find_spec("static_model")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        folder = Path(location) / "model"
        if (folder / "config.json").is_file():
            return folder.resolve()
    raise NotFoundError(
        "encoder 'static' needs the model folder of the package tokenlearn-static-model, which is not installed"
    )


class StaticEncoder(FolderEncoder):
    """A local model2vec model, loaded lazily on first use.

    Parameters
    ----------
    folder : str or Path
        A local model2vec folder (``config.json``, ``model.safetensors``,
        ``tokenizer.json``). It must exist: model2vec would otherwise try the
        Hugging Face hub, so the folder is checked before every load.
    spec : str or None, optional
        The registry string; defaults to ``"model2vec:<absolute folder>"``.
    normalize : bool or None, optional
        Normalise vectors to unit length; ``None`` follows the model's config.
    chunk_size : int or None, optional
        Texts per call to ``StaticModel.encode`` between two progress reports
        (default 1024).

    Examples
    --------
    >>> enc = StaticEncoder(static_model_folder(), normalize=False)  # nothing loaded yet
    >>> enc.spec.startswith("model2vec:"), enc.normalize
    (True, False)
    """

    def __init__(
        self,
        folder: str | Path,
        *,
        spec: str | None = None,
        normalize: bool | None = None,
        chunk_size: int | None = None,
    ) -> None:
        super().__init__(folder, scheme="model2vec", spec=spec, chunk_size=chunk_size)
        self.normalize = opt_bool("normalize", normalize)

    @property
    def model(self) -> Any:
        """The loaded ``model2vec.StaticModel`` (shared by encoders with the same folder and normalize).

        ``normalize=None`` and the value the model's config gives share one
        load: ``get_encoder("static")`` and its rebuild from provenance
        (which records ``normalize=True``) hold the same weights.
        """
        return shared_model(("model2vec", str(self.folder), self._resolved_normalize()), self._load)

    def _resolved_normalize(self) -> bool | None:
        """``normalize``, or when None what model2vec will use: the config's ``normalize`` (False if absent).

        Only ``config.json`` is read, not the weights; None when it cannot be
        read or holds no bool (the load then says what is wrong).

        Examples
        --------
        >>> StaticEncoder(static_model_folder())._resolved_normalize()  # the bundled config says true
        True
        """
        if self.normalize is not None:
            return self.normalize
        try:
            config = json.loads((self.folder / "config.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        value = config.get("normalize", False) if isinstance(config, dict) else None
        return value if isinstance(value, bool) else None

    def _load(self) -> Any:
        folder = check_folder(self.folder, self.spec)  # model2vec goes to the hub for a missing path
        with encoding_errors(self.spec, "loading the model"):
            from model2vec import StaticModel

            return StaticModel.from_pretrained(folder, normalize=self._resolved_normalize())

    @property
    def dim(self) -> int:
        """The dimension of the vectors."""
        return int(self.model.dim)

    def _encode(self, texts: list[str], *, batch_size: int, progress: Tick | None) -> np.ndarray:
        model = self.model
        return encode_in_chunks(
            texts, self.chunk_size, self.spec,
            lambda chunk: model.encode(chunk, batch_size=batch_size, show_progress_bar=False,
                                       use_multiprocessing=False),
            progress,
        )

    def provenance(self) -> dict[str, Any]:
        """Say exactly what made the vectors.

        ``pooling`` is ``"mean"`` (model2vec averages token vectors, weighted
        when the model has token weights) and ``max_length`` the token limit
        model2vec applies: the keys of :meth:`repspace.engines.encoders.base.Encoder.provenance`.

        Examples
        --------
        >>> from repspace.engines.encoders import get_encoder
        >>> p = get_encoder("static").provenance()
        >>> p["encoder"], p["pooling"], p["normalize"], p["layer"]
        ('static', 'mean', True, None)
        """
        model = self.model
        fingerprint = self.folder_fingerprint()
        max_length = getattr(model, "max_length", None)
        return {
            "encoder": self.spec,
            "encoder_version": package_version("model2vec"),
            "model": str(self.folder),
            "model_fingerprint": fingerprint,
            "layer": None,
            "pooling": "mean",
            "normalize": bool(model.normalize),
            "prompt": None,
            "max_length": None if max_length is None else int(max_length),
        }
