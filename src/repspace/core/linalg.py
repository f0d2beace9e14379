"""One SVD for the whole package: LAPACK's fast driver, and the robust one when it fails.

NumPy's :func:`numpy.linalg.svd` calls LAPACK's divide-and-conquer ``gesdd``,
which can fail to converge on a finite, rank-deficient matrix under some BLAS
kernels (seen with OpenBLAS's SkylakeX kernels on a 384 × 384 cross-covariance
of rank 91 that the Haswell kernels decompose). Whether an analysis succeeds must
not depend on the CPU, so every SVD in repspace goes through :func:`svd`, which
retries with SciPy's QR-iteration driver ``gesvd`` (slower, and convergent on
such matrices).

Examples
--------
>>> import numpy as np
>>> s = svd(np.diag([3.0, 1.0, 0.0]), compute_uv=False)
>>> s.tolist()
[3.0, 1.0, 0.0]
>>> u, s, vt = svd(np.array([[2.0, 0.0], [0.0, 1.0]]))
>>> bool(np.allclose(u @ np.diag(s) @ vt, [[2.0, 0.0], [0.0, 1.0]]))
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["svd"]


def svd(a: Any, *, full_matrices: bool = True, compute_uv: bool = True) -> Any:
    """:func:`numpy.linalg.svd` (``gesdd``), falling back to SciPy's ``gesvd`` when it does not converge.

    Parameters and results are those of :func:`numpy.linalg.svd` for a 2-d array.
    """
    try:
        return np.linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    except np.linalg.LinAlgError:
        import scipy.linalg

        return scipy.linalg.svd(np.asarray(a), full_matrices=full_matrices, compute_uv=compute_uv,
                                lapack_driver="gesvd")
