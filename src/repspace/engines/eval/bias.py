"""Bias: the Word Embedding Association Test (WEAT; Caliskan, Bryson & Narayanan 2017).

Two sets of *target* words X and Y (flowers, insects) and two sets of
*attribute* words A and B (pleasant, unpleasant). Each word w is associated
with the attributes by ``s(w, A, B) = mean_a cos(w, a) - mean_b cos(w, b)``;
the test statistic is ``S(X, Y, A, B) = sum_x s(x) - sum_y s(y)`` and the
effect size (the main score) ``(mean_x s(x) - mean_y s(y)) / std_{w in X u Y} s(w)``,
the standard deviation over the union without Bessel's correction (``ddof=0``,
as the WEFE package computes it). A positive effect size says X is closer to
A (and Y to B) than the other way round; Caliskan et al. call 0.2, 0.5 and 0.8
small, medium and large.

The p-value is that of Caliskan et al.'s one-sided permutation test: the
share of the re-partitions ``(X_i, Y_i)`` of ``X u Y`` into sets of the sizes
of X and Y whose statistic is strictly greater than the observed one. Every
partition is enumerated when there are at most ``permutations`` of them (the
exact p-value, from 0); otherwise ``permutations`` partitions are drawn at
random, seeded, and the p-value is ``(1 + hits) / (1 + permutations)`` (never
0, as a Monte Carlo p-value must not be). Statistics within rounding of the
observed one count as ties, not as greater: the p-value does not depend on
the order of the floating-point sums.
"""

from __future__ import annotations

import itertools
import math
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from repspace.core.arrays import unit_rows
from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.engines.eval._encode import as_encode
from repspace.engines.eval._results import TaskResult
from repspace.engines.eval.uncertainty import DEFAULT_RESAMPLES, Interval, _percentiles
from repspace.engines.eval.words import WordVectors

__all__ = ["DEFAULT_PERMUTATIONS", "load_word_set", "weat", "weat_association", "weat_p_value"]

#: Partitions behind the permutation test when not given: exact up to 9 + 9 target words (48,620 partitions).
DEFAULT_PERMUTATIONS = 100_000

#: Partitions scored at once x target words at most (bounds the memory of the enumeration and of the draws).
_BATCH_ELEMENTS = 1 << 21

#: The four sets' roles, in order.
_ROLES = ("x", "y", "a", "b")


def load_word_set(path: str | Path) -> list[str]:
    """Read a word set: one word or phrase per line; blank lines and ``#`` comments skipped, repeats dropped.

    Parameters
    ----------
    path : str or Path
        A UTF-8 text file.

    Returns
    -------
    list of str
        The words, stripped, in file order.

    Raises
    ------
    InputError
        When the file is missing, unreadable or holds no word.

    Examples
    --------
    >>> from repspace.store import example_file
    >>> load_word_set(example_file("flowers.txt", "# Caliskan et al.\\naster\\n\\nclover\\r\\naster\\nred rose\\n"))
    ['aster', 'clover', 'red rose']
    """
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except FileNotFoundError:
        raise InputError(f"word-set file {path} does not exist") from None
    except IsADirectoryError:
        raise InputError(f"word-set file {path} is a directory") from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read word-set file {path}: {e}") from None
    words = list(dict.fromkeys(w for w in (line.strip() for line in lines) if w and not w.startswith("#")))
    if not words:
        raise InputError(f"word-set file {path} holds no word")
    return words


