"""The Poincare ball: its distance, Mobius addition, exponential and logarithmic maps, exact nearest neighbours.

The Poincare ball of curvature ``-c`` (``c > 0``; ``c = 1`` by default, the
unit ball) is the open ball ``{x : |x| < 1/sqrt(c)}`` with the metric
``g_x = lambda_x^2 g_E``, ``lambda_x = 2 / (1 - c|x|^2)``. Nickel & Kiela
(2017, "Poincaré Embeddings for Learning Hierarchical Representations") embed
hierarchies in it; its distance is

    d(u, v) = arccosh(1 + 2c|u - v|^2 / ((1 - c|u|^2)(1 - c|v|^2))) / sqrt(c),

computed here as ``log1p(z + sqrt(z (z + 2)))`` with ``z`` the fraction, which
keeps its precision for close points (``arccosh(1 + z)`` loses it when ``z`` is
small). The gyrovector operations are those of Ganea, Bécigneul & Hofmann
(2018, "Hyperbolic Neural Networks"):

    x ⊕ y = ((1 + 2c<x, y> + c|y|^2) x + (1 - c|x|^2) y) / (1 + 2c<x, y> + c^2 |x|^2 |y|^2)
    exp_x(v) = x ⊕ (tanh(sqrt(c) lambda_x |v| / 2) v / (sqrt(c) |v|))
    log_x(y) = 2 / (sqrt(c) lambda_x) artanh(sqrt(c) |w|) w / |w|,   w = (-x) ⊕ y

and ``d(x, y) = 2 / sqrt(c) artanh(sqrt(c) |(-x) ⊕ y|)`` (the same distance).

Everything is computed in float64 on numpy arrays whose last axis is the
vector; the point arguments are checked to be finite and inside the ball
(:func:`check_ball`; :func:`project` pulls points back in). Tangent vectors
(``v`` of :func:`exp_map`) need only be finite.

Examples
--------
>>> import numpy as np
>>> u, v = np.array([0.5, 0.0]), np.array([0.0, 0.5])
>>> round(float(poincare_distance(u, v)), 6)  # arccosh(1 + 2 * 0.5 / 0.75**2)
1.6807
>>> bool(np.allclose(log_map(exp_map(np.array([0.3, -1.2]))), [0.3, -1.2]))
True
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from repspace.core.checks import check_scalar, positive_int
from repspace.core.errors import InputError

__all__ = [
    "check_ball",
    "exp_map",
    "log_map",
    "mobius_add",
    "pairwise_poincare",
    "poincare_distance",
    "poincare_search",
    "project",
]

#: Largest float64 difference tensor of one tile of :func:`pairwise_poincare`, in entries (16 MiB).
TILE_ENTRIES = 1 << 21


def _curvature(c: Any) -> float:
    return check_scalar(c, "c (the ball's curvature is -c)", float, low=0, include="neither")


def _radius_text(c: float) -> str:
    return "1" if c == 1.0 else f"1/sqrt(c) = {1 / math.sqrt(c):.6g}"


def _finite(X: Any, what: str) -> np.ndarray:
    """``X`` as a float64 array of at least one dimension with finite entries; else one InputError line."""
    try:
        arr = np.asarray(X)
    except (TypeError, ValueError) as e:
        raise InputError(f"{what} is not a numeric array: {e}") from None
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
        raise InputError(f"{what} must be numeric (real numbers), got dtype {arr.dtype}")
    if arr.ndim == 0 or arr.shape[-1] == 0:
        raise InputError(f"{what} must be vectors (last axis the dimensions), got shape {arr.shape}")
    arr = np.asarray(arr, dtype=np.float64)
    ok = np.isfinite(arr).all(axis=-1)
    if not ok.all():
        first = np.unravel_index(int(np.argmin(ok.ravel())), ok.shape) if ok.ndim else ()
        where = f" (row {', '.join(str(int(i)) for i in first)})" if first else ""
        raise InputError(f"{what} has NaN or infinite values{where}")
    return arr


def check_ball(X: Any, what: str = "X", c: float = 1.0) -> np.ndarray:
    """``X`` as float64 when every point is finite and strictly inside the ball; else one :class:`InputError` line.

    ``X`` is one point (shape ``(d,)``) or points along its last axis (``(n, d)``, ...).

    Parameters
    ----------
    X : array-like
        The points.
    what : str
        What the error message calls ``X``.
    c : float
        The ball's curvature is ``-c``; its radius is ``1/sqrt(c)``.

    Returns
    -------
    ndarray of float64
        ``X``, same shape.

    Raises
    ------
    InputError
        A NaN or infinite entry (the first bad row is named), or points with
        norm ``>= 1/sqrt(c)`` (how many, and the largest norm).

    Examples
    --------
    >>> check_ball([[0.1, 0.2], [0.0, 0.5]]).dtype
    dtype('float64')
    >>> check_ball([[0.1, 0.2], [0.8, 0.6], [3.0, 4.0]], "vectors")
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: vectors: 2 of 3 points lie outside the open Poincare ball (norm >= 1); the largest norm is 5; project() pulls them inside
    >>> check_ball([0.1, float("nan")])
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: X has NaN or infinite values
    """
    c = _curvature(c)
    arr = _finite(X, what)
    sq = np.einsum("...i,...i->...", arr, arr)
    outside = c * sq >= 1.0
    if outside.any():
        n = int(np.prod(sq.shape)) if sq.ndim else 1
        largest = math.sqrt(float(sq.max()))
        raise InputError(f"{what}: {int(outside.sum())} of {n} points lie outside the open Poincare ball "
                         f"(norm >= {_radius_text(c)}); the largest norm is {largest:.6g}; "
                         "project() pulls them inside")
    return arr


def project(X: Any, eps: float = 1e-5, c: float = 1.0) -> np.ndarray:
    """Points pulled back inside the ball: those of norm above ``(1 - eps)/sqrt(c)`` are scaled to that norm.

    The others are returned unchanged (as float64). Optimisers on the ball use
    this after each step (Nickel & Kiela 2017 with ``eps = 1e-5``).

    Parameters
    ----------
    X : array-like
        Finite points (any norm), along the last axis.
    eps : float
        Margin, in ``(0, 1)``, relative to the radius.
    c : float
        The ball's curvature is ``-c``.

    Examples
    --------
    >>> project([[3.0, 4.0], [0.3, 0.4]]).round(6).tolist()
    [[0.599994, 0.799992], [0.3, 0.4]]
    >>> float(np.linalg.norm(project([2.0, 0.0], eps=0.1)))
    0.9
    """
    c = _curvature(c)
    check_scalar(eps, "eps", float, low=0, high=1, include="neither")
    arr = _finite(X, "X")
    limit = (1.0 - float(eps)) / math.sqrt(c)
    norms = np.linalg.norm(arr, axis=-1, keepdims=True)
    scale = np.where(norms > limit, limit / np.where(norms > 0, norms, 1.0), 1.0)
    return arr * scale


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise inner products (broadcasting), with the vector axis kept (length 1)."""
    return np.sum(a * b, axis=-1, keepdims=True)


