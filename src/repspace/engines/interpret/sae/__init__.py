"""A top-k sparse autoencoder over embedding vectors, its metrics, and what reads its dictionary.

The model is the top-k sparse autoencoder of Gao et al. (2024), *Scaling and
evaluating sparse autoencoders* (OpenAI's ``sparse_autoencoder``, ``train.py``)::

    codes = ReLU(TopK_k((x − b_pre) W_encᵀ + b_lat))
    x̂     = codes W_dec + b_pre

with ``n_latents`` latents, an untied decoder ``W_dec`` (``n_latents × d``)
whose rows, the dictionary atoms, are kept at unit norm (renormalised after
every step, the gradient component parallel to each row removed before it, as
OpenAI does), the pre-encoder bias ``b_pre`` started at the geometric median
of the data, the encoder started as the decoder (``W_enc = W_dec`` with random
unit rows), and the loss ``MSE / Var(X) + AuxK / 32``: the AuxK term
reconstructs the residual ``x − x̂`` from the top ``auxk`` *dead* latents (no
firing in the last ``dead_window`` training samples), which gives them a
gradient again.

Why it is written here: sentence-transformers has a ``SparseAutoEncoder``
*module* (the same forward pass, with a tied decoder; the tests check that our
forward pass equals it given the same weights) but no trainer for arbitrary
vectors: its training runs through ``SparseEncoder`` fine-tuning on text pairs,
and neither it nor any library on the dependency list trains a top-k SAE on an
array with AuxK and dead-latent tracking. scikit-learn's
``MiniBatchDictionaryLearning`` learns an L1-penalised dictionary, not a top-k
autoencoder. The training loop is therefore written here, on torch tensors
(CPU): the dense ``rows × n_latents`` pre-activation product and the top-k run
in torch, and the gradients, which reach only the ``k + auxk`` selected latents
of each row, are written out in closed form as sparse products (as OpenAI's
sparse kernels do on GPU; the tests check them against torch autograd). A
step costs about one dense matrix product (training times in BENCHMARKS.md).

The package's modules, each with one job:

* :mod:`~repspace.engines.interpret.sae.model`: the estimator
  (:class:`SparseAutoencoder`): parameters, fit loop, blocked encoding and decoding;
* :mod:`~repspace.engines.interpret.sae.train`: one Adam step with its
  gradients written out;
* :mod:`~repspace.engines.interpret.sae.metrics`, ``compare``, ``pursuit`` and
  ``attribution``: what reads a fitted dictionary.

Besides the estimator:

* :func:`sae_metrics`: FVU, OpenAI's NMSE, L0, dead latents and the
  firing-density histogram on a set of vectors;
* :func:`top_items`: the rows that activate a latent most;
* :func:`stability`: two dictionaries matched one to one (Hungarian
  algorithm on decoder cosines), e.g. two seeds;
* :func:`match_latents`: each latent's best match in another dictionary
  (e.g. another layer);
* :func:`matching_pursuit`: another encoder for the same dictionary;
* :func:`attribute_pair`: the cosine of two reconstructions split exactly
  over latents.

Threads: torch runs on its intra-op threads, which
:func:`repspace.core.threads.set_threads` sets; nothing here changes them.
"""

from repspace.engines.interpret.sae.attribution import PairAttribution, attribute_pair
from repspace.engines.interpret.sae.compare import LatentMatch, Stability, match_latents, stability
from repspace.engines.interpret.sae.metrics import DENSITY_BIN, SaeMetrics, TopItems, sae_metrics, top_items
from repspace.engines.interpret.sae.model import AUXK_COEF, MEDIAN_SAMPLE, SparseAutoencoder
from repspace.engines.interpret.sae.pursuit import MatchingPursuit, matching_pursuit
from repspace.engines.interpret.sae.train import ADAM_EPS

__all__ = [
    "ADAM_EPS",
    "AUXK_COEF",
    "DENSITY_BIN",
    "MEDIAN_SAMPLE",
    "LatentMatch",
    "MatchingPursuit",
    "PairAttribution",
    "SaeMetrics",
    "SparseAutoencoder",
    "Stability",
    "TopItems",
    "attribute_pair",
    "match_latents",
    "matching_pursuit",
    "sae_metrics",
    "stability",
    "top_items",
]
