"""Where a workflow's heavy steps run: here (``local``) or on a Ray cluster (``ray``).

:func:`repspace.workflows.distributed.runner.open_backend` turns a backend's name
(``--backend``) into the :class:`repspace.core.backend.Backend` object a workflow
passes down to the engines (``backend=``).

Ray is an optional extra (``pip install 'repspace[ray]'``); nothing imports it until a
command asks for ``--backend ray``. :func:`ray_session` connects to the cluster at
``--ray-address`` (or starts a local one) and shuts down only what it started, so a
notebook's own ``ray.init()`` is reused and left running.

An unreachable address is refused in seconds: ``ray.init`` itself keeps retrying a
dead address for minutes, so the address is probed with a plain TCP connect first.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from repspace.core.checks import check_choice
from repspace.core.errors import BackendError, InputError

#: The backends a heavy command accepts.
BACKENDS = ("local", "ray")
#: Seconds a TCP probe of ``--ray-address`` may take before the address counts as unreachable.
PROBE_TIMEOUT_S = 5.0


def check_backend(name: str, address: str | None = None) -> str:
    """``name`` if it is a known backend, else one clear error; with ``ray`` and an address, the address is probed.

    Checked before any work, so a typo or a cluster that is down costs seconds, not the
    reading of a space.

    Examples
    --------
    >>> check_backend("ray")
    'ray'
    >>> check_backend("spark")
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: the backend must be one of local, ray, not 'spark'
    >>> check_backend("local", "head:6379")
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: --ray-address goes with --backend ray
    """
    check_choice(name, "the backend", BACKENDS)
    if address is not None:
        if name != "ray":
            raise InputError("--ray-address goes with --backend ray")
        probe(address)
    return name


def one_line(e: BaseException) -> str:
    """The last non-empty line of an exception's text (Ray wraps the cause's message in a traceback).

    Examples
    --------
    >>> one_line(RuntimeError("Traceback ...\\n  File x\\nValueError: bad"))
    'ValueError: bad'
    """
    text = str(e).strip()
    return text.splitlines()[-1] if text else type(e).__name__


def node_id() -> str:
    """The Ray node this code runs on (inside a task or an actor)."""
    import ray

    return str(ray.get_runtime_context().get_node_id())


def import_ray() -> Any:
    """The ``ray`` module, or a :class:`BackendError` naming the extra to install."""
    try:
        import ray
        import ray.data  # noqa: F401  (the embed pipeline needs Ray Data)
    except ImportError as e:  # pragma: no cover - the test extra installs it
        raise BackendError(f"--backend ray needs Ray: pip install 'repspace[ray]' ({e})") from None
    # Ray Data announces every dataset's start and end at INFO on stderr: noise in a CLI's output.
    for name in ("ray", "ray.data"):
        logging.getLogger(name).setLevel(logging.WARNING)
    return ray


def parse_address(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of an address to probe, or None for addresses Ray resolves itself (``auto``, ``local``).

    Examples
    --------
    >>> parse_address("ray://head.example:10001")
    ('head.example', 10001)
    >>> parse_address("10.0.0.5:6379")
    ('10.0.0.5', 6379)
    >>> parse_address("auto") is None
    True
    >>> parse_address("head")
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: --ray-address 'head' is not host:port, ray://host:port, auto or local
    """
    if address in ("auto", "local"):
        return None
    rest = address.removeprefix("ray://")
    host, sep, port = rest.rpartition(":")
    if not sep or not host or not port.isdecimal() or not 0 < int(port) < 65536:
        raise InputError(f"--ray-address {address!r} is not host:port, ray://host:port, auto or local")
    return host.strip("[]"), int(port)


def probe(address: str, timeout_s: float = PROBE_TIMEOUT_S) -> None:
    """Refuse an address nothing listens on, in at most ``timeout_s`` seconds.

    Examples
    --------
    >>> probe("127.0.0.1:1")
    Traceback (most recent call last):
    ...
    repspace.core.errors.BackendError: cannot reach a Ray cluster at 127.0.0.1:1: connection refused
    """
    target = parse_address(address)
    if target is None:
        return
    try:
        with socket.create_connection(target, timeout=timeout_s):
            pass
    except ConnectionRefusedError:
        raise BackendError(f"cannot reach a Ray cluster at {address}: connection refused") from None
    except socket.timeout:
        raise BackendError(f"cannot reach a Ray cluster at {address}: no answer in {timeout_s:g} s") from None
    except OSError as e:
        raise BackendError(f"cannot reach a Ray cluster at {address}: {e.strerror or e}") from None


@contextmanager
def ray_session(address: str | None = None, *, num_cpus: int | None = None) -> Iterator[Any]:
    """A connected Ray: the running one, the cluster at ``address``, or a local one started here.

    Parameters
    ----------
    address : str, optional
        ``host:port`` of a cluster's head (GCS), ``ray://host:port`` (Ray Client), ``auto``;
        default ``$RAY_ADDRESS``, else a local Ray on this machine.
    num_cpus : int, optional
        CPUs of a local Ray started here (default: all).

    Yields
    ------
    The ``ray`` module, initialised. Ray started here is shut down on exit. Without an
    address a new local Ray is started even when another runs on this machine.

    Examples
    --------
    >>> with ray_session(num_cpus=1) as ray:  # doctest: +SKIP
    ...     ray.cluster_resources()["CPU"]
    1.0
    """
    ray = import_ray()
    if address is not None:
        probe(address)  # also when Ray is already initialised: a named cluster that is down is an error
    if ray.is_initialized():
        yield ray
        return
    address = address or os.environ.get("RAY_ADDRESS") or None
    if address is not None:
        probe(address)
    # repspace shows its own progress (shards landed); Ray Data's bars would interleave with it.
    ray.data.DataContext.get_current().enable_progress_bars = False
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "logging_level": "warning"}
    if address is None:
        # "local": a new Ray of our own. ray.init() without an address would join any Ray it finds
        # running on this machine (another user's, another test's), which is not what was asked.
        kwargs["num_cpus"] = num_cpus
    try:
        ray.init(address=address or "local", **kwargs)
    except (ConnectionError, RuntimeError, TimeoutError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise BackendError(f"cannot start or join Ray{f' at {address}' if address else ''}: {first}") from None
    try:
        yield ray
    finally:
        ray.shutdown()
