"""A corpus for training: documents as tuples of tokens, with the tokeniser that made them and a fingerprint.

Tokenisation is part of a learned space's recipe, so it is a small frozen spec
(:class:`Tokenizer`) rather than a hidden default. A :class:`Corpus` is read
from a text file (one document per line), a JSON-lines file (one text field per
object) or a list of strings; blank lines and documents without a token are
skipped, and each kept document keeps an id that points back to its source
(the line number, a JSON field, or the list position).

The fingerprint (:func:`corpus_fingerprint`) is a SHA-256 over the tokenised
documents in order: two corpora with the same documents under the same
tokeniser have the same fingerprint, whatever the whitespace or case (when
lowercased) of the raw text.

Examples
--------
>>> from repspace.engines.learn.corpus import Tokenizer, corpus_from_texts
>>> c = corpus_from_texts(["The cat sat.", "", "A dog, 2 cats!"])
>>> c.documents
(('the', 'cat', 'sat'), ('dog', 'cats'))
>>> c.ids
('0', '2')
>>> c.fingerprint == corpus_from_texts(["the  CAT sat", "dog cats"]).fingerprint
True
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.core.files import read_jsonl, text_lines

__all__ = [
    "DEFAULT_PATTERN",
    "Corpus",
    "Tokenizer",
    "corpus_fingerprint",
    "corpus_from_texts",
    "corpus_from_tokens",
    "read_jsonl_corpus",
    "read_text_corpus",
]

#: Runs of Unicode letters: ``\w`` without digits and without the underscore.
#: Close to gensim's ``simple_preprocess`` (``((?![\d])\w)+``, then tokens that
#: start with ``_`` dropped); here the underscore splits a token instead
#: (``foo_bar`` gives ``foo`` and ``bar``), which keeps ``_`` free for the phrase
#: joiner of :func:`repspace.engines.learn.word2vec.train_word2vec`.
DEFAULT_PATTERN = r"[^\W\d_]+"


@dataclass(frozen=True)
class Tokenizer:
    """How a text becomes tokens: a regular expression, lowercasing and a length window.

    The defaults follow gensim's ``simple_preprocess``: lowercase, runs of
    letters (:data:`DEFAULT_PATTERN`), tokens of 2 to 15 characters.

    Parameters
    ----------
    lowercase : bool
        Lowercase the text before matching.
    pattern : str
        A regular expression (Python ``re``, Unicode); each whole match is a
        token (groups are ignored).
    min_len, max_len : int
        Tokens shorter than ``min_len`` or longer than ``max_len`` characters
        are dropped.

    Examples
    --------
    >>> t = Tokenizer()
    >>> t.tokenize("Hello, World! It's 2024: a_b x")
    ['hello', 'world', 'it']
    >>> Tokenizer(lowercase=False, pattern=r"\\S+", min_len=1).tokenize("Hello, World!")
    ['Hello,', 'World!']
    >>> Tokenizer.from_dict(t.to_dict()) == t
    True
    """

    lowercase: bool = True
    pattern: str = DEFAULT_PATTERN
    min_len: int = 2
    max_len: int = 15

    def __post_init__(self) -> None:
        if not isinstance(self.lowercase, bool):
            raise InputError(f"tokenizer lowercase must be true or false, not {self.lowercase!r}")
        if not isinstance(self.pattern, str) or not self.pattern:
            raise InputError(f"tokenizer pattern must be a non-empty regular expression, not {self.pattern!r}")
        try:
            compiled = re.compile(self.pattern)
        except re.error as e:
            raise InputError(f"tokenizer pattern {self.pattern!r} is not a regular expression: {e}") from None
        if compiled.match(""):
            raise InputError(f"tokenizer pattern {self.pattern!r} matches the empty string")
        for name in ("min_len", "max_len"):
            value = getattr(self, name)
            check_scalar(value, f"tokenizer {name}", int, low=1)
        if self.max_len < self.min_len:
            raise InputError(f"tokenizer max_len ({self.max_len}) is below min_len ({self.min_len})")

    def tokenize(self, text: str) -> list[str]:
        """The tokens of ``text``, in order."""
        if not isinstance(text, str):
            raise InputError(f"expected a text (str), got {type(text).__name__}")
        if self.lowercase:
            text = text.lower()
        lo, hi = self.min_len, self.max_len
        return [t for m in re.finditer(self.pattern, text) if lo <= len(t := m.group(0)) <= hi]

    __call__ = tokenize

    def to_dict(self) -> dict[str, Any]:
        """The spec as plain JSON values (the ``tokenizer`` entry of a recipe)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any]) -> Tokenizer:
        """The tokeniser :meth:`to_dict` described."""
        unknown = sorted(set(spec) - {"lowercase", "pattern", "min_len", "max_len"})
        if unknown:
            raise InputError(f"unknown tokenizer setting(s): {', '.join(unknown)}")
        return cls(**spec)


