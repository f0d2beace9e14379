"""One small cache for what a process keeps between calls: :class:`LRUCache`.

A thread-safe least-recently-used map with a size bound: at most
``max_entries`` entries and, when ``max_bytes`` is given, at most that many
bytes (each entry's size measured by ``sizeof``, e.g. an array's ``nbytes``).
Keys must say exactly what the value was derived from (a space's ``uid`` and
generation, a file's path and signature): never a bare ``id(obj)``, which
Python reuses once ``obj`` is gone (an entry that holds ``obj`` itself and
answers only for that very object may use it: the search's per-selection
caches do).

``functools.lru_cache`` stays the tool for a pure function of a few small
hashable arguments; this class is for the other caches (values keyed by state
that is not an argument, a bound in bytes, an explicit :meth:`LRUCache.clear`).

Examples
--------
>>> from repspace.core.cache import LRUCache
>>> c = LRUCache(max_entries=2)
>>> c.put("a", 1); c.put("b", 2); c.get("a")
1
>>> c.put("c", 3)  # "b" was used least recently
>>> c.get("b") is None, len(c)
(True, 2)
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from repspace.core.checks import check_scalar

__all__ = ["LRUCache"]

V = TypeVar("V")


class LRUCache(Generic[V]):
    """A thread-safe LRU map bounded by entries and, optionally, by bytes.

    Parameters
    ----------
    max_entries : int
        Entries kept (>= 1).
    max_bytes : int, optional
        Bytes kept, each entry measured by ``sizeof``; an entry larger than
        this on its own is not kept.
    sizeof : callable, optional
        Size of a value in bytes (default: 0, so only ``max_entries`` bounds).

    Examples
    --------
    >>> import numpy as np
    >>> c = LRUCache(max_entries=10, max_bytes=100, sizeof=lambda a: a.nbytes)
    >>> c.put(("space", 1), np.zeros(10))  # 80 bytes
    >>> c.put(("space", 2), np.zeros(10))  # 160 > 100: the older goes
    >>> list(c.keys())
    [('space', 2)]
    >>> c.clear(); len(c)
    0
    """

    def __init__(self, max_entries: int, max_bytes: int | None = None,
                 sizeof: Callable[[V], int] | None = None) -> None:
        check_scalar(max_entries, "max_entries", int, low=1)
        check_scalar(max_bytes, "max_bytes", int, low=0, none=True)
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._sizeof = sizeof or (lambda value: 0)
        self._items: OrderedDict[Hashable, tuple[V, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable, default: V | None = None) -> V | None:
        """The value of ``key`` (now the most recently used), or ``default``.

        Examples
        --------
        >>> c = LRUCache(max_entries=1)
        >>> c.get("x", 0)
        0
        """
        with self._lock:
            item = self._items.get(key)
            if item is None:
                return default
            self._items.move_to_end(key)
            return item[0]

    def put(self, key: Hashable, value: V) -> None:
        """Keep ``value`` under ``key``, dropping the least recently used entries beyond the bounds.

        Examples
        --------
        >>> c = LRUCache(max_entries=1)
        >>> c.put("x", 1); c.put("y", 2); list(c.keys())
        ['y']
        """
        size = int(self._sizeof(value))
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            if self.max_bytes is not None and size > self.max_bytes:
                return
            self._items[key] = (value, size)
            self._bytes += size
            while len(self._items) > self.max_entries or (self.max_bytes is not None and self._bytes > self.max_bytes):
                _, (_, dropped) = self._items.popitem(last=False)
                self._bytes -= dropped

    def pop(self, key: Hashable) -> V | None:
        """Forget ``key``; its value, or ``None``.

        Examples
        --------
        >>> c = LRUCache(max_entries=2)
        >>> c.put("x", 1); c.pop("x"), c.pop("x")
        (1, None)
        """
        with self._lock:
            item = self._items.pop(key, None)
            if item is None:
                return None
            self._bytes -= item[1]
            return item[0]

    def clear(self) -> None:
        """Forget every entry.

        Examples
        --------
        >>> c = LRUCache(max_entries=2)
        >>> c.put("x", 1); c.clear(); len(c)
        0
        """
        with self._lock:
            self._items.clear()
            self._bytes = 0

    def keys(self) -> list[Hashable]:
        """The keys, least recently used first.

        Examples
        --------
        >>> c = LRUCache(max_entries=2)
        >>> c.put("x", 1); c.put("y", 2); _ = c.get("x"); c.keys()
        ['y', 'x']
        """
        with self._lock:
            return list(self._items)

    @property
    def nbytes(self) -> int:
        """Bytes held, as measured by ``sizeof``.

        Examples
        --------
        >>> c = LRUCache(max_entries=2, sizeof=len)
        >>> c.put("x", "abc"); c.nbytes
        3
        """
        return self._bytes

    def __len__(self) -> int:
        return len(self._items)
