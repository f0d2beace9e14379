"""The hop-distance kernel of the Ricci curvature, compiled by numba (installed with umap-learn, a dependency).

Kept apart so that importing :mod:`repspace.engines.analyze` does not import numba; the first call compiles
the kernel (about a second; cached beside this file when the folder is writable).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["fill_hop_costs"]


@njit(cache=True, nogil=True)
def fill_hop_costs(ptr: np.ndarray, ind: np.ndarray, xs: np.ndarray, x0: np.ndarray, a: np.ndarray,
                   ys: np.ndarray, y0: np.ndarray, b: np.ndarray, edge_node: np.ndarray, off: np.ndarray,
                   buf: np.ndarray, mark: np.ndarray, stamp: int) -> int:  # pragma: no cover - compiled
    """Write the hop distance (0, 1, 2 or 3) of every row node ``x`` of an edge's source to every column node
    ``y`` of its target into ``buf`` (edge ``e``'s ``a × b`` matrix row-major at ``off[e]``).

    ``ptr``/``ind``: the closed neighbourhoods (CSR, each row holds the node itself). ``x`` and ``y`` of an
    edge are at most 3 apart: 0 when equal, 1 when ``y ∈ N[x]``, 2 when ``N[x]`` and ``N[y]`` meet, else 3.
    ``mark`` (one int64 per node) holds ``stamp`` on ``N[x]`` while ``x`` is processed; the last stamp is
    returned so that the next call continues from it.
    """
    for e in range(len(off)):
        g = edge_node[e]
        for i in range(a[g]):
            x = xs[x0[g] + i]
            stamp += 1
            for p in range(ptr[x], ptr[x + 1]):
                mark[ind[p]] = stamp
            base = off[e] + i * b[e]
            for j in range(b[e]):
                y = ys[y0[e] + j]
                if y == x:
                    d = 0.0
                elif mark[y] == stamp:
                    d = 1.0
                else:
                    d = 3.0
                    for p in range(ptr[y], ptr[y + 1]):
                        if mark[ind[p]] == stamp:
                            d = 2.0
                            break
                buf[base + j] = d
    return stamp
