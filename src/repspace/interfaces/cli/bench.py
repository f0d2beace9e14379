"""``repspace bench``: measure index specs on your own space."""

from __future__ import annotations

from typing import Annotated, Optional

import typer
from rich.table import Table

from repspace.interfaces.cli._app import command_group
from repspace.interfaces.cli._common import SpaceArg, open_store, out, print_json, progress_bar
from repspace.interfaces.cli.options import Json

bench_app = command_group("bench", help=(
    "Measure search on your own data.\n\n"
    "Examples:\n\n"
    "  repspace bench search docs\n\n"
    "  repspace bench search glove --spec hnsw32 --spec 'prefix32,hnsw32>rerank' --queries 500"
))


@bench_app.command("search")
def search_cmd(
    space: SpaceArg,
    spec: Annotated[Optional[list[str]], typer.Option("--spec", help="An index spec (repeat for several).")] = None,
    queries: Annotated[int, typer.Option(min=1, help="Stored vectors sampled as queries.")] = 200,
    k: Annotated[int, typer.Option("-k", "--k", min=1, help="Neighbours per query.")] = 10,
    where: Annotated[Optional[str], typer.Option(help="A filter applied to every search.")] = None,
    json: Json = False,
) -> None:
    """Recall@k against exact search, queries/s, memory and build time of each spec.

    Default specs: exact, hnsw32, int8>rescore4, binary>rescore8. Indexes built
    here are persisted and reused by later searches.

    Examples:

      repspace bench search docs

      repspace bench search docs --spec hnsw32 --spec 'pca64>rerank' --where "year >= 2020" --json
    """
    from repspace.workflows.bench import DEFAULT_SPECS, bench_search

    sp = open_store(create=False).space(space)
    with progress_bar(json) as bar:
        result = bench_search(sp, spec or DEFAULT_SPECS, queries=queries, k=k, where=where, progress=bar)
    if json:
        print_json(result.to_dict())
        return
    table = Table("spec", f"recall@{k}", "queries/s", "memory", "build s", "index", "plan",
                  title=f"{result.space}: {result.count:,} × {result.dim}, {result.n_queries} queries")
    for r in result.results:
        mem = "" if r.memory_bytes is None else f"{r.memory_bytes / 2**20:.1f} MiB"
        table.add_row(r.spec, f"{r.recall:.3f}", f"{r.qps:,.0f}", mem, f"{r.build_s:.1f}", r.action, r.plan)
    out.print(table)
