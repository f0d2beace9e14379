"""Linear beside nonlinear intrinsic dimension of a stored space, or of each layer of an encoder
(:func:`repspace.engines.analyze.linear_nonlinear_id`).

Examples
--------
>>> from repspace.store import example_space
>>> dimension_space(example_space(200, 8)).dimension.pca["p99"]
8
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

from repspace.engines.geometry.dimension_linear import LinearNonlinearID, linear_nonlinear_id
from repspace.engines.geometry.intrinsic import DEFAULT_K

if TYPE_CHECKING:
    from repspace.core.progress import Progress
    from repspace.core.store import Space

__all__ = ["LayerDimensions", "SpaceDimension", "dimension_layers", "dimension_space"]


@dataclass(frozen=True)
class SpaceDimension:
    """A stored space's PCA dimension at 90/95/99% of the variance beside its TwoNN and MLE.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> dimension_space(example_space(60, 4)).to_dict()["space"]
    't'
    """

    space: str
    dimension: LinearNonlinearID

    def to_dict(self) -> dict[str, Any]:
        """``{"space", ...}`` and the keys of :meth:`LinearNonlinearID.to_dict`."""
        return {"space": self.space, **self.dimension.to_dict()}


def dimension_space(space: Space, *, k: int = DEFAULT_K, exact: bool | None = None) -> SpaceDimension:
    """Linear and nonlinear intrinsic dimension of a stored space's live vectors.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> round(dimension_space(example_space(300, 3)).dimension.mle)
    3
    """
    return SpaceDimension(space.name, linear_nonlinear_id(space.snapshot().vectors, k=k, exact=exact))


@dataclass(frozen=True)
class LayerDimensions:
    """Linear and nonlinear intrinsic dimension of every chosen layer of one encoder on one set of texts.

    Attributes
    ----------
    encoder : str
        The encoder spec (``hf-layers:<folder>``).
    layers : tuple of int
        Layer indexes (0 = embeddings).
    dimensions : tuple of LinearNonlinearID
        One per layer.
    provenance : dict
        The encoder's provenance (without the layer).

    Examples
    --------
    >>> r = dimension_layers("hf-layers:minilm", [f"text {i}" for i in range(30)], layers=[-1], k=5)
    >>> r.to_dict()["layers"][0]["layer"]
    6
    """

    encoder: str
    layers: tuple[int, ...]
    dimensions: tuple[LinearNonlinearID, ...]
    provenance: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """``{"encoder", "provenance", "layers": [{"layer", ...}, ...]}``."""
        return {"encoder": self.encoder, "provenance": self.provenance,
                "layers": [{"layer": lay, **r.to_dict()} for lay, r in zip(self.layers, self.dimensions)]}


def dimension_layers(encoder: str, texts: Sequence[str], *, layers: str | Sequence[int] = "all", k: int = DEFAULT_K,
                     exact: bool | None = None, options: dict[str, Any] | None = None, batch_size: int = 64,
                     progress: Progress | None = None) -> LayerDimensions:
    """Linear and nonlinear intrinsic dimension per layer, from one forward pass per batch of texts (the layer
    machinery of :func:`repspace.workflows.diagnose.diagnose_layers`).

    Examples
    --------
    >>> r = dimension_layers("hf-layers:minilm", [f"sentence number {i}" for i in range(40)], layers=[0, -1], k=5)
    >>> r.layers, r.dimensions[0].d
    ((0, 6), 384)
    """
    from repspace.workflows.diagnose import layer_stack

    chosen, stacked, prov = layer_stack(encoder, texts, layers=layers, k=k, options=options, batch_size=batch_size,
                                        progress=progress, what=("intrinsic dimension", "dimension"))
    dims = tuple(linear_nonlinear_id(stacked[j], k=k, exact=exact) for j in range(len(chosen)))
    return LayerDimensions(encoder, tuple(chosen), dims, prov)
