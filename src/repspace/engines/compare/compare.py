"""Every comparison measure at once: :func:`compare` and its :class:`Comparison` result.

The measures share their expensive parts: one streamed pass over the rows gives
the moments behind ``cka_linear``, ``cka_debiased``, ``procrustes`` and
``svcca``, and the two kNN graphs serve ``mutual_knn`` and
``neighbourhood_jaccard``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from repspace.core.arrays import check_pair
from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.core.backend import Backend
from repspace.core.moments import moments
from repspace.core.space import Metric
from repspace.engines.compare import neighbours as _nb
from repspace.engines.compare._inputs import check_precision
from repspace.engines.compare._measure import MEASURES
from repspace.engines.compare.cka import _debiased_from, _linear_from
from repspace.engines.compare.procrustes import _from as _procrustes_from
from repspace.engines.compare.rsa import rsa
from repspace.engines.compare.svcca import _from as _svcca_from

__all__ = ["Comparison", "compare"]

_FROM_MOMENTS: dict[str, Callable[[Any], Any]] = {
    "cka_linear": _linear_from,
    "cka_debiased": _debiased_from,
    "procrustes": _procrustes_from,
    "svcca": _svcca_from,
}
_FROM_GRAPHS: dict[str, Callable[[Any, Any], Any]] = {
    "mutual_knn": _nb.mutual_knn_from_graphs,
    "neighbourhood_jaccard": _nb.jaccard_from_graphs,
}


@dataclass(frozen=True, eq=False)
class Comparison:
    """The measures comparing two spaces over the same items.

    Attributes
    ----------
    n_shared : int
        Items (rows) compared.
    k : int
        Neighbourhood size of the kNN measures.
    results : dict
        JSON key → result: a float (``cka_linear``, ``cka_debiased``,
        ``procrustes``), an :class:`~repspace.engines.geometry.Estimate` (``rsa``) or a
        result object (``mutual_knn``, ``neighbourhood_jaccard``, ``svcca``).
    changed : ChangedItems or None
        The items whose neighbourhoods changed most (``compare(..., changed=N)``),
        from the same two kNN graphs as the neighbour measures.
    skipped : dict
        JSON key → the reason a requested measure is undefined on these spaces
        (e.g. debiased CKA on 3 items, kNN with ``n ≤ k``).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).standard_normal((50, 4))
    >>> c = compare(X, X, measures=["cka_linear", "procrustes", "mutual_knn"], k=5)
    >>> {key: round(v, 6) for key, v in c.scores().items()}  # procrustes: 0 up to √rounding, ~1e-8
    {'cka_linear': 1.0, 'procrustes': 0.0, 'mutual_knn': 1.0}
    >>> c.to_dict()["mutual_knn"]["knn"]["method"], c["procrustes"] < 1e-6
    ('exact', True)
    """

    n_shared: int
    k: int
    results: dict[str, Any] = field(repr=False)
    skipped: dict[str, str] = field(default_factory=dict, repr=False)
    changed: _nb.ChangedItems | None = field(default=None, repr=False)

    def __getitem__(self, key: str) -> Any:
        return self.results[key]

    def scores(self) -> dict[str, float]:
        """JSON key → the headline number of each computed measure."""
        return {key: MEASURES[key].score(r) for key, r in self.results.items()}

    def to_dict(self, per_item: bool = False) -> dict[str, Any]:
        """``{"n_shared", "k", <measure keys>..., "skipped"}`` in METRICS.md's names.

        Floats stay floats; ``rsa`` is ``{"value", "low", "high", "exact",
        "n_pairs"}``; ``mutual_knn``, ``neighbourhood_jaccard`` and ``svcca``
        are their results' ``to_dict()`` (``per_item`` adds the per-item
        Jaccard list).
        """
        out: dict[str, Any] = {"n_shared": int(self.n_shared), "k": int(self.k)}
        for key, r in self.results.items():
            if isinstance(r, (int, float)):
                out[key] = float(r)
            elif key == "neighbourhood_jaccard":
                out[key] = r.to_dict(per_item=per_item)
            else:
                out[key] = r.to_dict()
        out["skipped"] = dict(self.skipped)
        if self.changed is not None:
            out["changed"] = self.changed.to_dict()
        return out

    def __repr__(self) -> str:
        parts = [f"n_shared={self.n_shared}", f"k={self.k}"]
        parts += [f"{key}={v:.4f}" for key, v in self.scores().items()]
        if self.skipped:
            parts.append(f"skipped={sorted(self.skipped)}")
        return f"Comparison({', '.join(parts)})"


def _keys(measures: str | Iterable[str] | None) -> list[str]:
    if measures is None:
        return list(MEASURES)
    keys = [measures] if isinstance(measures, str) else list(measures)
    unknown = [m for m in keys if m not in MEASURES]
    if unknown:
        raise InputError(f"unknown measure {unknown[0]!r}; choose from {', '.join(MEASURES)}")
    if not keys:
        raise InputError("no measure asked for")
    return list(dict.fromkeys(keys))


def compare(X: Any, Y: Any, measures: str | Iterable[str] | None = None, k: int = _nb.DEFAULT_K, *,
            seed: int | None = 0, exact_knn: bool | None = None, precision: str = "auto",
            strict: bool = False, changed: int = 0,
            metrics: tuple[str, str] = ("cosine", "cosine"), backend: Backend | None = None) -> Comparison:
    """Compare two spaces over the same items with every measure (or those named).

    Parameters
    ----------
    X : array of shape (n, d₁)
    Y : array of shape (n, d₂)
        The same items, row for row (join on item ids before calling).
    measures : str, list of str or None
        JSON keys from :data:`~repspace.engines.compare.MEASURES`; ``None``: all.
    k : int, default 10
        Neighbours per item for ``mutual_knn`` and ``neighbourhood_jaccard``.
    seed : int or None
        Seed of the RSA pair sample and the HNSW recall sample.
    exact_knn : bool or None
        Force exact (``True``) or HNSW (``False``) kNN graphs; ``None``:
        exact up to 50,000 items.
    precision : ``auto`` or ``float64``
        Block products of the moment pass (:func:`~repspace.engines.compare.cka_linear`);
        float64 whenever ``svcca`` is computed.
    strict : bool, default False
        Raise when a measure is undefined on these spaces, instead of
        recording why in ``skipped``.
    changed : int, default 0
        Also list this many items whose neighbourhoods changed most
        (:func:`~repspace.engines.compare.changed_items`), from the same kNN graphs.
    metrics : (str, str), default ("cosine", "cosine")
        The metric of each side's kNN graph. A ``poincare`` side (points of the
        hyperbolic ball) is compared through its neighbours and its distances
        (``mutual_knn``, ``neighbourhood_jaccard``, ``rsa`` on hyperbolic
        distances): the measures on coordinates (CKA, Procrustes, SVCCA) are
        undefined for it and recorded in ``skipped`` with that reason (raised
        with ``strict``).
    backend : Backend, optional
        Where the moment pass and the kNN graphs run
        (:class:`repspace.core.backend.Backend`; ``None``: this process).

    Returns
    -------
    Comparison

    Raises
    ------
    InputError
        Arrays that are not finite 2-d numeric matrices over the same number
        of rows, an unknown measure; with ``strict``, any measure's own error.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).standard_normal((3, 2))
    >>> c = compare(X, X + 1.0)
    >>> sorted(c.scores()), sorted(c.skipped)
    (['cka_linear', 'procrustes', 'rsa', 'svcca'], ['cka_debiased', 'mutual_knn', 'neighbourhood_jaccard'])
    >>> print(c.skipped["mutual_knn"])
    k=10 needs at least 11 items (an item's neighbours exclude itself), got 3
    """
    keys = _keys(measures)
    check_precision(precision)
    X, Y = check_pair(X, Y)
    results: dict[str, Any] = {}
    skipped: dict[str, str] = {}

    def attempt(key: str, fn: Callable[[], Any]) -> None:
        try:
            results[key] = fn()
        except InputError as e:
            if strict:
                raise
            skipped[key] = str(e)

    hyperbolic = [m for m in map(Metric.parse, metrics) if not m.is_vector_space]
    undefined = {key for key in keys if hyperbolic and key in _FROM_MOMENTS}
    for key in sorted(undefined):  # coordinates of the ball are not vectors: only neighbour measures are defined
        attempt(key, lambda key=key: hyperbolic[0].require_vector_space(f"{key} (a measure on coordinates)"))
    on_moments = [key for key in keys if key in _FROM_MOMENTS and key not in undefined]
    if on_moments:
        m = moments(X, Y, grams=on_moments != ["procrustes"], debiased="cka_debiased" in keys,
                    precision="float64" if "svcca" in keys else precision, backend=backend)
        for key in on_moments:
            attempt(key, lambda key=key: _FROM_MOMENTS[key](m))
    check_scalar(changed, "changed", int, low=0)
    on_graphs = [key for key in keys if key in _FROM_GRAPHS]
    moved = None
    if on_graphs or changed:
        try:
            gx, gy = _nb.graphs(X, Y, k, exact=exact_knn, seed=seed, metrics=metrics, backend=backend)
        except InputError as e:
            if strict or changed:  # the moved items were asked for explicitly: no silent skip
                raise
            skipped.update({key: str(e) for key in on_graphs})
        else:
            for key in on_graphs:
                attempt(key, lambda key=key: _FROM_GRAPHS[key](gx, gy))
            if changed:
                moved = _nb.changed_items_from_graphs(gx, gy, int(changed))
    if "rsa" in keys:  # on distances: a poincare side uses its hyperbolic distance
        attempt("rsa", lambda: rsa(X, Y, seed=seed, metrics=metrics))
    ordered = {key: results[key] for key in keys if key in results}
    return Comparison(int(X.shape[0]), int(k), ordered, {key: skipped[key] for key in keys if key in skipped},
                      moved)
