"""One switch for every thread pool repspace uses: torch, BLAS (numpy) and FAISS."""

from __future__ import annotations


def set_threads(n: int | None) -> None:
    """Use ``n`` CPU threads for torch, the BLAS behind numpy and FAISS (None: leave defaults).

    Examples
    --------
    >>> set_threads(None)
    """
    if n is None:
        return
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=n)
    try:
        import faiss

        faiss.omp_set_num_threads(n)
    except ImportError:  # pragma: no cover - faiss is a dependency
        pass
    from repspace.encoders import set_threads as set_encoder_threads

    set_encoder_threads(n)