def weat_association(W: np.ndarray, A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``s(w, A, B) = mean_a cos(w, a) - mean_b cos(w, b)`` for each row ``w`` of ``W``.

    Parameters
    ----------
    W, A, B : (n, d), (n_a, d), (n_b, d) arrays
        Words, and the two attribute sets (zero rows have cosine 0).

    Returns
    -------
    (n,) float64 array

    Examples
    --------
    >>> A, B = np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]])
    >>> weat_association(np.array([[2.0, 0.0], [1.0, 1.0], [0.0, 3.0]]), A, B).round(4).tolist()
    [1.0, 0.0, -1.0]
    """
    w, a, b = (unit_rows(np.asarray(m)) for m in (W, A, B))
    if not (w.shape[1] == a.shape[1] == b.shape[1]) or not len(a) or not len(b):
        raise InputError(f"WEAT needs words and two non-empty attribute sets of one dimension; got {W.shape}, "
                         f"{A.shape}, {B.shape}")
    return (w @ a.T).mean(axis=1) - (w @ b.T).mean(axis=1)


def _ties(s: np.ndarray) -> float:
    """How far two sums of the same values in different orders can differ: statistics closer than this tie."""
    return float(16 * len(s) * np.finfo(np.float64).eps * max(np.abs(s).sum(), 1e-300))


def weat_p_value(s_x: np.ndarray, s_y: np.ndarray, *, permutations: int = DEFAULT_PERMUTATIONS,
                 seed: int = 0) -> tuple[float, str, int]:
    """One-sided permutation test of WEAT: the share of re-partitions of X u Y with a greater statistic.

    Parameters
    ----------
    s_x, s_y : 1-d arrays
        The associations :func:`weat_association` of the target words X and Y.
    permutations : int
        Enumerate every partition (sets of the sizes of X and Y) when there are
        at most this many; otherwise draw this many at random.
    seed : int
        Seed of ``numpy.random.default_rng`` for the random partitions.

    Returns
    -------
    p_value : float
        Exact: ``#{i: S_i > S} / #partitions``; drawn: ``(1 + #{i: S_i > S}) / (1 + permutations)``.
    method : str
        ``exact`` or ``monte-carlo``.
    n : int
        Partitions scored.

    Examples
    --------
    >>> p, method, n = weat_p_value(np.array([0.3, 0.2, 0.25]), np.array([-0.1, 0.0, 0.05]))
    >>> round(p, 4), method, n  # only the observed split has the greatest statistic
    (0.0, 'exact', 20)
    >>> p, method, n = weat_p_value(np.arange(10.0), np.arange(10.0, 20.0), permutations=1000)
    >>> round(p, 3), method, n
    (1.0, 'monte-carlo', 1000)
    """
    check_scalar(permutations, "permutations", int, low=1)
    check_scalar(seed, "seed", int, low=0, high=2**32, include="left")
    s_x = np.asarray(s_x, dtype=np.float64).ravel()
    s_y = np.asarray(s_y, dtype=np.float64).ravel()
    if not len(s_x) or not len(s_y):
        raise InputError("the permutation test needs at least one word in each target set")
    s = np.concatenate([s_x, s_y])
    n, k = len(s), len(s_x)
    total = s.sum()
    observed = 2 * s_x.sum() - total  # sum_X s - sum_Y s, the sums written as every partition's
    slack = _ties(s)
    n_partitions = math.comb(n, k)
    step = max(1, _BATCH_ELEMENTS // n)
    greater = 0
    if n_partitions <= permutations:
        combos = itertools.combinations(range(n), k)
        for start in range(0, n_partitions, step):
            m = min(step, n_partitions - start)
            chosen = np.fromiter(itertools.chain.from_iterable(itertools.islice(combos, m)), dtype=np.int64,
                                 count=m * k).reshape(m, k)
            greater += int((2 * s[chosen].sum(axis=1) - total > observed + slack).sum())
        return greater / n_partitions, "exact", n_partitions
    rng = np.random.default_rng(seed)
    for start in range(0, permutations, step):
        keys = rng.random((min(step, permutations - start), n))
        chosen = np.argsort(keys, axis=1, kind="stable")[:, :k]  # a uniformly random k-subset per row
        greater += int((2 * s[chosen].sum(axis=1) - total > observed + slack).sum())
    return (1 + greater) / (1 + permutations), "monte-carlo", permutations


def _effect(s_x: np.ndarray, s_y: np.ndarray, axis: int = -1) -> Any:
    """Effect size along ``axis`` (vectorised for the bootstrap); NaN where every association is equal."""
    union = np.concatenate([s_x, s_y], axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (np.mean(s_x, axis=axis) - np.mean(s_y, axis=axis)) / np.std(union, axis=axis)


def _interval(s_x: np.ndarray, s_y: np.ndarray, n_resamples: int, seed: int) -> Interval | None:
    """Percentile bootstrap of the effect size, X and Y resampled each within itself (stratified)."""
    if n_resamples == 0 or len(s_x) < 2 or len(s_y) < 2:
        return None
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        res = stats.bootstrap((s_x, s_y), _effect, n_resamples=n_resamples, paired=False, vectorized=True,
                              method="percentile", rng=np.random.default_rng(seed))
    low, high, used = _percentiles(res, 0.95)
    return Interval(low, high, 0.95, used) if used else None


def _vectors(source: WordVectors | Any, sets: dict[str, list[str]], lowercase: bool,
             info: dict[str, Any]) -> dict[str, np.ndarray]:
    """Each set's vectors: looked up in a vocabulary (missing words skipped and counted) or encoded."""
    if not isinstance(source, WordVectors):
        distinct = list(dict.fromkeys(w for words in sets.values() for w in words))
        matrix = as_encode(source)(distinct)
        row = {w: i for i, w in enumerate(distinct)}
        info["oov"] = dict.fromkeys(sets, 0)
        return {role: matrix[[row[w] for w in words]] for role, words in sets.items()}
    out, oov, missing = {}, {}, {}
    for role, words in sets.items():
        rows = source.lookup(words, lowercase=lowercase)
        oov[role] = int((rows < 0).sum())
        missing[role] = [w for w, r in zip(words, rows) if r < 0]
        if not (rows >= 0).any():
            raise InputError(f"WEAT: none of the {len(words)} words of set {role.upper()} ({info['sets'][role]}) "
                             "is in the vocabulary")
        out[role] = np.asarray(source.vectors[rows[rows >= 0]])
    info.update(oov=oov, oov_words={k: v for k, v in missing.items() if v})
    return out


