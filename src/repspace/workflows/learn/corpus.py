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
Word vectors learned from the texts of a stored space:

>>> from repspace.store import example_space
>>> texts = ["the cat sat on the mat", "the dog sat on the log"] * 20
>>> store = example_space(40, 2, texts=texts, name="docs").store
>>> report = learn_space(store, "pets", "word2vec", from_space="docs", vector_size=8, min_count=2, seed=1)
>>> report.n, report.dim, store.space("pets").provenance["encoder"]
(7, 8, 'learn:word2vec')
>>> [h.id for h in store.space("pets").search("cat", k=1)]
['cat']
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from repspace.core.checks import check_choice
from repspace.core.errors import InputError
from repspace.core.progress import Progress
from repspace.core.space import check_space_name
from repspace.workflows.learn._params import check_params
from repspace.workflows.learned_encoder import PREFIX, LearnedEncoder, learned_encoder, model_path
from repspace.workflows.new_space import refuse_existing, write_new_space

if TYPE_CHECKING:
    import numpy as np

    from repspace.core.store import Space, Store
    from repspace.engines.learn import Corpus, Tokenizer, TrainedVectors

__all__ = ["CHECKPOINT_NAME", "DEFAULT_BUCKET", "METHODS", "LearnReport", "LearnedEncoder", "learn_space",
           "learned_encoder", "model_path"]

