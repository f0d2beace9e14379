"""``repspace rerank``: train a learning-to-rank reranker on judged queries, and rerank searches with it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from repspace.interfaces.cli._app import command_group
from repspace.interfaces.cli._common import SpaceArg, note, open_store, out, print_json
from repspace.interfaces.cli.options import Json

rerank_app = command_group("rerank", help=(
    "A learned reranker (LightGBM lambdarank) over the dense score, its rank, BM25, lengths and term overlap.\n\n"
    "Examples:\n\n"
    "  repspace rerank train cran --qrels ../shared/data/cranfield-beir --out cran-ranker.json\n\n"
    "  repspace rerank apply cran cran-ranker.json 'flow over a swept wing' -k 5"
))


@rerank_app.command("train")
def train_cmd(
    space: SpaceArg,
    qrels: Annotated[Path, typer.Option("--qrels", help="BEIR folder: queries.jsonl and qrels/<split>.tsv "
                                                        "(the space's item ids are the corpus _id).")],
    out_path: Annotated[Path, typer.Option("--out", help="Model file to write (JSON).")],
    split: Annotated[str, typer.Option(help="The qrels file's name.")] = "test",
    candidates: Annotated[int, typer.Option(help="Dense candidates per query.")] = 100,
    seed: Annotated[int, typer.Option(help="Seed of the query split, the trees and the bootstrap.")] = 0,
    dev_fraction: Annotated[float, typer.Option(help="Share of the queries for early stopping.")] = 0.2,
    test_fraction: Annotated[float, typer.Option(help="Share of the queries held out for the figures.")] = 0.2,
    n_estimators: Annotated[int, typer.Option(help="Most boosting rounds.")] = 300,
    learning_rate: Annotated[float, typer.Option(help="Boosting learning rate.")] = 0.05,
    num_leaves: Annotated[int, typer.Option(help="Leaves per tree.")] = 15,
    bootstrap: Annotated[int, typer.Option(help="Bootstrap resamples of the intervals (0: none).")] = 1000,
    first_stage: Annotated[str, typer.Option(help="Candidates to rerank: dense, or hybrid (dense fused with BM25 "
                                                  "by RRF, as 'search --hybrid').")] = "dense",
    json: Json = False,
) -> None:
    """Train a reranker for SPACE on judged queries; print test nDCG@10 of it, dense, BM25 and RRF.

    Examples:

      repspace rerank train cran --qrels ../shared/data/cranfield-beir --out cran-ranker.json

      repspace rerank train cran --qrels cranfield-beir --out m.json --seed 3 --json

      repspace rerank train cran --qrels cranfield-beir --out hybrid.json --first-stage hybrid
    """
    from repspace.workflows.rerank import RerankTrainRequest, train_reranker

    request = RerankTrainRequest(qrels=str(qrels), out=str(out_path), split=split, candidates=candidates, seed=seed,
                                 dev_fraction=dev_fraction, test_fraction=test_fraction, n_estimators=n_estimators,
                                 learning_rate=learning_rate, num_leaves=num_leaves, bootstrap=bootstrap,
                                 first_stage=first_stage)
    res = train_reranker(open_store(create=False).space(space), request)
    if json:
        print_json(res.to_dict())
        return
    table = Table("ranking", "nDCG@10", "95% interval", "reranker − it", "p")
    diffs = {c["b"]: c for c in res.comparisons}
    for name, s in res.scores.items():
        ci = f"[{s['low']:.4f}, {s['high']:.4f}]" if s["low"] is not None else ""
        c = diffs.get(name)
        diff = f"{c['difference']:+.4f}" + (f" [{c['ci_low']:+.4f}, {c['ci_high']:+.4f}]" if c["ci_low"] is not None
                                            else "") if c else ""
        p = f"{c['p_value']:.3f}" if c and c["p_value"] is not None else ""
        table.add_row(name, f"{s['ndcg_at_10']:.4f}", ci, diff, p)
    out.print(table)
    q = res.queries
    note(f"{q['test']} test queries ({q['train']} train, {q['dev']} dev), {res.rounds} rounds kept; "
         f"model saved to {res.model}")


@rerank_app.command("apply")
def apply_cmd(
    space: SpaceArg,
    model: Annotated[Path, typer.Argument(help="Model file written by 'repspace rerank train'.")],
    queries: Annotated[list[str], typer.Argument(help="One or more query texts.")],
    k: Annotated[int, typer.Option("-k", "--k", help="Results per query.")] = 10,
    json: Json = False,
) -> None:
    """Rerank each query's candidates (from the first stage MODEL was trained on) with MODEL.

    Examples:

      repspace rerank apply cran cran-ranker.json 'flow over a swept wing' -k 5

      repspace rerank apply cran cran-ranker.json 'heat transfer' 'boundary layer' --json
    """
    from repspace.workflows.rerank import RerankApplyRequest, apply_reranker

    request = RerankApplyRequest(model=str(model), queries=tuple(queries), k=k)
    res = apply_reranker(open_store(create=False).space(space), request)
    if json:
        print_json(res.to_dict())
        return
    for r in res.results:
        table = Table("#", "id", "score", "dense rank", "text", title=r["query"])
        for rank, h in enumerate(r["hits"], 1):
            text = h["text"].replace("\n", " ")
            table.add_row(str(rank), h["id"], f"{h['score']:.4f}", str(h["dense_rank"]),
                          text[:90] + ("…" if len(text) > 90 else ""))
        out.print(table)
