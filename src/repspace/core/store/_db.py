"""Opening the SQLite file: pragmas, migrations and explicit transactions.

The connection runs in autocommit mode (``isolation_level=None``) and every
unit of work is an explicit ``BEGIN``/``COMMIT``: :func:`write` takes the write
lock up front (``BEGIN IMMEDIATE``) so that a batch is all in or all out, and
:func:`read` pins one snapshot so that a reader never sees half a batch while
another process writes (WAL mode lets readers and one writer work at once).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from repspace.core.errors import DiskFullError, NotFoundError, StoreError, is_disk_full
from repspace.core.store._schema import FOREIGN_KEYS_OFF, MIGRATIONS, SCHEMA_VERSION

#: How long a writer waits for another writer's lock before giving up (seconds).
BUSY_TIMEOUT_S = 60.0
#: Page size for new stores: large pages make the multi-MiB vector blocks cheap to read.
PAGE_SIZE = 16384
#: ``PRAGMA application_id`` of a store ("RPSP"): how a repspace store is told from other SQLite files.
APPLICATION_ID = 0x52505350

T = TypeVar("T")


class Database:
    """One connection to a store file, safe to share between threads.

    Parameters
    ----------
    path : str or Path
        The SQLite file; created (with its folder) when missing and ``create``.
    create : bool
        With False, a missing file is an error and nothing is created (the
        commands that only read never leave an empty store behind).
    readonly : bool
        Open the file read-only (SQLite's ``mode=ro``): every write is refused
        with a :class:`StoreError`; nothing is created or migrated.

    An existing SQLite file that is not a repspace store is refused before
    anything in it is changed (its journal mode included).

    Examples
    --------
    >>> import tempfile, os
    >>> db = Database(os.path.join(tempfile.mkdtemp(), "s.db"))
    >>> with db.read() as c:
    ...     c.execute("PRAGMA user_version").fetchone()[0] >= 1
    True
    >>> db.close()
    """

    def __init__(self, path: str | Path, *, create: bool = True, readonly: bool = False) -> None:
        self.path = Path(path)
        self.readonly = readonly
        if self.path.is_dir():
            raise StoreError(f"store path {self.path} is a folder, not a file")
        if (readonly or not create) and not self.path.exists():
            raise NotFoundError(f"no store at {self.path} (commands that write, such as ingest, create one)")
        if not readonly:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                if is_disk_full(e):
                    raise DiskFullError(f"disk full: cannot create the store's folder {self.path.parent}") from None
                raise StoreError(f"cannot create the store's folder {self.path.parent}: {e.strerror}") from None
        self._lock = threading.RLock()
        #: Write transactions this connection committed (see :meth:`version`).
        self.commits = 0
        try:
            if readonly:  # SQLite refuses every write on this connection (the HTTP service without --writable)
                self.conn = sqlite3.connect(self.path.resolve().as_uri() + "?mode=ro", uri=True,
                                            timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
                self._configure_readonly()
            else:
                self.conn = sqlite3.connect(
                    self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
                )
                self._configure()
                self._migrate()
        except sqlite3.DatabaseError as e:
            if is_disk_full(e):
                raise DiskFullError(f"disk full: cannot open store {self.path}: free some space and run "
                                    "again") from None
            raise StoreError(f"cannot open store {self.path}: {e}") from None
        st = os.stat(self.path)
        #: Which file this is (device, inode and change time, read once it is open): what a process-wide cache
        #: keys a store's data by, since a copied store holds the same space uids and generations as its
        #: original. The change time tells a new file from a deleted one whose inode the system gave again.
        self.identity = f"{st.st_dev}:{st.st_ino}:{st.st_ctime_ns}"

    def _configure_readonly(self) -> None:
        """A read-only connection: the file is checked, never changed (no journal mode, no migration)."""
        c = self.conn
        if c.execute("PRAGMA page_count").fetchone()[0] == 0:
            raise StoreError(f"{self.path} is empty: not a repspace store")
        self._check_ours()
        version = c.execute("PRAGMA user_version").fetchone()[0]
        if version != SCHEMA_VERSION:
            raise StoreError(f"store {self.path} has schema version {version} and this repspace reads "
                             f"{SCHEMA_VERSION}: open it once for writing to migrate it")
        self._tune()

    def _configure(self) -> None:
        c = self.conn
        new = c.execute("PRAGMA page_count").fetchone()[0] == 0
        if new:
            c.execute(f"PRAGMA page_size = {PAGE_SIZE}")
            c.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        else:
            self._check_ours()
        mode = _retry_busy(lambda: c.execute("PRAGMA journal_mode = WAL").fetchone()[0])
        if mode.lower() != "wal":
            raise StoreError(f"store {self.path} cannot use WAL mode (got {mode!r})")
        # NORMAL is durable against a crashed or killed process in WAL mode (only
        # an OS crash or power loss can drop the last commits).
        c.execute("PRAGMA synchronous = NORMAL")
        self._tune()

    def _tune(self) -> None:
        """The connection's own settings (read-write or read-only alike)."""
        c = self.conn
        c.execute("PRAGMA foreign_keys = ON")
        c.execute("PRAGMA mmap_size = 4294967296")
        c.execute("PRAGMA cache_size = -65536")

    def _check_ours(self) -> None:
        """Refuse an SQLite file that is not a repspace store, before anything in it is changed.

        A store carries :data:`APPLICATION_ID`; stores made before it are known by
        their schema version and tables. An SQLite file with no tables at all is
        taken as empty and becomes a store.
        """
        c = self.conn
        app = c.execute("PRAGMA application_id").fetchone()[0]
        if app == APPLICATION_ID:
            return
        version = c.execute("PRAGMA user_version").fetchone()[0]
        tables = sorted(r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
        if app == 0 and ((not tables and version == 0) or (version >= 1 and {"spaces", "items", "blocks"} <= set(tables))):
            return
        listed = ", ".join(tables[:5]) + (", ..." if len(tables) > 5 else "")
        what = f"{len(tables)} tables: {listed}" if tables else f"application id {app}, user version {version}"
        raise StoreError(f"{self.path} is an SQLite database but not a repspace store ({what}); it was left unchanged")

    def _migrate(self) -> None:
        version = self.conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"store {self.path} has schema version {version}, newer than this "
                f"repspace knows ({SCHEMA_VERSION}); upgrade repspace"
            )
        for number in range(version + 1, SCHEMA_VERSION + 1):
            rebuild = number in FOREIGN_KEYS_OFF
            if rebuild:  # only outside a transaction does this pragma take effect
                self.conn.execute("PRAGMA foreign_keys = OFF")
            try:
                with self.write() as c:
                    # Re-check under the write lock: another process may have migrated.
                    if c.execute("PRAGMA user_version").fetchone()[0] >= number:
                        continue
                    for statement in _split_sql(MIGRATIONS[number - 1]):
                        c.execute(statement)
                    if rebuild and c.execute("PRAGMA foreign_key_check").fetchone() is not None:
                        raise StoreError(f"store {self.path}: migration {number} would break a reference; "
                                         "nothing was changed")
                    c.execute(f"PRAGMA user_version = {number}")
            finally:
                if rebuild:
                    self.conn.execute("PRAGMA foreign_keys = ON")

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction: committed when the block ends, rolled back on any error."""
        with self._lock:
            try:
                self.conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as e:
                raise self._unwritable(e) from None
            try:
                yield self.conn
            except sqlite3.OperationalError as e:
                self._rollback()
                raise self._unwritable(e) from None
            except BaseException:
                self._rollback()
                raise
            try:
                self.conn.execute("COMMIT")
            except sqlite3.OperationalError as e:  # a full disk is often found here, writing the WAL
                self._rollback()
                raise self._unwritable(e) from None
            finally:
                self.commits += 1  # counted even if COMMIT failed: callers then re-read

    def _rollback(self) -> None:
        """Roll back the open transaction, if SQLite has not already done so.

        After an I/O error or a full disk SQLite may roll the whole transaction
        back by itself; a ROLLBACK then would fail ("no transaction is active")
        and hide the error that matters.
        """
        if self.conn.in_transaction:
            try:
                self.conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass  # the error being raised says more; SQLite rolls back a hot journal on next open

    def _unwritable(self, e: sqlite3.OperationalError) -> Exception:
        """A store the system will not let us write, as one line; any other SQLite error as it is."""
        message = str(e)
        if "readonly" in message or "read-only" in message:
            return StoreError(f"cannot write store {self.path}: the file or its folder is read-only")
        if is_disk_full(e):
            return DiskFullError(f"disk full: cannot write store {self.path}; nothing of this change was "
                                 "written (free some space and run again)")
        if "disk I/O" in message:
            return StoreError(f"cannot write store {self.path}: {message}")
        return e

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: every query inside sees the same snapshot."""
        with self._lock:
            self.conn.execute("BEGIN")
            try:
                yield self.conn
            finally:
                self.conn.execute("COMMIT")

    def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """The rows of one statement, run on its own under the connection's lock.

        Outside an explicit transaction a single SELECT is its own read
        transaction, so this is the cheapest consistent read of one query (what
        a search's hits need) where :meth:`read` costs a BEGIN and a COMMIT more.

        Examples
        --------
        >>> import tempfile, os
        >>> Database(os.path.join(tempfile.mkdtemp(), "s.db")).fetchall("SELECT 1 + ?", (1,))
        [(2,)]
        """
        with self._lock:
            return self.conn.execute(sql, params).fetchall()

    def version(self) -> tuple[int, int]:
        """A token that changes whenever the database may have changed since the last call.

        SQLite's ``PRAGMA data_version`` changes when *another* connection (of
        this process or any other) commits; this connection's own commits are
        counted in :attr:`commits`. Reading it costs one statement, so callers
        can cache what they read (a space's description) and re-read only when
        the token moves.
        """
        with self._lock:
            return self.conn.execute("PRAGMA data_version").fetchone()[0], self.commits

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            self.conn.close()


def _retry_busy(step: Callable[[], T], timeout_s: float = BUSY_TIMEOUT_S) -> T:
    """Run ``step``, retrying while another connection holds the lock.

    SQLite does not call the busy handler for every lock it meets: switching a
    brand-new file to WAL while another process does the same fails at once
    with "database is locked" whatever the connection's timeout. Two processes
    that open a new store together hit exactly that, so the switch is retried
    here with a short backoff until the same deadline a writer waits for.
    """
    deadline = time.monotonic() + timeout_s
    delay = 0.001
    while True:
        try:
            return step()
        except sqlite3.OperationalError as e:
            message = str(e)
            if ("locked" not in message and "busy" not in message) or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.05)


def _split_sql(script: str) -> list[str]:
    """Split a migration into statements (``executescript`` would COMMIT our transaction)."""
    statements, current = [], []
    for line in script.splitlines():
        if line.strip().startswith("--"):
            continue
        current.append(line)
        if sqlite3.complete_statement("\n".join(current)):
            statements.append("\n".join(current).strip())
            current = []
    if "".join(current).strip():
        raise AssertionError("migration ends with an incomplete statement")
    return [s for s in statements if s]
