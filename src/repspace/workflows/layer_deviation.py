"""``repspace layers deviation``: per layer, how far each text lies from a reference set (REMA manifold deviation).

:func:`layer_deviation` embeds a reference set of texts (inputs the model handles well) and the texts to score at
every chosen layer of an ``hf-layers`` encoder (one forward pass per batch gives all layers: the encoder's pooled
state, mean pooling and L2-normalised unless its options say otherwise), then scores each text per layer with
:func:`repspace.engines.geometry.deviation.manifold_deviation`: its mean distance to its ``k`` nearest reference
states, as a z-score and a percentile of the reference's own leave-one-out distances. The texts can be a stored
space's items (their stored texts); then the z-score of each item can be written into its metadata, which the
explorer colours by (a numeric field).

Examples
--------
>>> ref = ["a man plays a guitar", "a woman is cooking", "two dogs run in a park", "a child reads a book"]
>>> r = layer_deviation("hf-layers:minilm", ref, ["a man plays a piano", "def f(x): return x ** 2"], k=2,
...                     layers=[-1])
>>> r.layers, r.deviations[0].distance.shape
((6,), (2,))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.core.progress import Progress
from repspace.engines.geometry.deviation import DEVIATION_METRICS, Deviation, manifold_deviation
from repspace.workflows.decompose import _encoding_errors, _hf_layers

if TYPE_CHECKING:
    from repspace.core.store import Space

__all__ = ["DEVIATION_ABOVE", "LayerDeviation", "layer_deviation", "space_texts"]

#: A text counts as off the reference manifold when its percentile among the reference's leave-one-out
#: distances is above this (the summaries' ``share_above``).
DEVIATION_ABOVE = 0.95


@dataclass(frozen=True, eq=False)
class LayerDeviation:
    """Each text's manifold deviation at each chosen layer, with per-layer summaries.

    Attributes
    ----------
    encoder : str
    layers : tuple of int
    deviations : tuple of Deviation
        One per layer (:class:`repspace.engines.geometry.deviation.Deviation`), rows aligned with the texts.
    n_reference, n_texts, k : int
    metric : str
    ids : tuple of str or None
        The stored items' ids when the texts came from a space.
    saved : int
        Items whose metadata was written.
    metadata_keys : tuple of str
        The metadata key written for each layer (empty when nothing was written).

    Examples
    --------
    >>> from repspace.engines.geometry.deviation import manifold_deviation
    >>> d = manifold_deviation(np.array([[0.0], [1.0], [2.0]]), np.array([[5.0], [1.5]]), k=1)
    >>> r = LayerDeviation("hf-layers:m", (6,), (d,), 3, 2, 1, "l2")
    >>> r.summary()[0]["share_above"], r.to_dict()["items"][0]["z"]
    (0.5, [None])
    """

    encoder: str
    layers: tuple[int, ...]
    deviations: tuple[Deviation, ...] = field(repr=False)
    n_reference: int
    n_texts: int
    k: int
    metric: str
    ids: tuple[str, ...] | None = None
    saved: int = 0
    metadata_keys: tuple[str, ...] = ()

    def summary(self) -> list[dict[str, Any]]:
        """Per layer: ``{"layer", "baseline_mean", "baseline_std", "mean_distance", "mean_z", "median_percentile",
        "share_above"}`` (``share_above``: texts above the reference's :data:`DEVIATION_ABOVE` percentile)."""
        rows = []
        for layer, d in zip(self.layers, self.deviations):
            base = d.to_dict()
            empty = d.distance.size == 0
            rows.append({"layer": layer, "baseline_mean": base["baseline_mean"], "baseline_std": base["baseline_std"],
                         "mean_distance": None if empty else float(d.distance.mean()),
                         "mean_z": None if empty or not np.isfinite(d.z).all() else float(d.z.mean()),
                         "median_percentile": None if empty else float(np.median(d.percentile)),
                         "share_above": None if empty else float(np.mean(d.percentile > DEVIATION_ABOVE))})
        return rows

    def to_dict(self) -> dict[str, Any]:
        """``{"encoder", "k", "metric", "n_reference", "n_texts", "layers": summary(), "items": [{"id"?,
        "distance", "z", "percentile"}] (one value per layer), "saved", "metadata_keys"}``."""
        per = [d.to_dict() for d in self.deviations]
        items = []
        for i in range(self.n_texts):
            item: dict[str, Any] = {"id": self.ids[i]} if self.ids is not None else {}
            for name in ("distance", "z", "percentile"):
                item[name] = [p[name][i] for p in per]
            items.append(item)
        return {"encoder": self.encoder, "k": self.k, "metric": self.metric, "n_reference": self.n_reference,
                "n_texts": self.n_texts, "layers": self.summary(), "items": items, "saved": self.saved,
                "metadata_keys": list(self.metadata_keys)}


def space_texts(space: Space) -> tuple[list[str], Any]:
    """The stored texts of a space's live items, with the snapshot they were read from (ids, rows, generation).

    Raises :class:`InputError` when the space is empty or an item has no stored text.

    Examples
    --------
    >>> from repspace.store import example_store
    >>> sp = example_store().create_space("t", dim=2)
    >>> _ = sp.add(["a", "b"], np.eye(2), texts=["x", "y"])
    >>> texts, snap = space_texts(sp)
    >>> texts, snap.ids
    (['x', 'y'], ['a', 'b'])
    """
    snap = space.snapshot()
    if not snap.ids:
        raise InputError(f"space {space.name!r} holds no items")
    records = space.records(snap.rows)
    texts = [records[int(r)][1] if int(r) in records else None for r in snap.rows]
    missing = [i for i, t in zip(snap.ids, texts) if not t]
    if missing:
        raise InputError(f"{len(missing)} item(s) of space {space.name!r} have no stored text (e.g. {missing[0]!r}): "
                         "the deviation needs each item's text")
    return texts, snap  # type: ignore[return-value]


def layer_deviation(encoder: str, reference: Sequence[str], texts: Sequence[str] | None = None, *,
                    layers: str | Sequence[int] = "all", k: int = 10, metric: str = "l2",
                    space: Space | None = None, write_metadata: str | None = None, batch_size: int = 32,
                    options: dict[str, Any] | None = None, progress: Progress | None = None) -> LayerDeviation:
    """Score ``texts`` (or ``space``'s stored texts) per layer by their deviation from ``reference`` (REMA).

    Parameters
    ----------
    encoder : str
        ``hf-layers:<folder>`` (``hf-layers:minilm`` is bundled).
    reference : sequence of str
        Inputs the model handles well; more than ``k``.
    texts : sequence of str, optional
        The texts to score; leave out to score ``space``'s items.
    layers : ``"all"`` or list of int
        Hidden states (negative from the end).
    k : int
        Neighbours, ``1 <= k < len(reference)``.
    metric : ``l2`` or ``cosine``
    space : Space, optional
        Score its items' stored texts (instead of ``texts``).
    write_metadata : str, optional
        With ``space``: write each item's z-score under this key (one layer), or under ``<key>_L<layer>`` (several).
        The space must be unchanged since its texts were read, and its store writable.
    batch_size : int
    options : dict, optional
        Other encoder options (``pooling``, ``normalize``, ``prompt``...).
    progress : callable, optional

    Returns
    -------
    LayerDeviation

    Examples
    --------
    >>> ref = ["a man plays a guitar", "a woman is cooking", "two dogs run in a park", "a child reads a book"]
    >>> r = layer_deviation("hf-layers:minilm", ref, ["a man plays a guitar"], k=1, layers=[0])
    >>> round(float(r.deviations[0].distance[0]), 4)  # the text is in the reference: distance 0
    0.0
    """
    reference = _texts(reference, "reference")
    if not reference:
        raise InputError("the reference set is empty: give at least k + 1 texts")
    check_scalar(batch_size, "batch_size", int, low=1)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k < len(reference):
        raise InputError(f"k must be an integer from 1 to {len(reference) - 1} (the reference has "
                         f"{len(reference)} texts), not {k!r}")
    if metric not in DEVIATION_METRICS:
        raise InputError(f"metric must be one of {', '.join(DEVIATION_METRICS)}, not {metric!r}")
    if write_metadata is not None and (space is None or not write_metadata.strip()):
        raise InputError("writing metadata needs a stored space (--space) and a non-empty key")
    if (texts is None) == (space is None):
        raise InputError("give the texts to score or a stored space, one of the two")
    snap = None
    if space is not None:
        if write_metadata is not None and space.store.readonly:
            raise InputError(f"the store of space {space.name!r} is read-only: no metadata can be written")
        scored, snap = space_texts(space)
    else:
        scored = _texts(texts, "texts")
        if not scored:
            raise InputError("no texts to score")
    enc = _hf_layers(encoder, options)
    chosen = tuple(enc.resolve_layers(layers))
    with _encoding_errors(enc.spec):
        ref_states = enc.encode_layers(reference, layers=list(chosen), batch_size=batch_size, progress=progress)
        states = enc.encode_layers(scored, layers=list(chosen), batch_size=batch_size, progress=progress)
    deviations = tuple(manifold_deviation(ref_states[j], states[j], int(k), metric=metric)
                       for j in range(len(chosen)))
    saved, keys = 0, ()
    if write_metadata is not None and snap is not None and space is not None:
        key = write_metadata.strip()
        keys = (key,) if len(chosen) == 1 else tuple(f"{key}_L{layer}" for layer in chosen)
        patches = [{name: _rounded(d.z[i]) for name, d in zip(keys, deviations)} for i in range(len(scored))]
        saved = space.patch_rows_metadata(snap.rows, patches, generation=snap.generation)
    return LayerDeviation(enc.spec, chosen, deviations, len(reference), len(scored), int(k), metric,
                          tuple(snap.ids) if snap is not None else None, saved, keys)


def _rounded(x: float) -> float | None:
    return round(float(x), 6) if np.isfinite(x) else None


def _texts(texts: Any, name: str) -> list[str]:
    if isinstance(texts, (str, bytes)) or not isinstance(texts, Sequence):
        raise InputError(f"{name} must be a sequence of strings, not {type(texts).__name__}")
    bad = next((i for i, t in enumerate(texts) if not isinstance(t, str)), None)
    if bad is not None:
        raise InputError(f"{name} item {bad} is {type(texts[bad]).__name__}, not str")
    return list(texts)
