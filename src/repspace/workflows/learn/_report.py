"""What a graph or derived learn workflow stored (the text methods report a :class:`LearnReport`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class LearnedSpace:
    """What a graph or derived learn workflow stored.

    Attributes
    ----------
    space, uid : the new space's name and uid.
    method : ``poincare``, ``node2vec``, ``retrofit``, ``matryoshka``, ``adapter`` or ``cca``.
    n, dim, metric : items stored, their dimension, the space's metric.
    seconds : the whole call; ``train_seconds`` the training alone.
    recipe : the space's provenance (the full recipe).
    details : what the method measured or counted (relations, walks, moved words, dev scores, ...).

    Examples
    --------
    >>> import numpy as np
    >>> from repspace.learn import retrofit_space
    >>> from repspace.store import example_store
    >>> store = example_store()
    >>> _ = store.create_space("w", dim=4).add(["cat", "kitten", "dog"], np.random.default_rng(0).normal(size=(3, 4)))
    >>> r = retrofit_space(store, "w", "w-rf", {"cat": ["kitten"]})
    >>> r.space, r.method, r.n, r.dim, r.metric, r.details["counts"]["updated"]
    ('w-rf', 'retrofit', 3, 4, 'cosine', 1)
    """

    space: str
    uid: str
    method: str
    n: int
    dim: int
    metric: str
    train_seconds: float
    seconds: float
    recipe: dict[str, Any] = field(repr=False)
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Every field as JSON values."""
        return {"space": self.space, "uid": self.uid, "method": self.method, "n": self.n, "dim": self.dim,
                "metric": self.metric, "train_seconds": self.train_seconds, "seconds": self.seconds,
                "details": self.details, "recipe": self.recipe}
