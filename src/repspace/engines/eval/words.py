"""Word-level tasks: word similarity (Spearman against human judgements) and word analogies.

Both tasks take either a :class:`WordVectors` table (a vocabulary with one
vector per word, such as GloVe) or an encoder (anything
:func:`~repspace.engines.eval._encode.as_encode` accepts), which then embeds the
task's words themselves.

The semantics follow gensim's ``KeyedVectors.evaluate_word_pairs`` and
``evaluate_word_analogies`` with ``case_insensitive=True``: a word is found
through its lower-cased form, and when several vocabulary entries share it the
first one wins; pairs or questions with a word outside the (restricted)
vocabulary are skipped and counted.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from repspace.core.arrays import unit_rows
from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.engines.eval._encode import as_encode
from repspace.engines.eval._pairs import finite_score, read_pair_rows
from repspace.engines.eval._results import TaskResult
from repspace.engines.eval.uncertainty import (
    DEFAULT_RESAMPLES,
    bootstrap_interval,
    mean_statistic,
    spearman_statistic,
)
from repspace.engines.eval.units import Units

#: 3CosMul's ε (Levy & Goldberg 2014); gensim's ``most_similar_cosmul`` uses 1e-6.
COSMUL_EPS = 0.001

#: Elements of one score block of the analogy search (questions × vocabulary
#: chunk, and question words × vocabulary chunk): float32, 2 MiB each, about six
#: alive at once. Small blocks stay in the CPU cache, which is faster than large ones
#: (BENCHMARKS.md, "Figures behind the defaults").
_BLOCK_ELEMENTS = 1 << 19


@dataclass(frozen=True, eq=False)
class WordVectors:
    """A vocabulary: one vector per word, in vocabulary order (most frequent first, usually).

    Parameters
    ----------
    words : list of str
        The vocabulary. Repeats are allowed: a lookup finds the first one.
    vectors : (len(words), d) array
        One finite vector per word (kept as given; not copied when already an array).
    lowercase : bool, optional
        Default for :meth:`lookup` and ``in``: match words through their
        lower-cased form (the first entry with that form wins).

    Examples
    --------
    >>> wv = WordVectors(["The", "cat", "the"], np.eye(3))
    >>> "the" in wv, "THE" in wv, "dog" in wv
    (True, False, False)
    >>> wv.lookup(["the", "The", "dog"]).tolist()
    [2, 0, -1]
    >>> wv.lookup(["the", "THE", "Cat"], lowercase=True).tolist()
    [0, 0, 1]
    >>> wv
    WordVectors(3 words, dim 3)
    """

    words: list[str]
    vectors: np.ndarray
    lowercase: bool = False
    _index: dict[str, int] = field(init=False, repr=False)
    _lower_index: dict[str, int] | None = field(init=False, repr=False, default=None)

    def __post_init__(self) -> None:
        words = list(self.words)
        vectors = np.asarray(self.vectors)
        if vectors.ndim != 2 or len(vectors) != len(words):
            raise InputError(f"WordVectors needs one vector per word: {len(words)} words, vectors of shape "
                             f"{vectors.shape}")
        if not np.issubdtype(vectors.dtype, np.number):
            raise InputError(f"word vectors must be numbers, got dtype {vectors.dtype}")
        for i, w in enumerate(words):
            if not isinstance(w, str):
                raise InputError(f"word {i} is not a string: {w!r}")
        if not np.isfinite(vectors).all():
            raise InputError("word vectors hold NaN or infinite values")
        index: dict[str, int] = {}
        for i, w in enumerate(words):
            index.setdefault(w, i)
        object.__setattr__(self, "words", words)
        object.__setattr__(self, "vectors", vectors)
        object.__setattr__(self, "_index", index)

    def __len__(self) -> int:
        return len(self.words)

    def __repr__(self) -> str:
        return f"WordVectors({len(self.words)} words, dim {self.dim}{', lowercase' if self.lowercase else ''})"

    @property
    def dim(self) -> int:
        """The vectors' dimension."""
        return int(self.vectors.shape[1])

    def __contains__(self, word: object) -> bool:
        if not isinstance(word, str):
            return False
        return (word.lower() in self._lower()) if self.lowercase else (word in self._index)

    def _lower(self) -> dict[str, int]:
        if self._lower_index is None:
            lower: dict[str, int] = {}
            for i, w in enumerate(self.words):
                lower.setdefault(w.lower(), i)
            object.__setattr__(self, "_lower_index", lower)
        return self._lower_index  # type: ignore[return-value]

    def lookup(self, words: list[str] | tuple[str, ...], *, lowercase: bool | None = None,
               restrict_vocab: int | None = None) -> np.ndarray:
        """Row of each word, ``-1`` where it is missing.

        Parameters
        ----------
        words : sequence of str
        lowercase : bool, optional
            Match through lower-cased forms; default :attr:`lowercase`.
        restrict_vocab : int, optional
            Only the first ``restrict_vocab`` rows count as the vocabulary
            (gensim's ``restrict_vocab``); ``None``: all rows.

        Returns
        -------
        (len(words),) int64 array
            The first row holding the word (or its lower-cased form).

        Examples
        --------
        >>> wv = WordVectors(["a", "b", "c"], np.eye(3))
        >>> wv.lookup(["c", "a", "z"]).tolist(), wv.lookup(["c", "a"], restrict_vocab=2).tolist()
        ([2, 0, -1], [-1, 0])
        """
        lowercase = self.lowercase if lowercase is None else lowercase
        limit = len(self.words) if restrict_vocab is None else int(restrict_vocab)
        if lowercase:
            table = self._lower()
            rows = [table.get(w.lower(), -1) for w in words]
        else:
            rows = [self._index.get(w, -1) for w in words]
        out = np.asarray(rows, dtype=np.int64).reshape(len(rows))
        out[out >= limit] = -1
        return out

    def canonical_rows(self, *, lowercase: bool | None = None, restrict_vocab: int | None = None) -> np.ndarray:
        """For each row (of the first ``restrict_vocab``), the row a lookup of its word finds.

        Rows whose word (or lower-cased form) appeared earlier point to that
        earlier row; every other row points to itself.

        Examples
        --------
        >>> WordVectors(["Paris", "x", "paris"], np.eye(3)).canonical_rows(lowercase=True).tolist()
        [0, 1, 0]
        """
        lowercase = self.lowercase if lowercase is None else lowercase
        n = len(self.words) if restrict_vocab is None else min(int(restrict_vocab), len(self.words))
        words = self.words[:n]
        return self.lookup(words, lowercase=lowercase)