def corpus_fingerprint(documents: Iterable[Sequence[str]]) -> str:
    """SHA-256 (hex) over tokenised documents in order.

    Each document is hashed as its JSON list of tokens followed by a newline, so
    token and document boundaries are part of the hash.

    Examples
    --------
    >>> corpus_fingerprint([["a", "b"], ["c"]]) == corpus_fingerprint([["a", "b"], ["c"]])
    True
    >>> corpus_fingerprint([["a", "b"], ["c"]]) == corpus_fingerprint([["a"], ["b", "c"]])
    False
    """
    h = hashlib.sha256()
    for doc in documents:
        h.update(json.dumps(list(doc), ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


@dataclass(frozen=True, repr=False)
class Corpus:
    """Tokenised documents with their ids, the tokeniser and a fingerprint.

    Build one with :func:`corpus_from_texts`, :func:`read_text_corpus`,
    :func:`read_jsonl_corpus` or :func:`corpus_from_tokens`, which check it is
    not empty.

    Attributes
    ----------
    documents : tuple of tuple of str
        The documents' tokens, in source order; documents without a token are skipped.
    ids : tuple of str
        One id per document (a line number, a JSON field or a list position);
        doc2vec uses them as tags.
    tokenizer : Tokenizer or None
        The tokeniser that made the tokens; ``None`` when tokens were given.
    fingerprint : str
        :func:`corpus_fingerprint` of :attr:`documents`.
    source : str
        Where the documents came from (a path, ``"texts"`` or ``"tokens"``).
    skipped : int
        Non-blank inputs dropped because they had no token.

    Examples
    --------
    >>> corpus = corpus_from_texts(["The cat sat.", "", "...", "the dog ran"])
    >>> corpus.documents, corpus.ids
    ((('the', 'cat', 'sat'), ('the', 'dog', 'ran')), ('0', '3'))
    >>> len(corpus), corpus.n_tokens, corpus.skipped
    (2, 6, 1)
    """

    documents: tuple[tuple[str, ...], ...]
    ids: tuple[str, ...]
    tokenizer: Tokenizer | None
    fingerprint: str
    source: str
    skipped: int = 0

    def __len__(self) -> int:
        return len(self.documents)

    def __iter__(self) -> Iterator[tuple[str, ...]]:
        return iter(self.documents)

    @property
    def n_tokens(self) -> int:
        """Tokens in all documents."""
        return sum(len(d) for d in self.documents)

    def to_dict(self) -> dict[str, Any]:
        """A summary as plain JSON values (not the documents themselves)."""
        return {
            "source": self.source,
            "n_documents": len(self.documents),
            "n_tokens": self.n_tokens,
            "skipped": self.skipped,
            "fingerprint": self.fingerprint,
            "tokenizer": None if self.tokenizer is None else self.tokenizer.to_dict(),
        }

    def __repr__(self) -> str:
        return (f"Corpus({len(self.documents)} documents, {self.n_tokens} tokens, "
                f"source={self.source!r}, fingerprint={self.fingerprint[:12]}…)")


def _build(pairs: Iterable[tuple[str, Sequence[str]]], tokenizer: Tokenizer | None, source: str,
           blank: int = 0) -> Corpus:
    """A checked corpus from ``(id, tokens)`` pairs, skipping documents without a token."""
    ids: list[str] = []
    docs: list[tuple[str, ...]] = []
    seen_ids: set[str] = set()
    skipped = 0
    total = blank
    for doc_id, tokens in pairs:
        total += 1
        if doc_id in seen_ids:
            raise InputError(f"{source}: document id {doc_id!r} occurs twice")
        seen_ids.add(doc_id)
        if not tokens:
            skipped += 1
            continue
        ids.append(doc_id)
        docs.append(tuple(tokens))
    if total == blank:
        raise InputError(f"the corpus {source} is empty: it has no non-blank document")
    if not docs:
        rule = "" if tokenizer is None else f" under the tokenizer {tokenizer.to_dict()}"
        raise InputError(f"the corpus {source} has no tokens{rule}")
    return Corpus(tuple(docs), tuple(ids), tokenizer, corpus_fingerprint(docs), source, skipped)


def corpus_from_texts(texts: Iterable[str], *, tokenizer: Tokenizer | None = None,
                      ids: Sequence[str] | None = None, source: str = "texts") -> Corpus:
    """A corpus from raw texts, one document each; blank texts are skipped.

    Parameters
    ----------
    texts : iterable of str
        The documents.
    tokenizer : Tokenizer, optional
        Default :class:`Tokenizer()`.
    ids : sequence of str, optional
        One id per text (unique); default the position in ``texts`` (``"0"``, ``"1"``, ...).
    source : str
        Names the corpus in errors and in :meth:`Corpus.to_dict`.

    Examples
    --------
    >>> corpus_from_texts(["Paris is in France", "Rome is in Italy"], ids=["p", "r"]).documents[1]
    ('rome', 'is', 'in', 'italy')
    >>> corpus_from_texts(["", "  "])
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: the corpus texts is empty: it has no non-blank document
    """
    tokenizer = Tokenizer() if tokenizer is None else tokenizer
    texts, ids = _listed(texts, ids, "texts", "texts")
    blank = 0
    pairs = []
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise InputError(f"text {i} is a {type(text).__name__}, not a str")
        if not text.strip():
            blank += 1
            continue
        pairs.append((str(i) if ids is None else ids[i], tokenizer.tokenize(text)))
    return _build(pairs, tokenizer, source, blank)



def _listed(items: Any, ids: Sequence[Any] | None, kind: str, noun: str) -> tuple[list[Any], list[str] | None]:
    """``items`` as a list (one string refused: it would read as characters) and ``ids`` as strings, one per item."""
    if isinstance(items, str):
        raise InputError(f"expected a list of {kind}, got one string")
    items = list(items)
    if ids is not None:
        ids = [str(i) for i in ids]
        if len(ids) != len(items):
            raise InputError(f"{len(ids)} ids for {len(items)} {noun}")
    return items, ids

def corpus_from_tokens(documents: Iterable[Sequence[str]], *, ids: Sequence[str] | None = None,
                       source: str = "tokens") -> Corpus:
    """A corpus from documents already tokenised (its recipe then records no tokeniser).

    Examples
    --------
    >>> corpus_from_tokens([["new_york", "is", "big"], []]).documents
    (('new_york', 'is', 'big'),)
    """
    docs, ids = _listed(documents, ids, "token lists", "documents")
    pairs = []
    for i, doc in enumerate(docs):
        if isinstance(doc, str) or not all(isinstance(t, str) for t in doc):
            raise InputError(f"document {i} must be a list of str tokens")
        pairs.append((str(i) if ids is None else ids[i], list(doc)))
    return _build(pairs, None, source)


def read_text_corpus(path: str | Path, *, tokenizer: Tokenizer | None = None, encoding: str = "utf-8") -> Corpus:
    """A corpus from a text file, one document per line; ids are the 1-based line numbers.

    Blank lines are skipped; a UTF-8 byte-order mark is ignored. ``encoding``
    is any Python codec (``latin-1`` for older corpora such as gensim's
    ``lee.cor``); a line that does not decode is an error naming it.

    Examples
    --------
    >>> from repspace.store import example_file
    >>> p = example_file("c.txt", "one fish two fish\\n\\nred fish\\n")
    >>> c = read_text_corpus(p)
    >>> c.ids, c.documents[1]
    (('1', '3'), ('red', 'fish'))
    """
    tokenizer = Tokenizer() if tokenizer is None else tokenizer
    path = Path(path)
    blank = 0
    pairs = []
    for number, line in text_lines(path, "corpus file", encoding=encoding):
        if not line.strip():
            blank += 1
            continue
        pairs.append((str(number), tokenizer.tokenize(line)))
    return _build(pairs, tokenizer, str(path), blank)


def read_jsonl_corpus(path: str | Path, *, text_field: str = "text", id_field: str | None = None,
                      tokenizer: Tokenizer | None = None) -> Corpus:
    """A corpus from a JSON-lines file: one object per line, its ``text_field`` the document.

    Ids are the ``id_field`` values (unique) when given, else the 1-based line numbers.

    Examples
    --------
    >>> from repspace.store import example_file
    >>> p = example_file("c.jsonl", '{"id": "a", "text": "Red fish"}\\n{"id": "b", "text": "blue fish"}\\n')
    >>> read_jsonl_corpus(p, id_field="id").ids
    ('a', 'b')
    >>> read_jsonl_corpus(p, text_field="body")
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: ...c.jsonl:1: no text field 'body' (fields: id, text)
    """
    tokenizer = Tokenizer() if tokenizer is None else tokenizer
    path = Path(path)
    pairs = []
    blank = 0
    for number, obj in read_jsonl(path, "corpus file"):
        if text_field not in obj:
            raise InputError(f"{path}:{number}: no text field {text_field!r} (fields: {', '.join(sorted(obj))})")
        text = obj[text_field]
        if not isinstance(text, str):
            raise InputError(f"{path}:{number}: field {text_field!r} is a {type(text).__name__}, not a string")
        if id_field is None:
            doc_id = str(number)
        else:
            if id_field not in obj:
                raise InputError(f"{path}:{number}: no id field {id_field!r}")
            value = obj[id_field]
            if isinstance(value, bool) or not isinstance(value, (str, int)):
                raise InputError(f"{path}:{number}: id field {id_field!r} must be a string or integer")
            doc_id = str(value)
        if not text.strip():
            blank += 1
            continue
        pairs.append((doc_id, tokenizer.tokenize(text)))
    return _build(pairs, tokenizer, str(path), blank)
