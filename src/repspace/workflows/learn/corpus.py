"""The learn workflow: train word2vec, fastText or doc2vec on the user's texts and store the result as a space.

``learn_space(store, "lee-w2v", "word2vec", "lee.cor")`` reads a corpus (a text
file with one document per line, a JSON-lines file, or a stored space's
texts), trains with :mod:`repspace.engines.learn`, and stores a new space:

- word2vec / fastText: one item per word (id = the word, metadata
  ``{"count": n}``), most frequent first;
- doc2vec: one item per document (id = the document's id, text = its text,
  metadata = what the source has, plus ``tokens``).

The metric is cosine; the provenance is ``{"encoder": "learn:<method>", **recipe}``
(the engine's full recipe: corpus fingerprint, every hyper-parameter, seed,
workers, tokeniser, library versions) plus ``model_file`` and ``model_sha256``.
gensim's model is kept beside the store, stamped with the space's uid
(``STORE.indexes/<uid>/learn/<method>.model``, the folder the store deletes with
the space), and is refused when its SHA-256 differs from the recorded one, so a
swapped file never answers a query.

Text queries go through :class:`LearnedEncoder` (what
:func:`repspace.workflows.stored_transforms.encoder_for_space` returns for a
``learn:`` space): fastText averages the subword vectors of a text's tokens,
word2vec the vectors of its tokens in the vocabulary, doc2vec infers a vector
with the recipe's seed. The tokeniser is the recipe's.

The space appears whole or not at all: it is written under a temporary name and
renamed when complete; on an error it (and its model file) is deleted.

Examples
--------
>>> import os, tempfile
>>> from repspace import Store
>>> folder = tempfile.mkdtemp()
>>> corpus = os.path.join(folder, "c.txt")
>>> _ = open(corpus, "w").write("the cat sat on the mat\\nthe dog sat on the log\\n" * 20)
>>> store = Store(os.path.join(folder, "s.db"))
>>> report = learn_space(store, "pets", "word2vec", corpus, vector_size=8, min_count=2, seed=1)
>>> report.n, report.dim, store.space("pets").provenance["encoder"]
(7, 8, 'learn:word2vec')
>>> [h.id for h in store.space("pets").search("cat", k=1)]
['cat']
"""

from __future__ import annotations

import hashlib
import inspect
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.atomic import write_atomic
from repspace.core.errors import ConflictError, EncoderError, InputError, NotFoundError
from repspace.core.progress import Progress
from repspace.core.space import check_space_name
from repspace.engines.encoders.base import Encoder, Tick

if TYPE_CHECKING:
    from repspace.core.store import Space, Store
    from repspace.engines.learn import Corpus, Tokenizer, TrainedVectors

__all__ = ["DEFAULT_BUCKET", "METHODS", "LearnReport", "LearnedEncoder", "learn_space", "learned_encoder",
           "model_path"]

#: The methods :func:`learn_space` trains.
METHODS: tuple[str, ...] = ("word2vec", "fasttext", "doc2vec")
#: fastText's default n-gram hash rows here (gensim's 2,000,000 costs 1.6 GB at 100 dimensions, twice over
#: while training, and a model file as large; a corpus of a few million tokens has far fewer distinct n-grams).
DEFAULT_BUCKET = 200_000
#: The prefix of a learned space's ``encoder`` in its provenance.
PREFIX = "learn:"
#: Items written per transaction.
BATCH = 100_000
#: Suffixes read as JSON lines when the format is ``auto``.
JSONL_SUFFIXES = (".jsonl", ".ndjson")


def model_path(store: Store, uid: str, method: str) -> Path:
    """Where the gensim model of the learned space ``uid`` is kept: ``STORE.indexes/<uid>/learn/<method>.model``."""
    return store.index_dir / uid / "learn" / f"{method}.model"


