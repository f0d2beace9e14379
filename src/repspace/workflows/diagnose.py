"""The diagnose workflow: a stored space's vectors through :func:`repspace.engines.geometry.diagnose`.

The store feeds the engine arrays; the engine never touches the store
(docs/ARCHITECTURE.md: analyses are pure functions of arrays).

Examples
--------
>>> from repspace.store import example_space
>>> sp = example_space(300, 8)
>>> report = diagnose_space(sp, k=5)
>>> report.n, report.metric, report.hubness.k
(300, 'cosine', 5)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.backend import Backend
from repspace.core.errors import InputError
from repspace.core.progress import Progress
from repspace.engines.geometry.diagnose import Diagnosis, diagnose
from repspace.workflows.distributed.backend import check_backend
from repspace.workflows.distributed.runner import open_backend

if TYPE_CHECKING:
    from repspace.core.store import Space

__all__ = ["diagnose_space", "save_per_item", "SAVED_KEYS", "diagnose_layers", "LayerDiagnosis", "layer_stack"]


#: Metadata keys written by ``diagnose_space(..., save=True)``: usable in filters and exports.
SAVED_KEYS = ("k_occurrence", "hub", "local_id")


def diagnose_space(space: Space, *, k: int = 10, exact: bool | None = None, seed: int = 0,
                   save: bool = False, backend: str | Backend = "local",
                   ray_address: str | None = None) -> Diagnosis:
    """Diagnose a stored space's live vectors with its own metric (see :func:`repspace.engines.geometry.diagnose`).

    Parameters
    ----------
    space : Space
    k, exact, seed : see :func:`repspace.engines.geometry.diagnose`.
    save : bool
        Write the per-item results into each item's metadata (merged, other
        keys kept): ``k_occurrence`` (int), ``hub`` (bool) and ``local_id``
        (float), so that ``--where "k_occurrence > 40"`` and exports see them.
        Refused whole, with nothing written, if the space changed while it
        was measured (:class:`~repspace.core.errors.ConflictError`).
    backend : ``local``, ``ray`` or a Backend
        ``ray``: the kNN graphs behind hubness and local intrinsic dimension
        are built on a Ray cluster as an exact tile join
        (:func:`repspace.workflows.distributed.measure.knn_graph_ray`, by a
        :class:`~repspace.workflows.distributed.measure.RayBackend` opened by
        :func:`~repspace.workflows.distributed.runner.open_backend` for this
        call), whatever ``n``; the same graph as exact search here, so the same
        figures. Refuses ``exact=False``. A :class:`repspace.core.backend.Backend`
        object is passed down to :func:`repspace.engines.geometry.diagnose` as it is.
    ray_address : str, optional
        The cluster for ``backend="ray"`` (default ``$RAY_ADDRESS``, else a
        local Ray); an unreachable one is a :class:`~repspace.core.errors.BackendError`.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> space = example_space(60, 4)
    >>> r = diagnose_space(space, k=5, save=True)
    >>> r.n, r.d, r.metric, r.hubness.k
    (60, 4, 'cosine', 5)
    >>> sorted(space.get(["i0"])[0].metadata) == sorted(SAVED_KEYS)  # per-item figures, usable in filters
    True
    """
    if isinstance(backend, str):
        check_backend(backend, ray_address)
        if backend == "ray":
            if exact is False:
                raise InputError("--backend ray builds exact kNN graphs; it does not combine with --hnsw")
            exact = True
    generation = space.info().generation  # read first: a change after it refuses the save
    rows, vectors = space.rows_and_vectors()
    if len(vectors) <= k:
        raise InputError(f"space {space.name!r} has {len(vectors)} items; diagnosing with k={k} needs more than {k}")
    with open_backend(backend, ray_address, moments=False) as runner:
        report = diagnose(vectors, k=k, metric=space.metric.value, exact=exact, seed=seed, backend=runner)
    if save:
        save_per_item(space, rows, report, generation)
    return report


def save_per_item(space: Space, rows: np.ndarray, report: Diagnosis, generation: int) -> int:
    """Merge ``k_occurrence``, ``hub`` and ``local_id`` into the metadata of the items at ``rows``."""
    k_occ = report.hubness.k_occurrence.tolist()
    hubs = report.hubness.hub_flag.astype(bool).tolist()
    local = [float(x) if np.isfinite(x) else None  # None: no estimate (JSON has no inf)
             for x in np.round(report.intrinsic_dimension.local, 6)]
    patches = [{"k_occurrence": int(a), "hub": bool(b), "local_id": c} for a, b, c in zip(k_occ, hubs, local)]
    return space.patch_rows_metadata(rows, patches, generation=generation)


@dataclass(frozen=True)
class LayerDiagnosis:
    """The geometry of every chosen layer of one encoder on one set of texts.

    Attributes
    ----------
    encoder : str
        The encoder spec (``hf-layers:<folder>``).
    layers : tuple of int
        Layer indexes (0 = embeddings).
    diagnoses : tuple of Diagnosis
        One per layer, in the same order.
    provenance : dict
        The encoder's provenance (without the layer).
    """

    encoder: str
    layers: tuple[int, ...]
    diagnoses: tuple[Diagnosis, ...]
    provenance: dict[str, Any]

    def labelled(self) -> list[tuple[str, Diagnosis]]:
        """``(label, diagnosis)`` per layer, as the report and tables name them."""
        return [(f"layer {lay}", d) for lay, d in zip(self.layers, self.diagnoses)]

    def to_dict(self) -> dict[str, Any]:
        """``{"encoder", "provenance", "layers": [{"layer": i, ...METRICS.md keys...}, ...]}``."""
        return {"encoder": self.encoder, "provenance": self.provenance,
                "layers": [{"layer": lay, **d.to_dict()} for lay, d in zip(self.layers, self.diagnoses)]}


def diagnose_layers(encoder: str, texts: Sequence[str], *, layers: str | Sequence[int] = "all", k: int = 10,
                    exact: bool | None = None, seed: int = 0, options: dict[str, Any] | None = None,
                    batch_size: int = 64, progress: Progress | None = None) -> LayerDiagnosis:
    """Diagnose every chosen layer of a layered encoder, from one forward pass per batch of texts.

    Parameters
    ----------
    encoder : str
        A layered encoder spec, ``hf-layers:<folder>`` (``hf-layers:minilm`` is bundled).
    texts : sequence of str
        The texts to embed; duplicates are kept (they are items of the space).
    layers : ``"all"`` or list of int
        Which layers (negative from the end).
    k, exact, seed : see :func:`repspace.engines.geometry.diagnose`.
    options : dict, optional
        Encoder options (``pooling``, ``max_length``...).

    Examples
    --------
    >>> r = diagnose_layers("hf-layers:minilm", [f"sentence number {i}" for i in range(40)], layers=[0, -1], k=5)
    >>> r.layers, r.diagnoses[0].d
    ((0, 6), 384)
    """
    chosen, stacked, prov = layer_stack(encoder, texts, layers=layers, k=k, options=options, batch_size=batch_size,
                                        progress=progress, what=("diagnosing", "diagnosis"))
    metric = "cosine"
    reports = tuple(diagnose(stacked[j], k=k, metric=metric, exact=exact, seed=seed) for j in range(len(chosen)))
    return LayerDiagnosis(encoder, tuple(chosen), reports, prov)


def layer_stack(encoder: str, texts: Sequence[str], *, layers: str | Sequence[int], k: int,
                options: dict[str, Any] | None, batch_size: int, progress: Progress | None,
                what: tuple[str, str]) -> tuple[list[int], np.ndarray, dict[str, Any]]:
    """The texts through the chosen layers of a layered encoder, one forward pass per batch: the layers, the
    ``(layers, n, d)`` array and the encoder's provenance without its layer. ``what`` names the measure in the
    one-line errors (``("diagnosing", "diagnosis")``): too few texts for ``k``, an encoder without layers.

    Examples
    --------
    >>> chosen, x, prov = layer_stack("hf-layers:minilm", ["a cat", "a dog", "a fish"], layers=[-1], k=2,
    ...                               options=None, batch_size=8, progress=None, what=("measuring", "measure"))
    >>> chosen, x.shape, "layer" in prov
    ([6], (1, 3, 384), False)
    """
    from repspace.engines.encoders import get_encoder
    from repspace.engines.encoders.base import LayeredEncoder

    texts = list(texts)
    if len(texts) <= k:
        raise InputError(f"{len(texts)} texts; {what[0]} with k={k} needs more than {k}")
    enc = get_encoder(encoder, **(options or {}))
    if not isinstance(enc, LayeredEncoder):
        raise InputError(f"{encoder} gives one vector per text; per-layer {what[1]} needs hf-layers:<folder>")
    chosen = list(enc.resolve_layers(layers))
    stacked = enc.encode_layers(texts, layers=chosen, batch_size=batch_size, progress=progress)  # (L, n, d)
    return chosen, stacked, {key: val for key, val in enc.provenance().items() if key != "layer"}