def _mobius_add(x: np.ndarray, y: np.ndarray, c: float) -> np.ndarray:
    xy, xx, yy = _dot(x, y), _dot(x, x), _dot(y, y)
    num = (1 + 2 * c * xy + c * yy) * x + (1 - c * xx) * y
    return num / (1 + 2 * c * xy + c * c * xx * yy)


def mobius_add(x: Any, y: Any, c: float = 1.0) -> np.ndarray:
    """Mobius addition ``x ⊕ y`` of points of the ball (Ganea et al. 2018), row-wise with broadcasting.

    ``x ⊕ y = ((1 + 2c<x,y> + c|y|^2) x + (1 - c|x|^2) y) / (1 + 2c<x,y> + c^2|x|^2|y|^2)``:
    the ball's analogue of ``x + y`` (not commutative nor associative;
    ``x ⊕ 0 = 0 ⊕ x = x`` and ``(-x) ⊕ x = 0``).

    Parameters
    ----------
    x, y : array-like
        Points of the ball, vectors along the last axis (shapes broadcast).
    c : float
        The ball's curvature is ``-c``.

    Returns
    -------
    ndarray of float64

    Examples
    --------
    >>> mobius_add([0.5, 0.0], [0.0, 0.0]).tolist()
    [0.5, 0.0]
    >>> mobius_add([0.5, 0.0], [0.5, 0.0]).tolist()
    [0.8, 0.0]
    >>> mobius_add([-0.3, 0.2], [0.3, -0.2]).round(12).tolist()
    [0.0, 0.0]
    """
    c = _curvature(c)
    return _mobius_add(check_ball(x, "x", c), check_ball(y, "y", c), c)