@dataclass(frozen=True)
class LearnReport:
    """What :func:`learn_space` stored.

    Attributes
    ----------
    space, uid : the new space's name and uid.
    method : ``word2vec``, ``fasttext`` or ``doc2vec``.
    n, dim : items stored (words or documents) and their dimension.
    documents, tokens : the corpus trained on (after tokenisation; documents without a token skipped).
    skipped : non-blank documents dropped because they had no token.
    vocabulary : distinct words kept (at least ``min_count``).
    corpus_fingerprint : SHA-256 of the tokenised corpus.
    seed, workers, deterministic : training's seed and threads; ``deterministic`` when ``workers == 1``.
    model_path, model_sha256, model_bytes : gensim's model beside the store.
    train_seconds, seconds : training alone, and the whole call.
    recipe : the space's provenance (the full recipe).
    """

    space: str
    uid: str
    method: str
    n: int
    dim: int
    documents: int
    tokens: int
    skipped: int
    vocabulary: int
    corpus_fingerprint: str
    seed: int
    workers: int
    deterministic: bool
    model_path: Path
    model_sha256: str
    model_bytes: int
    train_seconds: float
    seconds: float
    recipe: dict[str, Any] = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        """Every field as JSON values (``model_path`` as a string)."""
        return {
            "space": self.space, "uid": self.uid, "method": self.method, "n": self.n, "dim": self.dim,
            "documents": self.documents, "tokens": self.tokens, "skipped": self.skipped,
            "vocabulary": self.vocabulary, "corpus_fingerprint": self.corpus_fingerprint, "seed": self.seed,
            "workers": self.workers, "deterministic": self.deterministic, "model_path": str(self.model_path),
            "model_sha256": self.model_sha256, "model_bytes": self.model_bytes,
            "train_seconds": self.train_seconds, "seconds": self.seconds, "recipe": self.recipe,
        }

    def __repr__(self) -> str:
        what = "documents" if self.method == "doc2vec" else "words"
        return (f"LearnReport(space={self.space!r}, method={self.method!r}, {self.n} {what} x {self.dim}, "
                f"corpus={self.documents} documents/{self.tokens} tokens, seed={self.seed}, "
                f"workers={self.workers}, train_seconds={self.train_seconds:.2f})")


# ----------------------------------------------------------------------------- the corpus


def _trainer(method: str) -> Any:
    from repspace.engines.learn import train_doc2vec, train_fasttext, train_word2vec

    trainers = {"word2vec": train_word2vec, "fasttext": train_fasttext, "doc2vec": train_doc2vec}
    if method not in trainers:
        raise InputError(f"unknown learn method {method!r}; choose {', '.join(METHODS)}")
    return trainers[method]


def _check_params(method: str, trainer: Any, params: Mapping[str, Any]) -> dict[str, Any]:
    accepted = [p for p in inspect.signature(trainer).parameters if p not in ("docs", "docs_with_tags")]
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise InputError(f"{method} has no hyper-parameter {', '.join(unknown)}; it takes {', '.join(accepted)}")
    out = dict(params)
    if method == "fasttext":
        out.setdefault("bucket", DEFAULT_BUCKET)
    return out


def _as_tokenizer(tokenizer: Tokenizer | Mapping[str, Any] | None) -> Tokenizer:
    from repspace.engines.learn import Tokenizer

    if tokenizer is None:
        return Tokenizer()
    if isinstance(tokenizer, Tokenizer):
        return tokenizer
    if isinstance(tokenizer, Mapping):
        return Tokenizer.from_dict(tokenizer)
    raise InputError(f"tokenizer must be a Tokenizer or its settings, not {type(tokenizer).__name__}")


def _is_jsonl(path: Path, corpus_format: str, text_field: str | None, id_field: str | None) -> bool:
    if corpus_format not in ("auto", "text", "jsonl"):
        raise InputError(f"the corpus format must be auto, text or jsonl, not {corpus_format!r}")
    if corpus_format == "text":
        if text_field is not None or id_field is not None:
            raise InputError("--text-field and --id-field apply to a JSON-lines corpus, not --format text")
        return False
    return corpus_format == "jsonl" or path.suffix.lower() in JSONL_SUFFIXES or \
        text_field is not None or id_field is not None


def _file_documents(path: Path, jsonl: bool, text_field: str, id_field: str | None,
                    encoding: str) -> dict[str, tuple[str, dict[str, Any]]]:
    """Each document's raw text and metadata by the id the engine's reader gave it (a second, light pass)."""
    import codecs

    from repspace.core.files import read_jsonl

    docs: dict[str, tuple[str, dict[str, Any]]] = {}
    if jsonl:
        for number, obj in read_jsonl(path, "corpus file"):
            doc_id = str(number) if id_field is None else str(obj.get(id_field))
            meta = {k: v for k, v in obj.items() if k not in (text_field, id_field)}
            docs[doc_id] = (str(obj.get(text_field, "")), meta)
        return docs
    codec = codecs.lookup(encoding).name  # the engine's reader checked it
    with path.open("rb") as f:
        for number, raw in enumerate(f, start=1):
            line = raw.decode("utf-8-sig" if number == 1 and codec == "utf-8" else codec, errors="replace")
            docs[str(number)] = (line.strip(), {"line": number})
    return docs


