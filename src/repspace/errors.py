"""The errors repspace raises: one base class, one subclass per kind of failure.

Catch :class:`RepspaceError` for anything repspace refuses or cannot do; the
CLI turns each into one line and an exit code, the HTTP service into its JSON
error shape and status.

Examples
--------
>>> from repspace.errors import InputError, RepspaceError
>>> issubclass(InputError, RepspaceError)
True
"""

from repspace.core.errors import (
    BackendError,
    ConflictError,
    DiskFullError,
    EncoderError,
    FilterError,
    InputError,
    NotFoundError,
    RepspaceError,
    StoreError,
)

__all__ = [
    "BackendError",
    "ConflictError",
    "DiskFullError",
    "EncoderError",
    "FilterError",
    "InputError",
    "NotFoundError",
    "RepspaceError",
    "StoreError",
]
