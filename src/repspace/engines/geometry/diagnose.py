"""One call for the whole geometry of a space: every metric of ``METRICS.md`` plus readings.

:func:`diagnose` computes the norms, hubness, isotropy, intrinsic dimension, rank and
spectrum, uniformity (and alignment when positive pairs are given) of one array, sharing
one neighbour graph per metric, and adds one-line readings with what to try (CSLS for
hubness, centring or whitening for anisotropy, all-but-the-top for rogue dimensions).

Examples
--------
>>> import numpy as np
>>> x = np.random.default_rng(0).standard_normal((600, 16))
>>> report = diagnose(x)
>>> sorted(report.to_dict())[:3]
['d', 'hubness.antihub_rate', 'hubness.gini']
>>> report.readings[0]
'no strong hubness: k-skewness 0.29'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from repspace.core.arrays import as_matrix, row_blocks
from repspace.core.estimate import Estimate
from repspace.core.backend import Backend
from repspace.core.knn import KnnGraph, knn_graph
from repspace.engines.geometry.hubness import HubnessResult, hubness
from repspace.engines.geometry.intrinsic import DEFAULT_K as ID_K
from repspace.engines.geometry.intrinsic import IntrinsicDimension, intrinsic_dimension
from repspace.engines.geometry.isotropy import IsotropyResult, isotropy
from repspace.engines.geometry.norms import NormStats, norms
from repspace.engines.geometry.spectrum import SpectrumResult, spectrum
from repspace.engines.geometry.uniformity import alignment, uniformity

__all__ = ["Diagnosis", "diagnose"]

#: k-skewness above which hubness is called strong (Radovanović et al. 2010 see > 1 as marked).
STRONG_SKEW = 1.0
#: Mean cosine above which a space is called anisotropic (Ethayarajh 2019's contextual layers: > 0.3).
ANISOTROPIC_COSINE = 0.3

#: Rogue dimensions are read out only above this mean cosine: their shares divide by it.
ROGUE_MIN_COSINE = 0.1


@dataclass(frozen=True)
class Diagnosis:
    """Every geometry metric of one space, and readings; ``to_dict()`` in METRICS.md names.

    For a ``poincare`` space (points of the hyperbolic ball) the measures on
    coordinates (isotropy, spectrum and rank, uniformity) are ``None`` and
    ``undefined`` says why, by JSON name.

    Examples
    --------
    >>> r = diagnose(np.random.default_rng(0).standard_normal((200, 6)), k=5)
    >>> r.n, r.d, r.metric, r.hubness.k, round(r.isotropy.mean_cosine.value, 1), r.undefined
    (200, 6, 'cosine', 5, 0.0, {})
    >>> d = r.to_dict()
    >>> "isotropy.top_pc_share" in d, "rank.effective_rank" in d, d["n"]
    (True, True, 200)

    Points of the Poincare ball have no isotropy or spectrum, and say why:

    >>> p = diagnose(np.random.default_rng(0).uniform(-0.3, 0.3, (100, 2)), k=5, metric="poincare")
    >>> p.isotropy, p.spectrum, sorted(p.undefined)
    (None, None, ['isotropy', 'rank', 'uniformity'])
    """

    n: int
    d: int
    metric: str
    norms: NormStats
    hubness: HubnessResult
    isotropy: IsotropyResult | None
    intrinsic_dimension: IntrinsicDimension
    spectrum: SpectrumResult | None
    uniformity: Estimate | None
    alignment: float | None = None
    readings: tuple[str, ...] = field(default=())
    undefined: Mapping[str, str] = field(default_factory=dict)

    def to_dict(self, per_item: bool = False) -> dict[str, Any]:
        """All metrics, flat, in the JSON names of METRICS.md (per-item lists with ``per_item``)."""
        out: dict[str, Any] = {"n": self.n, "d": self.d, "metric": self.metric}
        out.update(self.norms.to_dict())
        out.update(self.hubness.to_dict(per_item=per_item))
        if self.isotropy is not None:
            out.update(self.isotropy.to_dict())
        out.update(self.intrinsic_dimension.to_dict(per_item=per_item))
        if self.spectrum is not None:
            out.update(self.spectrum.to_dict())
        if self.uniformity is not None:
            out["uniformity"] = self.uniformity.to_dict()
        if self.alignment is not None:
            out["alignment"] = float(self.alignment)
        out.update({f"undefined.{key}": why for key, why in self.undefined.items()})
        out["readings"] = list(self.readings)
        return dict(sorted(out.items()))

    def __repr__(self) -> str:
        iso = "" if self.isotropy is None else f"mean_cosine={self.isotropy.mean_cosine.value:.3g}, "
        rank = "" if self.spectrum is None else f", effective_rank={self.spectrum.effective_rank:.3g}"
        return (f"Diagnosis(n={self.n}, d={self.d}, k_skewness={self.hubness.k_skewness:.3g}, "
                f"{iso}twonn={self.intrinsic_dimension.twonn:.3g}{rank})")


def diagnose(X: Any, *, k: int = 10, metric: str = "cosine", exact: bool | None = None,
             positives: tuple[Any, Any] | None = None, seed: int = 0, backend: Backend | None = None) -> Diagnosis:
    """Diagnose the geometry of ``X`` (rows are items).

    Parameters
    ----------
    X : array of shape (n, d)
    k : int
        Neighbourhood size of the hubness metrics (intrinsic dimension uses its own 20).
    metric : ``cosine``, ``ip``, ``l2`` or ``poincare``
        Of the neighbour graph behind hubness (intrinsic dimension is Euclidean).
        ``poincare``: rows are points of the open unit ball; hubness and
        intrinsic dimension are measured with the hyperbolic distance (one
        exact graph), the norms are the rows' Euclidean norms (depth in a
        hierarchy), and the measures on coordinates are left out
        (``undefined``).
    exact : bool, optional
        Force exact (True) or HNSW (False) neighbour graphs; default: exact up to
        :data:`repspace.engines.geometry.EXACT_MAX` items, HNSW with measured recall beyond.
    positives : (A, B) arrays, optional
        Positive pairs ``A[i] ~ B[i]`` for ``alignment``.
    seed : int
        Of every sample drawn (pairs, recall queries).
    backend : Backend, optional
        Where the neighbour graphs of hubness and intrinsic dimension are built
        (:class:`repspace.core.backend.Backend`; ``None``: this process). A
        ``poincare`` graph is always scanned here.

    Examples
    --------
    >>> x = np.random.default_rng(1).standard_normal((400, 8)) + 3.0   # far from the origin
    >>> r = diagnose(x, k=5)
    >>> r.isotropy.mean_cosine.value > 0.5, any("anisotropic" in s for s in r.readings)
    (True, True)
    """
    x = as_matrix(X, min_rows=2)
    n, d = x.shape
    nrm = norms(x)
    if str(metric) == "poincare":
        return _diagnose_poincare(x, k, nrm, positives)
    shared = None
    if str(metric) == "cosine" and n > max(k, ID_K) and _rows_have_unit_norm(x):
        # On unit vectors the cosine and Euclidean neighbour orders are the same (‖x − y‖² = 2 − 2cos):
        # one graph serves hubness and intrinsic dimension, the costliest part of a diagnosis.
        # A few neighbours more than needed: duplicates of other points take places in a list.
        shared = knn_graph(x, min(n - 1, max(k, ID_K) + SHARED_EXTRA), metric="l2", exact=exact, seed=seed,
                           backend=backend)
        cos = KnnGraph(shared.indices[:, :k], (shared.distances[:, :k].astype(np.float64) ** 2 / 2).astype(np.float32),
                       "cosine", shared.method, shared.recall, shared.recall_sample)
        hub = hubness(cos, k=k)
    else:
        hub = hubness(x, k=k, metric=metric, exact=exact, seed=seed, backend=backend)
    iso = isotropy(x, seed=seed)
    intr = intrinsic_dimension(x, exact=exact, seed=seed, graph=shared, backend=backend)
    spec = spectrum(x)
    uni = uniformity(x, seed=seed)
    align = None
    if positives is not None:
        align = alignment(*positives)
    return Diagnosis(n, d, str(metric), nrm, hub, iso, intr, spec, uni, align,
                     _readings(d, hub, iso, intr, spec))


#: Neighbours beyond max(k, 20) in a shared graph, so that duplicate rows rarely leave a list short.
SHARED_EXTRA = 4

#: Why each measure on coordinates is left out for a poincare space (by JSON name).
POINCARE_UNDEFINED = {
    "isotropy": "mean cosine, top-PC share, IsoScore and rogue dimensions measure directions and variance of "
                "vectors; the Poincare ball is not a vector space (its points are compared by hyperbolic distance)",
    "rank": "effective rank and the spectrum are of a covariance of vectors: not defined on the Poincare ball",
    "uniformity": "uniformity (Wang & Isola) is defined on the unit sphere, not the Poincare ball",
    "alignment": "alignment (Wang & Isola) is defined on the unit sphere, not the Poincare ball",
}


def _diagnose_poincare(x: np.ndarray, k: int, nrm: NormStats, positives: Any) -> Diagnosis:
    """Hubness and intrinsic dimension from one exact graph of hyperbolic distances; the rest undefined."""
    from repspace.core.hyperbolic import check_ball

    check_ball(x, "a poincare space's vectors")
    n, d = x.shape
    graph = knn_graph(x, min(n - 1, max(k, ID_K) + SHARED_EXTRA), metric="poincare")
    hub = hubness(KnnGraph(graph.indices[:, :k], graph.distances[:, :k], "poincare", graph.method), k=k)
    intr = intrinsic_dimension(x, graph=graph, metric="poincare")
    undefined = {key: why for key, why in POINCARE_UNDEFINED.items() if key != "alignment" or positives is not None}
    return Diagnosis(n, d, "poincare", nrm, hub, None, intr, None, None, None, _readings(d, hub, None, intr, None),
                     undefined)


def _rows_have_unit_norm(x: np.ndarray, tol: float = 1e-5) -> bool:
    """Whether every row has unit L2 norm (within ``tol``), computed block by block in float64."""
    for _, block in row_blocks(x):
        b = np.asarray(block, np.float64)
        if np.abs(np.sqrt(np.einsum("ij,ij->i", b, b)) - 1.0).max(initial=0.0) > tol:
            return False
    return True


def _readings(d: int, hub: HubnessResult, iso: IsotropyResult | None, intr: IntrinsicDimension,
              spec: SpectrumResult | None) -> tuple[str, ...]:
    """One line per finding, with what to try (a poincare space has neither ``iso`` nor ``spec``)."""
    out = []
    nk = hub.k_occurrence
    if hub.k_skewness > STRONG_SKEW and nk.sum() > 0:
        top = np.sort(nk)[::-1]
        hubs = max(1, int(hub.hub_flag.sum()))
        share = top[:hubs].sum() / nk.sum()
        hint = ("; try search --hubness csls" if iso is not None else
                " (in a hierarchy, general nodes near the centre of the ball are near everything)")
        out.append(f"strong hubness (k-skewness {hub.k_skewness:.2f}): {hubs / len(nk):.1%} of items are in "
                   f"{share:.0%} of neighbour lists; {hub.antihub_rate:.1%} are in none{hint}")
    else:
        out.append(f"no strong hubness: k-skewness {hub.k_skewness:.2f}")
    if iso is None or spec is None:  # a poincare space: neither is defined
        out.append(f"intrinsic dimension ~{intr.twonn:.0f} (TwoNN, hyperbolic distances) of {d}; isotropy, rank "
                   f"and uniformity are not defined on the Poincare ball")
        return tuple(out)
    mc = iso.mean_cosine.value
    if mc > ANISOTROPIC_COSINE:
        out.append(f"anisotropic: mean cosine {mc:.2f} (random directions give ~0); try centring or whitening")
    rogue = iso.rogue_dimensions.dimensions
    if rogue and mc > ROGUE_MIN_COSINE:  # near a mean cosine of 0 the shares are ratios of noise
        total = sum(r.share for r in rogue)
        out.append(f"{len(rogue)} rogue dimension{'s' if len(rogue) > 1 else ''} carry {total:.0%} of the mean "
                   f"cosine (largest: {rogue[0].dim}); try all-but-the-top")
    out.append(f"intrinsic dimension ~{intr.twonn:.0f} (TwoNN) of {d}; effective rank {spec.effective_rank:.0f}")
    return tuple(out)