def weat(vectors: WordVectors | Any, x: Sequence[str] | str | Path, y: Sequence[str] | str | Path,
         a: Sequence[str] | str | Path, b: Sequence[str] | str | Path, *, names: Sequence[str] | None = None,
         lowercase: bool = True, permutations: int = DEFAULT_PERMUTATIONS, bootstrap: int = DEFAULT_RESAMPLES,
         seed: int = 0, name: str | None = None) -> TaskResult:
    """WEAT's effect size (main score), test statistic and one-sided permutation p-value.

    Parameters
    ----------
    vectors : WordVectors or encoder
        A vocabulary table (missing words are skipped and counted), or
        anything :func:`~repspace.engines.eval._encode.as_encode` accepts
        (every distinct word or phrase of the four sets goes to it in one
        call, as written).
    x, y : list of str, or path
        The target sets (a path is read with :func:`load_word_set`).
    a, b : list of str, or path
        The attribute sets.
    names : four str, optional
        The sets' names; default the files' stems, else ``X``, ``Y``, ``A``, ``B``.
    lowercase : bool
        Look words up in a vocabulary through their lower-cased forms, the
        first entry of a form winning (GloVe is lower-cased; Caliskan et al.'s
        name lists are capitalised).
    permutations : int
        Partitions behind the p-value (:func:`weat_p_value`: exact when there
        are at most this many); 0: no permutation test.
    bootstrap : int
        Resamples behind the effect size's 95% interval: the target words
        resampled within X and within Y (a stratified percentile bootstrap,
        :func:`scipy.stats.bootstrap`); 0: none (nor with fewer than 2 words
        in X or Y). The attribute words are held fixed.
    seed : int
        Seed of the random partitions and of the bootstrap.
    name : str, optional
        Task name; default ``weat:<X>-<Y>-<A>-<B>`` with the sets' names.

    Returns
    -------
    TaskResult
        Main metric ``effect_size``; ``statistic`` (S, the sums' difference),
        ``mean_x``, ``mean_y`` (mean association of each target set), ``std``
        and, with a test, ``p_value``. Info: the ``sets``' names, their sizes as
        used (``n_x``, ``n_y``, ``n_a``, ``n_b``), ``oov`` (words skipped per
        set) and ``oov_words``, and the test's ``p_value_method`` (``exact`` or
        ``monte-carlo``) and ``partitions``.

    Raises
    ------
    InputError
        A set with no word (in the vocabulary), every association equal (the
        effect size is undefined), or a bad argument.

    Examples
    --------
    >>> table = {"rose": [1.0, 0.2], "tulip": [0.9, 0.1], "ant": [0.1, 1.0], "wasp": [0.2, 0.8],
    ...          "love": [1.0, 0.0], "peace": [0.8, 0.3], "filth": [0.0, 1.0], "death": [0.3, 0.9]}
    >>> wv = WordVectors(list(table), np.array(list(table.values())))
    >>> r = weat(wv, ["rose", "tulip"], ["ant", "wasp", "flea"], ["love", "peace"], ["filth", "death"],
    ...          names=["flowers", "insects", "pleasant", "unpleasant"])
    >>> r.task_name, r.main_metric, round(r.main_score, 3), r.scores["p_value"], r.info["oov"]["y"]
    ('weat:flowers-insects-pleasant-unpleasant', 'effect_size', 1.993, 0.0, 1)
    """
    t0 = time.perf_counter()
    check_scalar(permutations, "permutations", int, low=0)
    check_scalar(bootstrap, "bootstrap", int, low=0)
    check_scalar(seed, "seed", int, low=0, high=2**32, include="left")
    given = dict(zip(_ROLES, (x, y, a, b), strict=True))
    if names is not None:
        names = [str(n) for n in names]
        if len(names) != 4:
            raise InputError(f"WEAT names four sets (X, Y, A, B), got {len(names)} names")
    else:
        names = [Path(v).stem if isinstance(v, (str, Path)) else role.upper() for role, v in given.items()]
    sets: dict[str, list[str]] = {}
    for role, value in given.items():
        words = load_word_set(value) if isinstance(value, (str, Path)) else list(dict.fromkeys(map(str, value)))
        if not words:
            raise InputError(f"WEAT: set {role.upper()} ({names[_ROLES.index(role)]}) holds no word")
        sets[role] = words
    info: dict[str, Any] = {"sets": dict(zip(_ROLES, names, strict=True))}
    vecs = _vectors(vectors, sets, lowercase, info)
    s_x = weat_association(vecs["x"], vecs["a"], vecs["b"])
    s_y = weat_association(vecs["y"], vecs["a"], vecs["b"])
    std = float(np.std(np.concatenate([s_x, s_y])))
    if not std > 0:
        raise InputError("WEAT: every target word has the same association with A and B: the effect size is "
                         "undefined")
    scores = {"effect_size": float(_effect(s_x, s_y)), "statistic": float(s_x.sum() - s_y.sum()),
              "mean_x": float(s_x.mean()), "mean_y": float(s_y.mean()), "std": std}
    info.update({f"n_{role}": int(len(v)) for role, v in vecs.items()})
    if permutations:
        p, method, n = weat_p_value(s_x, s_y, permutations=permutations, seed=seed)
        scores["p_value"] = p
        info.update(p_value_method=method, partitions=n)
    return TaskResult(name or "weat:" + "-".join(names), "test", "effect_size", scores, time.perf_counter() - t0,
                      info, interval=_interval(s_x, s_y, bootstrap, seed))