def _apply_codec(codec: Any, vectors: np.ndarray, info: dict[str, Any]) -> np.ndarray:
    if codec is None:
        return vectors
    vectors = np.asarray(vectors, dtype=np.float32)
    out = np.asarray(codec.fit(vectors).transform(vectors), dtype=np.float32)
    if out.shape[0] != vectors.shape[0] or out.ndim != 2:
        raise InputError(f"codec {getattr(codec, 'name', codec)!r} returned shape {out.shape} for "
                         f"{vectors.shape[0]} vectors")
    info.update(codec=codec.to_dict(), bytes_per_vector=int(codec.bytes_per_vector))
    return out


def _read_lines(path: Path, what: str) -> list[str]:
    try:
        return path.read_text(encoding="utf-8-sig").splitlines()
    except FileNotFoundError:
        raise InputError(f"{what} file {path} does not exist") from None
    except IsADirectoryError:
        raise InputError(f"{what} file {path} is a directory") from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read {what} file {path}: {e}") from None


# --------------------------------------------------------------------------- word similarity


@dataclass(frozen=True, eq=False)
class WordPairs:
    """Word pairs with a gold similarity.

    Attributes
    ----------
    word1, word2 : list of str
    scores : (n,) float64 array
        Gold similarities (only their order matters to Spearman).
    name : str
        The data set's name (the file's stem, e.g. ``EN-WS-353-ALL``).

    Examples
    --------
    >>> wv = WordVectors(["cat", "dog", "car"], np.array([[1.0, 0.1], [0.9, 0.3], [0.1, 1.0]]))
    >>> pairs = WordPairs(["cat", "cat"], ["dog", "car"], np.array([9.0, 1.0]), "toy")
    >>> len(pairs), round(wordsim(wv, pairs).main_score, 3)
    (2, 1.0)
    """

    word1: list[str]
    word2: list[str]
    scores: np.ndarray
    name: str = "wordsim"

    def __len__(self) -> int:
        return len(self.scores)