def _read_corpus(store: Store, corpus: str | Path | None, from_space: str | None, *, corpus_format: str,
                 text_field: str | None, id_field: str | None, encoding: str, tokenizer: Tokenizer,
                 want_texts: bool) -> tuple[Corpus, dict[str, tuple[str, dict[str, Any]]], dict[str, Any] | None]:
    """The corpus, the raw documents by id (doc2vec only) and, from a space, where it came from."""
    from repspace.engines.learn import corpus_from_texts, read_jsonl_corpus, read_text_corpus

    if (corpus is None) == (from_space is None):
        raise InputError("give a corpus file or a space to read texts from (--from-space), not both or neither")
    if from_space is not None:
        src = store.space(from_space)
        items, _ = src.dump()
        with_text = [it for it in items if it.text is not None]
        if not with_text:
            raise InputError(f"space {from_space!r} has no item with a text to learn from")
        c = corpus_from_texts([it.text for it in with_text], ids=[it.id for it in with_text], tokenizer=tokenizer,
                              source=f"space:{from_space}")
        docs = {it.id: (it.text, dict(it.metadata)) for it in with_text} if want_texts else {}
        info = src.info()
        return c, docs, {"space": from_space, "uid": info.uid, "generation": info.generation}
    path = Path(corpus)  # type: ignore[arg-type]
    jsonl = _is_jsonl(path, corpus_format, text_field, id_field)
    if jsonl:
        c = read_jsonl_corpus(path, text_field=text_field or "text", id_field=id_field, tokenizer=tokenizer)
    else:
        c = read_text_corpus(path, tokenizer=tokenizer, encoding=encoding)
    docs = _file_documents(path, jsonl, text_field or "text", id_field, encoding) if want_texts else {}
    return c, docs, None


# ----------------------------------------------------------------------------- learning


def learn_space(store: Store, name: str, method: str, corpus: str | Path | None = None, *,
                from_space: str | None = None, corpus_format: str = "auto", text_field: str | None = None,
                id_field: str | None = None, encoding: str = "utf-8",
                tokenizer: Tokenizer | Mapping[str, Any] | None = None, progress: Progress | None = None,
                **params: Any) -> LearnReport:
    """Train ``method`` on a corpus and store the vectors as the new space ``name``.

    Parameters
    ----------
    store : Store
    name : str
        The new space (must not exist: :class:`ConflictError`).
    method : str
        ``word2vec``, ``fasttext`` or ``doc2vec``.
    corpus : str or Path, optional
        A text file (one document per line; ids are line numbers) or a JSON-lines
        file (``.jsonl``/``.ndjson``, ``corpus_format="jsonl"``, or a field given).
        Exactly one of ``corpus`` and ``from_space``.
    from_space : str, optional
        Learn from the texts of this stored space (ids are its item ids; items
        without a text are left out).
    corpus_format : str
        ``auto``, ``text`` or ``jsonl``.
    text_field, id_field : str, optional
        JSON lines: the field holding the text (default ``text``) and the one
        holding the id (default: the line number).
    encoding : str
        Of a text file.
    tokenizer : Tokenizer or its settings, optional
        Default :class:`repspace.engines.learn.Tokenizer()` (recorded in the recipe).
    progress : callable, optional
        ``(phase, done, total)``: phases ``train`` and ``write``.
    **params
        Hyper-parameters of :func:`repspace.engines.learn.train_word2vec`,
        :func:`~repspace.engines.learn.train_fasttext` or
        :func:`~repspace.engines.learn.train_doc2vec` (``seed``, ``workers``,
        ``vector_size``, ``window``, ``min_count``, ``epochs``, ...). fastText's
        ``bucket`` defaults to :data:`DEFAULT_BUCKET`.

    Returns
    -------
    LearnReport

    Raises
    ------
    InputError
        An unknown method or hyper-parameter, an empty corpus, one without a
        token at least ``min_count`` times, a bad value.
    ConflictError
        ``name`` exists. Nothing is stored on any error.

    Examples
    --------
    >>> import os, tempfile
    >>> from repspace import Store
    >>> folder = tempfile.mkdtemp()
    >>> path = os.path.join(folder, "c.txt")
    >>> _ = open(path, "w").write("red apples\\ngreen pears\\nred cherries\\n" * 5)
    >>> store = Store(os.path.join(folder, "s.db"))
    >>> r = learn_space(store, "fruit", "doc2vec", path, vector_size=4, min_count=1, epochs=3)
    >>> r.n, store.space("fruit").get(["1"])[0].text
    (15, 'red apples')
    >>> learn_space(store, "fruit", "doc2vec", path)
    Traceback (most recent call last):
    ...
    repspace.core.errors.ConflictError: space 'fruit' already exists
    """
    t0 = time.perf_counter()
    check_space_name(name)
    trainer = _trainer(method)
    params = _check_params(method, trainer, params)
    _refuse_existing(store, name)
    tok = _as_tokenizer(tokenizer)
    c, docs, from_info = _read_corpus(store, corpus, from_space, corpus_format=corpus_format,
                                      text_field=text_field, id_field=id_field, encoding=encoding, tokenizer=tok,
                                      want_texts=method == "doc2vec")
    if progress is not None:
        progress("train", 0, 1)
    trained = trainer(c, **params)
    if progress is not None:
        progress("train", 1, 1)
    _refuse_existing(store, name)  # another process may have taken the name while training
    sha = hashlib.sha256(trained.model_bytes).hexdigest()
    prov = {"encoder": PREFIX + method, **trained.recipe, "model_file": f"learn/{method}.model",
            "model_sha256": sha, "model_bytes": len(trained.model_bytes)}
    if from_info is not None:
        prov["corpus_space"] = from_info
    space = _write(store, name, trained, prov, docs, progress)
    info = trained.info
    return LearnReport(
        space=name, uid=space.uid, method=method, n=len(trained.keys), dim=trained.vector_size,
        documents=len(c), tokens=c.n_tokens, skipped=c.skipped, vocabulary=int(info.get("vocabulary", 0)),
        corpus_fingerprint=c.fingerprint, seed=int(trained.recipe["params"]["seed"]),
        workers=int(trained.recipe["workers"]), deterministic=bool(trained.recipe["deterministic"]),
        model_path=model_path(store, space.uid, method), model_sha256=sha, model_bytes=len(trained.model_bytes),
        train_seconds=trained.seconds, seconds=time.perf_counter() - t0, recipe=space.provenance,
    )


