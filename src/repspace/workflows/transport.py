"""One group of a stored space moved onto another: the Gaussian optimal-transport map, stored as a new space.

:func:`transport_space` takes the items whose metadata field has one value
(group A) and those with another (group B), fits
:class:`repspace.engines.interpret.GaussianTransport` from A to B on all of them and
stores the space as a new one in which A's items are moved (B's and every other
item stay where they were): A then has B's mean and covariance in the map's
principal subspace, so neither a linear nor a quadratic classifier tells them
apart there. The report carries
:func:`repspace.engines.interpret.compare_group_maps` on the same two groups: the
held-out accuracy of a logistic probe and a quadratic discriminant after each
map (none, the mean direction removed, LEACE, the transport) and how far each
moves the points. Text queries of the new space are embedded as the source's
(they are not moved: the map is fitted for group A's items).

Examples
--------
>>> import numpy as np
>>> from repspace.store import example_space, example_vectors
>>> g = np.repeat(["a", "b"], 100)
>>> X = example_vectors(200, 3) + (g == "b")[:, None] * 2.0
>>> sp = example_space(vectors=X, metric="l2", metadata=[{"g": v} for v in g])
>>> r = transport_space(sp.store, sp, "g", "a", "b", "t-moved", dims=3)
>>> r.n_a, r.n_b, r.comparison.score("gaussian_ot").accuracy < r.comparison.score("none").accuracy
(100, 100, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.errors import InputError
from repspace.core.space import check_space_name
from repspace.workflows.interpret import labelled
from repspace.workflows.new_space import refuse_existing

if TYPE_CHECKING:
    from repspace.core.store import Space, Store
    from repspace.engines.interpret import GroupMapComparison

__all__ = ["TransportReport", "transport_space"]


@dataclass(frozen=True)
class TransportReport:
    """What :func:`transport_space` stored and measured.

    Examples
    --------
    Two groups of one random cloud:

    >>> from repspace.store import example_space
    >>> space = example_space(100, 2, metric="l2", metadata=[{"g": "ab"[j % 2]} for j in range(100)])
    >>> r = transport_space(space.store, space, "g", "a", "b", "t-moved", dims=2)
    >>> r.out, (r.source, r.target), (r.n_a, r.n_b), r.count, r.dims, round(r.displacement, 2)
    ('t-moved', ('a', 'b'), (50, 50), 100, 2, 0.09)
    >>> r.to_dict()["from"], sorted(r.to_dict())[:3]
    ('a', ['comparison', 'count', 'dims'])
    """

    space: str
    out: str
    field: str
    source: str
    target: str
    n_a: int
    n_b: int
    count: int
    dims: int
    reg: float
    displacement: float
    comparison: GroupMapComparison

    def to_dict(self) -> dict[str, Any]:
        """The fields by name; ``comparison`` as the engine's dict (one score per map)."""
        return {"space": self.space, "out": self.out, "field": self.field, "from": self.source, "to": self.target,
                "n_a": self.n_a, "n_b": self.n_b, "count": self.count, "dims": self.dims, "reg": self.reg,
                "displacement": self.displacement, "comparison": self.comparison.to_dict()}


def transport_space(store: Store, space: Space, field: str, source: str, target: str, out: str, *, dims: int = 10,
                    reg: float = 0.0, test_size: float = 0.3, seed: int = 0) -> TransportReport:
    """Store ``space`` as ``out`` with the items whose ``field`` is ``source`` moved onto those whose ``field``
    is ``target`` by the Gaussian optimal-transport map (fitted on all of them), with the maps compared.

    ``displacement`` is the mean squared distance the moved items travelled.

    Examples
    --------
    Group ``a`` is moved onto group ``b`` (4 units away); ``b``'s items stay where they were:

    >>> from repspace.store import example_space, example_vectors
    >>> g = np.repeat(["a", "b"], 50)
    >>> X = example_vectors(100, 2) + (g == "b")[:, None] * 4.0
    >>> space = example_space(vectors=X, metric="l2", metadata=[{"g": v} for v in g])
    >>> moved = transport_space(space.store, space, "g", "a", "b", "t-moved", dims=2)
    >>> Z = space.store.space("t-moved").vectors()
    >>> bool(np.allclose(Z[:50].mean(axis=0), X[50:].mean(axis=0), atol=1e-4)), bool(np.allclose(Z[50:], X[50:]))
    (True, True)
    >>> round(moved.displacement) > 20, space.store.space("t-moved").provenance["derived_from"]["spec"]
    (True, 'gaussian-ot:g:a->b')
    """
    from repspace.engines.interpret import GaussianTransport, compare_group_maps
    from repspace.workflows.transform import write_derived

    space.metric.require_vector_space("an optimal-transport map of vectors")
    check_space_name(out)
    refuse_existing(store, out)
    if source == target:
        raise InputError(f"--from and --to are both {source!r}: give two groups")
    ids, X, labels = labelled(space, field)
    groups = {}
    for value in (source, target):
        groups[value] = np.flatnonzero(labels == value)
        if groups[value].size == 0:
            have = ", ".join(repr(v) for v in sorted(set(labels.tolist()))[:8])
            raise InputError(f"no item of space {space.name!r} has {field} = {value!r} (it has {have})")
    Xa, Xb = X[groups[source]], X[groups[target]]
    comparison = compare_group_maps(Xa, Xb, dims=dims, reg=reg, test_size=test_size, random_state=seed)
    ot_map = GaussianTransport(dims=dims, reg=reg).fit(Xa, Xb)
    moved_ids = {ids[i]: j for j, i in enumerate(groups[source].tolist())}
    moved = ot_map.transform(Xa).astype(np.float32)
    info = space.info()
    items, vectors = space.dump()
    vectors = np.array(vectors, dtype=np.float32)
    for row, it in enumerate(items):
        j = moved_ids.get(it.id)
        if j is not None:
            vectors[row] = moved[j]
    derived_from = {"space": space.name, "uid": space.uid, "generation": info.generation,
                    "spec": f"gaussian-ot:{field}:{source}->{target}", "dims": int(dims), "reg": float(reg),
                    "moved": len(moved_ids), "fit_items": {"from": int(Xa.shape[0]), "to": int(Xb.shape[0])}}
    new = write_derived(store, space, out, [], derived_from, items=items, vectors=vectors)
    displacement = float(np.mean(np.sum((moved.astype(np.float64) - Xa) ** 2, axis=1)))
    return TransportReport(space.name, new.name, field, source, target, int(Xa.shape[0]), int(Xb.shape[0]),
                           new.info().count, int(dims), float(reg), displacement, comparison)
