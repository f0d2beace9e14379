"""What a space is: its description, metrics and names, independent of storage.

A *space* is a set of items (string id, optional text, JSON metadata) with one
vector each, plus the recipe that produced the vectors (its *provenance*). This
module holds the plain descriptions; :mod:`repspace.core.store` keeps spaces durable.

Examples
--------
>>> check_space_name("docs@layer3")
'docs@layer3'
>>> Metric.parse("cosine").higher_is_better
True
"""

from __future__ import annotations

import enum
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from repspace.core.errors import InputError

__all__ = ["Metric", "SpaceInfo", "check_space_name", "DTYPES", "LAYOUTS"]

#: Storage types of vectors. Vectors always come back as float32.
DTYPES = ("float32", "float16")
#: How a space's rows are held: ``dense`` vectors of ``dim`` numbers, ``sparse`` weights over a
#: vocabulary of ``dim`` features (:class:`repspace.core.sparse.SparseRows`, float32 weights), or
#: ``multivector`` sets of ``dim``-d token vectors (:class:`repspace.core.multivector.TokenSets`).
LAYOUTS = ("dense", "sparse", "multivector")

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@:+-]{0,127}")


class Metric(str, enum.Enum):
    """How two vectors are compared.

    ``cosine`` and ``ip`` are similarities (higher is better); ``l2`` is the
    Euclidean distance (lower is better); ``poincare`` is the hyperbolic
    distance between points of the open unit ball (lower is better; Nickel &
    Kiela 2017), the metric of a space learned by ``repspace learn poincare``.
    A Poincare space is searched exactly and measured through its distances
    (neighbour graphs); what needs a vector space (FAISS indexes, PCA,
    whitening, CKA, ...) refuses it with one line (:meth:`require_vector_space`).

    Examples
    --------
    >>> Metric.parse("L2")
    <Metric.L2: 'l2'>
    >>> Metric.parse("poincare").higher_is_better, Metric.POINCARE.is_vector_space
    (False, False)
    """

    COSINE = "cosine"
    IP = "ip"
    L2 = "l2"
    POINCARE = "poincare"

    @classmethod
    def parse(cls, value: str | Metric) -> Metric:
        """Parse a metric name (case-insensitive); ``inner_product``/``dot`` mean ``ip``."""
        if isinstance(value, Metric):
            return value
        key = str(value).strip().lower()
        key = {"inner_product": "ip", "dot": "ip", "euclidean": "l2"}.get(key, key)
        try:
            return cls(key)
        except ValueError:
            raise InputError(f"unknown metric {value!r}; use one of: cosine, ip, l2, poincare") from None

    @property
    def higher_is_better(self) -> bool:
        """True for similarities, False for distances."""
        return self is not Metric.L2 and self is not Metric.POINCARE

    @property
    def is_vector_space(self) -> bool:
        """Whether the metric lives in a vector space (cosine, ip, l2); False for ``poincare``."""
        return self is not Metric.POINCARE

    def require_vector_space(self, what: str) -> None:
        """Refuse ``what`` (one :class:`InputError` line) for a metric that is not a vector space's.

        Examples
        --------
        >>> Metric.POINCARE.require_vector_space("an HNSW index")
        Traceback (most recent call last):
        ...
        repspace.core.errors.InputError: an HNSW index is not defined for a poincare space (points of the hyperbolic unit ball, not of a vector space); exact search, neighbour graphs, hubness, intrinsic dimension, mutual k-NN and the hyperbolic functions of repspace.core.hyperbolic work on it
        """
        if not self.is_vector_space:
            raise InputError(f"{what} is not defined for a {self.value} space (points of the hyperbolic unit ball, "
                             f"not of a vector space); exact search, neighbour graphs, hubness, intrinsic dimension, "
                             f"mutual k-NN and the hyperbolic functions of repspace.core.hyperbolic work on it")


def check_space_name(name: str) -> str:
    """Return ``name`` if it is a valid space name, else raise :class:`InputError`.

    Names start with a letter or digit and use letters, digits and ``. _ @ : + -``
    (at most 128 characters), so they are safe in file names and URLs.

    Examples
    --------
    >>> check_space_name("glove-6b.50d")
    'glove-6b.50d'
    """
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise InputError(
            f"invalid space name {name!r}: use letters, digits and . _ @ : + - "
            "(starting with a letter or digit, at most 128 characters)"
        )
    return name


@dataclass(frozen=True)
class SpaceInfo:
    """A description of a stored space, as ``repspace info --json`` prints it.

    Attributes
    ----------
    name, dim, metric, dtype : the space's identity and shape.
    count : number of live items.
    layout : ``dense`` (a vector of ``dim`` numbers per item), ``sparse`` (weights over a
        vocabulary of ``dim`` features per item; ``n_features`` is ``dim``) or ``multivector``
        (a matrix of ``dim``-d token vectors per item, searched by MaxSim).
    provenance : the recipe that made the vectors (encoder, version, layer, ...).
    generation : increases with every committed change.
    uid : a random id that survives renames and distinguishes re-created spaces.

    Examples
    --------
    >>> import os, tempfile
    >>> from repspace.core.store import Store
    >>> space = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("t", dim=2, metric="l2")
    >>> _ = space.add(["a", "b"], [[1.0, 0.0], [0.0, 1.0]])
    >>> info = space.info()
    >>> info.name, info.count, info.dim, info.metric.value, info.dtype, info.generation
    ('t', 2, 2, 'l2', 'float32', 1)
    >>> d = info.to_dict()  # JSON-ready: the metric as its name
    >>> d["metric"], d["provenance"], d["next_row"] - d["dead_rows"] == d["count"]
    ('l2', {}, True)
    """

    name: str
    dim: int
    metric: Metric
    dtype: str
    count: int
    provenance: dict[str, Any] = field(default_factory=dict)
    generation: int = 0
    uid: str = ""
    created_at: str = ""
    updated_at: str = ""
    next_row: int = 0
    dead_rows: int = 0
    layout: str = "dense"

    @property
    def sparse(self) -> bool:
        """Whether the space holds sparse rows (its ``dim`` is then its vocabulary's size)."""
        return self.layout == "sparse"

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` shape: ``{name, count, dim, metric, dtype, provenance, ...}``."""
        d = asdict(self)
        d["metric"] = self.metric.value
        return d

    def __repr__(self) -> str:
        enc = self.provenance.get("encoder", "?")
        return (
            f"SpaceInfo({self.name!r}, count={self.count}, dim={self.dim}, "
            f"metric={self.metric.value}, encoder={enc!r}, generation={self.generation})"
        )
