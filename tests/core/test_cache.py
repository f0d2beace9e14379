"""The one cache utility: bounds by entries and bytes, LRU order, threads, clear."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from repspace.core.cache import LRUCache
from repspace.core.errors import InputError


def test_entries_bound_drops_the_least_recently_used() -> None:
    c: LRUCache[int] = LRUCache(max_entries=3)
    for i in range(3):
        c.put(i, i * 10)
    assert c.get(0) == 0  # 0 is now the most recent
    c.put(3, 30)
    assert c.keys() == [2, 0, 3] and c.get(1) is None


def test_bytes_bound_and_an_entry_too_big_alone() -> None:
    c: LRUCache[np.ndarray] = LRUCache(max_entries=100, max_bytes=1000, sizeof=lambda a: a.nbytes)
    for i in range(5):
        c.put(i, np.zeros(50))  # 400 bytes each
    assert c.keys() == [3, 4] and c.nbytes == 800
    c.put("big", np.zeros(200))  # 1600 bytes: not kept, and nothing else dropped for it
    assert c.get("big") is None and c.keys() == [3, 4]
    c.put(4, np.zeros(10))  # replacing an entry counts its new size only
    assert c.nbytes == 480
    assert c.pop(3) is not None and c.nbytes == 80
    c.clear()
    assert len(c) == 0 and c.nbytes == 0


@pytest.mark.parametrize("kw", [{"max_entries": 0}, {"max_entries": True}, {"max_entries": 2, "max_bytes": -1}])
def test_bad_bounds(kw) -> None:
    with pytest.raises(InputError):
        LRUCache(**kw)


def test_threads_keep_the_bounds() -> None:
    c: LRUCache[int] = LRUCache(max_entries=8, max_bytes=64, sizeof=lambda v: 4)

    def work(t: int) -> None:
        for i in range(2000):
            c.put((t, i % 50), i)
            c.get((t, (i * 7) % 50))

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(work, range(4)))
    assert len(c) <= 8 and c.nbytes == 4 * len(c) <= 64
