"""Concept erasure: LEACE, and the Gaussian optimal-transport map between two groups.

* :class:`LeaceEraser` — least-squares concept erasure (Belrose et al. 2023,
  "LEACE: Perfect linear concept erasure in closed form"): the affine map
  ``r(x) = x − W⁺PW(x − μ)`` after which no linear classifier predicts the
  concept better than a constant, and which moves the points least among all
  such maps.
* :class:`GaussianTransport` — the closed-form optimal-transport
  (Bures–Wasserstein) map between two groups modelled as Gaussians, in the top
  principal components of their pooled rows: it moves group A's mean *and*
  covariance onto group B's, and leaves the residual outside the PCA subspace
  as it is.
* :func:`evaluate_erasure` and :func:`compare_group_maps` — held-out logistic
  accuracy (scikit-learn) before and after, and how far the points moved.

All fitting is in float64 and deterministic. ``transform`` returns float32 when
``X`` is float32 (a stored space keeps its size) and float64 otherwise (the
guarantees, e.g. equal class means, then hold to float64 rounding).

Degenerate input
----------------
A NaN or infinite value, fewer than 2 rows, labels of the wrong length, a single
class (or a numeric concept without variance) raise
:class:`~repspace.core.errors.InputError` with one line. Constant features are
fine: LEACE whitens on the column space of the covariance only, so a feature
without variance is left as it is; rows without any variance give the identity
(there is nothing linear to erase).

How well each map erases, and what it costs the space, on GloVe: EVALUATION.md
and BENCHMARKS.md ("Figures behind the defaults"); tests/engines/interpret/test_erasure.py
prints the figures.
"""

from repspace.engines.interpret.erasure.leace import LeaceEraser, erase
from repspace.engines.interpret.erasure.scores import (
    GROUP_MAP_METHODS,
    ErasureReport,
    GroupMapComparison,
    GroupMapScore,
    compare_group_maps,
    evaluate_erasure,
)
from repspace.engines.interpret.erasure.transport import GaussianTransport

__all__ = [
    "GROUP_MAP_METHODS",
    "erase",
    "ErasureReport",
    "GaussianTransport",
    "GroupMapComparison",
    "GroupMapScore",
    "LeaceEraser",
    "compare_group_maps",
    "evaluate_erasure",
]
