"""A handle on one stored space: its reader, writer and ledger in one class.

Rows are append-only: an item's vector is written once, at row ``r`` of the
space's vector array, and never changes. Replacing an item appends a new row and
leaves the old one dead; deleting leaves a dead row. This is what makes derived
indexes safe to reuse: an index over rows ``0..m`` is never *wrong* after a
change, only incomplete (extend it with the new rows) or holding dead rows
(excluded at search time).

The class is put together from three parts, each in its own module: the reader
(:mod:`._reader`: vectors, rows, items, filtered selections), the writer
(:mod:`._writer`: add, delete, metadata), the sparse reader (:mod:`._sparse_space`: the rows
of a sparse space), the multi-vector reader (:mod:`._multivector_space`: token matrices) and the ledger (:mod:`._ledger`:
states, shard entries, text hashes), on a shared base (:mod:`._base`: identity,
description, the space's row in a transaction).
"""

from __future__ import annotations

from repspace.core.store._base import Item
from repspace.core.store._ledger import ShardEntry, SpaceLedger
from repspace.core.store._multivector_space import MultiVectorReader
from repspace.core.store._reader import Snapshot, SpaceReader
from repspace.core.store._sparse_space import SparseReader
from repspace.core.store._writer import AddResult, SpaceWriter

__all__ = ["AddResult", "Item", "ShardEntry", "Snapshot", "Space"]


class Space(SpaceWriter, SpaceReader, SparseReader, MultiVectorReader, SpaceLedger):
    """A stored space: items, vectors, state. Get one from :meth:`Store.space` or ``create_space``.

    The core knows nothing of search; ``repspace.Space`` (a subclass in
    :mod:`repspace.workflows.store`) adds :meth:`~repspace.workflows.store.Space.search`.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> from repspace import Store
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
    >>> sp = store.create_space("toy", dim=3)
    >>> sp.add(["a", "b"], np.eye(3)[:2], texts=["x", "y"], metadata=[{"n": 1}, {"n": 2}]).added
    2
    >>> sp.ids(), sp.vectors().shape
    (['a', 'b'], (2, 3))
    """
