"""A labelled task's two splits, embedded together: the training split's vectors and class ids, and the test split's.

The few-shot probes (:mod:`~repspace.engines.eval.fewshot`) and the kNN
classifier (:mod:`~repspace.engines.eval.knn_classify`) learn from one split
and are scored on the other. Both splits are embedded in one call and share
one class numbering (that of :func:`~repspace.engines.eval.labels.classification`);
a codec is fitted on both, without labels.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from repspace.core.errors import InputError
from repspace.engines.eval.labels import _vectors_and_labels
from repspace.engines.eval.mteb_protocol import _with_train


class Splits(NamedTuple):
    """The training and test vectors (float32) with their class ids, and the class names the ids index."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    classes: list[str]


def train_test(vectors_or_encode: Any, labels: Any, texts: Any, train: Any, codec: Any, info: dict[str, Any],
               command: str) -> Splits:
    """The two splits of a task; ``info`` gets ``dataset``, ``n_train``, ``n_items`` (test) and ``n_classes``.

    ``command`` names the task in the error a missing training split raises.
    """
    if train is None:
        raise InputError(f"{command} needs a training split (train=..., --train FILE): it learns from the "
                         "training split and is scored on the test split")
    dataset = getattr(labels, "name", None) if hasattr(labels, "texts") else None
    vectors_or_encode, all_labels, texts, m = _with_train(vectors_or_encode, labels, texts, train)
    if m == len(all_labels):
        raise InputError("the test split holds no items")
    x, y, classes = _vectors_and_labels(vectors_or_encode, all_labels, texts, codec, info)
    if dataset is not None:
        info["dataset"] = dataset
    info.update(n_train=m, n_items=int(len(y) - m))
    return Splits(x[:m], y[:m], x[m:], y[m:], classes)
