"""Writing a file so that readers see the old one or the new one, never half of one; and the ``.npz``
files derived data is kept in, stamped with what they were computed from.

Every file repspace writes beside a store or for a user (indexes' stamps, filter columns,
layouts, exports, MTEB results, HTML reports) goes through :func:`write_atomic`: the bytes go
to a new hidden file in the target's folder, created like ``open()`` creates one (mode
``0o666`` less the umask, so a colleague or a service account can read what the umask
allows), and are renamed over the target.

Examples
--------
>>> import os, tempfile
>>> from pathlib import Path
>>> p = Path(tempfile.mkdtemp()) / "sub" / "a.npz"
>>> write_npz(p, {"state": [1, 2]}, {"x": np.arange(3)})
>>> read_npz(p, {"state": [1, 2]})["x"].tolist(), read_npz(p, {"state": [1, 3]})
([0, 1, 2], None)
>>> os.listdir(p.parent)
['a.npz']
"""

from __future__ import annotations

import json
import os
import secrets
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any

import numpy as np

__all__ = ["read_npz", "write_atomic", "write_npz"]

_META = "__meta__"


def write_atomic(path: str | Path, write: Callable[[IO[bytes]], Any], *, durable: bool = False) -> None:
    """Write ``path`` with ``write(f)`` into a new file beside it, then rename it over ``path``.

    The folder is created when missing. ``durable`` also flushes the new file to disk
    before the rename (what a user's file needs; a cache can be recomputed). A failing
    ``write`` leaves the old file, and no temporary, behind.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
        try:  # the kernel applies the umask to 0o666, as open() does (mkstemp would make it 0600)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
            break
        except FileExistsError:  # 48 random bits met another writer's: draw again
            continue
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_npz(path: str | Path, meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> None:
    """Arrays and the JSON description ``meta`` of what they were computed from, in one ``.npz`` (nothing pickled)."""
    stamp = np.frombuffer(json.dumps(dict(meta)).encode(), dtype=np.uint8)
    write_atomic(path, lambda f: np.savez(f, **{_META: stamp}, **arrays))


def read_npz(path: str | Path, meta: Mapping[str, Any]) -> dict[str, np.ndarray] | None:
    """The arrays of a :func:`write_npz` file whose description equals ``meta`` (compared as JSON),
    or None when the file is absent, damaged, or describes something else."""
    try:
        with np.load(path, allow_pickle=False) as z:
            if json.loads(bytes(z[_META]).decode()) != json.loads(json.dumps(dict(meta))):
                return None
            return {k: z[k] for k in z.files if k != _META}
    except (OSError, EOFError, ValueError, KeyError, zipfile.BadZipFile, UnicodeDecodeError):
        return None
