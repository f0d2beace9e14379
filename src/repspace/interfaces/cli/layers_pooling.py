"""``repspace layers pooling``: pooling recipes (mean, cls, max, last, first-last, layer mixes) compared on a task
(STS, retrieval or classification)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from repspace.interfaces.cli._common import print_json, out
from repspace.interfaces.cli.layers import layers_app


@layers_app.command("pooling")
def pooling_cmd(
    encoder: Annotated[str, typer.Option("--encoder", help="An encoder with hidden states: hf-layers:<folder> "
                                                           "(hf-layers:minilm is bundled).")],
    task: Annotated[tuple[str, Path], typer.Option("--task", help="The task and its data: sts FILE, retrieval "
                                                                  "BEIR_FOLDER or classification FILE.")],
    recipes: Annotated[str, typer.Option(help="Comma-separated: mean, cls, max, last, first-last, mix:A+B..., "
                                              "POOL@L.")] = "mean,cls,max,last,first-last",
    whiten: Annotated[bool, typer.Option("--whiten", help="Also score each recipe BERT-whitened (fitted on the "
                                                          "task's texts).")] = False,
    split: Annotated[str, typer.Option(help="Retrieval: the qrels split.")] = "test",
    text_col: Annotated[str, typer.Option(help="Classification: the column with the texts.")] = "text",
    label_col: Annotated[str, typer.Option(help="Classification: the column with the labels.")] = "label",
    folds: Annotated[int, typer.Option(min=2, help="Classification: cross-validation folds.")] = 5,
    batch_size: Annotated[int, typer.Option(min=1, help="Texts per forward pass.")] = 32,
    bootstrap: Annotated[int, typer.Option(min=0, help="Resamples of each score's 95% interval (0: none).")] = 1000,
    seed: Annotated[int, typer.Option(min=0, max=2**32 - 1, help="Seed of the bootstrap.")] = 0,
    json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Score every pooling recipe of one model on a task, all from one forward pass per batch.

    Examples:

      repspace layers pooling --encoder hf-layers:minilm --task sts stsb-en-test.csv

      repspace layers pooling --encoder hf-layers:minilm --task sts stsb-en-test.csv --recipes mean,mix:0+6 --whiten

      repspace layers pooling --encoder hf-layers:minilm --task retrieval cranfield-beir

      repspace layers pooling --encoder hf-layers:minilm --task classification reviews.jsonl --label-col sentiment
    """
    from repspace.workflows.layer_pooling import compare_poolings

    name, source = task
    result = compare_poolings(encoder, name, source, recipes=recipes, whiten=whiten, bootstrap=bootstrap, seed=seed,
                              batch_size=batch_size, split=split, text_col=text_col, label_col=label_col,
                              folds=folds)
    if json:
        print_json(result.to_dict())
        return
    table = Table("recipe", "layers", "whitened", result.metric, "95% CI",
                  title=f"{result.task}: {result.n_units:,} {result.unit}, {result.encoder}")
    for r in result.rows:
        ci = "" if r.ci_low is None else f"{r.ci_low:.4f}–{r.ci_high:.4f}"
        table.add_row(r.recipe, "+".join(map(str, r.layers)), "yes" if r.whitened else "", f"{r.score:.4f}", ci)
    out.print(table)
    best = result.best
    out.print(f"best: {best.recipe}{' whitened' if best.whitened else ''} ({best.score:.4f})")
