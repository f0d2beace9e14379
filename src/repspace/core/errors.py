"""The single exception hierarchy of repspace.

Every error a user can cause derives from :class:`RepspaceError`. The CLI turns
any of them into one readable line on stderr and a non-zero exit code
(:attr:`RepspaceError.exit_code`); anything else is a bug and shows a traceback.

Examples
--------
>>> from repspace.core.errors import InputError, RepspaceError
>>> try:
...     raise InputError("vector 3 has NaN")
... except RepspaceError as e:
...     print(e.exit_code, e)
2 vector 3 has NaN
"""

from __future__ import annotations

import errno
import sqlite3

__all__ = [
    "RepspaceError",
    "InputError",
    "NotFoundError",
    "FilterError",
    "StoreError",
    "EncoderError",
    "ConflictError",
    "DiskFullError",
    "BackendError",
    "is_disk_full",
]


class RepspaceError(Exception):
    """Base class of every error repspace raises on purpose.

    Catch it for anything repspace refuses or cannot do, as the CLI does: one
    line for the user and :attr:`exit_code` as the exit status.

    Examples
    --------
    >>> def run(command):
    ...     try:
    ...         return command()
    ...     except RepspaceError as e:
    ...         return f"error: {e} (exit {e.exit_code})"
    >>> def show_space():
    ...     raise NotFoundError("no space 'news' in s.db")
    >>> run(show_space)
    "error: no space 'news' in s.db (exit 3)"
    """

    exit_code: int = 1


class InputError(RepspaceError, ValueError):
    """Bad user input: a malformed file, NaN vectors, a wrong dimension, ...

    Also a ``ValueError``, so code that catches that keeps working.

    Examples
    --------
    >>> import numpy as np, os, tempfile
    >>> from repspace.core.store import Store
    >>> space = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("toy", dim=2)
    >>> space.add(["a"], np.array([[1.0, 2.0, 3.0]]))
    Traceback (most recent call last):
    repspace.core.errors.InputError: vectors have dimension 3; this space has dimension 2
    """

    exit_code = 2


class NotFoundError(RepspaceError, KeyError):
    """A space, item, encoder or file that does not exist.

    Also a ``KeyError``, but its message is printed unquoted.

    Examples
    --------
    >>> import os, tempfile
    >>> from repspace.core.store import Store
    >>> Store(os.path.join(tempfile.mkdtemp(), "s.db")).space("news")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    repspace.core.errors.NotFoundError: no space 'news' in .../s.db; the store has no spaces yet
    """

    exit_code = 3

    def __str__(self) -> str:  # KeyError quotes its message; we do not.
        return str(self.args[0]) if self.args else ""


class ConflictError(RepspaceError):
    """An operation that would overwrite something the user asked to keep.

    Examples
    --------
    >>> import os, tempfile
    >>> from repspace.core.store import Store
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
    >>> _ = store.create_space("toy", dim=2)
    >>> store.create_space("toy", dim=2)
    Traceback (most recent call last):
    repspace.core.errors.ConflictError: space 'toy' already exists
    """

    exit_code = 4


class FilterError(InputError):
    """A ``--where`` expression that does not parse or is unsafe.

    Examples
    --------
    >>> from repspace.core.filters import parse as parse_filter
    >>> parse_filter("year >")
    Traceback (most recent call last):
    repspace.core.errors.FilterError: filter: expected a value after '>' at position 7: "year >"
    """


class EncoderError(RepspaceError):
    """An encoder that cannot be loaded or fails while encoding.

    Examples
    --------
    >>> try:
    ...     raise EncoderError("encoder static:toy returned shape (2, 3), expected (2, 4)")
    ... except RepspaceError as e:
    ...     print(type(e).__name__, e.exit_code)
    EncoderError 5
    """

    exit_code = 5


class StoreError(RepspaceError):
    """The store file cannot be opened, is from a newer version, or is corrupt.

    Examples
    --------
    >>> import os, tempfile
    >>> from repspace.core.store import Store
    >>> path = os.path.join(tempfile.mkdtemp(), "notes.db")
    >>> with open(path, "w") as f:
    ...     _ = f.write("these are notes, not a store" * 100)
    >>> Store(path).list_spaces()  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    repspace.core.errors.StoreError: cannot open store .../notes.db: file is not a database
    """

    exit_code = 6


class DiskFullError(RepspaceError):
    """The disk (the file system of the store, or of a file being written) is full.

    Nothing of the operation was kept (a store's batch is rolled back whole);
    free some space and run it again. Not the user's input and not a bug: exit 1.

    Examples
    --------
    A writer turns the system's "no space left" into this error with :func:`is_disk_full`:

    >>> def write(path):
    ...     try:
    ...         raise OSError(errno.ENOSPC, "No space left on device")  # what a full disk gives
    ...     except OSError as e:
    ...         if is_disk_full(e):
    ...             raise DiskFullError(f"disk full: cannot write {path}; nothing was written") from None
    ...         raise
    >>> write("out.parquet")
    Traceback (most recent call last):
    repspace.core.errors.DiskFullError: disk full: cannot write out.parquet; nothing was written
    """

    exit_code = 1


class BackendError(RepspaceError):
    """A distributed backend (Ray) that is missing, unreachable or lost while a job ran.

    Examples
    --------
    The CLI prints it as one line and exits with its code:

    >>> err = BackendError("cannot reach a Ray cluster at 10.0.0.5:6379: connection refused")
    >>> err.exit_code, f"error: {err}"
    (7, 'error: cannot reach a Ray cluster at 10.0.0.5:6379: connection refused')
    """

    exit_code = 7


def is_disk_full(e: BaseException) -> bool:
    """Whether ``e`` says that the disk is full: SQLite's ``SQLITE_FULL`` or the system's ``ENOSPC``.

    Examples
    --------
    >>> import errno
    >>> is_disk_full(OSError(errno.ENOSPC, "No space left on device")), is_disk_full(OSError(errno.EACCES, "no"))
    (True, False)
    >>> is_disk_full(sqlite3.OperationalError("database or disk is full"))
    True
    """
    if isinstance(e, sqlite3.Error):
        code = getattr(e, "sqlite_errorcode", None)
        return code is not None and code & 0xFF == sqlite3.SQLITE_FULL or "disk is full" in str(e)
    return isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT)