def load_word_pairs(path: str | Path) -> WordPairs:
    """Read ``word1 word2 score`` lines (tabs or spaces; CRLF or LF; ``#`` comments and blank lines skipped).

    A first line whose third field is not a number is taken for a header and skipped.

    Parameters
    ----------
    path : str or Path
        A UTF-8 text file such as ``EN-SIMLEX-999.txt``.

    Returns
    -------
    WordPairs
        Named after the file's stem.

    Raises
    ------
    InputError
        If the file is missing or holds no pairs, or a line does not have
        exactly three fields with a finite numeric third one (its line number
        is given).

    Examples
    --------
    >>> from repspace.store import example_file
    >>> p = example_file("toy.txt", "tiger\\tcat\\t7.35\\r\\n# note\\r\\nking  queen 8.5\\r\\n")
    >>> pairs = load_word_pairs(p)
    >>> pairs.name, len(pairs), pairs.word2, pairs.scores.tolist()
    ('toy', 2, ['cat', 'queen'], [7.35, 8.5])
    """
    path = Path(path)
    rows = [(line_no, line.split()) for line_no, line in enumerate(_read_lines(path, "word-pair"), start=1)
            if line.strip() and not line.strip().startswith("#")]
    if rows and len(rows[0][1]) == 3:
        try:
            float(rows[0][1][2])
        except ValueError:
            rows = rows[1:]  # a header line such as "word1 word2 score"
    w1, w2, gold = read_pair_rows(rows, path, "word-pair file", "word1 word2 score", finite_score)
    return WordPairs(w1, w2, np.asarray(gold, dtype=np.float64), path.stem)


def _correlations(gold: np.ndarray, model: np.ndarray) -> dict[str, float]:
    if len(gold) < 2:
        raise InputError(f"word similarity needs at least 2 scored pairs, got {len(gold)}")
    if np.ptp(gold) == 0:
        raise InputError("all gold scores of the scored pairs are equal: the correlation is undefined")
    if np.ptp(model) == 0:
        raise InputError("every scored pair has the same cosine (constant or zero vectors?): "
                         "the correlation is undefined")
    return {
        "spearman": float(stats.spearmanr(gold, model).statistic),
        "pearson": float(stats.pearsonr(gold, model).statistic),
    }