def _ratio(fn: Any, a: np.ndarray) -> np.ndarray:
    """``fn(a) / a`` (tanh or artanh), ``1`` at ``a = 0``."""
    safe = np.where(a > 0, a, 0.5)
    return np.where(a > 0, fn(safe) / safe, 1.0)


def exp_map(v: Any, x: Any = None, c: float = 1.0) -> np.ndarray:
    """The exponential map: the point reached from ``x`` (the origin when ``None``) along the tangent vector ``v``.

    ``exp_x(v) = x ⊕ (tanh(sqrt(c) lambda_x |v| / 2) v / (sqrt(c)|v|))``, with
    ``lambda_x = 2 / (1 - c|x|^2)``; at the origin ``exp_0(v) = tanh(sqrt(c)|v|) v / (sqrt(c)|v|)``
    (Ganea et al. 2018). The geodesic distance from ``x`` to the result is
    ``lambda_x |v|``. For ``sqrt(c) lambda_x |v| / 2`` above about 19, tanh
    rounds to 1 in float64 and the result lies on the boundary: :func:`project` it.

    Parameters
    ----------
    v : array-like
        Tangent vectors (finite, any norm), along the last axis.
    x : array-like, optional
        Base points in the ball (broadcast against ``v``); the origin when omitted.
    c : float
        The ball's curvature is ``-c``.

    Returns
    -------
    ndarray of float64
        The points ``exp_x(v)``, shaped as ``v`` and ``x`` broadcast together.

    Examples
    --------
    >>> exp_map([1.0, 0.0]).round(6).tolist()
    [0.761594, 0.0]
    >>> y = exp_map([0.2, 0.1], x=[0.5, -0.2])
    >>> bool(np.allclose(log_map(y, x=[0.5, -0.2]), [0.2, 0.1]))
    True
    """
    c = _curvature(c)
    v = _finite(v, "v")
    sc = math.sqrt(c)
    norm = np.linalg.norm(v, axis=-1, keepdims=True)
    if x is None:
        return _ratio(np.tanh, sc * norm) * v
    x = check_ball(x, "x", c)
    lam = 2.0 / (1.0 - c * _dot(x, x))
    return _mobius_add(x, (lam / 2) * _ratio(np.tanh, sc * lam * norm / 2) * v, c)


def log_map(y: Any, x: Any = None, c: float = 1.0) -> np.ndarray:
    """The logarithmic map: the tangent vector at ``x`` (the origin when ``None``) that :func:`exp_map` takes to ``y``.

    ``log_x(y) = 2 / (sqrt(c) lambda_x) artanh(sqrt(c)|w|) w / |w|`` with
    ``w = (-x) ⊕ y``; at the origin ``log_0(y) = artanh(sqrt(c)|y|) y / (sqrt(c)|y|)``
    (Ganea et al. 2018). ``log_0`` sends the ball to its tangent space at the
    origin keeping distances from the origin: ``|log_0(y)| = d(0, y) / 2``.
    ``x`` and ``c`` are those of :func:`exp_map`, ``y`` points of the ball
    (along the last axis, broadcast against ``x``); the result is float64.

    Examples
    --------
    >>> log_map([0.761594156, 0.0]).round(6).tolist()
    [1.0, 0.0]
    >>> log_map([0.3, 0.1], x=[0.3, 0.1]).tolist()
    [0.0, 0.0]
    """
    c = _curvature(c)
    y = check_ball(y, "y", c)
    sc = math.sqrt(c)
    if x is None:
        return _ratio(np.arctanh, sc * np.linalg.norm(y, axis=-1, keepdims=True)) * y
    x = check_ball(x, "x", c)
    w = _mobius_add(-x, y, c)
    lam = 2.0 / (1.0 - c * _dot(x, x))
    # |w| < 1/sqrt(c) in exact arithmetic; rounding can put it on the boundary for far-apart points.
    a = np.minimum(sc * np.linalg.norm(w, axis=-1, keepdims=True), 1.0 - 1e-16)
    return (2.0 / lam) * _ratio(np.arctanh, a) * w


