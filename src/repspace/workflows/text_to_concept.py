"""Text-to-concept between two stored spaces: a source space classified zero-shot through a text encoder's space.

Moayeri et al. (2023, S280). The items of the source space that carry
``label_field`` are split (seeded, stratified) into training and test items. A
linear map from the source into the target space (a text encoder's space) is
fitted on every item both spaces hold except the test items; each label,
written out as text (``template`` filled with its name, or the text given for
it), is encoded by the target's encoder; a test item is given the label whose
text vector is nearest by cosine to its mapped vector. No label of a training
item is used for that; the linear probe trained on the labelled training items
of the source (:func:`repspace.engines.align.probe_accuracy`) is the supervised
figure beside it, the majority class the floor, and, where the target holds
test items itself, their zero-shot accuracy there the ceiling of the mapping.

Examples
--------
>>> import numpy as np
>>> from repspace.store import example_store
>>> store = example_store()
>>> rng = np.random.default_rng(0)
>>> Y = rng.normal(size=(200, 4))  # the target ("text") space
>>> X = Y @ rng.normal(size=(4, 6))  # the source: a linear image of it
>>> lab = ["pos" if v > 0 else "neg" for v in Y[:, 0]]
>>> ids = [f"i{i}" for i in range(200)]
>>> _ = store.create_space("src", dim=6).add(ids, X, metadata=[{"y": v} for v in lab])
>>> _ = store.create_space("txt", dim=4).add(ids, Y)
>>> class Words:  # "pos" and "neg" are encoded as +e1 and -e1
...     dim = 4
...     def encode(self, texts): return np.array([[1.0 if t == "pos" else -1.0, 0, 0, 0] for t in texts])
>>> r = text_to_concept_spaces(store, "src", "txt", label_field="y", encoder=Words())
>>> r.zero_shot_accuracy, r.target_accuracy
(1.0, 1.0)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.checks import check_choice, check_scalar
from repspace.core.errors import InputError
from repspace.engines.align import Procrustes, RidgeMap, probe_accuracy, zero_shot_labels
from repspace.workflows.compare import joined
from repspace.workflows.interpret import labelled

if TYPE_CHECKING:
    from repspace.core.store import Store

__all__ = ["TEXT_TO_CONCEPT_MAPS", "TextToConcept", "text_to_concept_spaces"]

#: The maps from the source into the text encoder's space.
TEXT_TO_CONCEPT_MAPS = ("ridge", "procrustes")


@dataclass(frozen=True)
class TextToConcept:
    """Zero-shot accuracy of a source space through a text encoder's space, beside a probe on the source.

    ``test_ids`` (the held-out labelled items, not in :meth:`to_dict`) say which items the accuracies are on.

    Examples
    --------
    >>> r = TextToConcept("a", "b", "y", {"neg": "neg", "pos": "pos"}, "ridge", 90, 50, 50, 0.9, 0.95, 0.5,
    ...                   None, 0, 12.0)
    >>> r.to_dict()["target_accuracy"], r.to_dict()["alpha"]
    (None, 12.0)
    """

    source: str
    target: str
    label_field: str
    label_texts: dict[str, str]
    method: str
    n_pairs: int
    n_train: int
    n_test: int
    zero_shot_accuracy: float
    probe_accuracy: float
    majority: float
    target_accuracy: float | None
    n_target_test: int
    alpha: float | None = None
    test_ids: list[str] = field(default_factory=list, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape (METRICS.md, "Text-to-concept")."""
        return {"source": self.source, "target": self.target, "label_field": self.label_field,
                "label_texts": self.label_texts, "method": self.method, "alpha": self.alpha,
                "n_pairs": self.n_pairs, "n_train": self.n_train, "n_test": self.n_test,
                "zero_shot_accuracy": self.zero_shot_accuracy, "probe_accuracy": self.probe_accuracy,
                "majority": self.majority, "target_accuracy": self.target_accuracy,
                "n_target_test": self.n_target_test}


def _split(labels: np.ndarray, test_fraction: float, seed: int) -> np.ndarray:
    """A boolean test mask, ``test_fraction`` of each class (at least one each side)."""
    rng = np.random.default_rng(seed)
    test = np.zeros(labels.size, bool)
    for value in np.unique(labels):
        rows = rng.permutation(np.flatnonzero(labels == value))
        if rows.size < 2:
            raise InputError(f"label {value!r} has one item: each label needs two or more (one to train, one "
                             "to test)")
        k = min(rows.size - 1, max(1, round(test_fraction * rows.size)))
        test[rows[:k]] = True
    return test


def _label_texts(values: list[str], names: Mapping[str, str] | None, template: str) -> dict[str, str]:
    if template.count("{}") != 1:
        raise InputError(f"template must hold {{}} once, where the label's text goes; got {template!r}")
    names = dict(names or {})
    unknown = sorted(set(names) - set(values))
    if unknown:
        raise InputError(f"label {unknown[0]!r} of the label texts is not a value of the field")
    return {v: template.replace("{}", names.get(v, v)) for v in values}


