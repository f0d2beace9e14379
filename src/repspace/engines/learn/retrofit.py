"""Retrofitting word vectors to a semantic lexicon (Faruqui et al. 2015), with its recipe.

Faruqui, Dodge, Jauhar, Dyer, Hovy and Smith, "Retrofitting Word Vectors to
Semantic Lexicons" (NAACL 2015) pull each word that a lexicon links to other
words towards them, while keeping it near its original vector ``q̂``. Every
iteration sets, for each word ``i`` of both the vocabulary and the lexicon,

    q_i <- (alpha_i q̂_i + sum_j beta_ij q_j) / (alpha_i + sum_j beta_ij)

over its lexicon neighbours ``j`` that are in the vocabulary, with
``alpha_i = 1`` and ``beta_ij = 1 / degree(i)`` as in the paper's code
(github.com/mfaruqui/retrofitting, ``retrofit.py``): a word ends halfway
between its original vector and the mean of its neighbours. Words outside the
lexicon, words without a neighbour in the vocabulary and neighbours outside
the vocabulary play no part (the first two keep their vectors). The relation
is the lexicon's, not made symmetric: a word's neighbours are the words of
its own line, as the paper's code reads them.

Jacobi, not Gauss-Seidel
------------------------
The paper's code updates words in place one after the other (Gauss-Seidel),
in the order of a Python ``set`` of strings, which changes with
``PYTHONHASHSEED`` from run to run. :func:`retrofit` updates all words at
once from the previous iteration (Jacobi: one ``scipy.sparse`` product per
iteration), so the result does not depend on any order and is the same from
run to run. Both schemes converge to the same fixed point: the map is a
contraction with factor ``max_i sum_j beta_ij / (alpha_i + sum_j beta_ij)``
(1/2 with the defaults), so the distance to it at least halves with each
iteration; Gauss-Seidel gets there faster. On GloVe 6B 50d retrofitted to
WordNet synonyms (30,047 words moved), 10 iterations leave Jacobi within
0.0016 (largest coordinate) of the fixed point and Gauss-Seidel within
0.000004, and the Spearman correlations of the two on five word-similarity
sets agree to 4 decimals (``benchmarks/eval_learn_retrofit.py``). Jacobi takes
1 to 1.5 s there (0.2 s of it the 10 sparse products, the rest bookkeeping of
the 400,000 keys); ``update="gauss-seidel"`` (the paper's scheme in a fixed
order, the sorted lexicon words; a Python loop) about 3 s.

Matching and case
-----------------
With ``lowercase=True`` (the default) a vocabulary key is matched through its
lower-cased form, and the lexicon's words are lower-cased too (entries that
then coincide are merged, their neighbours united). When several keys share a
form (``Apple`` and ``apple``), each of their rows is retrofitted (from its
own original vector), and as a neighbour the form stands for its first row in
``keys`` order (gensim's ``case_insensitive`` convention). The paper's code
lower-cases both the vectors' words and the lexicon.

The paper's code also scales every input vector to unit length first
(``normalize=True`` here); by default the vectors are used as given.

This engine imports only :mod:`repspace.core` and third-party libraries.

Examples
--------
>>> import numpy as np
>>> from repspace.engines.learn.retrofit import lexicon_from_mapping, retrofit
>>> lex = lexicon_from_mapping({"car": ["automobile"], "automobile": ["car"]})
>>> r = retrofit(["car", "automobile", "tree"], np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), lex, iterations=50)
>>> r.vectors.astype(float).round(3).tolist()
[[0.667, 0.333], [0.333, 0.667], [1.0, 1.0]]
>>> r.counts["in_vocabulary"], r.counts["edges"], r.counts["changed"]
(2, 2, 2)
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from repspace.core.arrays import as_matrix, unit_rows
from repspace.core.checks import check_choice, check_scalar, positive_int
from repspace.core.errors import InputError
from repspace.core.files import text_lines

__all__ = ["UPDATES", "Lexicon", "RetrofitResult", "lexicon_from_mapping", "read_lexicon", "retrofit"]

#: The update schemes of :func:`retrofit`.
UPDATES = ("jacobi", "gauss-seidel")


@dataclass(frozen=True, eq=False, repr=False)
class Lexicon:
    """Words and their lexicon neighbours, in a canonical (sorted) form, with a fingerprint.

    Build one with :func:`read_lexicon` or :func:`lexicon_from_mapping`.

    Attributes
    ----------
    mapping : Mapping of str to tuple of str
        Read-only; the words sorted, each word's neighbours sorted and distinct,
        never the word itself. A word may have no neighbour.
    fingerprint : str
        SHA-256 (hex) of the canonical text: one line per word in sorted order,
        ``word neighbour1 neighbour2 ...``, UTF-8. Two lexicons with the same
        words and neighbours have the same fingerprint, whatever the order of
        their lines or neighbours and their repeats.
    source : str
        Where it came from (a file path, or ``mapping``).

    Examples
    --------
    >>> lex = lexicon_from_mapping({"car": ["automobile", "auto"], "auto": ["car"]})
    >>> len(lex), lex["car"], lex.n_edges, "auto" in lex
    (2, ('auto', 'automobile'), 3, True)
    >>> lex.fingerprint == lexicon_from_mapping({"auto": ["car"], "car": ["auto", "automobile"]}).fingerprint
    True
    """

    mapping: Mapping[str, tuple[str, ...]]
    fingerprint: str
    source: str = "mapping"

    def __len__(self) -> int:
        return len(self.mapping)

    def __contains__(self, word: object) -> bool:
        return word in self.mapping

    def __getitem__(self, word: str) -> tuple[str, ...]:
        return self.mapping[word]

    @property
    def n_edges(self) -> int:
        """The number of (word, neighbour) links."""
        return sum(len(v) for v in self.mapping.values())

    def canonical_text(self) -> str:
        """The canonical text the fingerprint is taken of (Faruqui's file format, sorted)."""
        return "".join(" ".join((w, *nbrs)) + "\n" for w, nbrs in self.mapping.items())

    def to_dict(self) -> dict[str, Any]:
        """Counts, fingerprint and source as plain JSON values."""
        return {"words": len(self), "edges": self.n_edges, "fingerprint": self.fingerprint, "source": self.source}

    def __repr__(self) -> str:
        return f"Lexicon({len(self)} words, {self.n_edges} edges, {self.fingerprint[:12]}…, source={self.source!r})"


def _build(entries: dict[str, set[str]], source: str) -> Lexicon:
    """The canonical lexicon of ``entries`` (word -> neighbours), self-links dropped."""
    if not entries:
        raise InputError(f"the lexicon {source} is empty: it has no word")
    mapping = {w: tuple(sorted(entries[w] - {w})) for w in sorted(entries)}
    text = "".join(" ".join((w, *nbrs)) + "\n" for w, nbrs in mapping.items())
    fingerprint = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return Lexicon(MappingProxyType(mapping), fingerprint, source)


def _check_word(word: Any, where: str) -> str:
    if not isinstance(word, str):
        raise InputError(f"{where}: a lexicon word must be a str, not {type(word).__name__}")
    if not word or word != word.strip() or len(word.split()) != 1:
        raise InputError(f"{where}: a lexicon word must be non-empty and hold no whitespace, not {word!r}")
    return word


def lexicon_from_mapping(mapping: Mapping[str, Iterable[str]], *, lowercase: bool = False) -> Lexicon:
    """A :class:`Lexicon` from a mapping of each word to its neighbours.

    Parameters
    ----------
    mapping : Mapping of str to iterable of str
        Such as ``{"car": ["automobile", "auto"]}``: ``car`` is pulled towards
        ``automobile`` and ``auto`` (not the other way round unless they map
        to ``car`` too). Words must be non-empty and hold no whitespace.
    lowercase : bool, optional
        Lower-case every word (entries that then coincide are merged).

    Returns
    -------
    Lexicon
        Sorted; repeated neighbours and links of a word to itself dropped.

    Raises
    ------
    InputError
        An empty mapping, or a word that is not a non-empty string without
        whitespace.

    Examples
    --------
    >>> lex = lexicon_from_mapping({"Car": ["auto", "automobile", "auto", "car"], "auto": []}, lowercase=True)
    >>> dict(lex.mapping)
    {'auto': (), 'car': ('auto', 'automobile')}
    >>> lex.n_edges, len(lex.fingerprint)
    (2, 64)
    """
    if isinstance(mapping, Lexicon):
        mapping = mapping.mapping
    if not isinstance(mapping, Mapping):
        raise InputError(f"a lexicon must be a mapping of words to neighbours, not {type(mapping).__name__}")
    entries: dict[str, set[str]] = {}
    for word, nbrs in mapping.items():
        _check_word(word, "lexicon")
        if isinstance(nbrs, str):
            raise InputError(f"the neighbours of {word!r} must be a list of words, not one string")
        try:
            nbr_list = [_check_word(n, f"neighbours of {word!r}") for n in nbrs]
        except TypeError:
            raise InputError(f"the neighbours of {word!r} must be a list of words, "
                             f"not {type(nbrs).__name__}") from None
        if lowercase:
            word, nbr_list = word.lower(), [n.lower() for n in nbr_list]
        entries.setdefault(word, set()).update(nbr_list)
    return _build(entries, "mapping")


def read_lexicon(path: str | Path, *, lowercase: bool = True, encoding: str = "utf-8") -> Lexicon:
    """Read a lexicon in Faruqui's format: one line per word, ``word neighbour1 neighbour2 ...``.

    Fields are separated by any whitespace (the released lexicons,
    ``ppdb-xl.txt``, ``wordnet-synonyms.txt``, ..., use single spaces). Blank
    lines and lines that start with ``#`` are skipped; a UTF-8 byte-order mark
    is ignored. A word on a line of its own has no neighbours. A word that
    heads several lines gets the union of their neighbours (the paper's code
    keeps the last line), so the result does not depend on the line order.
    Repeated neighbours and a word listed as its own neighbour are dropped.

    Parameters
    ----------
    path : str or Path
        The lexicon file.
    lowercase : bool, optional
        Lower-case every word, as the paper's code does (then ``Apple`` and
        ``apple`` lines merge).
    encoding : str, optional
        Any Python codec; a line that does not decode is an error naming it.

    Returns
    -------
    Lexicon
        ``source`` is the path.

    Raises
    ------
    InputError
        A missing or unreadable file, an undecodable line, or no word at all.

    Examples
    --------
    >>> from repspace.store import example_file
    >>> p = example_file("lex.txt", "# synonyms\\nCar auto automobile\\n\\nauto car\\ncar motorcar\\n")
    >>> lex = read_lexicon(p)
    >>> dict(lex.mapping)
    {'auto': ('car',), 'car': ('auto', 'automobile', 'motorcar')}
    >>> lex.fingerprint == read_lexicon(p, lowercase=True).fingerprint
    True
    """
    path = Path(path)
    entries: dict[str, set[str]] = {}
    for _, line in text_lines(path, "lexicon file", encoding=encoding):
        if lowercase:
            line = line.lower()
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        entries.setdefault(words[0], set()).update(words[1:])
    return _build(entries, str(path))


@dataclass(frozen=True, eq=False, repr=False)
class RetrofitResult:
    """Retrofitted vectors, what the lexicon touched, and the recipe.

    Attributes
    ----------
    keys : tuple of str
        The vocabulary, as given.
    vectors : ndarray of float32, shape (len(keys), d)
        Row ``i`` is the new vector of ``keys[i]`` (read-only); rows outside
        the lexicon are the input's (unit-scaled when ``normalize``).
    counts : dict of str to int
        ``vocabulary`` (rows), ``lexicon_words`` and ``lexicon_edges`` (after
        lower-casing, when matching does), ``in_vocabulary`` (lexicon words
        with a row), ``edges`` (links from a retrofitted row to a neighbour in
        the vocabulary), ``updated`` (rows retrofitted: in the lexicon with at
        least one neighbour in the vocabulary), ``changed`` (rows whose vector
        differs from the input's).
    recipe : dict
        ``method`` (``retrofit``), ``update``, ``iterations``, ``alpha``,
        ``beta`` (``1/degree`` or the constant), ``lowercase``, ``normalize``,
        ``lexicon_fingerprint`` (of the lexicon as matched: lower-cased and
        merged when ``lowercase`` and it held upper-case words),
        ``lexicon_source``, ``numpy_version``, ``scipy_version``.
    seconds : float
        Wall seconds of the whole call.
    last_step : float
        The largest change of any coordinate in the last iteration (how far
        from the fixed point the vectors still are, roughly).

    Examples
    --------
    >>> r = retrofit(["a", "b", "c"], np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]]), {"a": ["b", "c"]},
    ...              iterations=1)
    >>> r.vectors[0].tolist(), r.counts["updated"], r.counts["changed"], r.recipe["method"]
    ([1.0, 1.0], 1, 1, 'retrofit')
    """

    keys: tuple[str, ...]
    vectors: np.ndarray
    counts: dict[str, int]
    recipe: dict[str, Any]
    seconds: float
    last_step: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """Everything but the keys and vectors, as plain JSON values."""
        return {"n": len(self.keys), "dim": int(self.vectors.shape[1]), "counts": dict(self.counts),
                "recipe": dict(self.recipe), "seconds": self.seconds, "last_step": self.last_step}

    def __repr__(self) -> str:
        c = self.counts
        return (f"RetrofitResult({len(self.keys)} words x {self.vectors.shape[1]}, {c['in_vocabulary']} in the "
                f"lexicon, {c['edges']} edges, {c['changed']} changed, {self.recipe['update']}, "
                f"{self.recipe['iterations']} iterations, seconds={self.seconds:.2f})")


def _matching_lexicon(lexicon: Lexicon | Mapping[str, Iterable[str]], lowercase: bool) -> Lexicon:
    """``lexicon`` as a :class:`Lexicon`, lower-cased (entries merged) when matching is."""
    if not isinstance(lexicon, Lexicon):
        return lexicon_from_mapping(lexicon, lowercase=lowercase)
    if lowercase and (text := lexicon.canonical_text()) != text.lower():
        merged = lexicon_from_mapping(lexicon.mapping, lowercase=True)
        return Lexicon(merged.mapping, merged.fingerprint, lexicon.source)
    return lexicon


def retrofit(keys: Sequence[str], vectors: Any, lexicon: Lexicon | Mapping[str, Iterable[str]], *,
             iterations: int = 10, alpha: float = 1.0, beta: float | None = None, lowercase: bool = True,
             normalize: bool = False, update: str = "jacobi") -> RetrofitResult:
    """Retrofit word vectors to a lexicon (Faruqui et al. 2015).

    Each iteration sets, for every row whose word is in the lexicon and has at
    least one lexicon neighbour in the vocabulary,
    ``q_i <- (alpha q̂_i + sum_j beta_ij q_j) / (alpha + sum_j beta_ij)``,
    ``q̂_i`` being its original vector (see the module's notes on the update
    order and on case).

    Parameters
    ----------
    keys : sequence of str
        The vocabulary, one key per row of ``vectors``.
    vectors : (len(keys), d) array
        Finite numbers (any float or int dtype; computed in float64).
    lexicon : Lexicon or Mapping of str to iterable of str
        From :func:`read_lexicon` or :func:`lexicon_from_mapping` (a mapping
        goes through the latter).
    iterations : int, optional
        Number of updates of every word; the paper used 10.
    alpha : float, optional
        Weight of a word's original vector (the paper's ``alpha_i = 1``).
    beta : float, optional
        Weight of each neighbour; ``None`` (the paper's code) is
        ``1 / degree``, the degree counting the neighbours in the vocabulary.
    lowercase : bool, optional
        Match keys and lexicon words through their lower-cased forms.
    normalize : bool, optional
        Scale every vector to unit length first (the paper's code does); the
        output is then unit-scaled outside the lexicon too.
    update : {"jacobi", "gauss-seidel"}, optional
        All words at once from the previous iteration (default), or one after
        the other in sorted order, each seeing the words updated before it.

    Returns
    -------
    RetrofitResult
        New float32 vectors in the order of ``keys``, the counts and the recipe.

    Raises
    ------
    InputError
        Keys that are not strings or not one per row, vectors that are not a
        finite numeric matrix, an empty lexicon, no lexicon word in the
        vocabulary, ``iterations < 1``, a non-positive ``alpha`` or ``beta``,
        or an unknown ``update``.

    Examples
    --------
    >>> import numpy as np
    >>> keys = ["a", "B", "c"]
    >>> vectors = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]])
    >>> r = retrofit(keys, vectors, {"a": ["b", "c"], "b": ["a"]}, iterations=1)
    >>> r.vectors.tolist()  # a: (0 + (b + c) / 2) / 2; B: (B + a) / 2; c is not in the lexicon
    [[1.0, 1.0], [2.0, 0.0], [0.0, 4.0]]
    >>> retrofit(keys, vectors, {"a": ["b", "c"], "b": ["a"]}, iterations=1, update="gauss-seidel").vectors.tolist()
    [[1.0, 1.0], [2.5, 0.5], [0.0, 4.0]]
    >>> retrofit(keys, vectors, {"x": ["y"]})
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: none of the 1 lexicon words is among the 3 keys (lowercase matching)
    """
    t0 = time.perf_counter()
    iterations = positive_int(iterations, "iterations")
    alpha = check_scalar(alpha, "alpha", float, low=0, include="neither")
    beta = check_scalar(beta, "beta", float, low=0, include="neither", none=True)
    check_choice(update, "update", UPDATES)
    if not isinstance(lowercase, bool) or not isinstance(normalize, bool):
        raise InputError("lowercase and normalize must be true or false")
    if isinstance(keys, str):
        raise InputError("keys must be a list of words, not one string")
    keys = tuple(keys)
    for i, k in enumerate(keys):
        if not isinstance(k, str):
            raise InputError(f"key {i} is not a string: {k!r}")
    X = as_matrix(vectors, "vectors")
    if len(keys) != len(X):
        raise InputError(f"retrofit needs one key per row: {len(keys)} keys, vectors of shape {X.shape}")
    lex = _matching_lexicon(lexicon, lowercase)
    rule = "lowercase" if lowercase else "exact"

    forms = [k.lower() for k in keys] if lowercase else list(keys)
    first: dict[str, int] = {}
    for i, f in enumerate(forms):
        first.setdefault(f, i)
    in_vocabulary = sum(1 for w in lex.mapping if w in first)
    if not in_vocabulary:
        raise InputError(f"none of the {len(lex)} lexicon words is among the {len(keys)} keys ({rule} matching)")

    # Rows to update (sorted by form, then row: the Gauss-Seidel order) and their neighbours' first rows.
    moving: list[int] = []
    neighbours: list[list[int]] = []
    candidates = [i for i, f in enumerate(forms) if lex.mapping.get(f)]
    for i in sorted(candidates, key=lambda r: (forms[r], r)):
        nbrs = lex.mapping[forms[i]]
        found = [first[n] for n in nbrs if n in first and n != forms[i]]
        if found:
            moving.append(i)
            neighbours.append(found)

    out = np.array(X, dtype=np.float32, order="C", copy=True)
    if normalize:
        out = unit_rows(out).astype(np.float32)
    before = out.copy() if moving else out
    last_step = 0.0
    n_edges = sum(len(f) for f in neighbours)
    if moving:
        last_step = _iterate(X, out, moving, neighbours, iterations, alpha, beta, normalize, update)
    changed = int(np.count_nonzero((out != before).any(axis=1))) if moving else 0
    out.setflags(write=False)

    import scipy

    counts = {
        "vocabulary": len(keys),
        "lexicon_words": len(lex),
        "lexicon_edges": lex.n_edges,
        "in_vocabulary": in_vocabulary,
        "edges": n_edges,
        "updated": len(moving),
        "changed": changed,
    }
    recipe = {
        "method": "retrofit",
        "update": update,
        "iterations": iterations,
        "alpha": alpha,
        "beta": "1/degree" if beta is None else beta,
        "lowercase": lowercase,
        "normalize": normalize,
        "lexicon_fingerprint": lex.fingerprint,
        "lexicon_source": lex.source,
        "numpy_version": np.__version__,
        "scipy_version": scipy.__version__,
    }
    return RetrofitResult(keys, out, counts, recipe, time.perf_counter() - t0, last_step)


def _iterate(X: np.ndarray, out: np.ndarray, moving: list[int], neighbours: list[list[int]], iterations: int,
             alpha: float, beta: float | None, normalize: bool, update: str) -> float:
    """Run the updates on the rows involved (float64), write the moved rows into ``out``; the last step."""
    from scipy import sparse

    cols = np.fromiter((c for f in neighbours for c in f), dtype=np.int64, count=sum(len(f) for f in neighbours))
    rows = np.asarray(moving, dtype=np.int64)
    involved = np.union1d(rows, cols)  # sorted: the compact index of every row read or written
    Q = np.asarray(X[involved], dtype=np.float64)
    if normalize:
        Q = unit_rows(Q)
    local_rows = np.searchsorted(involved, rows)
    degree = np.fromiter((len(f) for f in neighbours), dtype=np.int64, count=len(neighbours))
    weights = np.repeat(1.0 / degree, degree) if beta is None else np.full(len(cols), beta)
    indptr = np.concatenate([[0], np.cumsum(degree)])
    B = sparse.csr_matrix((weights, np.searchsorted(involved, cols), indptr), shape=(len(rows), len(involved)))
    denominator = alpha + np.asarray(B.sum(axis=1)).ravel()
    anchor = alpha * Q[local_rows]  # alpha q̂, fixed
    step = 0.0
    if update == "jacobi":
        inv = (1.0 / denominator)[:, None]
        for _ in range(iterations):
            new = (anchor + B @ Q) * inv
            step = float(np.abs(new - Q[local_rows]).max())
            Q[local_rows] = new
    else:
        data, indices = B.data, B.indices
        for _ in range(iterations):
            step = 0.0
            for k, r in enumerate(local_rows):
                a, b = indptr[k], indptr[k + 1]
                new = (anchor[k] + data[a:b] @ Q[indices[a:b]]) / denominator[k]
                step = max(step, float(np.abs(new - Q[r]).max()))
                Q[r] = new
    out[rows] = Q[local_rows].astype(np.float32)
    return step
