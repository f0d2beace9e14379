"""Read a model layer by layer and token by token: hidden states, per-layer geometry, comparison and decomposition.

A :class:`LayeredEncoder` (the ``hf-layers:`` encoders) embeds texts at every
hidden layer; :func:`diagnose_layers`, :func:`compare_layers` and
:func:`decompose_layers` measure each layer, compare every pair of layers and
split each layer's token states into position, context and residual parts;
:func:`token_states` keeps the token-level states themselves. :func:`profile_layers`
streams a texts file through every layer at once and reports, per layer, prompt
entropy, curvature, augmentation invariance and the token clouds' geometry beside a
shuffled-token baseline (:class:`LayerProfile`), with a task's score per layer when
one is given. :func:`token_lens` reads each token's state at each layer as vocabulary
tokens (the logit lens, and with :func:`fit_tuned_lens` the tuned lens);
:func:`vector_lens` and :func:`space_lens` read vectors that went through no model
(zero-pass projection); :func:`layer_grid` scores every (layer, prefix width) cell on
a task (2DMSE) with the best cell per bytes budget. :func:`compare_poolings` scores pooling recipes (mean, cls,
max, last, first-last, layer mixes, whitened) on a task from one pass. :func:`layer_deviation` scores texts per
layer by their kNN distance to a reference set against the reference's own spread (REMA,
:func:`manifold_deviation`), and can write the score into stored items' metadata; :func:`moment_probe` probes
labels from the mean, variance and low-rank covariance of each text's token states (:func:`moment_features`)
beside the mean-pooled probe.

Examples
--------
>>> import numpy as np
>>> from repspace.layers import mean_decomposition_layers
>>> positions, contexts = np.tile(np.arange(3), 4), np.repeat(np.arange(4), 3)  # 4 texts of 3 tokens
>>> h = np.random.default_rng(0).standard_normal((12, 5))  # one layer's token states
>>> mean_decomposition_layers([h, 2 * h + 1], positions, contexts, layers=[3, 7]).layers
(3, 7)
"""

from repspace.engines.encoders import LayeredEncoder, encode_tokens
from repspace.engines.interpret import (
    LayerDecomposition,
    MeanDecomposition,
    mean_decomposition,
    mean_decomposition_layers,
)
from repspace.workflows.compare import compare_layers
from repspace.workflows import decompose as _decompose
from repspace.workflows.decompose import *  # noqa: F403 - every name of its __all__
from repspace.workflows.diagnose import diagnose_layers
from repspace.engines.eval.layer_grid import BudgetBest, best_per_budget
from repspace.engines.interpret.lens import (
    AffineTranslator,
    TranslatorFit,
    VocabularyProjection,
    fit_translator,
    project_vocabulary,
)
from repspace.workflows.layer_grid import LayerGrid, layer_grid
from repspace.engines.geometry.deviation import Deviation, manifold_deviation
from repspace.engines.interpret.moments import MomentFeatures, moment_features
from repspace.workflows.layer_deviation import LayerDeviation, layer_deviation
from repspace.workflows.moment_probe import MomentProbe, moment_probe, moment_probe_file
from repspace.engines.encoders.pooling_recipes import PoolingRecipe, encode_recipes, parse_recipes
from repspace.workflows.layer_pooling import PoolingComparison, PoolingScore, compare_poolings
from repspace.workflows.lens import (
    TokenLens,
    TunedLens,
    VectorLens,
    fit_tuned_lens,
    hidden_token_ids,
    space_lens,
    token_lens,
    vector_lens,
    vocabulary_matrix,
)
from repspace.engines.geometry.invariance import dime, infonce, lidar
from repspace.workflows.layer_profile import (
    LayerFigure,
    LayerProfile,
    LayerProfiles,
    profile_encoders,
    profile_layers,
)

__all__ = [
    *_decompose.__all__,
    "LayerDecomposition",
    "LayerFigure",
    "LayerProfile",
    "LayerProfiles",
    "LayeredEncoder",
    "MeanDecomposition",
    "compare_layers",
    "diagnose_layers",
    "encode_tokens",
    "mean_decomposition",
    "mean_decomposition_layers",
    # the lens and the layer x width grid
    "AffineTranslator",
    "BudgetBest",
    "LayerGrid",
    "TokenLens",
    "TranslatorFit",
    "TunedLens",
    "VectorLens",
    "VocabularyProjection",
    "best_per_budget",
    "fit_translator",
    "fit_tuned_lens",
    "hidden_token_ids",
    "layer_grid",
    "project_vocabulary",
    "space_lens",
    "token_lens",
    "vector_lens",
    "vocabulary_matrix",
    "profile_encoders",
    "profile_layers",
    # Layer by Layer's invariance figures over (input, augmented input) pairs
    "dime",
    "infonce",
    "lidar",
    # manifold deviation (REMA) and the moment probe
    "Deviation",
    "LayerDeviation",
    "MomentFeatures",
    "MomentProbe",
    "layer_deviation",
    "manifold_deviation",
    "moment_features",
    "moment_probe",
    "moment_probe_file",
    # pooling recipes
    "PoolingComparison",
    "PoolingRecipe",
    "PoolingScore",
    "compare_poolings",
    "encode_recipes",
    "parse_recipes",
]
