"""Topic geometry of a stored space: within- vs across-topic mean inner products, a metadata field as the topic.

Examples
--------
>>> from repspace.store import example_space
>>> sp = example_space(20, 4, metadata=[{"topic": "ab"[j % 2]} for j in range(20)])
>>> topics_space(sp, "topic").geometry.n_topics
2
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from repspace.engines.analyze import TopicGeometry, topic_geometry
from repspace.workflows.interpret import labelled

if TYPE_CHECKING:
    from repspace.core.store import Space

__all__ = ["SpaceTopics", "topics_space"]


@dataclass(frozen=True)
class SpaceTopics:
    """A stored space's topic geometry over the items that have the label field.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> sp = example_space(10, 3, metadata=[{"t": j % 3} for j in range(10)])
    >>> topics_space(sp, "t").to_dict()["label_field"]
    't'
    """

    space: str
    label_field: str
    geometry: TopicGeometry

    def to_dict(self) -> dict[str, Any]:
        """``{"space", "label_field", ...}`` and the keys of :meth:`TopicGeometry.to_dict`."""
        return {"space": self.space, "label_field": self.label_field, **self.geometry.to_dict()}


def topics_space(space: Space, label_field: str, *, normalize: bool = False, center: bool = False) -> SpaceTopics:
    """:func:`repspace.engines.analyze.topic_geometry` of the items whose metadata has ``label_field`` (text,
    boolean or integer values are topics; items without the field are left out).

    Examples
    --------
    >>> from repspace.store import example_space
    >>> sp = example_space(12, 3, metadata=[{"t": "xy"[j // 6]} for j in range(12)])
    >>> topics_space(sp, "t", normalize=True).geometry.n
    12
    """
    _, X, labels = labelled(space, label_field)
    return SpaceTopics(space.name, label_field, topic_geometry(X, labels.tolist(), normalize=normalize,
                                                               center=center))
