"""BM25 over the texts of a space's items, keyed by the space's rows.

The index is `bm25s <https://github.com/xhluca/bm25s>`_'s: its tokenizer (a
regular expression, lower case, optional stop words and a Snowball stemmer from
PyStemmer) and its sparse matrix of per-document term weights. Scoring and
selection are done here, from that matrix, so that the result is exact and
deterministic: every document holding a query term is scored, ties go to the
lower row, a document with no query term is never returned, and a row mask
(``allowed``) is applied before the top ``k`` is chosen, so ``k`` allowed rows
come back whenever that many match.

Scores are the classic BM25 form, for every ``method``::

    score(q, d) = Σ_{t ∈ q} idf(t) · tf·(k1 + 1) / (tf + k1·(1 − b + b·|d|/avgdl))

with ``idf`` and the term-frequency part as each variant defines them
(Kamphuis et al., ECIR 2020); for ``lucene``, ``idf = ln(1 + (N − df + 0.5)/(df + 0.5))``.
bm25s (like Lucene ≥ 8) leaves out the constant factor ``k1 + 1`` for
``lucene`` and ``robertson``; it is put back here so that all variants share
one scale. No ranking changes. A query term given twice counts twice.

BM25 statistics (N, document frequencies, the mean length) depend on the whole
corpus, so an index over a space is never extended: :func:`ensure_lexical`
rebuilds it whenever the space changed at all (one add, delete or text edit).
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from repspace.core.checks import check_choice, check_scalar, check_strings
from repspace.core.errors import InputError, NotFoundError

#: Version of the folder layout and stamp; a different one means rebuild.
FORMAT = 1
#: BM25 variants (bm25s's names).
METHODS = ("lucene", "robertson", "atire", "bm25l", "bm25+")
#: Stop-word lists bm25s knows, by the names it accepts.
STOPWORD_LISTS = (
    "en", "english", "en_plus", "english_plus", "de", "german", "nl", "dutch", "fr", "french", "es", "spanish",
    "pt", "portuguese", "it", "italian", "ru", "russian", "sv", "swedish", "no", "norwegian", "zh", "chinese",
    "tr", "turkish", "ko", "korean", "da", "danish",
)
#: The file inside an index folder that describes it (written last).
META_FILE = "lexical.json"
ROWS_FILE = "rows.npy"
#: Largest (queries × documents) block of scores held at once while searching.
SEARCH_BLOCK = 16 * 1024 * 1024
#: Texts read per batch while collecting a space's corpus.
READ_BATCH = 10_000


def _stemmers() -> list[str]:
    import Stemmer

    return list(Stemmer.algorithms())


@dataclass(frozen=True)
class LexicalParams:
    """How texts are tokenised and weighted.

    Parameters
    ----------
    method : ``lucene`` (default), ``robertson``, ``atire``, ``bm25l`` or ``bm25+``
    k1 : float, ≥ 0
        Term-frequency saturation.
    b : float in [0, 1]
        Length normalisation.
    stemmer : str or None
        A Snowball language of PyStemmer (``english``, ``french``, ...) or None.
    stopwords : str or None
        A stop-word list of bm25s (``en``, ``de``, ...) or None.

    Examples
    --------
    >>> LexicalParams().slug
    'bm25-lucene-k1_1.5-b0.75-english-en'
    >>> LexicalParams(stemmer=None, stopwords=None, k1=1.2).slug
    'bm25-lucene-k1_1.2-b0.75-nostem-nostop'
    """

    method: str = "lucene"
    k1: float = 1.5
    b: float = 0.75
    stemmer: str | None = "english"
    stopwords: str | None = "en"

    def __post_init__(self) -> None:
        check_choice(self.method, "the BM25 method", METHODS)
        object.__setattr__(self, "k1", check_scalar(self.k1, "BM25 k1", float, low=0))
        object.__setattr__(self, "b", check_scalar(self.b, "BM25 b", float, low=0, high=1))
        if self.stemmer is not None and self.stemmer not in _stemmers():
            raise InputError(f"unknown stemmer {self.stemmer!r}; use None or one of: {', '.join(_stemmers())}")
        if self.stopwords is not None and self.stopwords not in STOPWORD_LISTS:
            raise InputError(f"unknown stop-word list {self.stopwords!r}; use None or one of: "
                             f"{', '.join(STOPWORD_LISTS)}")

    @property
    def slug(self) -> str:
        """A file-name-safe name of these parameters (the index folder's name)."""
        return (f"bm25-{self.method}-k1_{self.k1!r}-b{self.b!r}-"
                f"{self.stemmer or 'nostem'}-{self.stopwords or 'nostop'}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def scale(self) -> float:
        """Factor that puts bm25s's weights on the classic scale (see the module docstring)."""
        return self.k1 + 1.0 if self.method in ("lucene", "robertson") else 1.0


def tokenize(texts: Sequence[str], params: LexicalParams, *, ids: bool = False) -> Any:
    """Tokens of each text, as the index sees them (bm25s's tokenizer).

    Examples
    --------
    >>> tokenize(["The cats are running"], LexicalParams())
    [['cat', 'run']]
    """
    import bm25s

    stemmer = None
    if params.stemmer is not None:
        import Stemmer

        stemmer = Stemmer.Stemmer(params.stemmer)  # one per call: PyStemmer objects are not thread-safe
    return bm25s.tokenize(list(texts), stopwords=params.stopwords, stemmer=stemmer, return_ids=ids,
                          show_progress=False)


class LexicalIndex:
    """BM25 over a list of texts, each under a row number.

    Make one with :meth:`build` (from texts), :meth:`load` (from a folder) or
    :func:`ensure_lexical` (from a stored space).

    Attributes
    ----------
    params : LexicalParams
    rows : int64 array, the row of each indexed text, ascending.
    build_id : str, unique per build (kept by :meth:`save` and :meth:`load`).
    stamp : dict or None, what :func:`ensure_lexical` recorded about the space.

    Examples
    --------
    >>> ix = LexicalIndex.build(["cats purr", "dogs bark", "cats and dogs"], np.array([3, 5, 9]))
    >>> scores, rows = ix.search(["cat"], k=3)
    >>> rows.tolist()
    [[3, 9, -1]]
    >>> ix.search(["cat"], k=2, allowed=np.array([False] * 9 + [True]))[1].tolist()
    [[9, -1]]
    """

    def __init__(self, params: LexicalParams, rows: np.ndarray, model: Any, *, build_id: str,
                 stamp: dict[str, Any] | None = None) -> None:
        self.params = params
        self.rows = rows
        self.model = model  # a bm25s.BM25, or None when no text has a token
        self.build_id = build_id
        self.stamp = stamp
        self._weights: Any = None

    def __len__(self) -> int:
        return len(self.rows)

    def __repr__(self) -> str:
        return f"<LexicalIndex {self.params.slug} docs={len(self)}>"

    # ------------------------------------------------------------------ build
    @classmethod
    def build(
        cls,
        texts: Sequence[str],
        rows: Any,
        *,
        method: str = "lucene",
        k1: float = 1.5,
        b: float = 0.75,
        stemmer: str | None = "english",
        stopwords: str | None = "en",
    ) -> LexicalIndex:
        """Index ``texts``, the text at position ``i`` under row ``rows[i]``.

        Parameters
        ----------
        texts : sequence of str
        rows : int array-like, distinct and ≥ 0, one per text
        method, k1, b, stemmer, stopwords : see :class:`LexicalParams`

        Examples
        --------
        >>> LexicalIndex.build(["a b", "c"], [0, 1], stemmer=None, stopwords=None)
        <LexicalIndex bm25-lucene-k1_1.5-b0.75-nostem-nostop docs=2>
        """
        params = LexicalParams(method=method, k1=k1, b=b, stemmer=stemmer, stopwords=stopwords)
        texts = check_strings(texts, "texts", "text")
        row_arr = _check_rows(rows, len(texts))
        order = np.argsort(row_arr, kind="stable")
        if not np.array_equal(order, np.arange(len(order))):
            row_arr, texts = row_arr[order], [texts[i] for i in order]
        model = None
        if texts:
            tok = tokenize(texts, params, ids=True)
            if tok.vocab:
                import bm25s

                model = bm25s.BM25(method=params.method, k1=params.k1, b=params.b, csc_backend="scipy")
                model.index(tok, create_empty_token=False, show_progress=False)
        row_arr.flags.writeable = False
        return cls(params, row_arr, model, build_id=uuid.uuid4().hex)

    # ----------------------------------------------------------------- search
    def search(
        self, queries: Sequence[str] | str, k: int, *, allowed: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` best rows of each query by BM25.

        Parameters
        ----------
        queries : list of str (a lone string is one query)
        k : int
        allowed : boolean array, optional
            A mask over rows: only rows ``r`` with ``allowed[r]`` are returned
            (rows past its end count as not allowed). The mask is applied
            before the top ``k`` is taken.

        Returns
        -------
        scores : (m, k) float32, descending; 0 in padding
        rows : (m, k) int64; -1 in padding (fewer than ``k`` documents hold a
            query term). Equal scores go to the lower row.

        Examples
        --------
        >>> ix = LexicalIndex.build(["red fox", "red red fox", "blue whale"], [0, 1, 2])
        >>> s, r = ix.search(["red", "whale", "nothing"], k=2)
        >>> r.tolist()
        [[1, 0], [2, -1], [-1, -1]]
        """
        queries = check_strings([queries] if isinstance(queries, str) else queries, "queries", "query")
        k = check_scalar(k, "k", int, low=1)
        m, n = len(queries), len(self.rows)
        out_s = np.zeros((m, k), np.float32)
        out_r = np.full((m, k), -1, np.int64)
        keep_doc = self._allowed_docs(allowed)
        if m == 0 or self.model is None or (keep_doc is not None and not keep_doc.any()):
            return out_s, out_r
        weights = self._weight_matrix()
        vocab = self.model.vocab_dict
        tokens = tokenize(queries, self.params)
        nonocc = self.model.nonoccurrence_array
        step = max(1, SEARCH_BLOCK // max(n, 1))
        for lo in range(0, m, step):
            chunk = tokens[lo : lo + step]
            q = _query_matrix(chunk, vocab, weights.shape[0], self.params.scale)
            scores = (q @ weights).tocsr()  # (queries, documents), only documents holding a term
            for j, toks in enumerate(chunk):
                a, b = scores.indptr[j], scores.indptr[j + 1]
                docs, s = scores.indices[a:b], scores.data[a:b]
                keep = s > 0
                if keep_doc is not None:
                    keep &= keep_doc[docs]
                docs, s = docs[keep], s[keep]
                if not len(docs):
                    continue
                if nonocc is not None:  # bm25l / bm25+: every document gets the terms' non-occurrence part
                    ids = [vocab[t] for t in toks if t in vocab]
                    s = s + float(nonocc[ids].astype(np.float64).sum()) * self.params.scale
                rows = self.rows[docs]
                if len(s) > k:  # everything tied with the k-th best stays in for the row tie-break
                    kth = np.partition(s, len(s) - k)[len(s) - k]
                    band = s >= kth
                    rows, s = rows[band], s[band]
                order = np.lexsort((rows, -s))[:k]
                out_s[lo + j, : len(order)] = s[order]
                out_r[lo + j, : len(order)] = rows[order]
        return out_s, out_r

    def _allowed_docs(self, allowed: Any) -> np.ndarray | None:
        """The mask over this index's documents, or None for all."""
        if allowed is None:
            return None
        mask = np.asarray(allowed)
        if mask.dtype != bool or mask.ndim != 1:
            raise InputError(f"allowed must be a 1-d boolean mask over rows, not a {mask.ndim}-d {mask.dtype} "
                             "array (for a list of rows r use mask = np.zeros(n, bool); mask[r] = True)")
        inside = self.rows < len(mask)
        out = np.zeros(len(self.rows), bool)
        out[inside] = mask[self.rows[inside]]
        return out

    def _weight_matrix(self) -> Any:
        """bm25s's (documents × terms) CSC weights, as a (terms × documents) CSR matrix."""
        if self._weights is None:
            import scipy.sparse as sp

            sc = self.model.scores
            self._weights = sp.csr_matrix(
                (np.asarray(sc["data"]), np.asarray(sc["indices"]), np.asarray(sc["indptr"])),
                shape=(len(sc["indptr"]) - 1, int(sc["num_docs"])),
            )
        return self._weights

    # ------------------------------------------------------------ persistence
    def save(self, folder: str | Path, *, stamp: dict[str, Any] | None = None) -> None:
        """Write the index to ``folder`` atomically: a complete new folder replaces the old one.

        It is written to a temporary folder beside ``folder`` and renamed into
        place; a folder already there is moved aside first and removed. Readers
        see the old index, the new one, or (for an instant) none, never a mix.
        ``stamp`` (JSON-able) is kept with the index and comes back in :attr:`stamp`.

        Examples
        --------
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp()) / "ix"
        >>> ix = LexicalIndex.build(["cats purr", "dogs bark"], [0, 1])
        >>> ix.save(folder)
        >>> LexicalIndex.load(folder).search(["dog"], k=1)[1].tolist()
        [[1]]
        """
        folder = Path(folder)
        folder.parent.mkdir(parents=True, exist_ok=True)
        if stamp is not None:
            self.stamp = stamp
        tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}.", suffix=".tmp"))
        try:
            if self.model is not None:
                self.model.save(tmp, show_progress=False)
            np.save(tmp / ROWS_FILE, np.asarray(self.rows, dtype=np.int64), allow_pickle=False)
            meta = {"format": FORMAT, "build_id": self.build_id, "params": self.params.to_dict(),
                    "n_docs": len(self.rows), "has_model": self.model is not None, "stamp": self.stamp}
            (tmp / META_FILE).write_text(json.dumps(meta, indent=1))
            _swap_in(tmp, folder)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)

    @classmethod
    def load(cls, folder: str | Path) -> LexicalIndex:
        """Read an index written by :meth:`save`.

        Raises
        ------
        NotFoundError
            No index in ``folder``.
        InputError
            The folder is damaged or of another format version.
        """
        folder = Path(folder)
        missing = 0
        for attempt in range(5):
            try:
                meta = read_meta(folder)
                index = cls._load_files(folder, meta)
                if read_meta(folder)["build_id"] == meta["build_id"]:  # not replaced while reading
                    return index
            except FileNotFoundError:
                if not folder.exists():  # gone, or in the instant of being replaced: look once more
                    missing += 1
                    if missing == 2:
                        raise NotFoundError(f"no lexical index in {folder}") from None
            time.sleep(0.01 * (attempt + 1))
        raise InputError(f"lexical index {folder} is incomplete or kept changing while being read")

    @classmethod
    def _load_files(cls, folder: Path, meta: dict[str, Any]) -> LexicalIndex:
        try:
            params = LexicalParams(**meta["params"])
            rows = np.load(folder / ROWS_FILE, allow_pickle=False)
            model = None
            if meta["has_model"]:
                import bm25s

                model = bm25s.BM25.load(folder, show_progress=False)
            index = cls(params, rows, model, build_id=meta["build_id"], stamp=meta.get("stamp"))
            if model is not None and not _fits(model, len(rows)):
                raise ValueError("its weight arrays do not fit together")
        except FileNotFoundError:
            raise
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise InputError(f"lexical index {folder} is damaged ({e})") from None
        if rows.dtype != np.int64 or rows.ndim != 1 or len(rows) != meta["n_docs"]:
            raise InputError(f"lexical index {folder} is damaged (its row list does not fit the index)")
        rows.flags.writeable = False
        return index


def _fits(model: Any, n_docs: int) -> bool:
    """Whether bm25s's arrays describe a (documents × terms) matrix over ``n_docs`` and its vocabulary."""
    sc = model.scores
    data, indices, indptr = (np.asarray(sc[key]) for key in ("data", "indices", "indptr"))
    n_terms = len(indptr) - 1
    ids = np.fromiter(model.vocab_dict.values(), dtype=np.int64, count=len(model.vocab_dict))
    return bool(
        int(sc["num_docs"]) == n_docs and n_terms == len(ids) and len(data) == len(indices) == int(indptr[-1])
        and indptr[0] == 0 and (np.diff(indptr) >= 0).all()
        and (not len(indices) or (indices.min() >= 0 and indices.max() < n_docs))
        and (not len(ids) or (ids.min() >= 0 and ids.max() < n_terms))
    )


def read_meta(folder: str | Path) -> dict[str, Any]:
    """The description an index folder holds (format, build id, parameters, stamp).

    Raises FileNotFoundError when there is none, InputError when it is
    unreadable or of another format version.
    """
    path = Path(folder) / META_FILE
    try:
        meta = json.loads(path.read_text())
    except FileNotFoundError:
        raise
    except (OSError, ValueError) as e:
        raise InputError(f"{path} is unreadable ({e})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise InputError(f"{path} is not a lexical index of format {FORMAT}")
    kinds = {"build_id": str, "params": dict, "n_docs": int, "has_model": bool}
    if any(not isinstance(meta.get(key), kind) for key, kind in kinds.items()):
        raise InputError(f"{path} is damaged (a field is missing or of the wrong type)")
    return meta


def _check_rows(rows: Any, n: int) -> np.ndarray:
    try:
        arr = np.asarray(rows)
    except (TypeError, ValueError):
        raise InputError("rows must be an array of integers") from None
    if arr.ndim != 1 or len(arr) != n:
        raise InputError(f"rows has shape {arr.shape}; expected one row per text ({n})")
    if n and not np.issubdtype(arr.dtype, np.integer):
        raise InputError(f"rows must be integers, not {arr.dtype}")
    arr = arr.astype(np.int64, copy=True)
    if n and arr.min() < 0:
        raise InputError("rows must be ≥ 0")
    if len(np.unique(arr)) != n:
        raise InputError("rows must be distinct")
    return arr


def _query_matrix(tokens: list[list[str]], vocab: dict[str, int], n_terms: int, scale: float) -> Any:
    """(queries × terms) CSR matrix of term counts × scale, in float64 (unknown terms dropped)."""
    import scipy.sparse as sp

    indptr, ids = [0], []
    for toks in tokens:
        ids.extend(vocab[t] for t in toks if t in vocab)
        indptr.append(len(ids))
    data = np.full(len(ids), scale, dtype=np.float64)
    q = sp.csr_matrix((data, np.asarray(ids, dtype=np.int64), np.asarray(indptr, dtype=np.int64)),
                      shape=(len(tokens), n_terms))
    q.sum_duplicates()  # a term given twice counts twice
    return q


def _swap_in(tmp: Path, folder: Path) -> None:
    """Rename the complete folder ``tmp`` to ``folder``, moving any folder there aside first."""
    trash: list[Path] = []
    try:
        for _ in range(20):
            try:
                os.rename(tmp, folder)
                return
            except OSError as e:
                if e.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                    raise
            aside = folder.parent / f".{folder.name}.{uuid.uuid4().hex}.old"
            try:
                os.rename(folder, aside)
                trash.append(aside)
            except FileNotFoundError:
                pass  # another writer moved it meanwhile
        raise OSError(f"could not put the lexical index in place at {folder}")
    finally:
        for t in trash:
            shutil.rmtree(t, ignore_errors=True)
