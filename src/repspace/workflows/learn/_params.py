"""Hyper-parameters handed through a learn workflow to its engine, checked before any work."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from repspace.core.errors import InputError


def check_params(what: str, fn: Callable[..., Any], params: Mapping[str, Any],
                 fixed: Iterable[str] = ("progress",)) -> dict[str, Any]:
    """``params`` when ``fn`` takes each as a keyword (the workflow passes ``fixed`` itself); else one line.

    Checked before the data is read or embedded, so a misspelt keyword costs nothing.

    Examples
    --------
    >>> def train(data, *, epochs=1, seed=0, progress=None): ...
    >>> check_params("toy", train, {"epochs": 3})
    {'epochs': 3}
    >>> check_params("toy", train, {"epoch": 3})
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: toy has no hyper-parameter epoch; it takes epochs, seed
    """
    signature = inspect.signature(fn).parameters
    skip = set(fixed)
    accepted = [name for name, p in signature.items() if p.kind is inspect.Parameter.KEYWORD_ONLY and name not in skip]
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise InputError(f"{what} has no hyper-parameter {', '.join(unknown)}; it takes {', '.join(accepted)}")
    return dict(params)
