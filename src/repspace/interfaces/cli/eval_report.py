"""``repspace eval report``: one HTML page of evaluation results, their intervals and tested comparisons."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from repspace.interfaces.cli._common import note, print_json, settings
from repspace.interfaces.cli.eval import Seed, eval_app
from repspace.interfaces.cli.options import Json


@eval_app.command("report")
def report_cmd(
    *,
    results: Annotated[list[str], typer.Argument(
        help="--json output files, MTEB result files or folders (--output-dir), ids of saved results (--save).",
        metavar="RESULTS...")],
    output: Annotated[Path, typer.Option("--output", "-o", help="The HTML page to write.")],
    store: Annotated[Optional[Path], typer.Option(
        "--store", help="The store the saved ids are read from (default: the global --store).")] = None,
    title: Annotated[str, typer.Option(help="The page's title.")] = "evaluation report",
    bootstrap: Annotated[int, typer.Option(
        "--bootstrap", min=0, help="Resamples of the comparisons computed from per-unit scores (0: none).")] = 1000,
    seed: Seed = 0,
    json: Json = False,
) -> None:
    """Write one HTML page of results: per task each model's score and 95% CI, a forest plot, every pair tested.

    The comparisons are those the results' file holds (eval ... --encoder A --encoder B --json), else computed
    from the per-unit scores the results carry (paired bootstrap CI, paired randomization test, Holm-corrected;
    * marks p <= 0.05). A result with a per-part breakdown (--by) gets a table per part.

    Examples:

      repspace eval sts stsb-en-test.csv --encoder static --encoder minilm --json > sts.json

      repspace eval report sts.json -o report.html

      repspace eval report results/ 3 4 --store runs.db -o report.html
    """
    from repspace.interfaces.reports import write_eval_report_html
    from repspace.workflows.evaluate import results_report

    report = results_report(results, store=store or settings.store, n_resamples=bootstrap, seed=seed)
    path = write_eval_report_html(output, report, title=title)
    if json:
        print_json(report.to_dict())
    note(f"report: {path} ({report.n_results} results of {len(report.tasks)} tasks)")
