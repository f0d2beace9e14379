"""The lens: vectors read as vocabulary tokens, and per-layer affine translators to the last layer.

A transformer's token embedding matrix ``E`` (``V x d``, one row per vocabulary token) is also, in models with
tied weights such as BERT's masked-LM head, its unembedding: a hidden state ``h`` scores token ``v`` by the dot
product ``h . E[v]``. Projecting the state of every layer onto ``E`` and reading its top tokens is the *logit
lens* (nostalgebraist 2020; for encoders and vision transformers, the vocabulary projections of S228 and S052);
projecting a vector that never went through the model (a pooled sentence vector, a stored item, a direction) is
the *zero-pass* projection. Both are :func:`project_vocabulary`.

Early layers are not in the basis the last layer reads out, so the plain lens under-reads them. The *tuned lens*
(Belrose et al. 2023) first maps layer ``l``'s states to the last layer's with an affine translator learned from
data; here each translator is the closed-form ridge regression :func:`fit_translator`, and
:func:`translator_fit` says how well it does on held-out tokens: R², and the KL divergence between the
vocabulary distribution of the real last layer and that of the translated (and of the untranslated) state.

Why by hand: the ``tuned-lens`` package trains its translators by SGD on a causal LM's next-token loss and needs
the model's own unembedding head; sentence encoders such as all-MiniLM-L6-v2 ship without one (no MLM head in
the folder), and a ridge regression of states on states has a closed form, which the tests check against
scikit-learn's ``Ridge``.

Examples
--------
>>> import numpy as np
>>> E = np.eye(4)  # a 4-token vocabulary in 4 dimensions
>>> p = project_vocabulary(np.array([[0.1, 0.9, 0.3, 0.0]]), E, ["a", "b", "c", "d"], k=2)
>>> p.tokens, np.round(p.scores, 2).tolist()
((('b', 'c'),), [[0.9, 0.3]])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from repspace.core.checks import check_choice, check_scalar
from repspace.core.errors import InputError
from repspace.core.limits import LENS_BLOCK_ENTRIES

__all__ = [
    "LENS_SCORES",
    "AffineTranslator",
    "TranslatorFit",
    "TranslatorMoments",
    "VocabularyProjection",
    "fit_translator",
    "project_vocabulary",
    "softmax_kl",
    "translator_fit",
    "vocabulary_logits",
]

#: How a vector scores a vocabulary token: ``dot`` (the logit of a tied unembedding) or ``cosine``
#: (scale-free: for vectors of another norm than the model's states, e.g. normalised stored items).
LENS_SCORES: tuple[str, ...] = ("dot", "cosine")


def _matrix(x: Any, name: str, dim: int | None = None) -> np.ndarray:
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} are not a numeric array ({exc})") from None
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] == 0:
        raise InputError(f"{name} must be a 2-d array (n, d), got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise InputError(f"{name} contain NaN or infinite values")
    if dim is not None and arr.shape[1] != dim:
        raise InputError(f"{name} have dimension {arr.shape[1]}, the vocabulary matrix {dim}")
    return arr


def _unit_rows(a: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(a, axis=1, keepdims=True)
    return np.divide(a, norms, out=np.zeros_like(a), where=norms > 0)


def vocabulary_logits(vectors: Any, embeddings: Any, *, score: str = "dot") -> np.ndarray:
    """Every vector's score for every vocabulary token: ``vectors @ embeddings.T`` (float64).

    Parameters
    ----------
    vectors : array of shape (n, d)
    embeddings : array of shape (V, d)
        The token embedding matrix, one row per vocabulary token.
    score : {"dot", "cosine"}
        ``cosine`` scales both sides to unit length first.

    Returns
    -------
    ndarray of shape (n, V)

    Examples
    --------
    >>> vocabulary_logits([[3.0, 4.0]], [[1.0, 0.0], [0.0, 2.0]]).tolist()
    [[3.0, 8.0]]
    >>> vocabulary_logits([[3.0, 4.0]], [[1.0, 0.0], [0.0, 2.0]], score="cosine").round(2).tolist()
    [[0.6, 0.8]]
    """
    check_choice(score, "score", LENS_SCORES)
    E = _matrix(embeddings, "embeddings")
    X = _matrix(vectors, "vectors", E.shape[1])
    if score == "cosine":
        E, X = _unit_rows(E), _unit_rows(X)
    return X @ E.T


@dataclass(frozen=True, eq=False)
class VocabularyProjection:
    """The top-``k`` vocabulary tokens of each projected vector.

    Attributes
    ----------
    token_ids : ndarray of shape (n, k)
        Vocabulary ids, best first (ties: the smaller id first).
    scores : ndarray of shape (n, k)
        Their scores (float64).
    tokens : tuple of tuple of str
        The tokens' strings.
    score : str
        ``dot`` or ``cosine``.

    Examples
    --------
    >>> p = project_vocabulary([[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], ["yes", "no"], k=1)
    >>> p.to_dict()
    {'score': 'dot', 'top': [[{'token': 'yes', 'id': 0, 'score': 1.0}]]}
    """

    token_ids: np.ndarray
    scores: np.ndarray
    tokens: tuple[tuple[str, ...], ...]
    score: str

    def to_dict(self) -> dict[str, Any]:
        """``{"score", "top": [[{"token", "id", "score"}, ...] per vector]}``."""
        return {"score": self.score, "top": [
            [{"token": t, "id": int(i), "score": float(s)} for t, i, s in zip(toks, ids, scs, strict=True)]
            for toks, ids, scs in zip(self.tokens, self.token_ids, self.scores, strict=True)]}


def _top_k(logits: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best columns of each row, best first, ties by the smaller column."""
    part = np.argpartition(-logits, k - 1, axis=1)[:, :k]
    vals = np.take_along_axis(logits, part, axis=1)
    order = np.lexsort((part, -vals), axis=1)
    return np.take_along_axis(part, order, axis=1), np.take_along_axis(vals, order, axis=1)


def project_vocabulary(vectors: Any, embeddings: Any, vocabulary: Sequence[str], *, k: int = 10,
                       score: str = "dot", exclude: Sequence[int] | np.ndarray | None = None) -> VocabularyProjection:
    """Read each vector as its ``k`` best-scoring vocabulary tokens (the logit lens / zero-pass projection).

    The logits are computed in blocks of at most :data:`~repspace.core.limits.LENS_BLOCK_ENTRIES`, so any
    number of vectors fits in memory.

    Parameters
    ----------
    vectors : array of shape (n, d) or (d,)
        Hidden states, pooled vectors, stored items: anything in the embedding matrix's space.
    embeddings : array of shape (V, d)
        The model's token embedding matrix.
    vocabulary : sequence of str
        The token string of each row of ``embeddings``.
    k : int
        Tokens per vector (at most ``V``).
    score : {"dot", "cosine"}
        See :func:`vocabulary_logits`.
    exclude : sequence of int, optional
        Rows of ``embeddings`` never shown (e.g. the special and unused tokens); ``k`` counts the others.

    Returns
    -------
    VocabularyProjection

    Raises
    ------
    InputError
        Shapes that do not match, non-finite values, ``k`` out of range, an unknown ``score``.

    Examples
    --------
    >>> E = np.array([[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]])
    >>> project_vocabulary([[0.2, 1.0], [1.0, 0.9]], E, ["x", "y", "xy"], k=2).tokens
    (('y', 'xy'), ('xy', 'x'))
    >>> project_vocabulary([[0.2, 1.0], [1.0, 0.9]], E, ["x", "y", "xy"], k=2, exclude=[2]).tokens
    (('y', 'x'), ('x', 'y'))
    """
    check_choice(score, "score", LENS_SCORES)
    E = _matrix(embeddings, "embeddings")
    X = _matrix(vectors, "vectors", E.shape[1])
    words = [str(w) for w in vocabulary]
    if len(words) != E.shape[0]:
        raise InputError(f"the vocabulary has {len(words)} tokens, the embedding matrix {E.shape[0]} rows")
    hidden = np.unique(np.asarray([] if exclude is None else exclude, dtype=np.int64))
    if hidden.size and (hidden[0] < 0 or hidden[-1] >= E.shape[0]):
        raise InputError(f"excluded token ids must lie in 0..{E.shape[0] - 1}")
    k = check_scalar(k, "k", int, low=1, high=E.shape[0] - hidden.size)
    if score == "cosine":
        E, X = _unit_rows(E), _unit_rows(X)
    ids = np.empty((X.shape[0], k), dtype=np.int64)
    scores = np.empty((X.shape[0], k), dtype=np.float64)
    step = max(1, LENS_BLOCK_ENTRIES // E.shape[0])
    for start in range(0, X.shape[0], step):
        block = X[start:start + step] @ E.T
        block[:, hidden] = -np.inf
        ids[start:start + step], scores[start:start + step] = _top_k(block, k)
    tokens = tuple(tuple(words[i] for i in row) for row in ids)
    return VocabularyProjection(ids, scores, tokens, score)


def softmax_kl(reference_logits: Any, logits: Any) -> np.ndarray:
    """Per row, the KL divergence ``KL(softmax(reference) || softmax(logits))`` in nats.

    Examples
    --------
    >>> softmax_kl([[0.0, 0.0]], [[0.0, 0.0]]).tolist()
    [0.0]
    >>> round(float(softmax_kl([[np.log(3), 0.0]], [[0.0, 0.0]])[0]), 4)  # p = (3/4, 1/4), q = (1/2, 1/2)
    0.1308
    """
    ref = _matrix(reference_logits, "reference logits")
    other = _matrix(logits, "logits", ref.shape[1])
    if other.shape[0] != ref.shape[0]:
        raise InputError(f"{ref.shape[0]} reference rows but {other.shape[0]} rows of logits")
    return _kl(ref, other)


def _kl(ref: np.ndarray, other: np.ndarray) -> np.ndarray:
    from scipy.special import log_softmax

    log_p, log_q = log_softmax(ref, axis=1), log_softmax(other, axis=1)
    return np.maximum((np.exp(log_p) * (log_p - log_q)).sum(axis=1), 0.0)


@dataclass(frozen=True, eq=False)
class AffineTranslator:
    """An affine map ``x -> x @ weight + bias`` from one layer's states to another's (a tuned-lens translator).

    Attributes
    ----------
    weight : ndarray of shape (d_in, d_out)
    bias : ndarray of shape (d_out,)
    ridge : float
        The relative ridge it was fitted with (:func:`fit_translator`).
    alpha : float
        The absolute penalty: ``ridge`` times the mean eigenvalue of the centred Gram matrix.

    Examples
    --------
    >>> t = AffineTranslator(np.eye(2), np.array([1.0, 0.0]), ridge=0.0, alpha=0.0)
    >>> t.apply([[1.0, 2.0]]).tolist()
    [[2.0, 2.0]]
    """

    weight: np.ndarray
    bias: np.ndarray
    ridge: float
    alpha: float

    def to_dict(self) -> dict[str, Any]:
        """``{"weight": [[...]], "bias": [...], "ridge", "alpha"}`` (lists of floats)."""
        return {"weight": self.weight.tolist(), "bias": self.bias.tolist(), "ridge": float(self.ridge),
                "alpha": float(self.alpha)}

    def apply(self, states: Any) -> np.ndarray:
        """The translated states (float64)."""
        return _matrix(states, "states", self.weight.shape[0]) @ self.weight + self.bias


class TranslatorMoments:
    """Running sums of paired source/target states, from which :meth:`translator` solves the ridge fit.

    A texts file of any size streams through in batches (:meth:`add`); only ``d_in x d_in`` and
    ``d_in x d_out`` float64 sums are kept. :func:`fit_translator` is this on one array pair.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((60, 3))
    >>> m = TranslatorMoments(3, 3)
    >>> for rows in (slice(0, 25), slice(25, 60)):
    ...     m.add(X[rows], 2 * X[rows] - 1)
    >>> m.n, np.round(m.translator(ridge=0.0).bias, 6).tolist()
    (60, [-1.0, -1.0, -1.0])
    """

    def __init__(self, d_in: int, d_out: int) -> None:
        self.d_in, self.d_out = int(d_in), int(d_out)
        self.n = 0
        self._sx, self._sy = np.zeros(self.d_in), np.zeros(self.d_out)
        self._xx, self._xy = np.zeros((self.d_in, self.d_in)), np.zeros((self.d_in, self.d_out))

    def add(self, source: Any, target: Any) -> None:
        """Add the same tokens' states at the source and the target layer."""
        X = _matrix(source, "source states", self.d_in)
        Y = _matrix(target, "target states", self.d_out)
        if X.shape[0] != Y.shape[0]:
            raise InputError(f"{X.shape[0]} source rows but {Y.shape[0]} target rows")
        self.n += X.shape[0]
        self._sx += X.sum(axis=0)
        self._sy += Y.sum(axis=0)
        self._xx += X.T @ X
        self._xy += X.T @ Y

    def translator(self, ridge: float = 1e-3) -> AffineTranslator:
        """The fitted :class:`AffineTranslator` (see :func:`fit_translator` for the formula)."""
        if self.n < 2:
            raise InputError("a translator needs at least 2 tokens to fit")
        ridge = check_scalar(ridge, "ridge", float, low=0.0)
        mx, my = self._sx / self.n, self._sy / self.n
        gram = self._xx - self.n * np.outer(mx, mx)
        cross = self._xy - self.n * np.outer(mx, my)
        alpha = ridge * float(np.trace(gram)) / self.d_in
        try:
            weight = np.linalg.solve(gram + alpha * np.eye(self.d_in), cross)
        except np.linalg.LinAlgError:
            raise InputError("the source states are rank-deficient: give ridge > 0 or more tokens") from None
        return AffineTranslator(weight, my - mx @ weight, ridge, alpha)


def fit_translator(source: Any, target: Any, *, ridge: float = 1e-3) -> AffineTranslator:
    """The ridge-regularised least-squares affine map from ``source`` rows to ``target`` rows (closed form).

    With ``Xc``, ``Yc`` the centred rows, ``weight = (Xc^T Xc + alpha I)^-1 Xc^T Yc`` and
    ``bias = mean(Y) - mean(X) @ weight``, the intercept unpenalised (scikit-learn's ``Ridge`` with
    ``fit_intercept=True``). ``alpha = ridge * trace(Xc^T Xc) / d``: the penalty is relative to the states'
    scale, which differs from layer to layer. The sums are those of :class:`TranslatorMoments`.

    Parameters
    ----------
    source, target : arrays of shape (n, d_in) and (n, d_out)
        The same tokens' states at two layers.
    ridge : float
        Relative penalty, >= 0 (0: ordinary least squares, which needs ``n > d_in`` independent rows).

    Returns
    -------
    AffineTranslator

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((50, 3))
    >>> t = fit_translator(X, X @ np.diag([2.0, -1.0, 0.5]) + 3.0, ridge=0.0)
    >>> np.round(t.weight, 6).diagonal().tolist(), np.round(t.bias, 6).tolist()
    ([2.0, -1.0, 0.5], [3.0, 3.0, 3.0])
    """
    X = _matrix(source, "source states")
    Y = _matrix(target, "target states")
    moments = TranslatorMoments(X.shape[1], Y.shape[1])
    moments.add(X, Y)
    return moments.translator(ridge)


@dataclass(frozen=True)
class TranslatorFit:
    """How well a layer's translator predicts the last layer on held-out tokens.

    Attributes
    ----------
    layer : int
        The source layer.
    r2 : float
        ``1 - sum |Y - T(X)|^2 / sum |Y - mean(Y)|^2`` over the held-out tokens (scikit-learn's
        ``r2_score(..., multioutput="variance_weighted")``).
    kl_tuned, kl_plain : float
        Mean ``KL(p_last || p)`` in nats, ``p`` the softmax of the vocabulary logits of the translated state
        (tuned lens) or of the state itself (plain logit lens).
    top1_tuned, top1_plain : float
        Share of held-out tokens whose top vocabulary token equals the last layer's.
    n_train, n_test : int
        Tokens fitted on and held out.

    Examples
    --------
    >>> TranslatorFit(3, 0.9, 0.1, 2.0, 0.8, 0.3, 100, 20).to_dict()["kl_tuned"]
    0.1
    """

    layer: int
    r2: float
    kl_tuned: float
    kl_plain: float
    top1_tuned: float
    top1_plain: float
    n_train: int
    n_test: int

    def to_dict(self) -> dict[str, Any]:
        """The fields as a dict."""
        return {"layer": int(self.layer), "r2": float(self.r2), "kl_tuned": float(self.kl_tuned),
                "kl_plain": float(self.kl_plain), "top1_tuned": float(self.top1_tuned),
                "top1_plain": float(self.top1_plain), "n_train": int(self.n_train), "n_test": int(self.n_test)}


def translator_fit(translator: AffineTranslator, source: Any, target: Any, embeddings: Any, *, layer: int,
                   n_train: int, score: str = "dot") -> TranslatorFit:
    """Score ``translator`` on held-out ``source`` -> ``target`` tokens (see :class:`TranslatorFit`).

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> X, E = rng.standard_normal((40, 4)), rng.standard_normal((6, 4))
    >>> t = fit_translator(X[:30], 2 * X[:30], ridge=0.0)
    >>> f = translator_fit(t, X[30:], 2 * X[30:], E, layer=0, n_train=30)
    >>> round(f.r2, 6), round(f.kl_tuned, 6), f.top1_tuned, f.top1_plain
    (1.0, 0.0, 1.0, 1.0)
    """
    check_choice(score, "score", LENS_SCORES)
    E = _matrix(embeddings, "embeddings")
    X = _matrix(source, "held-out source states", E.shape[1])
    Y = _matrix(target, "held-out target states", E.shape[1])
    if X.shape[0] != Y.shape[0] or X.shape[0] == 0:
        raise InputError(f"held-out rows: {X.shape[0]} source, {Y.shape[0]} target; need the same, at least 1")
    pred = translator.apply(X)
    total = float(((Y - Y.mean(axis=0)) ** 2).sum())
    r2 = 1.0 - float(((Y - pred) ** 2).sum()) / total if total > 0 else float("nan")
    unit = score == "cosine"
    Et = (_unit_rows(E) if unit else E).T  # prepared once: the blocks below only multiply

    def logits(rows: np.ndarray) -> np.ndarray:
        return (_unit_rows(rows) if unit else rows) @ Et

    kl_t, kl_p, hit_t, hit_p = 0.0, 0.0, 0, 0
    step = max(1, LENS_BLOCK_ENTRIES // E.shape[0])
    for start in range(0, X.shape[0], step):
        rows = slice(start, start + step)
        ref, tuned, plain = logits(Y[rows]), logits(pred[rows]), logits(X[rows])
        kl_t += float(_kl(ref, tuned).sum())
        kl_p += float(_kl(ref, plain).sum())
        best = ref.argmax(axis=1)
        hit_t += int((tuned.argmax(axis=1) == best).sum())
        hit_p += int((plain.argmax(axis=1) == best).sum())
    n = X.shape[0]
    return TranslatorFit(int(layer), r2, kl_t / n, kl_p / n, hit_t / n, hit_p / n, int(n_train), n)
