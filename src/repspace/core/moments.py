"""Streamed second moments of two spaces over the same rows: the one pass behind CKA, Procrustes and SVCCA.

Shared by the comparison measures (:mod:`repspace.engines.compare`) and the
maps fitted on pairs (:mod:`repspace.engines.align`), which read the means and
the cross product back in the data's own units (:attr:`Moments.mean_x`,
:meth:`Moments.cross`).

Linear CKA, debiased CKA, the Procrustes distance and SVCCA are functions of
the column sums and of the three Gram products ``XᵀX``, ``YᵀY`` and ``YᵀX``
(``d × d``, never ``n × n``). :func:`moments` reads ``X`` and ``Y`` once, in
blocks of rows, so memory stays ``O(d²)`` whatever ``n`` is and a memory-mapped
array is never copied whole.

Numerical choices
-----------------
* **Centring in the streamed form.** Centred products are obtained from
  uncentred ones, ``Cxx = XᵀX − s sᵀ/n`` with ``s`` the column sums, both
  accumulated in float64. That formula cancels catastrophically when the mean
  is large against the spread, so every row is first shifted by a *pivot*, the
  first row of the array: centred products do not change under a shift, the
  shifted data sit within a few standard deviations of the origin, and a
  constant space becomes exactly zero (so "no variance" is detected exactly,
  not up to rounding).
* **Scaling.** When the first block's largest shifted entry lies outside
  ``[2⁻⁴⁰, 2⁴⁰]`` the data are multiplied by a power of two (exact) that brings
  it near 1, so squares neither overflow nor underflow. Every measure built on
  these moments is invariant to that scale. If a later block still overflows,
  the pass is redone in float64 with the scale of the global largest entry.
* **Block products.** ``precision="auto"`` multiplies blocks in float32 when
  both inputs are float32 (the speed of single-precision BLAS, ~2× float64) and
  adds each block's product into float64 accumulators; the relative error of
  the results is then about 1e-6, the order of the inputs' own rounding
  amplified by a block's length. Otherwise (float64 or integer input, or
  ``precision="float64"``) blocks are multiplied in float64.
* **Shards.** One pass is :func:`plan` (pivots, scales and product dtype, from
  the first block), :func:`accumulate` over the rows, :func:`finish`. A
  distributed pass gives the same plan to every shard of rows and adds their
  float64 sums (:func:`add_sums`); :func:`moments` hands the sum over all rows
  to the ``backend`` it is given (:class:`repspace.core.backend.Backend`), which
  may be such a map and sum, so the measures stay the local functions.
* **Non-finite input** is not scanned for up front: a NaN or inf reaches the
  column sums, and only then is the array scanned to name the first bad row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.arrays import as_matrix, block_rows, max_abs
from repspace.core.errors import InputError

if TYPE_CHECKING:
    from repspace.core.backend import Backend

__all__ = ["MomentPlan", "Moments", "accumulate", "add_sums", "finish", "moments", "plan", "require_variance"]

#: First-block magnitudes inside this range are used unscaled.
_SAFE_LOW, _SAFE_HIGH = 2.0**-40, 2.0**40
#: A float32 scale factor must stay well inside float32's normal range.
_F32_SCALE = (2.0**-100, 2.0**100)


@dataclass(frozen=True, eq=False)
class Moments:
    """Centred second moments of ``X`` (n × d₁) and ``Y`` (n × d₂), in shifted and scaled units.

    Attributes
    ----------
    n : int
        Rows.
    cyx : ndarray (d₂, d₁)
        Centred ``YᵀX``.
    trace_x, trace_y : float
        ``Σ_i ‖x_i − x̄‖²`` and the same for ``Y`` (≥ 0).
    constant_x, constant_y : bool
        Every row equals the first (exactly: the shifted data are all zero).
    cxx, cyy : ndarray or None
        Centred ``XᵀX`` (d₁ × d₁) and ``YᵀY``, when asked for (``grams``).
    hsic_xy, hsic_xx, hsic_yy : float or None
        Unbiased HSIC of the linear kernels (Song et al. 2012, eq. 5), when
        asked for (``debiased``) and ``n ≥ 4``.
    products : str
        ``float32`` or ``float64``: the dtype blocks were multiplied in.
    mean_x, mean_y : ndarray
        Column means of ``X`` and ``Y`` in the data's units (float64).
    scale_x, scale_y : float
        The powers of two the shifted data were multiplied by: ``cyx`` is
        ``scale_y · scale_x`` times the centred ``YᵀX`` of the data itself.
    """

    n: int
    cyx: np.ndarray
    trace_x: float
    trace_y: float
    constant_x: bool
    constant_y: bool
    cxx: np.ndarray | None = None
    cyy: np.ndarray | None = None
    hsic_xy: float | None = None
    hsic_xx: float | None = None
    hsic_yy: float | None = None
    products: str = "float64"
    mean_x: np.ndarray | None = None
    mean_y: np.ndarray | None = None
    scale_x: float = 1.0
    scale_y: float = 1.0

    def cross(self) -> tuple[np.ndarray, float, float]:
        """The centred ``XᵀY`` (d₁ × d₂) and the two centred squared norms, in the data's units."""
        sx, sy = self.scale_x, self.scale_y  # divided one at a time: their product may overflow
        return self.cyx.T / sy / sx, self.trace_x / sx / sx, self.trace_y / sy / sy


