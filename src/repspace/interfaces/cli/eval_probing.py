"""``repspace eval probing``: SentEval's probing tasks (Conneau et al. 2018), per encoder or per layer."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.table import Table

from repspace.interfaces.cli._common import (
    comma_list,
    note,
    open_store,
    out,
    print_json,
    progress_bar,
    show_saved,
)
from repspace.interfaces.cli.eval import Bootstrap, EncoderArgs, Json, Save, eval_app
from repspace.interfaces.cli.eval_intrinsic import Seed, _subject

Tasks = Annotated[Optional[str], typer.Option(
    "--task", help="Only these tasks, comma-separated file stems, e.g. sentence_length,past_present "
                   "(default: every task file of the folder).")]


def _cell(result: Any) -> str:
    """``0.812 [.771, .850]``: the accuracy and its interval (when there is one), the ends without the ``0``."""
    ci = result.interval
    ends = "" if ci is None else f" [{ci.low:.3f}, {ci.high:.3f}]".replace("0.", ".")
    return f"{result.main_score:.3f}{ends}"


def _print_table(report: Any) -> None:
    """A row per subject (each layer), a column per task, and a last row of the majority-class baseline."""
    subjects = list(dict.fromkeys(r.info.get("subject", "") for r in report.results))
    tasks = list(dict.fromkeys(r.task_name for r in report.results))
    cell = {(r.info.get("subject", ""), r.task_name): r for r in report.results}
    first = {t: next(r for r in report.results if r.task_name == t) for t in tasks}
    heads = [f"{t.split(':', 1)[-1]} ({first[t].info['probing_task']}, n={first[t].info['n_test']})" for t in tasks]
    table = Table("subject", *heads, title="probing: test accuracy [95% CI]")
    for s in subjects:
        table.add_row(s, *(_cell(cell[(s, t)]) if (s, t) in cell else "" for t in tasks))
    table.add_row("majority class", *(f"{first[t].scores['majority_accuracy']:.3f}" for t in tasks))
    out.print(table)
    note("logistic regression on z-scored vectors, C chosen on the va split (--json: every C's dev accuracy)")


@eval_app.command("probing")
def probing_cmd(
    *,
    source: Annotated[Path, typer.Argument(help="SentEval's data/probing folder (<task>.txt files) or one task "
                                                "file: split<TAB>label<TAB>sentence lines, split tr/va/te.")],
    task: Tasks = None,
    subject: EncoderArgs,
    bootstrap: Bootstrap = 1000,
    seed: Seed = 0,
    save: Save = False,
    json: Json = False,
) -> None:
    """Probing accuracy (Conneau et al. 2018): a logistic regression on tr, its C chosen on va, scored on te.

    The interval resamples the test sentences; the majority column always answers the most
    frequent training class. With --layer all on an hf-layers encoder, a column per layer:
    where in the network each property is linearly readable.

    Examples:

      repspace eval probing SentEval/data/probing --encoder static

      repspace eval probing SentEval/data/probing --task sentence_length --encoder hf-layers:minilm --layer all

      repspace eval probing sentence_length.txt --encoder minilm --json
    """
    from repspace.workflows.evaluate import run_probing

    store = open_store() if (subject.space is not None or save) else None
    with progress_bar(json) as bar:
        report = run_probing(source, tasks=comma_list(task) if task else None, store=store, save=save, progress=bar,
                             bootstrap=bootstrap, seed=seed, **_subject(subject, "eval probing"))
    if json:
        print_json(report.to_dict())
    else:
        _print_table(report)
    show_saved(report)
