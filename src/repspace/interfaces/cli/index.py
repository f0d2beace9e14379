"""``repspace index``: build, list and drop a space's persisted indexes."""

from __future__ import annotations

from typing import Annotated, Optional

import typer
from rich.table import Table

from repspace.interfaces.cli._app import command_group
from repspace.interfaces.cli._common import (
    SpaceArg,
    note,
    open_store,
    out,
    print_json,
    progress_bar,
)
from repspace.interfaces.cli.options import Json

index_app = command_group("index", help=(
    "Build, list and drop a space's indexes (persisted beside the store, kept up to date).\n\n"
    "Specs: exact, hnsw32, hnsw32,shards4, int8>rescore4, binary>rescore8, pca64>rerank,\n"
    "prefix64>rerank, prefix64,hnsw32>rerank, prefix64,ivf1024>rerank, ivf1024,pq32>rerank,\n"
    "opq32,ivf1024,pq32>rerank.\n\n"
    "Examples:\n\n"
    "  repspace index build docs int8>rescore4\n\n"
    "  repspace index list docs --json"
))



def _size(n: int | None) -> str:
    if n is None:
        return ""
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n / 2**10:.1f} KiB"


@index_app.command("build")
def build_cmd(
    space: SpaceArg,
    spec: Annotated[str, typer.Argument(help="Index spec, e.g. hnsw32, int8>rescore4, pca64>rerank.")],
    backend: Annotated[str, typer.Option(help="Where to build: local, or ray (ivfN,pqM and hnswM,shardsN).")
                       ] = "local",
    ray_address: Annotated[Optional[str], typer.Option(
        "--ray-address", help="Ray cluster (host:port, ray://host:port, auto); default $RAY_ADDRESS or a local Ray.")
    ] = None,
    shards: Annotated[Optional[int], typer.Option(
        help="--backend ray, ivfN,pqM: pieces of work (default: the cluster's CPUs).")] = None,
    json: Json = False,
) -> None:
    """Build an index (or bring it up to date) and persist it beside the store.

    With --backend ray, IVF-PQ is trained here and filled by the cluster's workers,
    then merged; hnswM,shardsN builds one graph per worker, searched by fan-out.

    Examples:

      repspace index build glove hnsw32

      repspace index build docs 'binary>rescore8'

      repspace index build docs 'prefix64,hnsw32>rerank' --json

      repspace index build glove 'ivf1024,pq25>rerank' --backend ray --ray-address head:6379

      repspace index build glove 'hnsw32,shards8' --backend ray
    """
    from repspace.workflows.search.indexes import build_index

    sp = open_store(create=False).space(space)
    with progress_bar(json) as bar:
        report = build_index(sp, spec, progress=bar, backend=backend, address=ray_address, shards=shards)
    if json:
        print_json(report.to_dict())
        return
    where = f", on {len(report.nodes)} Ray node(s)" if report.nodes else ""
    note(f"{report.spec}: {report.action}, {report.ntotal:,} vectors{where}, "
         f"{_size(report.memory_bytes)} in memory")


@index_app.command("list")
def list_cmd(space: SpaceArg, json: Json = False) -> None:
    """The indexes persisted for a space and whether each is current.

    Examples:

      repspace index list docs
    """
    from repspace.workflows.search.indexes import list_indexes

    reports = list_indexes(open_store(create=False).space(space))
    if json:
        print_json([r.to_dict() for r in reports])
        return
    table = Table("spec", "state", "vectors", "generation", "file")
    for r in reports:
        table.add_row(r.spec, r.action, f"{r.ntotal:,}", str(r.generation), _size(r.memory_bytes))
    out.print(table)


@index_app.command("drop")
def drop_cmd(
    space: SpaceArg,
    spec: Annotated[str, typer.Argument(help="The index spec to delete, or 'vectors' (the rescoring tier).")],
    json: Json = False,
) -> None:
    """Delete a persisted index (it is rebuilt if a search asks for it again).

    Examples:

      repspace index drop docs 'int8>rescore4'

      repspace index drop docs vectors     # the memory-mapped copy the rescoring reads

      repspace index drop docs hnsw32 --json
    """
    from repspace.workflows.search.indexes import drop_index

    report = drop_index(open_store(create=False).space(space), spec)
    if json:
        print_json(report.to_dict())
        return
    note(f"{report.spec}: dropped, {report.ntotal:,} vectors, {_size(report.memory_bytes) or 'no file'}")


@index_app.command("prune")
def prune_cmd(
    space: SpaceArg,
    drop: Annotated[float, typer.Option(help="Share of items to drop, in [0, 0.99].")],
    by: Annotated[str, typer.Option(help="Quality score: hubness (the default), centroid, norm or "
                                         "random.")] = "hubness",
    out_space: Annotated[Optional[str], typer.Option(
        "--out", help="New space that receives the kept items (without it: only report the dropped ids).")] = None,
    k: Annotated[int, typer.Option(min=1, help="--by hubness: neighbours per item.")] = 10,
    seed: Annotated[int, typer.Option(help="--by random: the seed.")] = 0,
    json: Json = False,
) -> None:
    """Drop the items of lowest query-agnostic quality (static pruning, S179); the space itself is not changed.

    Examples:

      repspace index prune docs --drop 0.25 --by hubness --out docs-pruned

      repspace index prune docs --drop 0.1 --by centroid --json
    """
    from repspace.workflows.search.prune import prune_space

    sp = open_store(create=False).space(space)
    with progress_bar(json) as bar:
        res = prune_space(sp, drop, by, out=out_space, k=k, seed=seed, progress=bar)
    if json:
        print_json(res.to_dict())
        return
    where = f"kept in {res.out!r}" if res.out else "nothing written (give --out)"
    note(f"{res.space}: by {res.by}, dropped {len(res.dropped_ids):,} of {res.items:,}, kept {res.kept:,}; {where}")
    if res.dropped_ids:
        out.print("lowest first: " + ", ".join(res.dropped_ids[:10]) + (" …" if len(res.dropped_ids) > 10 else ""))