def _arccosh1p(z: np.ndarray) -> np.ndarray:
    """``arccosh(1 + z)`` for ``z >= 0``, accurate for small ``z``."""
    return np.log1p(z + np.sqrt(z * (z + 2.0)))


def poincare_distance(u: Any, v: Any, c: float = 1.0) -> np.ndarray:
    """The hyperbolic distance between points of the ball, row-wise with broadcasting (Nickel & Kiela 2017).

    ``d(u, v) = arccosh(1 + 2c|u - v|^2 / ((1 - c|u|^2)(1 - c|v|^2))) / sqrt(c)``,
    evaluated as ``log1p(z + sqrt(z(z + 2))) / sqrt(c)`` for precision near
    zero. Symmetric, zero only for ``u = v``, and a metric (triangle inequality).

    Parameters
    ----------
    u, v : array-like
        Points of the ball, along the last axis (shapes broadcast: ``(n, d)``
        against ``(d,)`` gives ``n`` distances).
    c : float
        The ball's curvature is ``-c``.

    Returns
    -------
    ndarray of float64
        The broadcast shape without the last axis (a 0-d array for two points).

    Examples
    --------
    >>> round(float(poincare_distance([0.0, 0.0], [0.5, 0.0])), 12)  # 2 artanh(0.5) = ln 3
    1.098612288668
    >>> poincare_distance([[0.0, 0.0], [0.9, 0.0]], [0.0, 0.0]).round(4).tolist()
    [0.0, 2.9444]
    """
    c = _curvature(c)
    u, v = check_ball(u, "u", c), check_ball(v, "v", c)
    diff = u - v
    z = 2 * c * np.einsum("...i,...i->...", diff, diff) / (
        (1 - c * np.einsum("...i,...i->...", u, u)) * (1 - c * np.einsum("...i,...i->...", v, v)))
    return _arccosh1p(z) / math.sqrt(c)


