"""CPU threads used by torch-based encoders.

Examples
--------
>>> from repspace.encoders import set_threads
>>> before = set_threads(None)  # leaves the setting alone, returns it
>>> set_threads(1)
1
>>> set_threads(before) == before
True
"""

from __future__ import annotations

import numpy as np

from repspace.errors import InputError

__all__ = ["set_threads"]


def set_threads(n: int | None) -> int:
    """Set the number of torch intra-op threads.

    sentence-transformers and ``hf-layers`` encoders run their forward passes
    on these threads; model2vec encoders do not use torch.

    Parameters
    ----------
    n : int or None
        Threads (>= 1); ``None`` leaves torch's default (or the current
        setting) unchanged.

    Returns
    -------
    int
        The number of intra-op threads now in effect.

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
    if n is not None and (isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1):
        raise InputError(f"threads must be an integer >= 1, got {n!r}")
    import torch

    if n is not None:
        torch.set_num_threads(int(n))
    return int(torch.get_num_threads())
