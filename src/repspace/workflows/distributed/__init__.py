"""The distributed backend: a workflow's heavy steps on a Ray cluster (``--backend ray``).

Ray is optional (``pip install 'repspace[ray]'``) and imported only when a job asks for it.

- :mod:`~repspace.workflows.distributed.backend`: the seam (``local`` or ``ray``), connecting to a cluster.
- :mod:`~repspace.workflows.distributed.embed`: ``repspace ingest --backend ray`` (slices -> encoder actors ->
  Parquet shards -> the store, each shard once, resumable).
- :mod:`~repspace.workflows.distributed.shards`: the shard files, their manifest and their checked ingest.
- :mod:`~repspace.workflows.distributed.index`: ``repspace index build --backend ray``: IVF-PQ trained on the
  driver, filled by workers and merged (FAISS's merge, in memory or on disk); HNSW built per shard.
- :mod:`~repspace.workflows.distributed.measure`: ``diagnose``/``compare --backend ray``: the exact kNN graph as
  a tile join with a top-k merge, and second moments (CKA, Procrustes, SVCCA) as map and reduce.
"""

from repspace.workflows.distributed.backend import BACKENDS, check_backend, ray_session
from repspace.workflows.distributed.embed import EmbedJobReport, ingest_job, ingest_ray
from repspace.workflows.distributed.index import ShardedBuild, add_ivf_shards, build_hnsw_shards
from repspace.workflows.distributed.measure import (
    RayKnnGraph,
    RayRun,
    compare_ray,
    knn_graph_ray,
    moments_ray,
    ray_backend,
)
from repspace.workflows.distributed.shards import ingest_shard, ingest_shards, read_shard, recipe_hash, write_shard

__all__ = ["BACKENDS", "EmbedJobReport", "RayKnnGraph", "RayRun", "ShardedBuild", "add_ivf_shards",
           "build_hnsw_shards", "check_backend", "compare_ray", "ingest_job", "ingest_ray", "ingest_shard",
           "ingest_shards", "knn_graph_ray", "moments_ray", "ray_backend", "ray_session", "read_shard", "recipe_hash",
           "write_shard"]
