"""``repspace upgrade-check``: can a new model's queries, mapped into the old space, search the old index?"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from repspace.interfaces.cli._app import app
from repspace.interfaces.cli._common import comma_list, out, print_json, progress_bar
from repspace.interfaces.cli.options import Json


@app.command("upgrade-check")
def upgrade_check_cmd(
    old: Annotated[str, typer.Argument(help="The old model's encoder spec (the index you have).")],
    new: Annotated[str, typer.Argument(help="The new model's encoder spec.")],
    data: Annotated[Path, typer.Option("--data", help="A BEIR folder: corpus.jsonl, queries.jsonl, qrels/.")],
    pairs: Annotated[str, typer.Option(help="Documents embedded by both models to fit each map on.")] =
        "100,300,1000,all",
    methods: Annotated[str, typer.Option(help="Of procrustes, ridge, relative, unsupervised (given the "
                                              "documents without their pairing).")] =
        "procrustes,ridge,unsupervised",
    repeats: Annotated[int, typer.Option(help="Seeded samples per pair count below the corpus size.")] = 3,
    seed: Annotated[int, typer.Option(help="Seed of the samples.")] = 0,
    split: Annotated[str, typer.Option(help="The qrels split.")] = "test",
    index: Annotated[str | None, typer.Option(help="exact (default) or hnsw<M>[,ef<E>].")] = None,
    batch_size: Annotated[int, typer.Option(help="Texts per forward pass.")] = 64,
    restarts: Annotated[int, typer.Option(help="Starts of each unsupervised fit (the best objective is kept; "
                                                "trusted when another start agrees).")] = 3,
    json: Json = False,
) -> None:
    """Retrieval nDCG@10 of the old model, the new model re-indexed, and new queries mapped into the old index.

    The maps go from the new space into the old one and are fitted on
    documents embedded by both models; the table shows nDCG@10 by method and
    number of paired documents (mean ± sd over --repeats samples).

    Examples:

      repspace upgrade-check minilm e5 --data ../shared/data/cranfield-beir

      repspace upgrade-check minilm model2vec:./m2v --data beir/scifact --pairs 100,1000 --json
    """
    from repspace.workflows.upgrade import parse_pairs, upgrade_check

    method_list = comma_list(methods)
    with progress_bar(json) as bar:
        r = upgrade_check(old, new, data, pairs=parse_pairs(pairs), methods=method_list, repeats=repeats, seed=seed,
                          split=split, index=index, batch_size=batch_size, restarts=restarts,
                          progress=bar)
    if json:
        print_json(r.to_dict())
        return
    counts = r.pair_counts
    table = Table("setting", "no map", *[f"{c:,} pairs" for c in counts],
                  title=f"nDCG@10 on {r.info.get('data')} ({r.n_queries:,} queries, "
                        f"{r.n_documents:,} documents): {old} → {new}")
    blank = [""] * len(counts)
    table.add_row(f"old ({old})", f"{r.row('old').ndcg_at_10:.4f}", *blank)
    table.add_row(f"new ({new}), re-indexed", f"{r.row('new').ndcg_at_10:.4f}", *blank)
    for method in r.methods:
        cells = []
        for c in counts:
            row = r.row("mapped", method, c)
            cells.append(f"{row.ndcg_at_10:.4f}" + (f" ± {row.ndcg_at_10_sd:.4f}" if row.runs > 1 else "")
                         + (f" ({row.trusted}/{row.runs} trusted)" if row.trusted is not None else ""))
        table.add_row(f"mapped: {method}", "", *cells)
    out.print(table)
    crit = Table("map", "pairs", "compatible", "update gain", "relevant closer", "irrelevant farther",
                 title="Compatibility criteria (Shen et al. 2020) of the mapped queries on the old index")
    for row in (x for x in r.rows if x.setting == "mapped"):
        gain = "—" if row.update_gain is None else f"{row.update_gain:.3f}"
        crit.add_row(row.method, f"{row.n_pairs:,}", "yes" if row.compatible else "no", gain,
                     f"{row.relevant_closer:.3f}", f"{row.irrelevant_farther:.3f}")
    out.print(crit)
    out.print("compatible = nDCG@10 above the old model's; update gain = (mapped − old) / (new − old); relevant "
              "closer / irrelevant farther = shares of judged pairs meeting the strict per-pair criterion")
    out.print("mapped = new-model queries sent through a map (fitted on the paired documents) into the old index; "
              "mean ± sd over the seeded samples")
    if any(row.trusted is not None for row in r.rows):
        out.print("trusted = unsupervised fits whose pairing another start reproduced; do not rely on the others")
    if r.skipped_pairs:
        out.print(f"- pair counts not below the corpus size skipped: {', '.join(map(str, r.skipped_pairs))}")
