"""The backend a workflow passes down to the engines, from its name (``--backend local|ray``).

The kNN graph and the moment pass (:mod:`repspace.core.backend`) run where the
:class:`~repspace.core.backend.Backend` object they are given says; a workflow
opens that object here, for the length of its call, and passes it explicitly
(``backend=``) to the engine functions. The Ray side
(:mod:`repspace.workflows.distributed.measure`) is imported only when ``ray`` is
asked for, so the local path loads no more than this module.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from repspace.core.backend import LOCAL, Backend
from repspace.core.errors import InputError
from repspace.workflows.distributed.backend import check_backend

__all__ = ["open_backend"]


@contextmanager
def open_backend(backend: str | Backend = "local", address: str | None = None,
                 **ray_options: Any) -> Iterator[Backend]:
    """The :class:`~repspace.core.backend.Backend` named ``backend``, open for this block.

    Parameters
    ----------
    backend : ``local``, ``ray`` or a Backend
        ``local``: :data:`repspace.core.backend.LOCAL`. ``ray``: a
        :class:`~repspace.workflows.distributed.measure.RayBackend` on the
        cluster at ``address`` (a Ray started here is shut down on exit). A
        Backend object is yielded as it is.
    address : str, optional
        The Ray cluster, with ``ray`` only (probed first, see :func:`check_backend`).
    **ray_options
        ``knn``, ``moments``, ``block_rows``, ``shards`` of
        :func:`~repspace.workflows.distributed.measure.ray_backend` (ignored by ``local``).

    Raises
    ------
    InputError
        An unknown name, or an address without ``ray``.
    BackendError
        Ray missing or unreachable.

    Examples
    --------
    >>> with open_backend("local") as b:
    ...     b.name
    'local'
    >>> with open_backend("ray", knn=False) as b:  # doctest: +SKIP
    ...     b.name, b.knn
    ('ray', False)
    """
    if not isinstance(backend, str):
        if address is not None:
            raise InputError("--ray-address goes with --backend ray")
        yield backend
        return
    if check_backend(backend) == "local":  # a ray address is probed by ray_session
        if address is not None:
            raise InputError("--ray-address goes with --backend ray")
        yield LOCAL
        return
    from repspace.workflows.distributed.measure import ray_backend

    with ray_backend(address, **ray_options) as on_ray:
        yield on_ray
