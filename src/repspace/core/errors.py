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
    "is_disk_full",
]


class RepspaceError(Exception):
    """Base class of every error repspace raises on purpose."""

    exit_code: int = 1


class InputError(RepspaceError, ValueError):
    """Bad user input: a malformed file, NaN vectors, a wrong dimension, ..."""

    exit_code = 2


class NotFoundError(RepspaceError, KeyError):
    """A space, item, encoder or file that does not exist."""

    exit_code = 3

    def __str__(self) -> str:  # KeyError quotes its message; we do not.
        return str(self.args[0]) if self.args else ""


class ConflictError(RepspaceError):
    """An operation that would overwrite something the user asked to keep."""

    exit_code = 4


class FilterError(InputError):
    """A ``--where`` expression that does not parse or is unsafe."""


class EncoderError(RepspaceError):
    """An encoder that cannot be loaded or fails while encoding."""

    exit_code = 5


class StoreError(RepspaceError):
    """The store file cannot be opened, is from a newer version, or is corrupt."""

    exit_code = 6


class DiskFullError(RepspaceError):
    """The disk (the file system of the store, or of a file being written) is full.

    Nothing of the operation was kept (a store's batch is rolled back whole);
    free some space and run it again. Not the user's input and not a bug: exit 1.
    """

    exit_code = 1


class BackendError(RepspaceError):
    """A distributed backend (Ray) that is missing, unreachable or lost while a job ran."""

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