def _refuse_existing(store: Store, name: str) -> None:
    try:
        store.space(name)
    except NotFoundError:
        return
    raise ConflictError(f"space {name!r} already exists")


def _write(store: Store, name: str, trained: TrainedVectors, prov: dict[str, Any],
           docs: Mapping[str, tuple[str, dict[str, Any]]], progress: Progress | None) -> Space:
    """The items, their vectors and the model file, under a temporary name renamed to ``name`` when complete."""
    keys, X, counts = trained.keys, trained.vectors, trained.counts
    n = len(keys)
    temp = f"{name[:100]}.partial-{uuid.uuid4().hex[:8]}"
    target = store.create_space(temp, dim=trained.vector_size, metric="cosine", provenance=prov)
    try:
        model = trained.model_bytes
        write_atomic(model_path(store, target.uid, trained.method), lambda f: f.write(model), durable=True)
        for lo in range(0, n, BATCH):
            ids = list(keys[lo:lo + BATCH])
            if trained.method == "doc2vec":
                texts = [docs[i][0] if i in docs else None for i in ids]
                metadata = [{**(docs[i][1] if i in docs else {}), "tokens": int(t)}
                            for i, t in zip(ids, counts[lo:lo + BATCH])]
            else:
                texts = None
                metadata = [{"count": int(t)} for t in counts[lo:lo + BATCH]]
            target.add(ids, X[lo:lo + BATCH], texts=texts, metadata=metadata, on_conflict="error")
            if progress is not None:
                progress("write", min(lo + BATCH, n), n)
        return store.rename_space(temp, name)
    except BaseException:
        try:
            store.delete_space(temp)  # its folder beside the store (the model file) goes with it
        except NotFoundError:
            pass
        raise


# ----------------------------------------------------------------------------- queries


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
_CACHE: dict[str, tuple[tuple[Any, ...], LearnedEncoder]] = {}
_CACHE_LOCK = threading.Lock()


def learned_encoder(space: Space) -> LearnedEncoder:
    """The encoder of a learned space: its model file, checked against the recorded SHA-256, then loaded.

    A loaded model is kept for the next query while the file is the same one
    (inode, size, times); any change to the file means it is hashed again.

    Raises
    ------
    EncoderError
        The model file is missing, or differs from the one the space was
        learned with (replaced or damaged).
    """
    from repspace.engines.learn import load_model

    prov = space.provenance
    method = str(prov.get("encoder", ""))[len(PREFIX):]
    if method not in METHODS:
        raise InputError(f"space {space.name!r} was not learned by repspace learn (encoder {prov.get('encoder')!r})")
    relative = str(prov.get("model_file") or f"learn/{method}.model")
    path = space.store.index_dir / space.uid / relative
    source = prov.get("derived_from")
    if not path.is_file() and isinstance(source, Mapping) and source.get("uid"):
        path = space.store.index_dir / str(source["uid"]) / relative  # a space derived from a learned one
    try:
        st = path.stat()
        signature = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, prov.get("model_sha256"))
        key = f"{space.uid}:{path}"
        with _CACHE_LOCK:
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
    with _CACHE_LOCK:
        _CACHE.pop(key, None)
        _CACHE[key] = (signature, encoder)
        while len(_CACHE) > CACHE_SIZE:
            _CACHE.pop(next(iter(_CACHE)))
    return encoder
