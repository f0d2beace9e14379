"""``repspace eval fewshot|knn``: classification learnt from a training split, by few-shot probes or by neighbours."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.table import Column, Table

from repspace.interfaces.cli._common import open_store, out, progress_bar, show_saved
from repspace.interfaces.cli.eval import (
    Bootstrap,
    EncoderArgs,
    Json,
    Save,
    _ci,
    _ci_column,
    _ci_text,
    _layer,
    _print_json,
    eval_app,
    one_model,
)

TestFile = Annotated[Path, typer.Argument(help="The labelled test split: CSV, TSV or JSONL with a text and a label "
                                               "column.")]
Train = Annotated[Optional[Path], typer.Option(
    "--train", help="The labelled training split, same columns (required).")]
TextCol = Annotated[str, typer.Option(help="Column with the texts.")]
LabelCol = Annotated[str, typer.Option(help="Column with the labels.")]
Seed = Annotated[int, typer.Option(min=0, max=2**32 - 1, help="Seed of the draws and of the bootstrap.")]


def _subject(subject: EncoderArgs, command: str) -> dict[str, Any]:
    options = {k: v for k, v in (("pooling", subject.pooling), ("prompt", subject.prompt)) if v is not None}
    encoder, space = one_model(subject, command)
    return {"encoder": encoder, "space": space, "layer": _layer(subject.layer),
            "encoder_options": options or None, "batch_size": subject.batch_size}


def _show(report: Any, json: bool, setting: str, spread: bool) -> None:
    """One row per setting (and subject): accuracy, its interval over the test items, macro F1 (and the spread
    over the draws of a k-shot probe)."""
    if json:
        _print_json(report.to_dict())
    else:
        results = report.results
        several = len({r.info.get("subject") for r in results}) > 1
        first = results[0]
        data = first.task_name.split(":", 1)[1] if ":" in first.task_name else ""
        heads = [*(["subject"] if several else []), setting, "accuracy", _ci_column(),
                 *([Column("draws 95%", no_wrap=True)] if spread else []), "f1_macro"]
        title = f"{data} ({first.info.get('n_train')} training, {first.info.get('n_items')} test items)"
        table = Table(*heads, title=title + ("" if several else f": {first.info.get('subject', '')}"))
        for r in results:
            label = str(r.info.get("shots", r.info.get("k")))
            draws = (_ci_text(r.scores["accuracy_draw_low"], r.scores["accuracy_draw_high"])
                     if "accuracy_draw_low" in r.scores else "")
            table.add_row(*([r.info.get("subject", "")] if several else []), label, f"{r.main_score:.4f}", _ci(r),
                          *([draws] if spread else []), f"{r.scores['f1_macro']:.4f}")
        out.print(table)
    show_saved(report)


@eval_app.command("fewshot")
def fewshot_cmd(
    *,
    file: TestFile,
    train: Train = None,
    shots: Annotated[str, typer.Option(help="Examples per class of the few-shot probes, e.g. 1,4,16.")] = "1,4,16",
    draws: Annotated[int, typer.Option(min=1, help="Seeded draws of each few-shot setting.")] = 10,
    text_col: TextCol = "text",
    label_col: LabelCol = "label",
    subject: EncoderArgs,
    bootstrap: Bootstrap = 1000,
    seed: Seed = 0,
    save: Save = False,
    json: Json = False,
) -> None:
    """Few-shot linear probes (FEET): accuracy (main) and macro F1 on k examples per class, beside all labels.

    The probe is the classification task's logistic regression, fitted on k training
    items per class drawn at random (--draws seeded draws per k; a class with fewer
    than k training items is refused) and on every training item (all), and scored
    on the test FILE. 95% CI: bootstrap over the test items of the mean accuracy over
    the draws; draws 95%: the 2.5 and 97.5 percentiles of the draws' accuracies.

    Examples:

      repspace eval fewshot test.csv --train train.csv --encoder minilm

      repspace eval fewshot test.jsonl --train train.jsonl --shots 1,2,8 --draws 20 --json
    """
    from repspace.workflows.evaluate import run_fewshot

    store = open_store() if (subject.space is not None or save) else None
    with progress_bar(json) as bar:
        report = run_fewshot(file, train=train, store=store, shots=shots, draws=draws, text_col=text_col,
                             label_col=label_col, save=save, progress=bar, bootstrap=bootstrap, seed=seed,
                             **_subject(subject, "eval fewshot"))
    _show(report, json, "shots", spread=True)


@eval_app.command("knn")
def knn_cmd(
    *,
    file: TestFile,
    train: Train = None,
    k: Annotated[str, typer.Option("--k", help="Neighbour counts, e.g. 1,5,10.")] = "1,5,10",
    metric: Annotated[str, typer.Option(help="cosine, or euclidean (MINERS': raw vectors).")] = "cosine",
    vote: Annotated[str, typer.Option(
        help="majority (MINERS': a tie goes to the nearest), or distance (inverse-distance weights).")] = "majority",
    text_col: TextCol = "text",
    label_col: LabelCol = "label",
    subject: EncoderArgs,
    bootstrap: Bootstrap = 1000,
    seed: Annotated[int, typer.Option(min=0, max=2**32 - 1, help="Seed of the bootstrap.")] = 0,
    save: Save = False,
    json: Json = False,
) -> None:
    """kNN classification by retrieval (MINERS): accuracy (main) and macro F1 of the k nearest training items' vote.

    Each test item takes the label most of its k nearest training items carry; nothing
    is trained. Macro precision and recall, and macro F1's interval, are in --json.
    95% CI: bootstrap over the test items.

    Examples:

      repspace eval knn test.csv --train train.csv --encoder minilm

      repspace eval knn test.csv --train train.csv --k 5 --metric euclidean --vote distance --json
    """
    from repspace.workflows.evaluate import run_knn

    store = open_store() if (subject.space is not None or save) else None
    with progress_bar(json) as bar:
        report = run_knn(file, train=train, store=store, ks=k, metric=metric, vote=vote, text_col=text_col,
                         label_col=label_col, save=save, progress=bar, bootstrap=bootstrap, seed=seed,
                         **_subject(subject, "eval knn"))
    _show(report, json, "k", spread=False)
