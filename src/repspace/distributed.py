"""Run the heavy jobs on a Ray cluster: embedding, index builds, kNN graphs and second moments.

Ray is optional (``pip install 'repspace[ray]'``) and imported only when a job
runs. :func:`ingest_ray` embeds a corpus with encoder actors into resumable
shards; :func:`build_hnsw_shards` and :func:`add_ivf_shards` build indexes per
shard; :func:`compare_ray`, :func:`knn_graph_ray` and :func:`moments_ray`
compute the exact neighbour graph and the second moments behind CKA,
Procrustes and SVCCA as map and reduce. :func:`ray_session` connects to a
cluster (or starts a local one).

The kernels that can run elsewhere take a ``backend`` argument (a
:class:`Backend`: :data:`LOCAL` by default, or a :class:`RayBackend`, which
:func:`open_backend` makes from ``"ray"``): the caller passes it down
explicitly, through the engine function, to the kernel.

Examples
--------
>>> from repspace.distributed import BACKENDS, check_backend
>>> BACKENDS
('local', 'ray')
>>> check_backend("local")
'local'
"""

from repspace.core import backend as _backend
from repspace.core.backend import *  # noqa: F403 - every name of its __all__
from repspace.workflows.distributed.backend import BACKENDS, check_backend, ray_session
from repspace.workflows.distributed.embed import EmbedJobReport, ingest_job, ingest_ray
from repspace.workflows.distributed.index import ShardedBuild, add_ivf_shards, build_hnsw_shards
from repspace.workflows.distributed.measure import (
    RayBackend,
    RayKnnGraph,
    RayRun,
    compare_ray,
    knn_graph_ray,
    moments_ray,
    ray_backend,
)
from repspace.workflows.distributed import runner as _runner
from repspace.workflows.distributed.runner import *  # noqa: F403 - every name of its __all__
from repspace.workflows.distributed.shards import ingest_shard, ingest_shards, read_shard, recipe_hash, write_shard

__all__ = [
    *_backend.__all__,
    *_runner.__all__,
    "BACKENDS",
    "EmbedJobReport",
    "RayBackend",
    "RayKnnGraph",
    "RayRun",
    "ShardedBuild",
    "add_ivf_shards",
    "build_hnsw_shards",
    "check_backend",
    "compare_ray",
    "ingest_job",
    "ingest_ray",
    "ingest_shard",
    "ingest_shards",
    "knn_graph_ray",
    "moments_ray",
    "ray_backend",
    "ray_session",
    "read_shard",
    "recipe_hash",
    "write_shard",
]