def wordsim(vectors: WordVectors | Any, pairs: WordPairs | str | Path, *, codec: Any = None,
            lowercase: bool = True, restrict_vocab: int | None = None, name: str | None = None,
            bootstrap: int = DEFAULT_RESAMPLES, seed: int = 0) -> TaskResult:
    """Spearman correlation of the cosine of word pairs with human similarity judgements.

    Parameters
    ----------
    vectors : WordVectors or encoder
        A vocabulary table, or anything :func:`~repspace.engines.eval._encode.as_encode`
        accepts (every distinct word of the task then goes to it in one call,
        so no pair is out of vocabulary).
    pairs : WordPairs or path
        From :func:`load_word_pairs` (a path is loaded with it).
    codec : Codec, optional
        A compression fitted on the vectors of the task's distinct (found)
        words, applied before the cosines.
    lowercase : bool, optional
        Match words through their lower-cased forms, the first vocabulary
        entry of a form winning (gensim's ``case_insensitive=True``); with an
        encoder, the words are lower-cased before encoding.
    restrict_vocab : int, optional
        Only the first ``restrict_vocab`` words of a :class:`WordVectors`
        count as its vocabulary (gensim's ``restrict_vocab``, whose default
        there is 300000); ``None``: all of them.
    name : str, optional
        Task name; default ``wordsim:<data set name>``.
    bootstrap : int
        Resamples of the scored pairs behind the main score's interval
        (:func:`~repspace.engines.eval.uncertainty.bootstrap_interval`, percentile,
        95%); 0: no interval.
    seed : int
        The bootstrap's seed.

    Returns
    -------
    TaskResult
        Main metric ``spearman`` (``scipy.stats.spearmanr`` of cosine against
        gold), ``pearson`` beside it; info ``n_pairs`` (pairs scored),
        ``oov_pairs`` (pairs dropped because a word is missing); the Spearman
        correlation's bootstrap interval over the scored pairs as
        :attr:`TaskResult.interval`; their gold scores and cosines as
        :attr:`TaskResult.units`, each pair named by its row in ``pairs``.

    Raises
    ------
    InputError
        When fewer than 2 pairs can be scored, or the gold scores or the
        cosines of the scored pairs are all equal (the correlation is then
        undefined; no ``NaN`` is returned).

    Examples
    --------
    >>> wv = WordVectors(["cat", "dog", "car", "truck"],
    ...                  np.array([[1.0, 0.1], [0.9, 0.3], [0.1, 1.0], [0.4, 0.9]]))
    >>> pairs = WordPairs(["cat", "Car", "cat", "dog"], ["dog", "truck", "car", "emu"],
    ...                   np.array([9.0, 8.0, 1.0, 5.0]), "toy")
    >>> r = wordsim(wv, pairs)
    >>> r.task_name, r.main_score, r.info["oov_pairs"], r.info["n_pairs"]
    ('wordsim:toy', 1.0, 1, 3)
    """
    t0 = time.perf_counter()
    if not isinstance(pairs, WordPairs):
        pairs = load_word_pairs(pairs)
    check_scalar(restrict_vocab, "restrict_vocab", int, low=1, none=True)
    check_scalar(bootstrap, "bootstrap", int, low=0)
    info: dict[str, Any] = {"dataset": pairs.name}
    if isinstance(vectors, WordVectors):
        r1 = vectors.lookup(pairs.word1, lowercase=lowercase, restrict_vocab=restrict_vocab)
        r2 = vectors.lookup(pairs.word2, lowercase=lowercase, restrict_vocab=restrict_vocab)
        found = (r1 >= 0) & (r2 >= 0)
        rows, inverse = np.unique(np.concatenate([r1[found], r2[found]]), return_inverse=True)
        matrix = np.asarray(vectors.vectors[rows])
        i1, i2 = inverse[: found.sum()], inverse[found.sum():]
        gold, kept = pairs.scores[found], np.flatnonzero(found)
        info["oov_pairs"] = int((~found).sum())
        if restrict_vocab is not None:
            info["restrict_vocab"] = restrict_vocab
    else:
        if restrict_vocab is not None:
            raise InputError("restrict_vocab applies to a WordVectors vocabulary, not to an encoder")
        enc = as_encode(vectors)
        norm = (lambda w: w.lower()) if lowercase else (lambda w: w)
        distinct = list(dict.fromkeys(norm(w) for w in pairs.word1 + pairs.word2))
        position = {w: i for i, w in enumerate(distinct)}
        matrix = enc(distinct)
        i1 = np.asarray([position[norm(w)] for w in pairs.word1], dtype=np.int64)
        i2 = np.asarray([position[norm(w)] for w in pairs.word2], dtype=np.int64)
        gold, kept = pairs.scores, np.arange(len(pairs.scores))
        info["oov_pairs"] = 0
    if len(matrix):
        matrix = _apply_codec(codec, matrix, info)
    unit = unit_rows(matrix)
    cos = np.einsum("ij,ij->i", unit[i1], unit[i2]) if len(i1) else np.zeros(0)
    info["n_pairs"] = int(len(gold))
    scores = _correlations(gold, cos)
    interval = bootstrap_interval(spearman_statistic, gold, cos, n_resamples=bootstrap, seed=seed)
    # the units: each scored pair, named by its row in the file (two vocabularies may score different pairs)
    units = Units("spearman", (gold, cos), ("gold", "cosine"), shared=("gold",), ids=kept.tolist())
    return TaskResult(name or f"wordsim:{pairs.name}", "test", "spearman", scores,
                      time.perf_counter() - t0, info, interval=interval, units=units)


# --------------------------------------------------------------------------- analogies


@dataclass(frozen=True, eq=False)
class Analogies:
    """Analogy questions ``a b c d`` (a is to b as c is to d), lower-cased, with their sections.

    Attributes
    ----------
    questions : list of (str, str, str, str)
    sections : list of str
        The section of each question (its ``: name`` header; ``default``
        before any header).
    name : str
        The data set's name (the file's stem).

    Examples
    --------
    >>> q = Analogies([("man", "woman", "king", "queen"), ("athens", "greece", "paris", "france")],
    ...               ["family", "capitals"], "toy")
    >>> len(q), q.section_names()
    (2, ['family', 'capitals'])
    """

    questions: list[tuple[str, str, str, str]]
    sections: list[str]
    name: str = "analogy"

    def __len__(self) -> int:
        return len(self.questions)

    def section_names(self) -> list[str]:
        """The sections in file order."""
        return list(dict.fromkeys(self.sections))


