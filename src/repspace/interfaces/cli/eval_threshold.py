"""``repspace eval threshold``: the cosine from which a model's pairs are related, read off its own similarities."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.table import Column, Table

from repspace.interfaces.cli._common import note, open_store, out, print_json, progress_bar
from repspace.interfaces.cli.eval import BatchSize, Bootstrap, Encoder, SpaceOpt, _ci_column, eval_app
from repspace.interfaces.cli.options import Json


def _cell(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}"


def _interval(low: float | None, high: float | None) -> str:
    return "" if low is None or high is None else f"[{low:.4f}, {high:.4f}]"


@eval_app.command("threshold")
def threshold_cmd(
    *,
    file: Annotated[Path, typer.Argument(help="An STS file (sentence1,sentence2,score) or a pair file with the "
                                              "header sentence1,sentence2,label.")],
    encoder: Encoder = None,
    space: SpaceOpt = None,
    min_score: Annotated[Optional[float], typer.Option(
        "--min-score", help="STS: the gold score from which a pair is related (default 4.0 of STS-B's 0-5).")] = None,
    quantile: Annotated[float, typer.Option(
        help="The random-pair quantile of the first threshold (0.95: 5% of random pairs above it).")] = 0.95,
    bootstrap: Bootstrap = 1000,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the random pairs and of the bootstrap.")] = 0,
    batch_size: BatchSize = 64,
    json: Json = False,
) -> None:
    """The similarity thresholds of a model: its random-pair 95% quantile and Youden's cut, with 95% intervals.

    A cosine of 0.7 does not mean the same for every model: each spreads its similarities
    differently. Related pairs are the file's pairs with a gold score >= --min-score (or
    labelled 1); random pairs pair each distinct sentence with a seeded random other. The
    random-pair quantile is the cosine above which only 5% of random pairs fall (with the
    share of related pairs above it); Youden's cut best separates related from random pairs
    (the ROC threshold maximising TPR - FPR). Intervals: seeded bootstrap over the pairs.

    Examples:

      repspace eval threshold stsb-en-test.csv --encoder minilm

      repspace eval threshold stsb-en-test.csv --encoder static --min-score 4.5 --json

      repspace eval threshold paraphrases.csv --space docs
    """
    from repspace.workflows.evaluate import model_thresholds

    store = open_store() if space is not None else None
    with progress_bar(json) as bar:
        t = model_thresholds(file, store=store, encoder=encoder, space=space, min_score=min_score, quantile=quantile,
                             bootstrap=bootstrap, seed=seed, batch_size=batch_size, progress=bar)
    if json:
        print_json(t.to_dict())
        return
    d: dict[str, Any] = t.to_dict()
    rq, yd = d["random_quantile"], d["youden"]
    # "related": the share of related pairs above the cut; the intervals never wrap (80 columns hold the table)
    table = Table(Column("threshold", no_wrap=True), "cosine", _ci_column(), "related", _ci_column(),
                  title=f"similarity thresholds of {t.info.get('subject', '')} on {t.info.get('data', file.stem)}")
    table.add_row(f"random {t.quantile:.0%} quantile", _cell(rq["cut"]), _interval(rq["ci_low"], rq["ci_high"]),
                  _cell(rq["related_above"]), _interval(rq["related_above_ci_low"], rq["related_above_ci_high"]))
    table.add_row("Youden's cut", _cell(yd["cut"]), _interval(yd["ci_low"], yd["ci_high"]), _cell(yd["tpr"]), "")
    out.print(table)
    note("related: the share of related pairs above the cosine (at or above it, for Youden's cut)")
    note(f"random {t.quantile:.0%} quantile: {1 - t.quantile:.0%} of random pairs lie above it; Youden's cut: the "
         f"cosine that best separates related from random pairs (J = TPR - FPR = {t.youden_j:.4f}, "
         f"{yd['fpr']:.4f} of random pairs at or above it)")
    note(f"{t.n_related} related pairs ({t.info.get('related')}), {t.n_random} random pairs (each distinct sentence "
         f"with a random other, seed {t.info.get('seed')})")
