"""Interpretation over stored spaces: probes of a metadata field, semantic axes, concept erasure.

The engines (:mod:`repspace.engines.interpret`) take arrays; this module brings a
space's vectors and metadata to them and writes results back: an axis's per-item
scores as metadata (so filters, exports and the explorer's colours see them), an
erased space as a derived space whose chain holds the eraser (so text queries are
erased too).

Examples
--------
>>> from repspace.store import example_space, example_vectors
>>> y = (example_vectors(200, 6)[:, 0] > 0).astype(int)  # the group: the sign of the first coordinate
>>> sp = example_space(200, 6, metric="l2", metadata=[{"group": "ab"[v]} for v in y])
>>> r = probe_space(sp, "group")
>>> r.score > 0.9, r.selectivity > 0.3
(True, True)
>>> erased = erase_space(sp.store, sp, "group", "t-erased")
>>> round(probe_space(erased, "group").score, 1) <= 0.7
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.errors import InputError
from repspace.core.filters.columns import FALSE, INTEGER, REAL, TEXT, TRUE

if TYPE_CHECKING:
    from repspace.core.store import Snapshot, Space, Store
    from repspace.engines.interpret.axes import Axis, AxisSignificance
    from repspace.engines.interpret.probes import ProbeResult

__all__ = ["labelled", "probe_space", "AxisReport", "axis_space", "score_axis", "erase_space", "pole_vectors"]


def labelled(space: Space, field: str, *, numeric: bool = False) -> tuple[list[str], np.ndarray, np.ndarray]:
    """``(ids, vectors, labels)`` of the items whose metadata has ``field`` (a scalar), in row order.

    ``numeric``: the labels must be numbers (a ridge probe); otherwise text, booleans and
    integers are labels and reals are refused (a continuous field is not a class).

    Examples
    --------
    >>> from repspace.store import example_store
    >>> space = example_store().create_space("t", dim=2, metric="l2")
    >>> _ = space.add(["hot", "warm", "cool", "cold", "x"], [[2, 0], [1, 0.5], [-1, 0.5], [-2, 0], [0, 1]],
    ...               metadata=[{"temp": 30, "g": "a"}, {"temp": 20, "g": "a"}, {"temp": 10, "g": "b"},
    ...                         {"temp": 0, "g": "b"}, {}])
    >>> ids, X, labels = labelled(space, "g")  # "x" has no "g": left out
    >>> ids, X.shape, labels.tolist()
    (['hot', 'warm', 'cool', 'cold'], (4, 2), ['a', 'a', 'b', 'b'])
    >>> labelled(space, "temp", numeric=True)[2].tolist()
    [30.0, 20.0, 10.0, 0.0]
    """
    generation, rows, cols = space.columns([field])
    col = cols[field]
    kinds = col.kind
    snap = space.snapshot()
    if snap.generation != generation or not np.array_equal(snap.rows, rows):
        raise InputError(f"space {space.name!r} changed while it was read; run again")
    if numeric:
        keep = np.isin(kinds, (INTEGER, REAL))
        labels = col.number[keep]
    else:
        if np.isin(kinds, (REAL,)).any():
            raise InputError(f"field {field!r} holds real numbers: use a ridge probe (--kind ridge) for a "
                             "continuous field, or a field of classes")
        keep = np.isin(kinds, (TEXT, TRUE, FALSE, INTEGER))
        text = col.text
        labels = np.array([text[i] if kinds[i] == TEXT else "true" if kinds[i] == TRUE else
                           "false" if kinds[i] == FALSE else str(int(col.number[i]))
                           for i in np.flatnonzero(keep).tolist()], dtype=object)
    if not keep.any():
        raise InputError(f"no item of space {space.name!r} has a {'numeric ' if numeric else ''}field {field!r}")
    ids = [snap.ids[i] for i in np.flatnonzero(keep).tolist()]
    return ids, np.asarray(snap.vectors[keep], dtype=np.float32), labels


def probe_space(space: Space, field: str, *, kind: str = "logistic", k: int | None = None, cv: int = 5,
                control: str = "permute", seed: int = 0) -> ProbeResult:
    """Probe a metadata field from the space's vectors (items without the field are left out), with its
    control task and selectivity (:func:`repspace.engines.interpret.probe`).

    Examples
    --------
    >>> from repspace.store import example_space, example_vectors
    >>> y = (example_vectors(60, 4)[:, 0] > 0).astype(int)  # the group: the sign of the first coordinate
    >>> space = example_space(60, 4, metric="l2", name="p", metadata=[{"group": "ab"[v]} for v in y])
    >>> r = probe_space(space, "group", cv=3)
    >>> r.kind, r.n, r.score > 0.9, r.selectivity > 0.3
    ('logistic', 60, True, True)
    """
    from repspace.engines.interpret import probe

    ids, X, y = labelled(space, field, numeric=kind == "ridge")
    types = ids if control == "random-type" else None
    return probe(X, y, kind=kind, k=k, cv=cv, control=control, types=types, seed=seed)


def pole_vectors(space: Space, poles: Sequence[str]) -> np.ndarray:
    """Vectors of pole items: a stored id gives its vector, anything else is embedded as a text with the
    space's own recipe (its encoder and chain).

    Examples
    --------
    >>> from repspace.store import example_store
    >>> space = example_store().create_space("t", dim=2, metric="l2")
    >>> _ = space.add(["hot", "cold"], [[2.0, 0.0], [-2.0, 0.0]])
    >>> pole_vectors(space, ["hot", "cold"]).tolist()
    [[2.0, 0.0], [-2.0, 0.0]]
    """
    poles = [p for p in poles if p.strip()]
    if not poles:
        raise InputError("a pole needs at least one id or text")
    stored = space.existing_ids(poles)
    out = np.zeros((len(poles), space.dim), dtype=np.float32)
    known = [i for i, p in enumerate(poles) if p in stored]
    if known:
        out[known] = space.vectors_of([poles[i] for i in known])
    texts = [i for i, p in enumerate(poles) if p not in stored]
    if texts:
        from repspace.workflows.stored_transforms import encoder_for_space

        try:
            encoder = encoder_for_space(space)
        except InputError as e:
            missing = ", ".join(repr(poles[i]) for i in texts[:3])
            raise InputError(f"{missing} {'is not an id' if len(texts) == 1 else 'are not ids'} of space {space.name!r}, "
                             f"and it cannot embed texts ({e})") from None
        out[texts] = np.asarray(encoder.encode([poles[i] for i in texts]), dtype=np.float32)
    return out


@dataclass(frozen=True)
class AxisReport:
    """An axis through a stored space: its poles, every item's score, and (with ``against``) its significance.

    ``scores[i]`` is the cosine of item ``ids[i]`` with the axis (from the negative poles' mean to the
    positive poles'); ``saved`` counts the items whose metadata got their score.

    Examples
    --------
    >>> from repspace.store import example_store
    >>> space = example_store().create_space("t", dim=2, metric="l2")
    >>> _ = space.add(["hot", "warm", "cool", "cold", "x"], [[2, 0], [1, 0.5], [-1, 0.5], [-2, 0], [0, 1]])
    >>> r = axis_space(space, ["hot"], ["cold"])
    >>> r.positive, r.negative, r.ids, r.scores.round(3).tolist(), r.significance, r.saved
    (('hot',), ('cold',), ['hot', 'warm', 'cool', 'cold', 'x'], [1.0, 0.894, -0.894, -1.0, 0.0], None, 0)
    >>> r.to_dict(top=1)["bottom"]
    [{'id': 'cold', 'score': -1.0}]
    """

    space: str
    positive: tuple[str, ...]
    negative: tuple[str, ...]
    ids: list[str]
    scores: np.ndarray
    axis: Axis
    significance: AxisSignificance | None
    saved: int

    def to_dict(self, top: int = 10) -> dict[str, Any]:
        """``{"space", "positive", "negative", "n", "top", "bottom", "significance"?, "saved"}``."""
        order = np.argsort(-self.scores, kind="stable")
        pick = [(self.ids[i], round(float(self.scores[i]), 6)) for i in order[:top].tolist()]
        low = [(self.ids[i], round(float(self.scores[i]), 6)) for i in order[::-1][:top].tolist()]
        out: dict[str, Any] = {"space": self.space, "positive": list(self.positive), "negative": list(self.negative),
                               "n": len(self.ids), "top": [{"id": i, "score": s} for i, s in pick],
                               "bottom": [{"id": i, "score": s} for i, s in low], "saved": self.saved}
        if self.significance is not None:
            out["significance"] = self.significance.to_dict()
        return out


def axis_space(space: Space, positive: Sequence[str], negative: Sequence[str], *, expand: int | None = None,
               against: str | None = None, save: str | None = None, n_random: int = 1000,
               seed: int = 0) -> AxisReport:
    """A SemAxis axis from two poles (ids or texts) scored on every item of the space.

    ``expand``: add each pole's nearest items of the space (An et al. 2018). ``against``: a numeric
    metadata field the scores are correlated with, against random directions
    (:func:`repspace.engines.interpret.axis_significance`). ``save``: write each item's score into its
    metadata under that key (refused whole if the space changed meanwhile).

    Examples
    --------
    >>> from repspace.store import example_store
    >>> space = example_store().create_space("t", dim=2, metric="l2")
    >>> _ = space.add(["hot", "warm", "cool", "cold", "x"], [[2, 0], [1, 0.5], [-1, 0.5], [-2, 0], [0, 1]])
    >>> r = axis_space(space, ["hot"], ["cold"], save="heat")
    >>> [(i, round(float(s), 3)) for i, s in zip(r.ids, r.scores)][:2], r.saved
    ([('hot', 1.0), ('warm', 0.894)], 5)
    >>> space.get(["warm"])[0].metadata["heat"]
    0.894427
    """
    from repspace.engines.interpret import axis

    space.metric.require_vector_space("a semantic axis (a direction between the poles' mean vectors)")
    generation = space.info().generation
    snap = space.snapshot()
    vectors, ids = snap.vectors, snap.ids
    ax = axis(pole_vectors(space, positive), pole_vectors(space, negative), expand=expand,
              pool=vectors if expand else None)
    scores, significance, saved = score_axis(space, ax, snap, generation, against=against, save=save,
                                             n_random=n_random, seed=seed)
    return AxisReport(space.name, tuple(positive), tuple(negative), list(ids), scores, ax, significance, saved)


def score_axis(space: Space, ax: Axis, snap: Snapshot, generation: int, *, against: str | None = None,
               save: str | None = None, n_random: int = 1000, seed: int = 0
               ) -> tuple[np.ndarray, AxisSignificance | None, int]:
    """Every item's score on ``ax`` (rows of ``snap``), its significance against the numeric field
    ``against`` (random directions as the null), and the scores written under the metadata key ``save``.

    The semantic and the rank axis score, test and save alike; only how the axis is built differs.
    Returns ``(scores, significance or None, items saved)``.

    Examples
    --------
    >>> from repspace.engines.interpret import axis
    >>> from repspace.store import example_store
    >>> space = example_store().create_space("t", dim=2, metric="l2")
    >>> _ = space.add(["hot", "cold", "x"], [[2.0, 0.0], [-2.0, 0.0], [0.0, 1.0]])
    >>> ax = axis(pole_vectors(space, ["hot"]), pole_vectors(space, ["cold"]))
    >>> scores, significance, saved = score_axis(space, ax, space.snapshot(), space.info().generation, save="heat")
    >>> [round(float(s), 3) for s in scores], significance, saved
    ([1.0, -1.0, 0.0], None, 3)
    """
    from repspace.engines.interpret import axis_significance

    scores = ax.score(snap.vectors)
    significance = None
    if against is not None:
        _, X, values = labelled(space, against, numeric=True)
        significance = axis_significance(ax, X, values, n_random=n_random, seed=seed)
    saved = 0
    if save is not None:
        if not save.strip():
            raise InputError("--save needs a metadata key")
        saved = space.patch_rows_metadata(snap.rows, [{save: round(float(s), 6)} for s in scores],
                                          generation=generation)
    return scores, significance, saved


def erase_space(store: Store, space: Space, field: str, out: str) -> Space:
    """Store ``space`` with the concept ``field`` erased by LEACE (fitted on the items that have the field) as
    the derived space ``out``; the eraser is an affine step of its chain, so text queries are erased too.

    Examples
    --------
    >>> from repspace.store import example_space, example_vectors
    >>> y = (example_vectors(60, 4)[:, 0] > 0).astype(int)  # the group: the sign of the first coordinate
    >>> space = example_space(60, 4, metric="l2", name="p", metadata=[{"group": "ab"[v]} for v in y])
    >>> erased = erase_space(space.store, space, "group", "p-erased")
    >>> erased.name, erased.provenance["derived_from"]["spec"], erased.provenance["derived_from"]["classes"]
    ('p-erased', 'leace:group', 2)
    >>> Z = erased.vectors()  # the two groups' means coincide: no linear probe can tell them apart
    >>> bool(np.allclose(Z[y == 0].mean(axis=0), Z[y == 1].mean(axis=0), atol=1e-5))
    True
    """
    from repspace.engines.interpret import LeaceEraser
    from repspace.engines.transforms import Affine
    from repspace.workflows.transform import write_derived

    ids, X, labels = labelled(space, field)
    eraser = LeaceEraser().fit(np.asarray(X, dtype=np.float64), labels)
    # r(x) = x - (x - mu) R^T L^T = x (I - R^T L^T) + mu R^T L^T: one affine step
    P = eraser.proj_right_.T @ eraser.proj_left_.T
    step = Affine.from_map(np.eye(space.dim) - P, eraser.mean_ @ P)
    info = space.info()
    derived_from = {"space": space.name, "uid": space.uid, "generation": info.generation,
                    "spec": f"leace:{field}", "fit_items": len(ids), "classes": int(len(set(labels.tolist())))}
    return write_derived(store, space, out, [step], derived_from)