def load_analogies(path: str | Path) -> Analogies:
    """Read a ``questions-words.txt``-style file: ``: section`` headers, then ``a b c d`` lines.

    Parameters
    ----------
    path : str or Path
        A UTF-8 text file (CRLF or LF; blank lines skipped).

    Returns
    -------
    Analogies
        Words lower-cased; sections kept.

    Raises
    ------
    InputError
        If the file is missing or holds no questions, or a question line does
        not have exactly four words (its line number is given).

    Examples
    --------
    >>> from repspace.store import example_file
    >>> p = example_file("toy-analogies.txt",
    ...                  ": capitals\\nAthens Greece Paris France\\n: family\\nboy girl king queen\\n")
    >>> q = load_analogies(p)
    >>> q.questions[0], q.section_names(), q.name
    (('athens', 'greece', 'paris', 'france'), ['capitals', 'family'], 'toy-analogies')
    """
    path = Path(path)
    questions: list[tuple[str, str, str, str]] = []
    sections: list[str] = []
    section = "default"
    for line_no, line in enumerate(_read_lines(path, "analogy"), start=1):
        text = line.strip()
        if not text:
            continue
        if text.startswith(":"):
            section = text[1:].strip() or "default"
            continue
        fields = text.lower().split()
        if len(fields) != 4:
            raise InputError(f"{path}:{line_no}: expected 4 words (a b c d), got {len(fields)}")
        questions.append((fields[0], fields[1], fields[2], fields[3]))
        sections.append(section)
    if not questions:
        raise InputError(f"analogy file {path} holds no questions")
    return Analogies(questions, sections, path.stem)


