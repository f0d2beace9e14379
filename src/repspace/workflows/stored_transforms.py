"""A derived space's fitted transforms: read back from the store, applied to every vector it embeds.

A space made by :func:`repspace.workflows.transform.derive_space` keeps its fitted chain
as state ``transforms`` (``Space.state``), and its provenance names the encoder
of its source. Queries and new texts must go through the same encoder *and*
the same fitted chain, or they would land in another space:
:func:`encoder_for_space` gives that encoder for any space (a plain one
re-created from provenance when the space has no transforms).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.engines.encoders.base import Encoder, Tick

if TYPE_CHECKING:
    from repspace.core.store import Space
    from repspace.engines.transforms import Transform

# The transforms engine (and scikit-learn behind it) is imported only for a space that has a
# chain: a text query on a plain space must not pay a second of imports for it.

#: The name of the state entry holding a derived space's fitted chain.
STATE_NAME = "transforms"


def apply_chain(chain: Sequence[Transform], X: np.ndarray) -> np.ndarray:
    """``X`` through each fitted transform in order, as float32 (``X`` unchanged for an empty chain).

    Examples
    --------
    >>> from repspace.transforms import Center, Normalize
    >>> X = np.array([[1.0, 2.0], [3.0, 2.0]])
    >>> chain = [Center().fit(X), Normalize().fit(X)]
    >>> apply_chain(chain, X).tolist()
    [[-1.0, 0.0], [1.0, 0.0]]
    >>> apply_chain([], X).dtype
    dtype('float32')
    """
    out = np.asarray(X)
    for step in chain:
        out = step.transform(out)
    return np.ascontiguousarray(out, dtype=np.float32)


def stored_transforms(space: Space) -> list[Transform]:
    """The fitted chain stored with a space, or ``[]`` when it has none.

    Examples
    --------
    >>> import os, tempfile
    >>> from repspace.store import Store
    >>> from repspace.transforms import derive_space
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
    >>> X = np.array([[1.0, 2.0], [3.0, 2.0], [2.0, 5.0]])
    >>> _ = store.create_space("v", dim=2).add(["a", "b", "c"], X)
    >>> _ = derive_space(store, "v", "v-c", "center,normalize")
    >>> chain = stored_transforms(store.space("v-c"))
    >>> chain, stored_transforms(store.space("v"))
    ([Center(), Normalize()], [])
    >>> bool(np.allclose(apply_chain(chain, X), store.space("v-c").vectors_of(["a", "b", "c"])))
    True
    """
    data = space.state(STATE_NAME)
    if data is None:
        return []
    from repspace.engines.transforms import transforms_from_bytes

    return transforms_from_bytes(data)


class TransformedEncoder(Encoder):
    """An encoder followed by a fitted chain of transforms.

    Documents (:meth:`encode`) and queries (:meth:`encode_queries`) go
    through their own side of the base encoder, then the same chain.

    Parameters
    ----------
    base : Encoder
    chain : list of fitted Transform

    Examples
    --------
    >>> from repspace.engines.encoders import get_encoder
    >>> from repspace.engines.transforms import parse_transforms
    >>> base = get_encoder("static")
    >>> chain = [t.fit(base.encode(["a cat", "a dog", "the sea", "a tree", "red wine"])) for t in
    ...          parse_transforms("center,normalize")]
    >>> enc = TransformedEncoder(base, chain)
    >>> v = enc.encode(["a cat"])
    >>> v.shape, round(float(np.linalg.norm(v)), 5)
    ((1, 64), 1.0)
    >>> bool(np.allclose(enc.encode_queries(["a cat"]), v))  # static is symmetric
    True
    """

    def __init__(self, base: Encoder, chain: Sequence[Transform]) -> None:
        super().__init__(base.spec)
        self.base, self.chain = base, list(chain)
        self._dim: int | None = None

    @property
    def dim(self) -> int:
        if self._dim is None:
            probe = np.zeros((1, self.base.dim))
            self._dim = int(apply_chain(self.chain, probe).shape[1])
        return self._dim

    def _encode(self, texts: list[str], *, batch_size: int, progress: Tick | None) -> np.ndarray:
        return apply_chain(self.chain, self.base.encode(texts, batch_size=batch_size, progress=progress))

    def _encode_queries(self, texts: list[str], *, batch_size: int, progress: Tick | None) -> np.ndarray:
        return apply_chain(self.chain, self.base.encode_queries(texts, batch_size=batch_size, progress=progress))

    @property
    def asymmetric(self) -> bool:
        """That of the base encoder (the chain is the same for queries and documents)."""
        return self.base.asymmetric

    def provenance(self) -> dict[str, Any]:
        from repspace.engines.transforms import format_transforms, transforms_provenance

        return {**self.base.provenance(), "transforms": transforms_provenance(self.chain),
                "transforms_spec": format_transforms(self.chain)}


def encoder_for_space(space: Space, **kwargs: Any) -> Encoder:
    """The encoder that puts texts into ``space``: its recorded encoder, then its fitted transforms if any.

    ``kwargs`` go to :func:`repspace.engines.encoders.from_provenance`. A space learned by
    ``repspace learn`` (encoder ``learn:<method>``) gets its stored model instead
    (:func:`repspace.workflows.learned_encoder.learned_encoder`, which checks the model file's SHA-256).

    Examples
    --------
    A space derived from a learned word2vec space: texts go through its model, then the fitted chain.

    >>> from repspace.store import example_space
    >>> from repspace.learn import learn_space
    >>> from repspace.transforms import derive_space
    >>> store = example_space(40, 2, texts=["the cat sat on the mat", "the dog sat on the log"] * 20).store
    >>> _ = learn_space(store, "pets", "word2vec", from_space="t", vector_size=8, min_count=1)
    >>> _ = derive_space(store, "pets", "pets-c", "center,normalize")
    >>> enc = encoder_for_space(store.space("pets-c"))
    >>> type(enc).__name__, type(enc.base).__name__, enc.dim
    ('TransformedEncoder', 'LearnedEncoder', 8)
    >>> store.space("pets-c").search(enc.encode(["cat"])[0], k=1)[0].id
    'cat'
    """
    from repspace.engines.encoders import from_provenance

    if str(space.provenance.get("encoder", "")).startswith("learn:"):
        from repspace.workflows.learned_encoder import learned_encoder

        base = learned_encoder(space)
    else:
        base = from_provenance(space.provenance, **kwargs)
    chain = stored_transforms(space)
    return TransformedEncoder(base, chain) if chain else base
