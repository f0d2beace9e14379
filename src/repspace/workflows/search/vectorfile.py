"""The rescoring tier: a space's vectors in one flat file beside the store, read through mmap.

Funnel indexes (:mod:`repspace.engines.search.funnel`) keep compact codes in memory and
rescore a shortlist with the full vectors. Reading those rows from SQLite costs a
blob open and a seek per row (vectors live in 4 MiB blocks, see
:mod:`repspace.core.store._space`); a shortlist of 40 rows for each of 1,000 queries
then costs more than the graph search itself. This file holds the same vectors,
row ``r`` at byte ``r · dim · itemsize``, in the space's dtype, and is mapped
read-only: a shortlist is one numpy gather from the page cache. For a float32
space with the cosine metric the rows are stored L2-normalised (as searched), so
rescoring does no per-row work before its dot products; float16 spaces keep their
raw values (normalising in float16 would round away the precision the rescoring
is for). It is the second
tier of the two-tier design: the operating system keeps in memory the pages that
searches touch and may evict them under pressure, so a space larger than memory
stays searchable (at disk speed for the rows not cached; BENCHMARKS.md,
"Search specs").

The file follows the rules of every derived index (:func:`~repspace.workflows.search.persist.ensure_index`):
a JSON stamp, extended with rows added since, rebuilt when its stamp does not
match. Dead rows are written as zeros (they are masked before any rescoring).
An extension copies the file and appends to the copy, then renames it over the
original, so readers in other processes keep a consistent file and two writers
cannot interleave their appends. No library offers this small piece (FAISS'
``IndexRefineFlat`` holds the vectors in memory; ``np.memmap`` is the mapping used
here).

Examples
--------
>>> import numpy as np
>>> from repspace.store import example_space
>>> sp = example_space(vectors=np.arange(9).reshape(3, 3), metric="l2")
>>> vf = ensure_vector_file(sp).index  # l2 here; cosine float32 spaces store normalised rows
>>> vf.read(np.array([0, 2])).tolist()
[[0.0, 1.0, 2.0], [6.0, 7.0, 8.0]]
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from repspace.core.errors import InputError
from repspace.core.exact import normalize_rows
from repspace.core.progress import Progress
from repspace.core.space import Metric
from repspace.workflows.search.persist import Loaded, ensure_index

if TYPE_CHECKING:
    from repspace.core.space import SpaceInfo
    from repspace.core.store import Space

__all__ = ["VectorFile", "ensure_vector_file", "vector_file_paths"]

#: The stamp's identity of the rescoring tier.
IDENT = {"tier": "vectors"}


def vector_file_paths(space: Space) -> tuple[Path, Path]:
    """Where a space's vector file and its stamp live."""
    folder = space.store.index_dir / space.uid
    return folder / "vectors.bin", folder / "vectors.json"


