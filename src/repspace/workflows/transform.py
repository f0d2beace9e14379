"""The transform workflow: a derived space made by fitting a chain of repairs on a stored space.

``derive_space(store, "glove", "glove-abtt", "center,abtt3")`` fits the chain on
the source's live vectors (or a seeded sample of them), writes the transformed
vectors with the same ids, texts and metadata into a new space, and records
what was done: the provenance keeps the source's recipe (so the same encoder
embeds queries), adds ``transforms`` (each step's parameters and a sha256 of
its fitted state) and ``derived_from`` (source name, uid, generation, rows
fitted on); the fitted chain itself is stored with the new space, so text
queries and texts added later go through it too
(:func:`repspace.workflows.stored_transforms.encoder_for_space`). A chain applied to a space
that is itself derived extends that space's chain.

The new space appears whole or not at all: it is written under a temporary
name and renamed when complete; on an error the partial space is deleted.

Examples
--------
>>> import numpy as np, tempfile, os
>>> from repspace import Store
>>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
>>> x = np.random.default_rng(0).standard_normal((200, 8)) + 2.0
>>> _ = store.create_space("raw", dim=8).add([str(i) for i in range(200)], x)
>>> new = derive_space(store, "raw", "fixed", "center,whiten4")
>>> new.dim, len(new), new.provenance["derived_from"]["space"]
(4, 200, 'raw')
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.core.progress import Progress
from repspace.core.space import check_space_name
from repspace.core.limits import WRITE_BATCH
from repspace.engines.transforms import (
    format_transforms,
    parse_transforms,
    transforms_provenance,
    transforms_to_bytes,
)
from repspace.workflows.new_space import refuse_existing, write_new_space
from repspace.workflows.stored_transforms import (
    STATE_NAME,
    apply_chain,
    stored_transforms,
)

if TYPE_CHECKING:
    from repspace.core.store import Space, Store

__all__ = ["derive_space", "write_derived"]


def derive_space(store: Store, source: str, new: str, spec: str, *, metric: str | None = None,
                 fit_sample: int | None = None, seed: int = 0,
                 progress: Progress | None = None) -> Space:
    """Fit ``spec`` on ``source``'s vectors and store the transformed space as ``new``.

    Parameters
    ----------
    store : Store
    source, new : str
        Space names; ``new`` must not exist.
    spec : str
        A transform chain (``center``, ``normalize``, ``whiten[K]``, ``abtt[D]``,
        ``pca[K]``, ``tldrK``, comma-separated; see :mod:`repspace.engines.transforms`).
    metric : str, optional
        Of the new space (default: the source's).
    fit_sample : int, optional
        Fit on this many live rows drawn at random (seeded) instead of all.
    seed : int
        Of that sample.
    progress : callable, optional
        ``(rows written, total)``.

    Returns
    -------
    Space
        The new space.

    Examples
    --------
    >>> import tempfile, os
    >>> from repspace.store import Store
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
    >>> x = np.random.default_rng(0).standard_normal((60, 4)) + 5.0
    >>> _ = store.create_space("raw", dim=4).add([f"i{i}" for i in range(60)], x)
    >>> new = derive_space(store, "raw", "raw-pca", "center,pca2")
    >>> new.name, new.dim, len(new), [t["spec"] for t in new.provenance["transforms"]]
    ('raw-pca', 2, 60, ['center', 'pca2'])
    >>> new.provenance["derived_from"]["fit_rows"], bool(np.allclose(new.vectors().mean(axis=0), 0, atol=1e-5))
    (60, True)
    """
    check_space_name(new)
    chain = parse_transforms(spec)
    if not chain:
        raise InputError("the transform spec is empty")
    src = store.space(source)
    src.metric.require_vector_space(f"transform {spec!r}")
    refuse_existing(store, new)
    info = src.info()
    items, X = src.dump()
    n = len(items)
    if n < 2:
        raise InputError(f"space {source!r} has {n} item(s); fitting transforms needs at least 2")
    fit_rows = np.arange(n)
    if fit_sample is not None:
        check_scalar(fit_sample, "the fit sample", int, low=2)
        if fit_sample < n:
            fit_rows = np.sort(np.random.default_rng(seed).choice(n, fit_sample, replace=False))
    fit_X = X if len(fit_rows) == n else X[fit_rows]
    for step in chain:  # each step fits on what the steps before it produce
        step.fit(fit_X)
        fit_X = step.transform(fit_X)
    del fit_X
    derived_from = {"space": source, "uid": info.uid, "generation": info.generation,
                    "fit_rows": len(fit_rows), "spec": format_transforms(chain), "seed": seed}
    return write_derived(store, src, new, chain, derived_from, items=items, vectors=X, metric=metric,
                         progress=progress)


def write_derived(store: Store, src: Space, new: str, chain: list[Any], derived_from: dict[str, Any], *,
                  items: list[Any] | None = None, vectors: np.ndarray | None = None, metric: str | None = None,
                  progress: Progress | None = None) -> Space:
    """Store ``src``'s items through a fitted ``chain`` as space ``new``, whole or not at all.

    The new space keeps the source's recipe, records the full chain (the
    source's own, if it is derived, then ``chain``) and ``derived_from``, and
    stores the fitted chain so that queries go through it.
    """
    check_space_name(new)
    if chain:  # a fitted map of vectors: the points of a poincare ball are not vectors
        src.metric.require_vector_space(f"a derived space through {format_transforms(list(chain))!r}")
    if items is None or vectors is None:
        items, vectors = src.dump()
    full = stored_transforms(src) + list(chain)
    prov = dict(src.provenance)
    if str(prov.get("encoder", "")).startswith("learn:") and "model_uid" not in prov:
        prov["model_uid"] = src.uid  # where the learned model is kept, for every space derived from this one
    prov["transforms"] = transforms_provenance(full)
    prov["transforms_spec"] = format_transforms(full)
    prov["derived_from"] = derived_from
    dim = int(apply_chain(chain, vectors[:1]).shape[1])

    def rows(lo: int, hi: int) -> tuple[list[str], np.ndarray, list[Any], list[Any]]:
        part = items[lo:hi]
        return ([it.id for it in part], apply_chain(chain, vectors[lo:hi]), [it.text for it in part],
                [it.metadata for it in part])

    return write_new_space(store, new, len(items), rows, dim=dim, metric=metric or src.metric.value, dtype=src.dtype,
                           provenance=prov, state={STATE_NAME: transforms_to_bytes(full)}, progress=progress,
                           batch=WRITE_BATCH)
