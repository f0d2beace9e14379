"""Representation-strength audit: how much of a space's variance each known feature explains on its own.

For one feature at a time (S119's per-feature variance audit), the vectors of the items that have it are
regressed on it by ordinary least squares, every dimension at once, with an intercept: a numeric feature is one
column, a categorical one its levels one-hot (``k − 1`` columns beside the intercept). The figure is the
multivariate R², the share of the items' total variance (the trace of their covariance) that the fit
explains: ``R² = ‖Ŷ − Ȳ‖²_F / ‖Y − Ȳ‖²_F``. For a categorical feature that is the between-level share of the
sum of squares ``Σ_g n_g ‖ȳ_g − ȳ‖² / Σ_k ‖y_k − ȳ‖²``; for a numeric one ``‖Y_cᵀ x_c‖² / (‖x_c‖² ‖Y_c‖²_F)``.

The space is read once, in row blocks, whatever the number of features (per-feature sums in float64).

Beside it the chance level of a feature with ``p`` columns unrelated to the space, ``p / (n − 1)`` (the expected
R² of ``p`` random regressors), and the adjusted R², ``1 − (1 − R²)(n − 1)/(n − p − 1)``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from numbers import Real
from typing import Any

import numpy as np

from repspace.core.arrays import as_matrix, row_blocks
from repspace.core.errors import InputError

__all__ = ["FeatureAudit", "FeatureStrength", "feature_audit", "feature_r2"]


def _is_number(v: Any) -> bool:
    return isinstance(v, (Real, np.number)) and not isinstance(v, (bool, np.bool_))


def feature_r2(Y: Any, values: Sequence[Any], *, categorical: bool) -> tuple[float, int]:
    """``(R², p)``: the share of the variance of the rows of ``Y`` explained by one feature (``values``, one per
    row, none missing), and its regressor columns ``p`` (1 numeric, levels − 1 categorical).

    Examples
    --------
    >>> Y = np.array([[0.0, 1.0], [0.0, -1.0], [4.0, 1.0], [4.0, -1.0]])
    >>> feature_r2(Y, ["a", "a", "b", "b"], categorical=True)
    (0.8, 1)
    >>> r2, p = feature_r2(Y, [0.0, 0.0, 1.0, 1.0], categorical=False)
    >>> round(r2, 9), p
    (0.8, 1)
    """
    Y = np.asarray(Y, dtype=np.float64)
    Yc = Y - Y.mean(axis=0)
    total = float((Yc ** 2).sum())
    if categorical:
        levels, codes = np.unique(np.asarray([str(v) for v in values], dtype=object), return_inverse=True)
        sums = np.zeros((len(levels), Y.shape[1]))
        np.add.at(sums, codes, Yc)
        counts = np.bincount(codes, minlength=len(levels)).astype(np.float64)
        explained = float(((sums ** 2).sum(axis=1) / counts).sum())
        p = len(levels) - 1
    else:
        x = np.asarray(values, dtype=np.float64)
        xc = x - x.mean()
        sxx = float(xc @ xc)
        explained = float(((xc @ Yc) ** 2).sum()) / sxx if sxx > 0 else 0.0
        p = 1
    return (explained / total if total > 0 else 0.0), p


def _spec(name: str, values: list[Any], n: int, forced: bool) -> dict[str, Any]:
    """One feature checked and encoded: its rows, its codes (categorical) or centred values (numeric)."""
    if len(values) != n:
        raise InputError(f"feature {name!r} has {len(values)} values for {n} rows")
    rows = np.array([i for i, v in enumerate(values) if v is not None], dtype=np.int64)
    present = [values[i] for i in rows.tolist()]
    numbers = [_is_number(v) for v in present]
    cat = forced or not all(numbers)
    if cat and any(numbers) and not forced:
        raise InputError(f"feature {name!r} mixes numbers and text; name it in categorical to read it as classes")
    if len(rows) < 3:
        raise InputError(f"feature {name!r} has {len(rows)} items with a value; a fit needs 3")
    spec: dict[str, Any] = {"name": name, "rows": rows, "m": len(rows), "categorical": cat}
    if cat:
        levels, codes = np.unique(np.asarray([str(v) for v in present], dtype=object), return_inverse=True)
        spec.update(codes=codes, counts=np.bincount(codes).astype(np.float64), p=len(levels) - 1)
    else:
        x = np.asarray(present, dtype=np.float64)
        if not np.isfinite(x).all():
            raise InputError(f"feature {name!r} has a NaN or infinite value")
        spec.update(x=x - x.mean(), p=1 if np.ptp(x) > 0 else 0)
    if spec["p"] == 0:
        raise InputError(f"feature {name!r} has one value on every item that has it; it explains nothing")
    return spec


def _block_sums(X: Any, specs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per feature, one pass over ``X`` in row blocks (float64, shifted by the first block's mean so that the
    sums do not cancel): Σy, Σ‖y‖² over its rows, and its level sums (categorical) or Σx, Σx², Σxy (numeric)."""
    d = X.shape[1]
    acc = [{"y": np.zeros(d), "sq": 0.0, **({"groups": np.zeros((len(sp["counts"]), d))} if sp["categorical"]
                                          else {"x": 0.0, "xx": 0.0, "xy": np.zeros(d)})} for sp in specs]
    pivot = None
    for start, block in row_blocks(X):
        if pivot is None:
            pivot = block.mean(axis=0)
        b = block - pivot
        stop = start + len(b)
        for sp, a in zip(specs, acc):
            lo, hi = np.searchsorted(sp["rows"], [start, stop])
            if lo == hi:
                continue
            yb = b[sp["rows"][lo:hi] - start]
            a["y"] += yb.sum(axis=0)
            a["sq"] += float(np.einsum("ij,ij->", yb, yb))
            if sp["categorical"]:
                np.add.at(a["groups"], sp["codes"][lo:hi], yb)
            else:
                xb = sp["x"][lo:hi]
                a["x"] += float(xb.sum())
                a["xx"] += float(xb @ xb)
                a["xy"] += xb @ yb
    return acc


