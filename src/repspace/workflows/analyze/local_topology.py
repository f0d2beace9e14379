"""Local-topology features of a stored space's items against a datastore (the space itself or another space),
storable as metadata (:func:`repspace.engines.geometry.local_topology.local_topology` on the live vectors).

``save="lt"`` writes ``lt_kdist``, ``lt_mean_kdist``, ``lt_local_id`` and ``lt_entropy`` into each item's
metadata (merged, other keys kept), so that ``--where "lt_local_id > 30"`` finds the items in unusually
high-dimensional neighbourhoods.

Examples
--------
>>> from repspace.store import example_space
>>> r = local_topology_space(example_space(80, 6), k=5, save="lt")
>>> r.topology.n, r.saved, r.fields[:2]
(80, 80, ['lt_kdist', 'lt_mean_kdist'])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from repspace.core.errors import InputError
from repspace.core.progress import Progress
from repspace.engines.geometry.local_topology import DEFAULT_TEMPERATURE, FEATURES, LocalTopology, local_topology
from repspace.workflows.interpret import labelled

if TYPE_CHECKING:
    from repspace.core.store import Space

__all__ = ["SpaceLocalTopology", "local_topology_space"]

#: Decimals of the features written into metadata.
SAVED_DECIMALS = 6


@dataclass(frozen=True)
class SpaceLocalTopology:
    """A stored space's per-item local-topology features.

    Attributes
    ----------
    space : str
    against : str or None
        The datastore space (``None``: the space itself).
    label_field : str or None
        The datastore's metadata field behind the label entropy.
    ids : list of str
        Item ids, row-aligned with the topology's arrays.
    topology : LocalTopology
    saved : int
        Items whose metadata received the features.
    fields : list of str
        The metadata keys written (empty without ``save``).
    same_id_excluded : int
        With ``against``: items whose own id in the datastore was left out of their neighbours.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> r = local_topology_space(example_space(30, 4), k=3)
    >>> r.to_dict()["space"], r.to_dict()["saved"], len(r.ids)
    ('t', 0, 30)
    """

    space: str
    against: str | None
    label_field: str | None
    ids: list[str] = field(repr=False)
    topology: LocalTopology
    saved: int = 0
    fields: list[str] = field(default_factory=list)
    same_id_excluded: int = 0

    def to_dict(self) -> dict[str, Any]:
        """``{"space", "against", "label_field", ...LocalTopology.to_dict() keys..., "same_id_excluded", "saved",
        "fields"}``."""
        return {"space": self.space, "against": self.against, "label_field": self.label_field,
                **self.topology.to_dict(), "same_id_excluded": self.same_id_excluded, "saved": self.saved,
                "fields": list(self.fields)}


def local_topology_space(space: Space, *, k: int = 10, against: Space | None = None,
                         label_field: str | None = None, temperature: float = DEFAULT_TEMPERATURE,
                         exact: bool | None = None, seed: int = 0, save: str | None = None,
                         exclude_same_id: bool = True, progress: Progress | None = None) -> SpaceLocalTopology:
    """Per-item distance to the ``k``-th neighbour, mean kNN distance, local intrinsic dimension and
    neighbourhood entropy of a stored space's items, in the space's metric.

    Parameters
    ----------
    space : Space
        The items measured.
    k, temperature, exact, seed, progress
        As :func:`repspace.engines.geometry.local_topology.local_topology`.
    against : Space, optional
        The datastore searched (same dimension and metric); ``None``: the space itself, each item excluded
        from its own neighbours.
    exclude_same_id : bool
        With ``against``: leave the datastore's item of the same id out of an item's neighbours (the item
        itself, indexed there too); ``False`` keeps it (at distance 0 when the vectors are the same).
    label_field : str, optional
        A metadata field of the datastore: the entropy is that of the neighbours' values of it (items without
        the field count as one more label, "none") instead of the softmax over similarities.
    save : str, optional
        Prefix of the metadata keys ``<save>_kdist``, ``<save>_mean_kdist``, ``<save>_local_id``,
        ``<save>_entropy`` written into each item (rounded to 6 decimals); refused whole, nothing written, if
        the space changed while it was measured.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> local_topology_space(example_space(3, 4), k=5)
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: space 't' has 3 items; k=5 needs at least 6
    """
    if save is not None and not save.strip():
        raise InputError("--save needs a prefix for the metadata keys")
    snap = space.snapshot()
    base_space = space if against is None else against
    if against is not None and against.metric != space.metric:
        raise InputError(f"space {space.name!r} is {space.metric.value} and {against.name!r} is "
                         f"{against.metric.value}: the datastore must have the space's metric")
    base_snap = snap if against is None else against.snapshot()
    m = len(base_snap.ids)
    if k >= m + (against is not None):
        need = k + (against is None)
        raise InputError(f"space {base_space.name!r} has {m} items; k={k} needs at least {need}")
    labels = None
    if label_field is not None:
        ids, _, values = labelled(base_space, label_field)
        of = dict(zip(ids, values.tolist()))
        labels = [of.get(i, "none") for i in base_snap.ids]
    exclude = None
    if against is not None and exclude_same_id:
        where = {i: r for r, i in enumerate(base_snap.ids)}
        exclude = [where.get(i, -1) for i in snap.ids]
    t = local_topology(snap.vectors, None if against is None else base_snap.vectors, k,
                       metric=space.metric.value, labels=labels, temperature=temperature, exact=exact, seed=seed,
                       exclude=exclude, progress=progress)
    saved, names = 0, []
    if save is not None:
        names = [f"{save}_{f}" for f in FEATURES]
        cols = [t.feature(f) for f in FEATURES]
        patches = [{n: round(float(c[r]), SAVED_DECIMALS) for n, c in zip(names, cols)} for r in range(t.n)]
        saved = space.patch_rows_metadata(snap.rows, patches, generation=snap.generation)
    excluded = 0 if exclude is None else sum(r >= 0 for r in exclude)
    return SpaceLocalTopology(space.name, None if against is None else against.name, label_field,
                              list(snap.ids), t, saved, names, excluded)