def text_to_concept_spaces(store: Store, source: str, target: str, *, label_field: str,
                           names: Mapping[str, str] | None = None, template: str = "{}", method: str = "ridge",
                           test_fraction: float = 0.5, seed: int = 0, encoder: Any = None) -> TextToConcept:
    """Map ``source`` into ``target`` on shared items and label the held-out labelled items zero-shot there.

    Parameters
    ----------
    store : Store
    source : str
        The space whose items carry ``label_field`` (text, integer or boolean values: the classes).
    target : str
        The text encoder's space; it must share items with ``source`` to fit the map on.
    label_field : str
    names : mapping, optional
        The text of some labels (``{"pos": "positive"}``); the others are written as their value.
    template : str
        Each label's text is put in place of ``{}`` (``"a {} movie review"``).
    method : ``ridge`` or ``procrustes``
    test_fraction : float
        Share of each class held out.
    seed : int
        Of the split.
    encoder : str or encoder, optional
        What encodes the label texts into the target space: a registry spec, an object with
        ``encode(texts)``, or (default) the target space's own encoder.

    Examples
    --------
    Labels ``a`` / ``b`` planted along the first coordinate, "encoded" as ±e₁:

    >>> from repspace.store import example_pair
    >>> a, b = example_pair(100, 100, 4)
    >>> _ = a.store.space("a").add([f"l{i}" for i in range(40)], np.vstack([np.eye(4)[:1]] * 20 + [-np.eye(4)[:1]] * 20)
    ...                            + 0.1 * np.random.default_rng(0).normal(size=(40, 4)),
    ...                            metadata=[{"y": "a"}] * 20 + [{"y": "b"}] * 20)
    >>> class Axis:
    ...     def encode(self, texts): return np.array([[1.0, 0, 0, 0] if t == "a" else [-1.0, 0, 0, 0] for t in texts])
    >>> r = text_to_concept_spaces(a.store, "a", "b", label_field="y", encoder=Axis(), method="procrustes")
    >>> r.n_pairs, r.n_test, r.target_accuracy
    (100, 20, None)
    """
    check_choice(method, "method", TEXT_TO_CONCEPT_MAPS)
    check_scalar(test_fraction, "test_fraction", float, low=0.0, high=1.0, include="neither")
    src, tgt = store.space(source), store.space(target)
    for sp in (src, tgt):
        sp.metric.require_vector_space(f"text-to-concept with {sp.name!r}")
    ids, X, labels = labelled(src, label_field)
    labels = labels.astype(str)
    values = sorted(set(labels.tolist()))
    if len(values) < 2:
        raise InputError(f"field {label_field!r} has one value ({values[0]!r}): nothing to tell apart")
    texts = _label_texts(values, names, template)
    test = _split(labels, float(test_fraction), seed)
    test_ids = {ids[i] for i in np.flatnonzero(test).tolist()}
    j = joined(src, tgt)
    fit_rows = np.array([i for i, item in enumerate(j.ids) if item not in test_ids], np.int64)
    if fit_rows.size < 5:
        raise InputError(f"{source!r} and {target!r} share {fit_rows.size} item(s) outside the test items: "
                         "too few to fit a map on (5 at least)")
    model = (RidgeMap() if method == "ridge" else Procrustes()).fit(j.x[fit_rows], j.y[fit_rows])
    if encoder is None:
        from repspace.workflows.stored_transforms import encoder_for_space

        encoder = encoder_for_space(tgt)
    elif isinstance(encoder, str):
        from repspace.engines.encoders import get_encoder

        encoder = get_encoder(encoder)
    concepts = np.asarray(encoder.encode([texts[v] for v in values]), np.float64)
    if concepts.shape != (len(values), tgt.dim):
        raise InputError(f"the encoder gives vectors of shape {concepts.shape[1:]}; space {target!r} holds "
                         f"{tgt.dim} dimensions (use the encoder the target space was made with)")
    y_test = labels[test]
    zero_shot = float(np.mean(zero_shot_labels(model.transform(X[test]), concepts, values) == y_test))
    probe = probe_accuracy(X[~test], labels[~test], X[test], y_test, seed=seed)
    _, counts = np.unique(y_test, return_counts=True)
    in_target = {item: i for i, item in enumerate(j.ids)}
    rows = [(in_target[ids[i]], labels[i]) for i in np.flatnonzero(test).tolist() if ids[i] in in_target]
    target_acc = None
    if rows:
        pred = zero_shot_labels(j.y[[r for r, _ in rows]], concepts, values)
        target_acc = float(np.mean(pred == np.array([lab for _, lab in rows])))
    return TextToConcept(source, target, label_field, texts, method, int(fit_rows.size), int((~test).sum()),
                         int(test.sum()), zero_shot, probe, float(counts.max() / counts.sum()), target_acc, len(rows),
                         float(model.alpha_) if method == "ridge" else None, sorted(test_ids))
