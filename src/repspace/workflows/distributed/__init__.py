"""The distributed backend: a workflow's heavy steps on a Ray cluster (``--backend ray``).

Ray is optional (``pip install 'repspace[ray]'``) and imported only when a job asks for it.

- :mod:`~repspace.workflows.distributed.backend`: ``local`` or ``ray``, connecting to a cluster.
- :mod:`~repspace.workflows.distributed.runner`: :func:`open_backend`, the backend object a workflow passes down.
- :mod:`~repspace.workflows.distributed.embed`: ``repspace ingest --backend ray`` (slices -> encoder actors ->
  Parquet shards -> the store, each shard once, resumable).
- :mod:`~repspace.workflows.distributed.shards`: the shard files, their manifest and their checked ingest.
- :mod:`~repspace.workflows.distributed.index`: ``repspace index build --backend ray``: IVF-PQ trained on the
  driver, filled by workers and merged (FAISS's merge, in memory or on disk); HNSW built per shard.
- :mod:`~repspace.workflows.distributed.measure`: ``diagnose``/``compare --backend ray``: the exact kNN graph as
  a tile join with a top-k merge, and second moments (CKA, Procrustes, SVCCA) as map and reduce.
"""

from importlib import import_module
from typing import Any

from repspace.workflows.distributed.backend import BACKENDS, check_backend, ray_session
from repspace.workflows.distributed.runner import open_backend

# The local path (search, diagnose, compare) imports this package for check_backend alone: the Ray jobs' modules
# are loaded on first use (PEP 562), which keeps their imports off every cold `repspace search`.
_LAZY = {
    "EmbedJobReport": "embed", "ingest_job": "embed", "ingest_ray": "embed",
    "ShardedBuild": "index", "add_ivf_shards": "index", "build_hnsw_shards": "index",
    "RayBackend": "measure", "RayKnnGraph": "measure", "RayRun": "measure", "compare_ray": "measure",
    "knn_graph_ray": "measure", "moments_ray": "measure", "ray_backend": "measure",
    "ingest_shard": "shards", "ingest_shards": "shards", "read_shard": "shards", "recipe_hash": "shards",
    "write_shard": "shards",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(f"repspace.workflows.distributed.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["BACKENDS", "check_backend", "open_backend", "ray_session", *_LAZY]