def _tiles(nq: int, nb: int, d: int) -> tuple[int, int]:
    """Rows of queries and of base per tile so that the ``(rq, rb, d)`` difference tensor fits TILE_ENTRIES."""
    rb = max(1, min(nb, TILE_ENTRIES // d))
    rq = max(1, min(nq, TILE_ENTRIES // (rb * d)))
    return rq, rb


def _pairs(Q: np.ndarray, B: np.ndarray, qq: np.ndarray, bb: np.ndarray, c: float) -> np.ndarray:
    """Distances of every row of Q to every row of B (one tile; norms' complements precomputed)."""
    diff = Q[:, None, :] - B[None, :, :]
    z = 2 * c * np.einsum("ijk,ijk->ij", diff, diff) / (qq[:, None] * bb[None, :])
    return _arccosh1p(z)


def _two_sets(Q: Any, B: Any, c: float) -> tuple[np.ndarray, np.ndarray]:
    Q = check_ball(Q, "queries", c)
    B = check_ball(B, "base", c)
    if Q.ndim == 1:
        Q = Q[None, :]
    if Q.ndim != 2 or B.ndim != 2:
        raise InputError(f"queries and base must be 2-d arrays (n points × d), got shapes {Q.shape} and {B.shape}")
    if Q.shape[1] != B.shape[1]:
        raise InputError(f"queries have {Q.shape[1]} dimensions but base has {B.shape[1]}")
    return Q, B


def pairwise_poincare(Q: Any, B: Any, c: float = 1.0) -> np.ndarray:
    """Hyperbolic distances from every row of ``Q`` to every row of ``B``, float64 ``(len(Q), len(B))``.

    Each pair is computed as in :func:`poincare_distance`, with ``|u - v|^2``
    from the differences themselves (not ``|u|^2 - 2<u,v> + |v|^2``, which
    loses the distance of close points), in tiles of rows whose difference
    tensor stays under 16 MiB; the result itself is ``len(Q) × len(B)``.

    Parameters
    ----------
    Q, B : array-like, (nq, d) and (nb, d)
        Points of the ball (one query may be given as ``(d,)``).
    c : float
        The ball's curvature is ``-c``.

    Examples
    --------
    >>> pairwise_poincare([[0.0, 0.0]], [[0.5, 0.0], [0.0, 0.0], [0.0, -0.5]]).round(6).tolist()
    [[1.098612, 0.0, 1.098612]]
    """
    c = _curvature(c)
    Q, B = _two_sets(Q, B, c)
    nq, nb, d = Q.shape[0], B.shape[0], Q.shape[1]
    out = np.empty((nq, nb), dtype=np.float64)
    qq, bb = 1 - c * np.einsum("ij,ij->i", Q, Q), 1 - c * np.einsum("ij,ij->i", B, B)
    rq, rb = _tiles(nq, nb, d)
    for i in range(0, nq, rq):
        for j in range(0, nb, rb):
            out[i:i + rq, j:j + rb] = _pairs(Q[i:i + rq], B[j:j + rb], qq[i:i + rq], bb[j:j + rb], c)
    return out / math.sqrt(c)


def poincare_search(queries: Any, base: Any, k: int, c: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Exact ``k`` nearest rows of ``base`` to each query by hyperbolic distance.

    Distances are computed in float64 as in :func:`pairwise_poincare` (tile by
    tile, keeping a running top ``k``), sorted ascending, equal distances going
    to the lower row. The result is deterministic and, the distances being
    exact to a few ulps, moving points by ``1e-9`` changes the order only where
    two distances differ by about that much.

    Parameters
    ----------
    queries : array-like, (nq, d) or (d,)
        Points of the ball.
    base : array-like, (nb, d)
        Points of the ball.
    k : int
        Neighbours per query; ``min(k, nb)`` are returned.
    c : float
        The ball's curvature is ``-c``.

    Returns
    -------
    distances : ndarray of float32, (nq, min(k, nb))
        Ascending along each row.
    ids : ndarray of int64, (nq, min(k, nb))
        Rows of ``base``.

    Examples
    --------
    >>> base = np.array([[0.0, 0.0], [0.5, 0.0], [0.0, 0.5], [-0.9, 0.0]])
    >>> d, i = poincare_search([[0.4, 0.1]], base, k=3)
    >>> i.tolist(), d.astype(float).round(4).tolist(), d.dtype
    ([[1, 0, 2]], [[0.3566, 0.8768, 1.333]], dtype('float32'))
    """
    c = _curvature(c)
    k = positive_int(k, "k")
    Q, B = _two_sets(queries, base, c)
    nq, nb, d = Q.shape[0], B.shape[0], Q.shape[1]
    kk = min(k, nb)
    qq, bb = 1 - c * np.einsum("ij,ij->i", Q, Q), 1 - c * np.einsum("ij,ij->i", B, B)
    rq, rb = _tiles(nq, nb, d)
    out_d = np.empty((nq, kk), dtype=np.float64)
    out_i = np.empty((nq, kk), dtype=np.int64)
    for i in range(0, nq, rq):
        best_d = np.full((min(rq, nq - i), 0), np.inf)
        best_i = np.zeros((min(rq, nq - i), 0), dtype=np.int64)
        for j in range(0, nb, rb):
            dist = _pairs(Q[i:i + rq], B[j:j + rb], qq[i:i + rq], bb[j:j + rb], c)
            ids = np.broadcast_to(np.arange(j, j + dist.shape[1], dtype=np.int64), dist.shape)
            best_d, best_i = _top_k(np.concatenate([best_d, dist], axis=1),
                                    np.concatenate([best_i, ids], axis=1), kk)
        out_d[i:i + rq], out_i[i:i + rq] = best_d, best_i
    return (out_d / math.sqrt(c)).astype(np.float32), out_i


def _top_k(dist: np.ndarray, ids: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` smallest of each row by (distance, id), sorted: exact ties at the k-th distance go to lower ids."""
    if dist.shape[1] > k:
        sel = np.argpartition(dist, k - 1, axis=1)[:, :k]
        kth = np.take_along_axis(dist, sel, axis=1).max(axis=1, keepdims=True)
        # argpartition picks among entries equal to the k-th distance arbitrarily: redo those rows by (distance, id).
        for r in np.flatnonzero((dist <= kth).sum(axis=1) > k):
            keep = np.flatnonzero(dist[r] <= kth[r])
            sel[r] = keep[np.lexsort((ids[r, keep], dist[r, keep]))[:k]]
        dist, ids = np.take_along_axis(dist, sel, axis=1), np.take_along_axis(ids, sel, axis=1)
    order = np.lexsort((ids, dist), axis=1)
    return np.take_along_axis(dist, order, axis=1), np.take_along_axis(ids, order, axis=1)