class VectorFile:
    """Row-addressed vectors in a flat file, memory-mapped read-only for :meth:`read`.

    A new or extended file is written to a temporary copy by :meth:`add` and put in
    place by :meth:`save` (atomic rename).

    Parameters
    ----------
    path : path
        The file (it may not exist yet).
    dim : int
    dtype : ``float32`` or ``float16``
        As the space stores its vectors.
    normalized : bool
        Rows are L2-normalised as they are added (zero rows stay zero).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "v.bin"
    >>> vf = VectorFile(p, 2, "float32")
    >>> vf.add(np.array([[1, 2], [5, 6]], "float32"), np.array([0, 2]))
    >>> vf.save(p)
    >>> vf.ntotal, vf.read(np.array([2, 1])).tolist()
    (3, [[5.0, 6.0], [0.0, 0.0]])
    """

    def __init__(self, path: str | os.PathLike[str], dim: int, dtype: str, normalized: bool = False) -> None:
        self.path = Path(path)
        self.normalized = bool(normalized)
        self.dim = int(dim)
        self.dtype = np.dtype(dtype)
        self._row_bytes = self.dim * self.dtype.itemsize
        self._tmp: Path | None = None  # the copy being written, until save()
        self._rows = self._file_rows(self.path) if self.path.exists() else 0
        self._map: np.memmap | None = None

    def __repr__(self) -> str:
        return (f"VectorFile({str(self.path)!r}, dim={self.dim}, dtype={self.dtype}, "
                f"normalized={self.normalized}, ntotal={self.ntotal})")

    def _file_rows(self, path: Path) -> int:
        size = path.stat().st_size
        if size % self._row_bytes:
            raise ValueError(f"{path} is {size} bytes, not a whole number of {self._row_bytes}-byte rows")
        return size // self._row_bytes

    @property
    def ntotal(self) -> int:
        """Rows held (``0 .. ntotal-1``; dead ones as zeros)."""
        return self._rows

    @property
    def nbytes(self) -> int:
        """Size of the file in bytes."""
        return self._rows * self._row_bytes

    def add(self, vectors: np.ndarray, rows: np.ndarray) -> None:
        """Append vectors at their rows (increasing, from :attr:`ntotal` on; gaps become zeros)."""
        rows = np.asarray(rows, dtype=np.int64)
        if not len(rows):
            return
        if rows[0] < self._rows or np.any(np.diff(rows) <= 0):
            raise InputError(f"rows must increase from {self._rows}, not start at {int(rows[0])}")
        if self.normalized:
            vectors = normalize_rows(vectors)
        vectors = np.ascontiguousarray(vectors, dtype=self.dtype)
        if vectors.shape != (len(rows), self.dim):
            raise InputError(f"vectors have shape {vectors.shape}; expected ({len(rows)}, {self.dim})")
        if self._tmp is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=self.path.name, suffix=".tmp")
            os.close(fd)
            self._tmp = Path(tmp)
            if self._rows:
                shutil.copyfile(self.path, self._tmp)
        block = np.zeros((int(rows[-1]) + 1 - self._rows, self.dim), dtype=self.dtype)
        block[rows - self._rows] = vectors
        with open(self._tmp, "ab") as f:
            f.write(block.tobytes())
        self._rows = int(rows[-1]) + 1

    def save(self, path: str | os.PathLike[str]) -> None:
        """Put the written copy in place at ``path`` (flushed to disk first)."""
        path = Path(path)
        if self._tmp is not None:
            with open(self._tmp, "rb+") as f:
                os.fsync(f.fileno())
            os.replace(self._tmp, path)
            self._tmp = None
        elif not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
        self.path = path
        self._map = None

    @classmethod
    def load(cls, path: str | os.PathLike[str], dim: int, dtype: str, normalized: bool = False) -> VectorFile:
        """Open an existing file (``ValueError`` when its size is not whole rows)."""
        return cls(path, dim, dtype, normalized)

    def read(self, rows: np.ndarray) -> np.ndarray:
        """Vectors of ``rows`` (any order, repeats allowed) as float32 ``(len(rows), dim)``."""
        rows = np.asarray(rows, dtype=np.int64)
        if len(rows) and (rows.min() < 0 or rows.max() >= self._rows):
            raise InputError(f"a requested row is outside the {self._rows} rows of {self.path.name}")
        if self._map is None:
            if self._rows == 0:
                return np.empty((len(rows), self.dim), np.float32)
            self._map = np.memmap(self.path, dtype=self.dtype, mode="r", shape=(self._rows, self.dim))
        return np.asarray(self._map[rows], dtype=np.float32)

    def array(self) -> np.ndarray | None:
        """The whole file as a read-only ``(ntotal, dim)`` array (a memory map), or None when the
        file is float16 or empty: rescoring then reads rows through :meth:`read`.

        Examples
        --------
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "v.bin"
        >>> vf = VectorFile(p, 2, "float32")
        >>> vf.add(np.ones((3, 2)), np.arange(3))
        >>> vf.save(p)
        >>> vf.array().shape
        (3, 2)
        """
        if self.dtype != np.float32 or self._rows == 0:
            return None
        if self._map is None:
            self._map = np.memmap(self.path, dtype=self.dtype, mode="r", shape=(self._rows, self.dim))
        return self._map

    def close(self) -> None:
        """Drop the mapping (a later :meth:`read` maps the file again)."""
        self._map = None


def ensure_vector_file(space: Space, *, progress: Progress | None = None,
                       info: SpaceInfo | None = None, recheck: bool = True) -> Loaded[VectorFile]:
    """A space's vector file, built, extended or rebuilt first when it is not current.

    ``recheck``: see :func:`repspace.workflows.search.persist.ensure_index`.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> from repspace import Store
    >>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("t", dim=2, metric="l2")
    >>> _ = sp.add(["a"], [[1, 2]])
    >>> ensure_vector_file(sp).action, ensure_vector_file(sp).action
    ('built', 'loaded')
    >>> _ = sp.add(["b"], [[3, 4]])
    >>> got = ensure_vector_file(sp)
    >>> got.action, got.index.read(np.array([1])).tolist()
    ('extended', [[3.0, 4.0]])
    """
    path, stamp_path = vector_file_paths(space)
    info = info or space.info()
    normalized = info.metric is Metric.COSINE and np.dtype(space.dtype) == np.float32
    return ensure_index(
        space, path, stamp_path, {**IDENT, "normalized": normalized},
        create=lambda i: VectorFile(_fresh(path), i.dim, space.dtype, normalized),
        load=lambda p, i: VectorFile.load(p, i.dim, space.dtype, normalized),
        progress=progress, info=info, recheck=recheck,
    )


def _fresh(path: Path) -> Path:
    """A path for a new file that is not yet in place (created on its first :meth:`VectorFile.add`)."""
    return path.with_name(path.name + ".new")
