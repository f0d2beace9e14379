"""Evaluate spaces as the field does: STS, retrieval, classification, clustering, word similarity, analogies, compression.

The task functions (:func:`sts`, :func:`retrieval`, :func:`classification`,
...) score an encoder or a vector table on a loaded data set and return a
:class:`TaskResult`; :func:`evaluate` runs named tasks over stored spaces or
encoders and writes MTEB-format results; :func:`upgrade_check` tells whether a
new encoder's space can replace an old one; :func:`robustness` scores a task
again on meaning-preserving perturbations of its texts (:func:`perturb`) and
tests each drop; :func:`index_size_stress` scores retrieval as distractors grow the index.

Examples
--------
>>> import numpy as np
>>> from repspace.evaluate import StsPairs, sts
>>> pairs = StsPairs(["a", "b", "c"], ["a", "b", "d"], np.array([5.0, 4.0, 0.0]))
>>> table = {"a": [1.0, 0.0], "b": [0.0, 1.0], "c": [1.0, 1.0], "d": [-1.0, 1.0]}
>>> encode = lambda texts: np.array([table[t] for t in texts])
>>> round(sts(encode, pairs).main_score, 3)
0.866
"""

from repspace.engines import eval as _eval
from repspace.engines.eval import *  # noqa: F403 - every name of its __all__
from repspace.workflows.evaluate.index_size import IndexSizePoint, IndexSizeResult, index_size_stress
from repspace.engines.eval.thresholds import SimilarityThreshold, similarity_threshold
from repspace.engines.eval.perturb import PERTURBATIONS, parse_perturbations, perturb
from repspace.engines.eval.robustness import PerturbedScore, RobustnessResult, retrieval_robustness, sts_robustness
from repspace.workflows import evaluate as _workflow
from repspace.workflows.evaluate import *  # noqa: F403 - every name of its __all__ (run is the CLI's entry point)
from repspace.workflows.robustness import ROBUSTNESS_TASKS, robustness
from repspace.workflows.upgrade import UpgradeCheck, UpgradeRow, upgrade_check, upgrade_retrieval

__all__ = [
    *_eval.__all__,
    *(name for name in _workflow.__all__ if name != "run"),
    "IndexSizePoint",
    "IndexSizeResult",
    "index_size_stress",
    "SimilarityThreshold",
    "similarity_threshold",
    "UpgradeCheck",
    "UpgradeRow",
    "upgrade_check",
    "upgrade_retrieval",
    "PERTURBATIONS",
    "parse_perturbations",
    "perturb",
    "PerturbedScore",
    "RobustnessResult",
    "retrieval_robustness",
    "sts_robustness",
    "ROBUSTNESS_TASKS",
    "robustness",
]