@dataclass(frozen=True)
class FeatureStrength:
    """One feature's share of the variance of the items that have it.

    Examples
    --------
    >>> FeatureStrength("pos", "categorical", 100, 3, 2, 0.25, 0.234536, 0.020202).to_dict()["r2"]
    0.25
    """

    feature: str
    kind: str
    n: int
    levels: int | None
    df: int
    r2: float
    adjusted_r2: float | None
    chance_r2: float

    def to_dict(self) -> dict[str, Any]:
        """``{"feature", "kind", "n", "levels", "df", "r2", "adjusted_r2", "chance_r2"}``."""
        return {"feature": self.feature, "kind": self.kind, "n": self.n, "levels": self.levels, "df": self.df,
                "r2": self.r2, "adjusted_r2": self.adjusted_r2, "chance_r2": self.chance_r2}


@dataclass(frozen=True)
class FeatureAudit:
    """The representation strength of each feature, strongest first.

    Examples
    --------
    >>> X = np.random.default_rng(0).standard_normal((50, 4))
    >>> r = feature_audit(X, {"first": X[:, 0].tolist(), "half": ["ab"[i % 2] for i in range(50)]})
    >>> [f.feature for f in r.features]
    ['first', 'half']
    """

    n: int
    dim: int
    features: tuple[FeatureStrength, ...]

    def to_dict(self) -> dict[str, Any]:
        """``{"n", "dim", "features": [...]}``."""
        return {"n": self.n, "dim": self.dim, "features": [f.to_dict() for f in self.features]}


def feature_audit(X: Any, features: Mapping[str, Sequence[Any]], *, categorical: Collection[str] = ()
                  ) -> FeatureAudit:
    """The share of the variance of ``X`` explained by each feature alone (see the module), strongest first.

    Parameters
    ----------
    X : array of shape (n, d)
    features : mapping of str to sequence
        Each feature's value per row of ``X``; ``None`` is missing (that row is left out of the feature's fit).
        Numbers (not booleans) are numeric; strings and booleans categorical.
    categorical : collection of str
        Features read as categorical even when their values are numbers (a class id).

    Returns
    -------
    FeatureAudit

    Examples
    --------
    >>> X = np.array([[0.0, 1.0], [0.0, -1.0], [4.0, 1.0], [4.0, -1.0]])
    >>> r = feature_audit(X, {"side": ["l", "l", "r", "r"], "sign": [1, -1, 1, -1]})
    >>> [(f.feature, f.kind, round(f.r2, 3)) for f in r.features]
    [('side', 'categorical', 0.8), ('sign', 'numeric', 0.2)]
    """
    X = as_matrix(X, min_rows=2)
    n, d = X.shape
    if not features:
        raise InputError("name at least one feature to audit")
    unknown = sorted(set(categorical) - set(features))
    if unknown:
        raise InputError(f"categorical names {unknown[0]!r}, which is not one of the features")
    specs = [_spec(str(name), list(values), n, name in categorical) for name, values in features.items()]
    sums = _block_sums(X, specs)
    out = []
    for spec, acc in zip(specs, sums):
        m, cat = spec["m"], spec["categorical"]
        mean_sq = float(acc["y"] @ acc["y"]) / m
        total = acc["sq"] - mean_sq
        if cat:
            explained = float(((acc["groups"] ** 2).sum(axis=1) / spec["counts"]).sum()) - mean_sq
        else:
            sxy = acc["xy"] - acc["x"] * acc["y"] / m
            sxx = acc["xx"] - acc["x"] ** 2 / m
            explained = float(sxy @ sxy) / sxx
        r2 = min(max(explained / total, 0.0), 1.0) if total > 0 else 0.0
        p = spec["p"]
        adjusted = round(1.0 - (1.0 - r2) * (m - 1) / (m - p - 1), 9) if m - p - 1 > 0 else None
        out.append(FeatureStrength(spec["name"], "categorical" if cat else "numeric", m, p + 1 if cat else None, p,
                                   round(r2, 9), adjusted, round(p / (m - 1), 9)))
    out.sort(key=lambda f: -f.r2)
    return FeatureAudit(n, d, tuple(out))
