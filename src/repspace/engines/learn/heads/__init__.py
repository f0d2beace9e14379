"""Linear heads trained on a frozen space, in torch on CPU: a Matryoshka head and a pair adapter.

A head is an affine map ``z = x W + b`` (``W`` of shape ``(d_in, d_out)``)
learned from scored pairs of frozen embeddings: ``A[i]`` and ``B[i]`` are the
vectors of the two texts of pair ``i`` and ``scores[i]`` how similar they are
(STS-B: 0 to 5). Being linear, a head is stored as an ``Affine`` step of a
derived space's chain, followed by L2 normalisation when the space is compared
by cosine; :attr:`HeadResult.W` and :attr:`HeadResult.b` are float64.

=====================================  ==========================================================================
:func:`train_matryoshka_head`          ``d → d`` map whose every prefix (32, 64, 128, 256, all) is a good space:
                                       CoSENT (or cosine-MSE) summed over the prefixes (Kusupati et al. 2022);
                                       starts at the PCA rotation of the training vectors
:func:`train_pair_adapter`             ``d → d`` map started at identity, contrastive loss (graded labels) or the
                                       margin loss with distance-weighted negatives (Wu et al. 2017)
:class:`HeadResult`                    ``W``, ``b``, the recipe, the per-epoch history, the seconds
:class:`PairData`                      checked ``(A, B, scores)`` with a fingerprint
=====================================  ==========================================================================

An optional development set ``dev = (A_dev, B_dev, scores_dev)`` is used only to
choose the epoch (the Spearman correlation between the cosine of each pair
and its score, measured before training and after every epoch; training
stops after ``patience`` epochs without improvement and the best epoch's map
is returned). Without it every epoch is run and the last map is returned.

Training runs in float32 on ``threads`` CPU threads with
``torch.use_deterministic_algorithms(True)``; batches are drawn with a private
:class:`torch.Generator` seeded with ``seed`` (the global torch RNG is not
touched), and the thread count and deterministic flag are restored afterwards.
The same data, seed and thread count give bit-identical ``W`` and ``b``.

This engine imports only :mod:`repspace.core` and third-party libraries.

Examples
--------
>>> import numpy as np
>>> from repspace.engines.learn.heads import train_matryoshka_head
>>> rng = np.random.default_rng(0)
>>> A = rng.normal(size=(200, 16)).astype(np.float32)
>>> B = (A + 0.5 * rng.normal(size=(200, 16))).astype(np.float32)
>>> scores = -np.linalg.norm(A - B, axis=1)
>>> head = train_matryoshka_head(A, B, scores, dims=(4, 8, None), epochs=2)
>>> head.W.shape, head.b.shape, head.recipe["dims"]
((16, 16), (16,), [4, 8, 16])
>>> head.transform(A, dims=4).shape
(200, 4)
"""

from repspace.engines.learn.heads.adapter import (
    WU_CUTOFF,
    WU_NONZERO_LOSS_CUTOFF,
    distance_weights,
    train_pair_adapter,
)
from repspace.engines.learn.heads.data import HeadResult, PairData, as_pairs, pair_data, pair_spearman
from repspace.engines.learn.heads.fit import pca_rotation, sign_fixed, torch_session, versions
from repspace.engines.learn.heads.matryoshka import DEFAULT_DIMS, train_matryoshka_head

__all__ = [
    "DEFAULT_DIMS",
    "WU_CUTOFF",
    "WU_NONZERO_LOSS_CUTOFF",
    "HeadResult",
    "PairData",
    "as_pairs",
    "distance_weights",
    "pair_data",
    "pair_spearman",
    "pca_rotation",
    "sign_fixed",
    "torch_session",
    "train_matryoshka_head",
    "train_pair_adapter",
    "versions",
]