def _solve_analogies(unit: np.ndarray, canon: np.ndarray, q: np.ndarray, variants: dict[int, np.ndarray],
                     block: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Predicted canonical rows by 3CosAdd and 3CosMul for questions ``q`` ((m, 4) canonical rows).

    ``unit`` is the (V, d) float32 normalised vocabulary; ``canon`` maps each
    row to its canonical row; ``variants`` lists the other rows of canonical
    rows that have several (they are excluded along with a, b and c).

    The cosines of the questions' distinct words with one chunk of the
    vocabulary are computed by one matmul; each question's three rows are then
    gathered from it (analogy sets reuse few words, so this is much cheaper
    than a matmul per question), and the best candidate so far is kept per
    question as the chunks go by. Ties go to the lower row, as ``argmax``.
    """
    block = _BLOCK_ELEMENTS if block is None else block
    n_vocab = unit.shape[0]
    m_total = len(q)
    distinct, inverse = np.unique(q[:, :3], return_inverse=True)
    inverse = inverse.reshape(-1, 3)
    ia, ib, ic = (np.ascontiguousarray(inverse[:, j]) for j in range(3))
    probes = unit[distinct]
    # Every (question, row) pair that must not be predicted, sorted by row.
    ex_q = [np.repeat(np.arange(m_total), 3)]
    ex_r = [q[:, :3].ravel()]
    if variants:
        for j in range(3):
            for i in np.flatnonzero(np.isin(q[:, j], list(variants))).tolist():
                extra = variants[int(q[i, j])]
                ex_q.append(np.full(len(extra), i))
                ex_r.append(extra)
    ex_qa = np.concatenate(ex_q)
    ex_ra = np.concatenate(ex_r)
    order = np.argsort(ex_ra, kind="stable")
    ex_qa, ex_ra = ex_qa[order], ex_ra[order]

    chunk = int(max(1, min(n_vocab, block // max(len(distinct), 1))))
    batch = int(max(1, min(m_total, block // chunk)))
    best = {"add": np.full(m_total, -np.inf, dtype=np.float32), "mul": np.full(m_total, -np.inf, dtype=np.float32)}
    arg = {"add": np.zeros(m_total, dtype=np.int64), "mul": np.zeros(m_total, dtype=np.int64)}
    buf = {k: np.empty((batch, chunk), dtype=np.float32) for k in ("add", "mul", "tmp")}
    for start in range(0, n_vocab, chunk):
        stop = min(n_vocab, start + chunk)
        width = stop - start
        cos = probes @ unit[start:stop].T  # (distinct words, width)
        shifted = cos + 1.0
        shifted *= 0.5  # cos' = (cos + 1) / 2
        inv_a = shifted + COSMUL_EPS
        np.reciprocal(inv_a, out=inv_a)
        lo, hi = np.searchsorted(ex_ra, [start, stop])
        chunk_q, chunk_r = ex_qa[lo:hi], ex_ra[lo:hi] - start
        for q0 in range(0, m_total, batch):
            q1 = min(m_total, q0 + batch)
            n = q1 - q0
            add, mul, tmp = (buf[k][:n, :width] for k in ("add", "mul", "tmp"))
            np.take(cos, ib[q0:q1], axis=0, out=add, mode="clip")
            np.take(cos, ic[q0:q1], axis=0, out=tmp, mode="clip")
            add += tmp
            np.take(cos, ia[q0:q1], axis=0, out=tmp, mode="clip")
            add -= tmp  # cos(x, b) - cos(x, a) + cos(x, c)
            np.take(shifted, ib[q0:q1], axis=0, out=mul, mode="clip")
            np.take(shifted, ic[q0:q1], axis=0, out=tmp, mode="clip")
            mul *= tmp
            np.take(inv_a, ia[q0:q1], axis=0, out=tmp, mode="clip")
            mul *= tmp  # cos'(x, b) cos'(x, c) / (cos'(x, a) + eps)
            here = (chunk_q >= q0) & (chunk_q < q1)
            if here.any():
                add[chunk_q[here] - q0, chunk_r[here]] = -np.inf
                mul[chunk_q[here] - q0, chunk_r[here]] = -np.inf
            rows = np.arange(n)
            for key, scores in (("add", add), ("mul", mul)):
                j = np.argmax(scores, axis=1)
                value = scores[rows, j]
                better = value > best[key][q0:q1]
                best[key][q0:q1][better] = value[better]
                arg[key][q0:q1][better] = j[better] + start
    return canon[arg["add"]], canon[arg["mul"]]


def analogy(vectors: WordVectors | Any, questions: Analogies | str | Path, *, restrict_vocab: int | None = None,
            codec: Any = None, lowercase: bool = True, name: str | None = None,
            bootstrap: int = DEFAULT_RESAMPLES, seed: int = 0) -> TaskResult:
    """Accuracy on analogy questions by 3CosAdd and 3CosMul, searching the whole vocabulary.

    For a question ``a b c d`` (a is to b as c is to d), 3CosAdd predicts
    ``argmax_x cos(x, b) - cos(x, a) + cos(x, c)`` (the word nearest to
    ``b - a + c`` on normalised vectors, as gensim's
    ``evaluate_word_analogies``); 3CosMul (Levy & Goldberg 2014) predicts
    ``argmax_x cos'(x, b) cos'(x, c) / (cos'(x, a) + 0.001)`` with
    ``cos' = (cos + 1) / 2``. The words a, b and c are never predicted. A
    question is right when the prediction is d.

    Parameters
    ----------
    vectors : WordVectors or encoder
        A vocabulary table; or anything :func:`~repspace.engines.eval._encode.as_encode`
        accepts, in which case the vocabulary is only the distinct words of the
        questions (embedded in one call), which makes the task far easier than
        over a real vocabulary: compare such results only with each other.
    questions : Analogies or path
        From :func:`load_analogies` (a path is loaded with it).
    restrict_vocab : int, optional
        Search, and accept question words from, only the first
        ``restrict_vocab`` words of a :class:`WordVectors` (gensim's
        ``restrict_vocab``); ``None``: all of them.
    codec : Codec, optional
        A compression fitted on the whole searched vocabulary, applied before
        normalising.
    lowercase : bool, optional
        Match words through their lower-cased forms (gensim's
        ``case_insensitive=True``): entries sharing a form count as one word.
    name : str, optional
        Task name; default ``analogy:<data set name>``.
    bootstrap : int
        Resamples of the answered questions behind the main score's interval
        (the mean of each question's 3CosAdd right/wrong as 1/0,
        :func:`~repspace.engines.eval.uncertainty.bootstrap_interval`, percentile,
        95%); 0: no interval (nor with a single answered question).
    seed : int
        The bootstrap's seed.

    Returns
    -------
    TaskResult
        Main metric ``accuracy_3cosadd``, ``accuracy_3cosmul`` beside it, both
        over the answered questions (those with all four words in the
        vocabulary, like gensim). Info: ``n_questions`` (answered),
        ``oov_questions`` (skipped), ``vocab_size`` and ``sections``
        (per section: ``n``, ``oov``, and the two accuracies, ``None`` for a
        section with no answered question); the 3CosAdd accuracy's bootstrap
        interval over the answered questions as :attr:`TaskResult.interval`;
        their 3CosAdd right (1) or wrong (0) as :attr:`TaskResult.units`, each
        named by its position in ``questions``.

    Raises
    ------
    InputError
        When no question has all its words in the vocabulary, or ``bootstrap`` is negative.

    Examples
    --------
    >>> wv = WordVectors(["man", "woman", "king", "queen", "apple"],
    ...                  np.array([[1.0, 0.0], [1.0, 1.0], [3.0, 0.1], [3.0, 1.2], [-1.0, 0.2]]))
    >>> q = Analogies([("man", "woman", "king", "queen"), ("man", "woman", "king", "emu")], ["family"] * 2)
    >>> r = analogy(wv, q)
    >>> r.main_score, r.scores["accuracy_3cosmul"], r.info["oov_questions"]
    (1.0, 1.0, 1)
    >>> r.interval is None  # one answered question: nothing to resample
    True
    """
    t0 = time.perf_counter()
    if not isinstance(questions, Analogies):
        questions = load_analogies(questions)
    check_scalar(restrict_vocab, "restrict_vocab", int, low=1, none=True)
    check_scalar(bootstrap, "bootstrap", int, low=0)
    info: dict[str, Any] = {"dataset": questions.name}
    if not isinstance(vectors, WordVectors):
        if restrict_vocab is not None:
            raise InputError("restrict_vocab applies to a WordVectors vocabulary, not to an encoder")
        enc = as_encode(vectors)
        norm = (lambda w: w.lower()) if lowercase else (lambda w: w)
        distinct = list(dict.fromkeys(norm(w) for question in questions.questions for w in question))
        vectors = WordVectors(distinct, enc(distinct))
        info["vocabulary"] = "question words"
    elif restrict_vocab is not None:
        info["restrict_vocab"] = restrict_vocab
    n_vocab = len(vectors) if restrict_vocab is None else min(restrict_vocab, len(vectors))
    flat = [w for question in questions.questions for w in question]
    rows = vectors.lookup(flat, lowercase=lowercase, restrict_vocab=n_vocab).reshape(-1, 4)
    answered = (rows >= 0).all(axis=1)
    if not answered.any():
        raise InputError(f"none of the {len(questions)} analogy questions has all four words in the vocabulary")
    matrix = np.asarray(vectors.vectors[:n_vocab], dtype=np.float32)
    matrix = _apply_codec(codec, matrix, info)
    unit = unit_rows(matrix).astype(np.float32)
    canon = vectors.canonical_rows(lowercase=lowercase, restrict_vocab=n_vocab)
    extra_rows: dict[int, list[int]] = {}
    for r in np.flatnonzero(canon != np.arange(n_vocab)).tolist():
        extra_rows.setdefault(int(canon[r]), []).append(r)
    variants = {k: np.asarray(v, dtype=np.int64) for k, v in extra_rows.items()}
    q = rows[answered]
    pred_add, pred_mul = _solve_analogies(unit, canon, q, variants)
    right_add = np.zeros(len(rows), dtype=bool)
    right_mul = np.zeros(len(rows), dtype=bool)
    right_add[answered] = pred_add == q[:, 3]
    right_mul[answered] = pred_mul == q[:, 3]
    section_of = np.asarray(questions.sections, dtype=object)
    sections: dict[str, dict[str, Any]] = {}
    for sec in questions.section_names():
        in_sec = section_of == sec
        done = in_sec & answered
        n_done = int(done.sum())
        sections[sec] = {
            "n": n_done,
            "oov": int((in_sec & ~answered).sum()),
            "accuracy_3cosadd": float(right_add[done].mean()) if n_done else None,
            "accuracy_3cosmul": float(right_mul[done].mean()) if n_done else None,
        }
    info.update(n_questions=int(answered.sum()), oov_questions=int((~answered).sum()), vocab_size=int(n_vocab),
                sections=sections)
    scores = {
        "accuracy_3cosadd": float(right_add[answered].mean()),
        "accuracy_3cosmul": float(right_mul[answered].mean()),
    }
    correct = right_add[answered].astype(np.float64)  # the units: each answered question, right (1) or wrong (0)
    interval = None
    if len(correct) > 1:
        interval = bootstrap_interval(mean_statistic, correct, n_resamples=bootstrap, seed=seed)
    units = Units("mean", (correct,), ("correct",), ids=np.flatnonzero(answered).tolist())
    return TaskResult(name or f"analogy:{questions.name}", "test", "accuracy_3cosadd", scores,
                      time.perf_counter() - t0, info, interval=interval, units=units)