def require_variance(m: Moments, measure: str) -> None:
    """Raise :class:`InputError` when ``X`` or ``Y`` has no variance (all rows equal), naming the measure."""
    for name, const in (("X", m.constant_x), ("Y", m.constant_y)):
        if const:
            raise InputError(f"{name} has no variance (every row is the same): {measure} is undefined")


def _pow2_scale(m: float) -> float:
    """A power of two bringing ``m`` into ``[0.5, 1)``; 1.0 when ``m`` is already safe (or 0, or not finite)."""
    if not math.isfinite(m) or m == 0.0 or _SAFE_LOW <= m <= _SAFE_HIGH:
        return 1.0
    return _pow2(-math.frexp(m)[1])


def _pow2(e: int) -> float:
    """``2**e`` with ``e`` clamped to ±1000 (subnormal input would ask for more than float64 holds)."""
    return math.ldexp(1.0, max(-1000, min(1000, e)))


def _global_scale(A: np.ndarray) -> float:
    """A power of two bringing ``2·max|A|`` (a bound on the shifted entries) into ``[0.5, 1)``."""
    m = max_abs(A)
    return _pow2(-(math.frexp(m)[1] + 1)) if 0.0 < m < math.inf else 1.0


def _first_block_scale(X: np.ndarray, rows: int) -> float:
    pivot = np.asarray(X[0], dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        m = float(np.max(np.abs(np.subtract(X[:rows], pivot, dtype=np.float64))))
        if m == 0.0:
            m = float(np.max(np.abs(pivot)))
    return _pow2_scale(m)


def _shifted(block: np.ndarray, pivot: np.ndarray, scale: float, work: type) -> np.ndarray:
    z = np.asarray(np.subtract(block, pivot, dtype=work))
    if scale != 1.0:
        z *= work(scale)
    return z


@dataclass(frozen=True, eq=False)
class MomentPlan:
    """How every row of one moment pass is shifted, scaled and multiplied: one plan for all shards.

    :func:`moments` makes it from the first block of rows; a distributed pass
    makes it once on the driver and gives it to every shard, so that the
    shards' :func:`accumulate` sums add up (:func:`add_sums`) to exactly the
    sums of one pass, and :func:`finish` turns them into :class:`Moments`.

    Attributes
    ----------
    pivot_x, pivot_y : ndarray
        The rows every row is shifted by (the first rows of ``X`` and ``Y``), float64.
    scale_x, scale_y : float
        The powers of two the shifted rows are multiplied by.
    work : str
        ``float32`` or ``float64``: the dtype blocks are multiplied in.
    grams, debiased : bool
        Whether ``XᵀX``/``YᵀY`` and the unbiased-HSIC terms are accumulated.

    Examples
    --------
    >>> X = np.array([[1.0, 2.0], [3.0, 2.0], [5.0, 2.0]])
    >>> p = plan(X, X)
    >>> s = add_sums(accumulate(X[:1], X[:1], p), accumulate(X[1:], X[1:], p))
    >>> finish(s, 3, p).cxx.tolist() == moments(X, X).cxx.tolist()
    True
    """

    pivot_x: np.ndarray
    pivot_y: np.ndarray
    scale_x: float = 1.0
    scale_y: float = 1.0
    work: str = "float64"
    grams: bool = True
    debiased: bool = False

    def __repr__(self) -> str:
        return (f"MomentPlan(d=({len(self.pivot_x)}, {len(self.pivot_y)}), scales=({self.scale_x:g}, "
                f"{self.scale_y:g}), work={self.work}, grams={self.grams}, debiased={self.debiased})")


def plan(X: Any, Y: Any, *, grams: bool = True, debiased: bool = False, precision: str = "auto") -> MomentPlan:
    """The plan :func:`moments` follows for ``X`` and ``Y``: pivots, scales from the first block, product dtype.

    Reads only the first block of rows (and the dtypes). See :class:`MomentPlan`.

    Examples
    --------
    >>> p = plan(np.array([[1e60], [3e60]]), np.ones((2, 1)))
    >>> p.scale_x == 2.0**-201, p.pivot_x.tolist(), p.work   # shifted entries up to 2e60 ≈ 2²⁰⁰·³
    (True, [1e+60], 'float64')
    """
    debiased = debiased and grams
    work: type = np.float32 if (precision == "auto" and X.dtype == np.float32 and Y.dtype == np.float32) \
        else np.float64
    rows = block_rows(X.shape[1] + Y.shape[1])
    scales = (_first_block_scale(X, rows), _first_block_scale(Y, rows))
    if work is np.float32 and not all(_F32_SCALE[0] <= s <= _F32_SCALE[1] for s in scales):
        work = np.float64
    return MomentPlan(np.array(X[0], dtype=np.float64), np.array(Y[0], dtype=np.float64), float(scales[0]),
                      float(scales[1]), np.dtype(work).name, bool(grams), bool(debiased))


def accumulate(X: Any, Y: Any, p: MomentPlan) -> dict[str, Any]:
    """One pass over these rows (all of them, or one shard): column sums, Gram products, row-norm terms.

    Every entry is float64 (arrays or floats); the sums of two shards add up
    (:func:`add_sums`) to the sums of their rows together. Non-finite input
    gives non-finite sums (no error here).

    Examples
    --------
    >>> X = np.array([[1.0], [2.0], [4.0]])
    >>> s = accumulate(X, X, plan(X, X, grams=False))
    >>> s["sx"].tolist(), s["qa"]
    ([4.0], 10.0)
    """
    work: type = np.dtype(p.work).type
    grams, debiased = p.grams, p.debiased
    n, d1 = X.shape
    d2 = Y.shape[1]
    px, py = np.array(p.pivot_x, dtype=work), np.array(p.pivot_y, dtype=work)
    acc: dict[str, Any] = {"sx": np.zeros(d1), "sy": np.zeros(d2), "gyx": np.zeros((d2, d1))}
    if grams:
        acc["gxx"], acc["gyy"] = np.zeros((d1, d1)), np.zeros((d2, d2))
    norms = debiased or not grams
    if norms:
        acc.update(qa=0.0, qb=0.0)
    if debiased:
        acc.update(saa=0.0, sbb=0.0, sab=0.0, ax=np.zeros(d1), bx=np.zeros(d1), ay=np.zeros(d2), by=np.zeros(d2))
    step = block_rows(d1 + d2)
    with np.errstate(over="ignore", invalid="ignore"):
        for lo in range(0, n, step):
            zx = _shifted(X[lo:lo + step], px, p.scale_x, work)
            zy = _shifted(Y[lo:lo + step], py, p.scale_y, work)
            acc["sx"] += zx.sum(axis=0, dtype=np.float64)
            acc["sy"] += zy.sum(axis=0, dtype=np.float64)
            acc["gyx"] += zy.T @ zx
            if grams:
                acc["gxx"] += zx.T @ zx
                acc["gyy"] += zy.T @ zy
            if norms:
                a = np.einsum("ij,ij->i", zx, zx, dtype=np.float64)
                b = np.einsum("ij,ij->i", zy, zy, dtype=np.float64)
                acc["qa"] += float(a.sum())
                acc["qb"] += float(b.sum())
            if debiased:
                acc["saa"] += float(a @ a)
                acc["sbb"] += float(b @ b)
                acc["sab"] += float(a @ b)
                zx64 = zx if work is np.float64 else zx.astype(np.float64)
                zy64 = zy if work is np.float64 else zy.astype(np.float64)
                acc["ax"] += a @ zx64
                acc["bx"] += b @ zx64
                acc["ay"] += a @ zy64
                acc["by"] += b @ zy64
    return acc


def add_sums(*parts: dict[str, Any]) -> dict[str, Any]:
    """The sums of several shards' :func:`accumulate` (same plan), added entry by entry in float64.

    Examples
    --------
    >>> add_sums({"sx": np.array([1.0]), "qa": 2.0}, {"sx": np.array([3.0]), "qa": 0.5})
    {'sx': array([4.]), 'qa': 2.5}
    """
    if not parts:
        raise InputError("add_sums needs at least one shard's sums")
    out = {key: (np.array(value, dtype=np.float64) if isinstance(value, np.ndarray) else float(value))
           for key, value in parts[0].items()}
    with np.errstate(over="ignore", invalid="ignore"):
        for part in parts[1:]:
            for key, value in part.items():
                out[key] += value
    return out


def _finite(acc: dict[str, Any]) -> bool:
    return all(np.all(np.isfinite(v)) for v in acc.values())


def _hsic(n: int, t: float, p: float, q: float, r: float) -> float:
    """Song et al. 2012 eq. 5 from ``t = tr(K̃L̃)``, ``p = 1ᵀK̃1``, ``q = 1ᵀL̃1``, ``r = 1ᵀK̃L̃1``."""
    return (t + p * q / ((n - 1) * (n - 2)) - 2.0 * r / (n - 2)) / (n * (n - 3))


def _unbiased_hsics(acc: dict[str, Any], n: int) -> tuple[float, float, float]:
    """Unbiased HSIC of the linear kernels K = XXᵀ, L = YYᵀ without forming them.

    With ``a_i = ‖x_i‖²``, ``b_i = ‖y_i‖²`` and ``s`` the column sums:
    ``tr(K̃L̃) = ‖YᵀX‖²_F − Σ a_i b_i``, ``1ᵀK̃1 = ‖s_x‖² − Σ a_i`` and
    ``1ᵀK̃L̃1 = s_yᵀ(YᵀX)s_x − s_x·Σ b_i x_i − s_y·Σ a_i y_i + Σ a_i b_i``
    (``K̃`` is ``K`` with its diagonal set to zero). The estimator does not
    change when the rows are shifted, so the pivot-shifted data give it exactly.
    """
    sx, sy, gyx, gxx, gyy = acc["sx"], acc["sy"], acc["gyx"], acc["gxx"], acc["gyy"]
    px = float(sx @ sx) - acc["qa"]
    py = float(sy @ sy) - acc["qb"]
    xy = _hsic(n, float(np.sum(gyx * gyx)) - acc["sab"], px, py,
               float(sy @ gyx @ sx) - float(sx @ acc["bx"]) - float(sy @ acc["ay"]) + acc["sab"])
    xx = _hsic(n, float(np.sum(gxx * gxx)) - acc["saa"], px, px,
               float(sx @ gxx @ sx) - 2.0 * float(sx @ acc["ax"]) + acc["saa"])
    yy = _hsic(n, float(np.sum(gyy * gyy)) - acc["sbb"], py, py,
               float(sy @ gyy @ sy) - 2.0 * float(sy @ acc["by"]) + acc["sbb"])
    return xy, xx, yy


def _centred(g: np.ndarray, s_left: np.ndarray, s_right: np.ndarray, n: int, symmetric: bool) -> np.ndarray:
    c = g - np.outer(s_left, s_right) / n
    return (c + c.T) / 2.0 if symmetric else c


def moments(X: np.ndarray, Y: np.ndarray, *, grams: bool = True, debiased: bool = False,
            precision: str = "auto", backend: Backend | None = None) -> Moments:
    """Stream ``X`` and ``Y`` (already shape-checked, same ``n``) once and return their centred moments.

    Parameters
    ----------
    X, Y : arrays of shape (n, d₁), (n, d₂)
        Arrays or memory maps; read block by block.
    grams : bool
        Also accumulate ``XᵀX`` and ``YᵀY`` (CKA, SVCCA); the Procrustes
        distance needs only ``YᵀX`` and the traces.
    debiased : bool
        Also the row-norm terms of the unbiased HSIC (needs ``grams``).
    precision : ``auto`` or ``float64``
        ``auto``: float32 block products when both inputs are float32.
    backend : Backend, optional
        Sums the rows under the plan made here (its ``accumulate(X, Y, plan)``
        returns what :func:`accumulate` returns over all rows, e.g. a map of it
        over row shards and a reduce with :func:`add_sums`); ``None``: this
        process (as :data:`repspace.core.backend.LOCAL`, by :func:`accumulate`).

    Raises
    ------
    InputError
        A NaN or infinite value (the first bad row is named).

    Examples
    --------
    >>> X = np.array([[1.0, 2.0], [3.0, 2.0], [5.0, 2.0]])
    >>> m = moments(X, X)
    >>> m.cxx.tolist(), m.trace_x, m.constant_x
    ([[8.0, 0.0], [0.0, 0.0]], 8.0, False)

    A backend that sums two shards of rows and adds their sums:

    >>> class Halves:
    ...     name = "halves"
    ...     def accumulate(self, A, B, p):
    ...         return add_sums(accumulate(A[:1], B[:1], p), accumulate(A[1:], B[1:], p))
    >>> moments(X, X, backend=Halves()).cxx.tolist()
    [[8.0, 0.0], [0.0, 0.0]]
    """
    n = X.shape[0]
    p = plan(X, Y, grams=grams, debiased=debiased, precision=precision)
    run = accumulate if backend is None else backend.accumulate  # None: LOCAL's work, without its indirection
    acc = run(X, Y, p)
    if not (np.all(np.isfinite(acc["sx"])) and np.all(np.isfinite(acc["sy"]))):
        as_matrix(X, "X")  # raises, naming the first row with a NaN or inf
        as_matrix(Y, "Y")
    if not _finite(acc):  # an overflow in a later block: redo in float64 at the global scale
        p = replace(p, work="float64", scale_x=_global_scale(X), scale_y=_global_scale(Y))
        acc = run(X, Y, p)
    return finish(acc, n, p)


def finish(acc: dict[str, Any], n: int, p: MomentPlan) -> Moments:
    """The :class:`Moments` of ``n`` rows from their sums (:func:`accumulate`, :func:`add_sums`) under plan ``p``.

    Examples
    --------
    >>> X = np.array([[1.0, 2.0], [3.0, 2.0], [5.0, 2.0]])
    >>> p = plan(X, X)
    >>> finish(accumulate(X, X, p), 3, p).trace_x
    8.0
    """
    sx, sy = acc["sx"], acc["sy"]
    qa = acc["qa"] if "qa" in acc else float(np.trace(acc["gxx"]))
    qb = acc["qb"] if "qb" in acc else float(np.trace(acc["gyy"]))
    out: dict[str, Any] = {
        "cyx": _centred(acc["gyx"], sy, sx, n, False),
        "trace_x": max(0.0, qa - float(sx @ sx) / n),
        "trace_y": max(0.0, qb - float(sy @ sy) / n),
        "constant_x": qa == 0.0,
        "constant_y": qb == 0.0,
        "products": p.work,
        "mean_x": np.asarray(p.pivot_x, np.float64) + sx / (n * p.scale_x),
        "mean_y": np.asarray(p.pivot_y, np.float64) + sy / (n * p.scale_y),
        "scale_x": float(p.scale_x),
        "scale_y": float(p.scale_y),
    }
    if p.grams:
        out["cxx"] = _centred(acc["gxx"], sx, sx, n, True)
        out["cyy"] = _centred(acc["gyy"], sy, sy, n, True)
    if p.debiased and n >= 4:
        out["hsic_xy"], out["hsic_xx"], out["hsic_yy"] = _unbiased_hsics(dict(acc, qa=qa, qb=qb), n)
    return Moments(n=n, **out)
