"""The store: one SQLite file holding every space, plus derived indexes beside it."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from repspace.core.errors import ConflictError, InputError, NotFoundError
from repspace.core.printable import excerpt
from repspace.core.space import DTYPES, LAYOUTS, Metric, SpaceInfo, check_space_name
from repspace.core.store._db import Database
from repspace.core.store._results import SavedResult, list_results, save_result
from repspace.core.store._base import now_iso
from repspace.core.store._space import Space
from repspace.core.store._multivector_space import check_multivector_space
from repspace.core.store._sparse_space import sparse_state
from repspace.core.store.validate import json_default

#: Environment variable naming the store file.
STORE_ENV = "REPSPACE_STORE"


def default_store_path() -> Path:
    """``$REPSPACE_STORE``, else ``$XDG_DATA_HOME/repspace/store.db`` (``~/.local/share/...``).

    Examples
    --------
    >>> default_store_path().name
    'store.db'
    """
    env = os.environ.get(STORE_ENV)
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "repspace" / "store.db"


class Store:
    """All spaces in one SQLite file (WAL mode); FAISS indexes live in ``<file>.indexes/``.

    Parameters
    ----------
    path : str or Path, optional
        The store file; defaults to :func:`default_store_path`.
    create : bool
        Create the file when it is missing (default); with False a missing store
        is a :class:`~repspace.core.errors.NotFoundError`. A SQLite file that is
        not a store is always refused, unchanged.
    readonly : bool
        Refuse every write (the HTTP service without ``--writable``). Nothing
        beside the store is written either: derived files (indexes, filter
        columns, layouts, statistics) are read when current, otherwise computed
        in memory or done without (a search without a current index is exact,
        and says so in its plan).

    Examples
    --------
    >>> import tempfile, os
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
    >>> space = store.create_space("demo", dim=4, metric="cosine", provenance={"encoder": "precomputed"})
    >>> [s.name for s in store.spaces()]
    ['demo']
    >>> store.space("demo").dim
    4
    """

    #: The class of the spaces it hands out; ``repspace.Store`` hands out ones that can search.
    space_class: type[Space] = Space

    def __init__(self, path: str | Path | None = None, *, create: bool = True, readonly: bool = False) -> None:
        self.path = Path(path).expanduser() if path is not None else default_store_path()
        self.db = Database(self.path, create=create, readonly=readonly)
        self._index_dir = self.path.with_name(self.path.name + ".indexes")
        self._spaces: dict[str, Space] = {}

    @property
    def readonly(self) -> bool:
        """Whether this store was opened read-only: then nothing in it or beside it is written."""
        return self.db.readonly

    @property
    def index_dir(self) -> Path:
        """Folder of derived files (indexes), beside the store file."""
        return self._index_dir

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Store {str(self.path)!r}>"

    # ------------------------------------------------------------------ spaces
    def create_space(
        self,
        name: str,
        dim: int,
        metric: str | Metric = "cosine",
        *,
        dtype: str = "float32",
        provenance: dict[str, Any] | None = None,
        exist_ok: bool = False,
        state: Mapping[str, bytes] | None = None,
        layout: str = "dense",
        features: Sequence[str] | None = None,
    ) -> Space:
        """Create an empty space.

        With ``layout="sparse"`` the space holds sparse rows (:class:`~repspace.core.sparse.SparseRows`)
        over a vocabulary of ``dim`` features, optionally named by ``features`` (one printable
        name per feature, kept with the space); its metric is ``ip`` or ``cosine``. With
        ``layout="multivector"`` each item is a matrix of ``dim``-d token vectors
        (:class:`~repspace.core.multivector.TokenSets`), searched by MaxSim; its metric is ``ip``.

        With ``exist_ok`` an existing space of the same name is returned if its
        dimension and metric agree (a :class:`ConflictError` otherwise).
        ``state`` is named binary data the space's vectors depend on (the
        fitted transforms of a derived space), written in the same transaction
        and read back with :meth:`Space.state`.
        """
        check_space_name(name)
        metric = Metric.parse(metric)
        if not isinstance(dim, int) or isinstance(dim, bool) or dim <= 0:
            raise InputError(f"dimension must be a positive integer, not {excerpt(dim)}")
        if dtype not in DTYPES:
            raise InputError(f"dtype must be one of {', '.join(DTYPES)}, not {excerpt(dtype)}")
        if layout not in LAYOUTS:
            raise InputError(f"layout must be one of {', '.join(LAYOUTS)}, not {excerpt(layout)}")
        state = dict(state or {})
        if layout == "sparse":
            state.update(sparse_state(dim, metric, dtype, features))
        elif layout == "multivector":
            check_multivector_space(metric, dtype)
        elif features is not None:
            raise InputError("feature names belong to sparse spaces (layout='sparse')")
        try:
            prov = json.dumps(provenance or {}, sort_keys=True, allow_nan=False, default=json_default)
        except (TypeError, ValueError) as e:
            raise InputError(f"provenance of space {name!r} is not valid JSON: {e}") from None
        with self.db.write() as c:
            row = c.execute("SELECT dim, metric, dtype, layout FROM spaces WHERE name = ?", (name,)).fetchone()
            if row is not None:
                if not exist_ok:
                    raise ConflictError(f"space {name!r} already exists")
                if tuple(row) != (dim, metric.value, dtype, layout):
                    raise ConflictError(
                        f"space {name!r} exists with dim={row[0]}, metric={row[1]}, dtype={row[2]}, layout={row[3]};"
                        f" asked for dim={dim}, metric={metric.value}, dtype={dtype}, layout={layout}"
                    )
            else:
                now = now_iso()
                c.execute(
                    "INSERT INTO spaces (uid, name, dim, metric, dtype, provenance, created_at, updated_at, layout)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (uuid.uuid4().hex, name, dim, metric.value, dtype, prov, now, now, layout),
                )
                if state:
                    sid = c.execute("SELECT id FROM spaces WHERE name = ?", (name,)).fetchone()[0]
                    c.executemany("INSERT INTO space_state (space_id, name, data) VALUES (?, ?, ?)",
                                  [(sid, str(key), bytes(value)) for key, value in state.items()])
        return self.space(name)

    def rename_space(self, name: str, new_name: str) -> Space:
        """Rename a space (its items, vectors, state and indexes stay); :class:`ConflictError` if taken."""
        check_space_name(new_name)
        space = self.space(name)
        with self.db.write() as c:
            if c.execute("SELECT 1 FROM spaces WHERE name = ?", (new_name,)).fetchone() is not None:
                raise ConflictError(f"space {new_name!r} already exists")
            c.execute("UPDATE spaces SET name = ?, updated_at = ? WHERE uid = ?", (new_name, now_iso(), space.uid))
        self._spaces.pop(name, None)
        return self.space(new_name)

    def space(self, name: str) -> Space:
        """The space called ``name``; :class:`NotFoundError` if there is none."""
        with self.db.read() as c:
            row = c.execute("SELECT uid FROM spaces WHERE name = ?", (name,)).fetchone()
            if row is None:
                names = [r[0] for r in c.execute("SELECT name FROM spaces ORDER BY name")]
                hint = f"; spaces: {', '.join(names[:10])}" if names else "; the store has no spaces yet"
                raise NotFoundError(f"no space {excerpt(name)} in {self.path}{hint}")
            cached = self._spaces.get(name)
            if cached is not None and cached.uid == row[0]:
                return cached
            space = self.space_class(self, SpaceInfo(name=name, dim=1, metric=Metric.COSINE, dtype="float32", count=0, uid=row[0]))
            space.reload(c)
        self._spaces[name] = space
        return space

    def spaces(self) -> list[SpaceInfo]:
        """Descriptions of every space, by name."""
        with self.db.read() as c:
            uids = [r[0] for r in c.execute("SELECT uid FROM spaces ORDER BY name")]
            out = []
            for uid in uids:
                tmp = self.space_class(self, SpaceInfo(name="", dim=1, metric=Metric.COSINE, dtype="float32", count=0, uid=uid))
                out.append(tmp.read_info(c))
        return out

    def delete_space(self, name: str) -> SpaceInfo:
        """Delete a space, its items and vectors, and its derived indexes."""
        space = self.space(name)
        with self.db.write() as c:
            info = space.read_info(c)
            c.execute("DELETE FROM spaces WHERE uid = ?", (space.uid,))
        self._spaces.pop(name, None)
        shutil.rmtree(self.index_dir / space.uid, ignore_errors=True)
        return info

    def save_result(self, result: dict[str, Any], *, space: Space | None = None, subject: str | None = None,
                    generation: int | None = None) -> int:
        """Record an evaluation result (``TaskResult.to_dict()``), linked to a space's generation.

        Parameters
        ----------
        result : dict
            MTEB TaskResult layout: ``task_name`` and ``scores`` with one split.
        space : Space, optional
            The space measured; the result records its generation (``generation``
            when given: the one the vectors were read at) and is deleted with it.
        subject : str, optional
            What was measured when there is no space (an encoder spec).

        Returns
        -------
        int
            The result's id.

        Examples
        --------
        >>> import tempfile, os
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> sp = store.create_space("v", dim=2)
        >>> r = {"task_name": "sts:x", "scores": {"test": [{"main_score": 0.5}]}, "evaluation_time": 1.0}
        >>> store.save_result(r, space=sp)
        1
        >>> [(s.space, s.main_score, s.stale) for s in store.results()]
        [('v', 0.5, False)]
        """
        if space is None and not subject:
            raise InputError("a result needs a space or a subject (an encoder spec)")
        return save_result(self.db, result, subject=space.name if space is not None else str(subject),
                           space_uid=space.uid if space is not None else None, generation=generation)

    def results(self, space: str | None = None, task: str | None = None) -> list[SavedResult]:
        """Recorded results, oldest first; ``stale`` marks those whose space has changed since.

        Parameters
        ----------
        space : str, optional
            Only results about this space (raises :class:`NotFoundError` if it does not exist).
        task : str, optional
            Only this task (``sts:stsb-en-test``) or task family (``sts``).
        """
        if space is not None:
            self.space(space)
        return list_results(self.db, space=space, task=task)
