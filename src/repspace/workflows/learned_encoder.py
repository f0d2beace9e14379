"""Texts into a space learned by ``repspace learn``: its stored gensim model, checked, then its tokeniser.

:func:`learned_encoder` is what :func:`repspace.workflows.stored_transforms.encoder_for_space`
returns for a space whose provenance names ``learn:word2vec``, ``learn:fasttext`` or
``learn:doc2vec``: the model file kept beside the store
(:func:`model_path`), refused when its SHA-256 differs from the recorded one,
loaded once per process. Spaces learned from graphs (``learn:poincare``,
``learn:node2vec``) have no text encoder and say so.

A module of its own, below both :mod:`repspace.workflows.learn` (which writes
the models) and :mod:`repspace.workflows.stored_transforms` (which routes
queries to them), so neither imports the other.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.cache import LRUCache
from repspace.core.errors import EncoderError, InputError
from repspace.engines.encoders.base import Encoder, Tick

if TYPE_CHECKING:
    from repspace.core.store import Space, Store

__all__ = ["PREFIX", "TEXT_METHODS", "LearnedEncoder", "learned_encoder", "model_path"]

#: The prefix of a learned space's ``encoder`` in its provenance.
PREFIX = "learn:"
#: The learned spaces that embed texts (the graph methods do not).
TEXT_METHODS: tuple[str, ...] = ("word2vec", "fasttext", "doc2vec")


def model_path(store: Store, uid: str, method: str) -> Path:
    """Where the gensim model of the learned space ``uid`` is kept: ``STORE.indexes/<uid>/learn/<method>.model``.

    Examples
    --------
    >>> from repspace.store import example_store
    >>> store = example_store()
    >>> model_path(store, "u1", "word2vec").relative_to(store.index_dir).parts
    ('u1', 'learn', 'word2vec.model')
    """
    return store.index_dir / uid / "learn" / f"{method}.model"


class LearnedEncoder(Encoder):
    """Texts into a learned space: the recipe's tokeniser, then the stored gensim model.

    fastText: the mean of the tokens' vectors (unseen words through their
    subwords); word2vec: the mean of the vectors of the tokens in the
    vocabulary (:class:`InputError` when none is); doc2vec: an inferred vector
    (deterministic, seeded with the recipe's seed). With phrase detection in the
    recipe, adjacent tokens whose joined form (``new_york``) is in the
    vocabulary are joined first. Build one with :func:`learned_encoder`.

    Parameters
    ----------
    provenance : mapping
        The space's provenance (its ``encoder`` is ``learn:<method>``).
    model : gensim model
        Loaded from the checked model file.

    Examples
    --------
    A model trained here (a learned space's comes from :func:`learned_encoder`):

    >>> from repspace.engines.learn import train_word2vec
    >>> trained = train_word2vec([["the", "cat", "sat"], ["the", "dog", "sat"]] * 20, vector_size=8, min_count=1)
    >>> enc = LearnedEncoder({"encoder": "learn:word2vec"}, trained.load_model())
    >>> enc.method, enc.dim, enc.tokenizer.tokenize("The Cat!"), enc.encode(["The Cat!"]).shape
    ('word2vec', 8, ['the', 'cat'], (1, 8))
    """

    def __init__(self, provenance: Mapping[str, Any], model: Any) -> None:
        super().__init__(str(provenance["encoder"]))
        from repspace.engines.learn import Tokenizer

        self.method = str(provenance["encoder"])[len(PREFIX):]
        self._provenance = dict(provenance)
        self._model = model
        spec = provenance.get("tokenizer")
        self.tokenizer = Tokenizer.from_dict(spec) if spec else Tokenizer()
        self._seed = int(provenance.get("params", {}).get("seed", 0))
        self._phrases = bool(provenance.get("phrases"))
        self._lock = threading.Lock()  # doc2vec inference swaps the model's random state while it runs

    @property
    def dim(self) -> int:
        return int(self._model.vector_size)

    def provenance(self) -> dict[str, Any]:
        return dict(self._provenance)

    def _tokens(self, text: str) -> list[str]:
        tokens = self.tokenizer.tokenize(text)
        if not tokens:
            raise InputError(f"the text {_short(text)} has no token under the space's tokenizer "
                             f"{self.tokenizer.to_dict()}")
        if self._phrases:
            tokens = _join_phrases(tokens, self._model.wv.key_to_index)
        return tokens

    def _encode(self, texts: list[str], *, batch_size: int, progress: Tick | None) -> np.ndarray:
        from repspace.engines.learn import infer_vectors, word_vectors

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        token_lists = [self._tokens(t) for t in texts]
        if self.method == "doc2vec":
            for lo in range(0, len(texts), batch_size):
                with self._lock:
                    out[lo:lo + batch_size] = infer_vectors(self._model, token_lists[lo:lo + batch_size],
                                                            seed=self._seed)
                if progress is not None:
                    progress(len(token_lists[lo:lo + batch_size]))
            return out
        vocab = self._model.wv.key_to_index
        for i, (text, tokens) in enumerate(zip(texts, token_lists)):
            if self.method == "word2vec":
                tokens = [t for t in tokens if t in vocab]
                if not tokens:
                    raise InputError(f"no token of the text {_short(text)} is in the word2vec vocabulary "
                                     f"({len(vocab)} words); a fastText space would give it a vector")
            out[i] = word_vectors(self._model, tokens).mean(axis=0)
            if progress is not None:
                progress(1)
        return out


def _short(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:57] + "...")


def _join_phrases(tokens: list[str], vocab: Mapping[str, int]) -> list[str]:
    """Adjacent tokens joined by ``_`` where the joined form is in the vocabulary (left to right)."""
    out: list[str] = []
    i = 0
    while i < len(tokens):
        if i + 1 < len(tokens) and f"{tokens[i]}_{tokens[i + 1]}" in vocab:
            out.append(f"{tokens[i]}_{tokens[i + 1]}")
            i += 2
        else:
            out.append(tokens[i])
            i += 1
    return out


#: Loaded models kept per process (a text query would otherwise re-read, re-hash and unpickle the file).
CACHE_SIZE = 4
#: (space uid, model path) -> (file signature, encoder).
_CACHE: LRUCache[tuple[tuple[Any, ...], LearnedEncoder]] = LRUCache(CACHE_SIZE)


def learned_encoder(space: Space) -> LearnedEncoder:
    """The encoder of a learned space: its model file, checked against the recorded SHA-256, then loaded.

    A loaded model is kept for the next query while the file is the same one
    (inode, size, times); any change to the file means it is hashed again.

    Raises
    ------
    EncoderError
        The model file is missing, or differs from the one the space was
        learned with (replaced or damaged).

    Examples
    --------
    >>> from repspace.store import example_space
    >>> from repspace.learn import learn_space
    >>> store = example_space(40, 2, texts=["the cat sat on the mat", "the dog sat on the log"] * 20).store
    >>> r = learn_space(store, "pets", "word2vec", from_space="t", vector_size=8, min_count=1)
    >>> enc = learned_encoder(store.space("pets"))
    >>> store.space("pets").search(enc.encode(["a cat"])[0], k=1)[0].id
    'cat'
    >>> learned_encoder(store.space("pets")) is enc  # kept while the model file is the same
    True
    """
    from repspace.engines.learn import load_model

    prov = space.provenance
    method = str(prov.get("encoder", ""))[len(PREFIX):]
    if method in ("poincare", "node2vec"):
        raise InputError(f"space {space.name!r} was learned from a graph ({method}): its items are nodes and it has "
                         "no text encoder; search it by id or by vector")
    if method not in TEXT_METHODS:
        raise InputError(f"space {space.name!r} was not learned by repspace learn (encoder {prov.get('encoder')!r})")
    relative = str(prov.get("model_file") or f"learn/{method}.model")
    # The learned space's own folder; a derived space's provenance names the learned one (``model_uid``,
    # kept through any chain of derivations) and its direct source.
    source = prov.get("derived_from")
    owners = [space.uid, prov.get("model_uid"), source.get("uid") if isinstance(source, Mapping) else None]
    paths = [space.store.index_dir / str(uid) / relative for uid in owners if uid]
    path = next((p for p in paths if p.is_file()), paths[0])
    try:
        st = path.stat()
        signature = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, prov.get("model_sha256"))
        key = (space.uid, str(path))
        cached = _CACHE.get(key)
        if cached is not None and cached[0] == signature:
            return cached[1]
        data = path.read_bytes()
    except FileNotFoundError:
        raise EncoderError(f"the {method} model of space {space.name!r} is missing ({path}); "
                           "learn the space again to embed texts (search by id still works)") from None
    except OSError as e:
        raise EncoderError(f"cannot read the {method} model of space {space.name!r} ({path}): {e}") from None
    if hashlib.sha256(data).hexdigest() != prov.get("model_sha256"):
        raise EncoderError(f"the {method} model file {path} is not the one space {space.name!r} was learned with "
                           "(its SHA-256 differs): it was replaced or damaged; learn the space again")
    encoder = LearnedEncoder(prov, load_model(data))
    _CACHE.put(key, (signature, encoder))
    return encoder