#: The methods :func:`learn_space` trains.
METHODS: tuple[str, ...] = ("word2vec", "fasttext", "doc2vec")
#: fastText's default n-gram hash rows here (gensim's 2,000,000 costs 1.6 GB at 100 dimensions, twice over
#: while training, and a model file as large; a corpus of a few million tokens has far fewer distinct n-grams).
DEFAULT_BUCKET = 200_000
#: The name of the space of the vectors after epoch ``e`` (``checkpoints=True``).
CHECKPOINT_NAME = "{space}@epoch{epoch}"
#: Suffixes read as JSON lines when the format is ``auto``.
JSONL_SUFFIXES = (".jsonl", ".ndjson")


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
    checkpoints : the spaces of the vectors after each epoch, in order (word2vec with ``checkpoints=True``).
    epoch_loss : gensim's training loss of each epoch (with checkpoints).

    Examples
    --------
    >>> from repspace.store import example_store
    >>> store = example_store()
    >>> corpus = store.path.with_name("c.txt")
    >>> _ = corpus.write_text("the cat sat on the mat\\nthe dog sat on the log\\n" * 20)
    >>> r = learn_space(store, "pets", "word2vec", corpus, vector_size=8, min_count=2, seed=1)
    >>> r.method, r.n, r.dim, r.documents, r.tokens, r.vocabulary
    ('word2vec', 7, 8, 40, 240, 7)
    >>> r.seed, r.deterministic, r.model_path.name, r.recipe["encoder"]
    (1, True, 'word2vec.model', 'learn:word2vec')
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
    checkpoints: tuple[str, ...] = ()
    epoch_loss: tuple[float, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Every field as JSON values (``model_path`` as a string)."""
        return {
            "space": self.space, "uid": self.uid, "method": self.method, "n": self.n, "dim": self.dim,
            "documents": self.documents, "tokens": self.tokens, "skipped": self.skipped,
            "vocabulary": self.vocabulary, "corpus_fingerprint": self.corpus_fingerprint, "seed": self.seed,
            "workers": self.workers, "deterministic": self.deterministic, "model_path": str(self.model_path),
            "model_sha256": self.model_sha256, "model_bytes": self.model_bytes,
            "train_seconds": self.train_seconds, "seconds": self.seconds, "recipe": self.recipe,
            **({"checkpoints": list(self.checkpoints), "epoch_loss": list(self.epoch_loss)} if self.checkpoints
               else {}),
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
    return trainers[check_choice(method, "method", METHODS)]


def _check_params(method: str, trainer: Any, params: Mapping[str, Any]) -> dict[str, Any]:
    out = check_params(method, trainer, params)
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
    check_choice(corpus_format, "corpus_format", ("auto", "text", "jsonl"))
    if corpus_format == "text":
        if text_field is not None or id_field is not None:
            raise InputError("--text-field and --id-field apply to a JSON-lines corpus, not --format text")
        return False
    return corpus_format == "jsonl" or path.suffix.lower() in JSONL_SUFFIXES or \
        text_field is not None or id_field is not None


def _file_documents(path: Path, jsonl: bool, text_field: str, id_field: str | None,
                    encoding: str) -> dict[str, tuple[str, dict[str, Any]]]:
    """Each document's raw text and metadata by the id the engine's reader gave it (a second, light pass)."""
    from repspace.core.files import read_jsonl, text_lines

    docs: dict[str, tuple[str, dict[str, Any]]] = {}
    if jsonl:
        for number, obj in read_jsonl(path, "corpus file"):
            doc_id = str(number) if id_field is None else str(obj.get(id_field))
            meta = {k: v for k, v in obj.items() if k not in (text_field, id_field)}
            docs[doc_id] = (str(obj.get(text_field, "")), meta)
        return docs
    for number, line in text_lines(path, "corpus file", encoding=encoding):  # the engine's reader checked it
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
                checkpoint_name: str = CHECKPOINT_NAME, **params: Any) -> LearnReport:
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
        ``(phase, done, total)``: ``train`` (after each epoch) and ``write``.
    checkpoint_name : str
        With ``checkpoints=True`` (word2vec): the name of the space of the vectors after epoch ``e``, a
        template of ``{space}`` and ``{epoch}`` (default ``{space}@epoch{epoch}``); every one must be new. Each
        holds the words (ids, counts) with that epoch's vectors and its loss in the provenance
        (``checkpoint_of``, ``epoch``, ``epoch_loss``), for ``repspace analyze track``.
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
    >>> from repspace.store import example_store
    >>> store = example_store()
    >>> path = store.path.with_name("fruit.txt")  # one document a line
    >>> _ = path.write_text("\\n".join(["red apples", "green pears", "red cherries"] * 5))
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
    refuse_existing(store, name)
    names = _checkpoint_names(checkpoint_name, name, int(params.get("epochs", 5))) if params.get("checkpoints") \
        else []
    for n in names:
        refuse_existing(store, n)
    tok = _as_tokenizer(tokenizer)
    c, docs, from_info = _read_corpus(store, corpus, from_space, corpus_format=corpus_format,
                                      text_field=text_field, id_field=id_field, encoding=encoding, tokenizer=tok,
                                      want_texts=method == "doc2vec")
    trained = trainer(c, progress=progress, **params)  # ("train", epoch, epochs) after each epoch
    refuse_existing(store, name)  # another process may have taken the name while training
    sha = hashlib.sha256(trained.model_bytes).hexdigest()
    prov = {"encoder": PREFIX + method, **trained.recipe, "model_file": f"learn/{method}.model",
            "model_sha256": sha, "model_bytes": len(trained.model_bytes)}
    if from_info is not None:
        prov["corpus_space"] = from_info
    written = _write_checkpoints(store, names, name, trained, prov)
    try:
        space = _write(store, name, trained, prov, docs, progress)
    except BaseException:
        for n in written:
            store.delete_space(n)
        raise
    info = trained.info
    return LearnReport(
        space=name, uid=space.uid, method=method, n=len(trained.keys), dim=trained.vector_size,
        documents=len(c), tokens=c.n_tokens, skipped=c.skipped, vocabulary=int(info.get("vocabulary", 0)),
        corpus_fingerprint=c.fingerprint, seed=int(trained.recipe["params"]["seed"]),
        workers=int(trained.recipe["workers"]), deterministic=bool(trained.recipe["deterministic"]),
        model_path=model_path(store, space.uid, method), model_sha256=sha, model_bytes=len(trained.model_bytes),
        train_seconds=trained.seconds, seconds=time.perf_counter() - t0, recipe=space.provenance,
        checkpoints=tuple(written), epoch_loss=tuple(round(x, 3) for x in trained.epoch_loss),
    )


def _checkpoint_names(template: str, name: str, epochs: int) -> list[str]:
    """The checkpoint spaces' names, checked: distinct, valid, none the final space's."""
    try:
        names = [template.format(space=name, epoch=e) for e in range(1, epochs + 1)]
    except (KeyError, IndexError, ValueError) as e:
        raise InputError(f"--checkpoint-name takes {{space}} and {{epoch}}, not {template!r} ({e})") from None
    if len(set(names)) < len(names) or name in names:
        raise InputError(f"--checkpoint-name {template!r} must name each epoch differently: give {{epoch}}")
    for n in names:
        check_space_name(n)
    return names


def _write_checkpoints(store: Store, names: list[str], name: str, trained: TrainedVectors,
                       prov: Mapping[str, Any]) -> list[str]:
    """One space per epoch's vectors (the words and counts of the final space); all or none."""
    keys, counts = trained.keys, trained.counts
    written: list[str] = []
    recipe = {k: prov[k] for k in ("method", "architecture", "params", "corpus_fingerprint") if k in prov}
    try:
        for e, (n, vectors) in enumerate(zip(names, trained.checkpoints), start=1):
            p = {"encoder": "precomputed", "checkpoint_of": name, "epoch": e, "epochs": len(names),
                 "epoch_loss": round(trained.epoch_loss[e - 1], 3), **recipe}
            write_new_space(store, n, len(keys),
                            lambda lo, hi, v=vectors: (list(keys[lo:hi]), v[lo:hi], None,
                                                       [{"count": int(t)} for t in counts[lo:hi]]),
                            dim=trained.vector_size, metric="cosine", provenance=p)
            written.append(n)
    except BaseException:
        for n in written:
            store.delete_space(n)
        raise
    return written


def _write(store: Store, name: str, trained: TrainedVectors, prov: dict[str, Any],
           docs: Mapping[str, tuple[str, dict[str, Any]]], progress: Progress | None) -> Space:
    """The items, their vectors and the model file, under a temporary name renamed to ``name`` when complete."""
    keys, counts = trained.keys, trained.counts

    def rows(lo: int, hi: int) -> tuple[list[str], np.ndarray, list[str | None] | None, list[dict[str, Any]]]:
        ids = list(keys[lo:hi])
        if trained.method == "doc2vec":
            return (ids, trained.vectors[lo:hi], [docs[i][0] if i in docs else None for i in ids],
                    [{**(docs[i][1] if i in docs else {}), "tokens": int(t)} for i, t in zip(ids, counts[lo:hi])])
        return ids, trained.vectors[lo:hi], None, [{"count": int(t)} for t in counts[lo:hi]]

    return write_new_space(store, name, len(keys), rows, dim=trained.vector_size, metric="cosine", provenance=prov,
                           files={f"learn/{trained.method}.model": trained.model_bytes}, progress=progress)
