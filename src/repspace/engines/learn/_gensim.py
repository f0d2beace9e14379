"""What the gensim trainers share: checks of hyper-parameters, the result type, saving and loading models."""

from __future__ import annotations

import tempfile
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from repspace.core.atomic import write_atomic
from repspace.core.checks import check_scalar, positive_int
from repspace.core.errors import InputError
from repspace.engines.learn.corpus import Corpus, corpus_from_tokens

#: Anything that names a trained gensim model: its bytes, a file, or the model itself.
ModelLike = Any


def stable_hash(text: str) -> int:
    """CRC-32 of the UTF-8 text: a string hash that does not depend on ``PYTHONHASHSEED``.

    Passed to gensim as ``hashfxn``. (gensim 4.4 draws the initial vectors from
    ``numpy.random.default_rng(seed)`` and no longer calls ``hashfxn`` while
    training; it is passed so that no version of gensim hashes with Python's
    salted ``hash``.)

    Examples
    --------
    >>> stable_hash("king")
    2731404643
    """
    return zlib.crc32(text.encode("utf-8"))


def check_seed(seed: Any) -> int:
    """``seed`` when it is an integer in ``[0, 2**32)``; else one :class:`InputError` line."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**32:
        raise InputError(f"seed must be an integer from 0 to 2**32 - 1, not {seed!r}")
    return int(seed)


def check_fraction(value: Any, name: str, *, hi: float = 1.0) -> float:
    """``value`` as a float in ``[0, hi)``: :func:`~repspace.core.checks.check_scalar` with those bounds."""
    return check_scalar(value, name, float, low=0, high=hi, include="left")


def check_positive_float(value: Any, name: str) -> float:
    """``value`` as a finite float ``> 0``: :func:`~repspace.core.checks.check_scalar` with that bound."""
    return check_scalar(value, name, float, low=0, include="neither")


def as_corpus(docs: Corpus | Iterable[Sequence[str]]) -> Corpus:
    """``docs`` itself when it is a :class:`Corpus`, else a corpus of the given token lists (checked)."""
    return docs if isinstance(docs, Corpus) else corpus_from_tokens(docs)


def most_frequent(documents: Iterable[Sequence[str]]) -> tuple[str, int]:
    """The most frequent token and its count (the first of ties), for the min_count error."""
    counts: dict[str, int] = {}
    for doc in documents:
        for t in doc:
            counts[t] = counts.get(t, 0) + 1
    word = max(counts, key=counts.__getitem__)
    return word, counts[word]


def versions() -> dict[str, str]:
    """The library versions a recipe records."""
    import gensim

    return {"gensim_version": gensim.__version__, "numpy_version": np.__version__}


def model_to_bytes(model: Any) -> bytes:
    """The model as gensim saves it (one pickle; no side files), read back as bytes."""
    saved_hash = getattr(model, "hashfxn", None)
    # The pickle would name stable_hash by module, so only a process that can import repspace could load
    # it; gensim 4.4 no longer calls hashfxn, so the bytes carry Python's hash and load in plain gensim.
    if saved_hash is not None:
        model.hashfxn = hash
    try:
        with tempfile.TemporaryDirectory(prefix="repspace-learn-") as tmp:
            path = Path(tmp) / "model"
            # sep_limit: gensim otherwise writes arrays of 10M+ entries (fastText's buckets) to side files.
            model.save(str(path), separately=[], sep_limit=2**62)
            files = sorted(p.name for p in Path(tmp).iterdir())
            if files != ["model"]:  # pragma: no cover - gensim wrote side files despite separately=[] and sep_limit
                raise RuntimeError(f"gensim saved the model as several files: {files}")
            return path.read_bytes()
    finally:
        if saved_hash is not None:
            model.hashfxn = saved_hash


def load_saved(model: bytes | str | Path, cls: Any, what: str) -> Any:
    """A model that gensim's ``save`` wrote, as bytes or a file, through ``cls.load``; one error line otherwise.

    The bytes are a Python pickle (gensim's ``save`` format): load only models
    you trained or trust.
    """
    try:
        if isinstance(model, (bytes, bytearray, memoryview)):
            with tempfile.TemporaryDirectory(prefix="repspace-learn-") as tmp:
                path = Path(tmp) / "model"
                path.write_bytes(bytes(model))
                return cls.load(str(path))
        if isinstance(model, (str, Path)):
            path = Path(model)
            if not path.is_file():
                raise InputError(f"model file {path} does not exist")
            return cls.load(str(path))
    except InputError:
        raise
    except Exception as e:  # a pickle of something else, a truncated file, ...
        raise InputError(f"not a gensim {what}: {type(e).__name__}: {e}") from None
    raise InputError(f"expected model bytes, a model file or a gensim model, not {type(model).__name__}")


def load_model(model: ModelLike) -> Any:
    """A gensim ``Word2Vec``/``FastText``/``Doc2Vec`` model from its bytes, a file, or itself.

    The bytes are a Python pickle (gensim's ``save`` format): load only models
    you trained or trust.

    Examples
    --------
    >>> from repspace.learn import corpus_from_texts, train_word2vec
    >>> r = train_word2vec(corpus_from_texts(["a cat sat", "a dog sat"] * 10), vector_size=4, min_count=1)
    >>> model = load_model(r.model_bytes)
    >>> type(model).__name__, bool((model.wv["cat"] == r.vectors[r.index("cat")]).all())
    ('Word2Vec', True)
    """
    from gensim.models import Word2Vec

    if isinstance(model, Word2Vec):
        return model
    if isinstance(model, TrainedVectors):
        model = model.model_bytes
    return load_saved(model, Word2Vec, "word2vec/fastText/doc2vec model")


@dataclass(frozen=True, eq=False, repr=False)
class TrainedVectors:
    """Vectors learned by gensim, with the full recipe and the model itself.

    Attributes
    ----------
    method : str
        ``word2vec``, ``fasttext`` or ``doc2vec``.
    keys : tuple of str
        The vocabulary (most frequent first, as gensim orders it) or the
        document tags (in corpus order).
    vectors : ndarray of float32, shape (len(keys), vector_size)
        Row ``i`` is the vector of ``keys[i]`` (read-only).
    counts : ndarray of int64
        For words their corpus frequency (after phrase joining); for documents
        their number of tokens.
    recipe : dict
        Everything needed to train the same vectors again: ``method``,
        ``architecture``, ``params`` (every hyper-parameter passed to gensim,
        seed included), ``workers``, ``deterministic``, ``phrases``,
        ``tokenizer``, ``corpus`` (fingerprint, counts, source),
        ``corpus_fingerprint``, ``gensim_version``, ``numpy_version``.
    model_bytes : bytes
        The gensim model as ``model.save`` writes it (a pickle: load only your
        own); :func:`load_model` reads it back.
    seconds : float
        Wall seconds of vocabulary building and training.
    info : dict
        Counts that describe the run (``vocabulary``, ``phrases`` found, ...).
    checkpoints : tuple of ndarray
        With ``checkpoints=True`` (word2vec): the vectors after each epoch (read-only float32, rows as
        :attr:`vectors`; the last is :attr:`vectors`); else empty.
    epoch_loss : tuple of float
        With checkpoints: gensim's training loss of each epoch (the difference of its running total,
        ``get_latest_training_loss``); else empty.

    Examples
    --------
    >>> from repspace.learn import corpus_from_texts, train_word2vec
    >>> r = train_word2vec(corpus_from_texts(["a cat sat", "a dog sat"] * 10), vector_size=4, min_count=1, seed=1)
    >>> r.method, r.keys, r.counts.tolist(), r.vector_size
    ('word2vec', ('sat', 'dog', 'cat'), [20, 10, 10], 4)
    >>> r.recipe["params"]["seed"], r.index("cat")
    (1, 2)
    """

    method: str
    keys: tuple[str, ...]
    vectors: np.ndarray
    counts: np.ndarray
    recipe: dict[str, Any]
    model_bytes: bytes
    seconds: float
    info: dict[str, Any] = field(default_factory=dict)
    checkpoints: tuple[np.ndarray, ...] = field(default=(), repr=False)
    epoch_loss: tuple[float, ...] = ()

    @property
    def vector_size(self) -> int:
        """Dimensions of each vector."""
        return int(self.vectors.shape[1])

    def index(self, key: str) -> int:
        """The row of ``key``; :class:`InputError` when it was not learned."""
        try:
            return self.keys.index(key)
        except ValueError:
            raise InputError(f"{key!r} is not among the {len(self.keys)} learned keys") from None

    def save_model(self, path: str | Path) -> Path:
        """Write :attr:`model_bytes` to ``path`` (atomically); gensim's ``Word2Vec.load`` reads it."""
        path = Path(path)
        write_atomic(path, lambda f: f.write(self.model_bytes), durable=True)
        return path

    def load_model(self) -> Any:
        """The trained gensim model (see :func:`load_model`)."""
        return load_model(self.model_bytes)

    def to_dict(self) -> dict[str, Any]:
        """Everything but the vectors and the model bytes, as plain JSON values."""
        return {
            "method": self.method,
            "n": len(self.keys),
            "vector_size": self.vector_size,
            "seconds": self.seconds,
            "model_bytes": len(self.model_bytes),
            "info": dict(self.info),
            "recipe": self.recipe,
        }

    def __repr__(self) -> str:
        what = {"doc2vec": "documents", "word2vec": "words", "fasttext": "words"}.get(self.method, "nodes")
        seed = self.recipe.get("params", {}).get("seed", self.recipe.get("seed"))
        data = self.recipe.get("corpus_fingerprint") or self.recipe.get("fingerprint") or ""
        return (f"TrainedVectors(method={self.method!r}, {len(self.keys)} {what} x {self.vector_size}, "
                f"seed={seed}, workers={self.recipe.get('workers', 1)}, data={data[:12]}…, "
                f"seconds={self.seconds:.2f})")


def frozen(array: np.ndarray, dtype: Any) -> np.ndarray:
    """A read-only C-contiguous copy of ``array`` as ``dtype``."""
    out = np.array(array, dtype=dtype, order="C", copy=True)
    out.setflags(write=False)
    return out


def check_workers(workers: Any) -> int:
    """``workers`` as a positive int."""
    return positive_int(workers, "workers")


def epoch_progress(progress: Any, epochs: int) -> list[Any]:
    """gensim callbacks reporting ``progress("train", done, epochs)`` after each epoch (none without ``progress``).

    Reporting changes nothing in training: the callback only counts epochs.
    """
    if progress is None:
        return []
    from gensim.models.callbacks import CallbackAny2Vec

    class EpochProgress(CallbackAny2Vec):
        def __init__(self) -> None:
            self.done = 0

        def on_train_begin(self, model: Any) -> None:
            progress("train", 0, epochs)

        def on_epoch_end(self, model: Any) -> None:
            self.done += 1
            progress("train", self.done, epochs)

    return [EpochProgress()]


def epoch_snapshots(into: list[tuple[np.ndarray, float]]) -> Any:
    """A gensim callback appending ``(a read-only copy of model.wv.vectors, running training loss)`` to ``into``
    after each epoch (word2vec; the model must be built with ``compute_loss=True`` for the loss).

    Taking the copy changes nothing in training.
    """
    from gensim.models.callbacks import CallbackAny2Vec

    class EpochSnapshot(CallbackAny2Vec):
        def on_epoch_end(self, model: Any) -> None:
            into.append((frozen(model.wv.vectors, np.float32), float(model.get_latest_training_loss())))

    return EpochSnapshot()


def skipgram_params(*, sg: Any, vector_size: Any, window: Any, min_count: int, negative: Any, sample: Any,
                    alpha: Any, min_alpha: Any, epochs: Any, seed: Any, size_name: str = "vector_size") -> dict[str, Any]:
    """The checked keywords of gensim's ``Word2Vec``/``FastText`` (negative sampling), every default made explicit.

    ``min_count`` is checked by the caller (word2vec wants at least 1, node2vec
    allows 0); ``size_name`` names ``vector_size`` in an error (node2vec's ``dimensions``).

    Examples
    --------
    >>> p = skipgram_params(sg=True, vector_size=8, window=5, min_count=1, negative=5, sample=1e-3, alpha=0.025,
    ...                     min_alpha=0.0001, epochs=3, seed=1)
    >>> p["sg"], p["hs"], p["seed"], len(p)
    (1, 0, 1, 19)
    """
    return {
        "sg": int(bool(sg)),
        "vector_size": positive_int(vector_size, size_name),
        "window": positive_int(window, "window"),
        "min_count": int(min_count),
        "negative": positive_int(negative, "negative"),
        "hs": 0,
        "ns_exponent": 0.75,
        "cbow_mean": 1,
        "sample": check_fraction(sample, "sample"),
        "alpha": check_positive_float(alpha, "alpha"),
        "min_alpha": check_fraction(min_alpha, "min_alpha", hi=alpha),
        "epochs": positive_int(epochs, "epochs"),
        "seed": check_seed(seed),
        "max_vocab_size": None,
        "max_final_vocab": None,
        "sorted_vocab": 1,
        "shrink_windows": True,
        "null_word": 0,
        "batch_words": 10_000,
    }
