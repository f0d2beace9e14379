"""Label-free quality tracked over several stored spaces (checkpoints or layers): LiDAR and alignment over the
views grouped by a metadata field, uniformity and local intrinsic dimension
(:func:`repspace.engines.analyze.space_quality` per space).

Examples
--------
>>> import numpy as np
>>> from repspace.store import example_store
>>> store = example_store()
>>> for name in ("ckpt1", "ckpt2"):
...     _ = store.create_space(name, dim=4).add([f"x{i}" for i in range(40)],
...                                             np.random.default_rng(len(name)).standard_normal((40, 4)))
>>> [q["space"] for q in track_spaces([store.space("ckpt1"), store.space("ckpt2")], k=5).to_dict()["spaces"]]
['ckpt1', 'ckpt2']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

from repspace.core.errors import InputError
from repspace.engines.geometry.tracking import SpaceQuality, space_quality
from repspace.engines.geometry.intrinsic import DEFAULT_K
from repspace.workflows.interpret import labelled

if TYPE_CHECKING:
    from repspace.core.store import Space

__all__ = ["QualityTrack", "track_spaces"]


@dataclass(frozen=True)
class QualityTrack:
    """Label-free quality of each space, in the order given.

    Attributes
    ----------
    spaces : tuple of str
        The spaces' names.
    views_field : str or None
        The metadata field grouping views of one sample.
    qualities : tuple of SpaceQuality
        One per space.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> t = track_spaces([example_space(30, 3), example_space(30, 3)], k=5)
    >>> len(t.qualities), t.to_dict()["views_field"]
    (2, None)
    """

    spaces: tuple[str, ...]
    views_field: str | None
    qualities: tuple[SpaceQuality, ...]

    def to_dict(self) -> dict[str, Any]:
        """``{"views_field", "spaces": [{"space", ...SpaceQuality keys...}, ...]}``."""
        return {"views_field": self.views_field,
                "spaces": [{"space": s, **q.to_dict()} for s, q in zip(self.spaces, self.qualities)]}


def track_spaces(spaces: Sequence[Space], *, views_field: str | None = None, k: int = DEFAULT_K,
                 seed: int = 0) -> QualityTrack:
    """LiDAR, alignment (with ``views_field``), uniformity and local intrinsic dimension of each space.

    Items whose metadata has no ``views_field`` belong to no sample (they count for uniformity and local ID).
    At least 2 spaces: one space is no track.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> track_spaces([example_space(30, 3)])
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: tracking needs at least 2 spaces (checkpoints or layers), got 1
    """
    spaces = list(spaces)
    if len(spaces) < 2:
        raise InputError(f"tracking needs at least 2 spaces (checkpoints or layers), got {len(spaces)}")
    out = []
    for sp in spaces:
        snap = sp.snapshot()
        groups = None
        if views_field is not None:
            ids, _, labels = labelled(sp, views_field)
            of = dict(zip(ids, labels.tolist()))
            groups = [of.get(i) for i in snap.ids]
        out.append(space_quality(snap.vectors, groups, k=k, seed=seed))
    return QualityTrack(tuple(sp.name for sp in spaces), views_field, tuple(out))
