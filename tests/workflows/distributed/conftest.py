"""Ray for the distributed backend's tests: one local Ray per session, and a simulated two-node cluster.

``ray_local`` starts ``ray.init(num_cpus=2, include_dashboard=False)`` once and keeps it for the
session (a test that needs the two-node cluster shuts it down; the next ``ray_local`` test starts it
again). ``ray_two_nodes`` is a ``ray.cluster_utils.Cluster`` of a head with no CPU and two worker
nodes of one CPU each, so every task runs on a worker node and the tests can see which.

Ray runs a one-CPU task's BLAS and OpenMP on one thread. ``make test-portable`` asks for another
count through ``REPSPACE_TEST_RAY_THREADS`` (see ``tests/portable_env.py``): both fixtures then
start their workers with that many threads (set in the job's runtime environment, which wins over
the ``OPENBLAS_NUM_THREADS`` the workers inherit from the driver).
"""

from __future__ import annotations

import logging
import os

import pytest

ray = pytest.importorskip("ray", reason="the test extra installs Ray (repspace[ray]); it is missing here")

# Ray's INFO lines and progress bars add nothing to a test log.
os.environ.setdefault("RAY_DATA_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("RAY_DEDUP_LOGS", "0")
# Ray Data logs every operator's metrics at DEBUG; pytest would capture them into every failure report.
pytest.importorskip("ray.data")  # configures its loggers on import; quieten them after

for _name in ("ray", "ray.data"):
    logging.getLogger(_name).setLevel(logging.WARNING)


def worker_env() -> dict:
    """``ray.init`` keywords giving every worker ``REPSPACE_TEST_RAY_THREADS`` BLAS/OpenMP threads, when set."""
    threads = os.environ.get("REPSPACE_TEST_RAY_THREADS", "").strip()
    if not threads:
        return {}
    names = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
    return {"runtime_env": {"env_vars": {name: threads for name in names}}}


def _local() -> None:
    if not ray.is_initialized():
        # address="local": our own Ray, never one that another process left running on this machine.
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False,
                 logging_level="warning", **worker_env())


@pytest.fixture(scope="session")
def _ray_session():
    yield
    if ray.is_initialized():
        ray.shutdown()


@pytest.fixture()
def ray_local(_ray_session):
    """A local Ray of 2 CPUs (started once, kept for the session)."""
    _local()
    return ray


@pytest.fixture()
def ray_two_nodes(_ray_session):
    """A simulated cluster: a head without CPUs and two nodes of one CPU each; yields ``(ray, cluster)``."""
    from ray.cluster_utils import Cluster

    if ray.is_initialized():
        ray.shutdown()
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    nodes = [cluster.add_node(num_cpus=1) for _ in range(2)]
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False, logging_level="warning", **worker_env())
    try:
        yield ray, cluster, nodes
    finally:
        ray.shutdown()
        cluster.shutdown()
