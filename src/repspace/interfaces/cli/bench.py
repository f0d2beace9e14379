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
    "  repspace bench search glove --spec hnsw32 --spec 'prefix32,hnsw32>rerank' --queries 500\n\n"
    "  repspace bench search glove --budget 64MB"
))


@bench_app.command("search")
def search_cmd(
    space: SpaceArg,
    spec: Annotated[Optional[list[str]], typer.Option("--spec", help="An index spec (repeat for several).")] = None,
    queries: Annotated[int, typer.Option(min=1, help="Stored vectors sampled as queries.")] = 200,
    k: Annotated[int, typer.Option("-k", "--k", min=1, help="Neighbours per query.")] = 10,
    where: Annotated[Optional[str], typer.Option(help="A filter applied to every search.")] = None,
    budget: Annotated[Optional[str], typer.Option(
        help="A memory budget (64MB, 1.5GiB): choose the spec of best recall whose index fits.")] = None,
    json: Json = False,
) -> None:
    """Recall@k against exact search, queries/s, memory and build time of each spec.

    Default specs: exact, hnsw32, int8>rescore4, binary>rescore8. Indexes built
    here are persisted and reused by later searches. With --budget, the default
    candidates also cover PCA, AdANNS' prefix IVF and IVF-PQ with and without OPQ;
    specs whose vectors alone exceed the budget are not built, and the spec with
    the best recall within the budget is chosen.

    Examples:

      repspace bench search docs

      repspace bench search docs --spec hnsw32 --spec 'pca64>rerank' --where "year >= 2020" --json

      repspace bench search docs --budget 64MB
    """
    if budget is not None:
        _budget(space, budget, spec, queries, k, where, json)
        return
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


def _budget(space: str, budget: str, spec: list[str] | None, queries: int, k: int, where: str | None,
            json: bool) -> None:
    """``--budget``: every candidate's figures, and the choice."""
    from repspace.core.sizes import format_size
    from repspace.workflows.bench_budget import bench_budget

    sp = open_store(create=False).space(space)
    with progress_bar(json) as bar:
        result = bench_budget(sp, budget, spec, queries=queries, k=k, where=where, progress=bar)
    if json:
        print_json(result.to_dict())
        return
    table = Table("spec", f"recall@{k}", "memory", "fits", "queries/s", "build s",
                  title=(f"{result.space}: {result.count:,} × {result.dim}, {result.n_queries} queries, "
                         f"budget {format_size(result.budget_bytes)}"))
    for r in result.results:
        mem = "" if r.memory_bytes is None else format_size(r.memory_bytes)
        mark = "chosen" if r.spec == result.chosen else ("yes" if result.fits(r) else "no")
        table.add_row(r.spec, f"{r.recall:.3f}", mem, mark, f"{r.qps:,.0f}", f"{r.build_s:.1f}")
    for s, lower in result.skipped:
        table.add_row(s, "", f">= {format_size(lower)}", "skipped", "", "")
    out.print(table)
    if result.chosen is None:
        out.print(f"no spec fits in {format_size(result.budget_bytes)}")
    else:
        best = next(r for r in result.results if r.spec == result.chosen)
        out.print(f"chosen: {result.chosen} (recall@{k} {best.recall:.3f}, {format_size(best.memory_bytes or 0)})")
