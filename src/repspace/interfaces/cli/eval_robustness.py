"""``repspace eval robustness sts|retrieval``: a task scored again on meaning-preserving perturbations of its texts."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Column, Table

from repspace.interfaces.cli._common import comma_list, note, open_store, out, print_json, progress_bar
from repspace.interfaces.cli.eval import EncoderArgs, eval_app, one_model
from repspace.interfaces.cli.options import GroupedTyper, OptionGroup

robustness_app = GroupedTyper(help=(
    "Score a task on its texts and on meaning-preserving perturbations of them (typos, casing, punctuation, "
    "WordNet synonyms, clause order); report each drop with its 95% interval and p-value.\n\n"
    "Examples:\n\n"
    "  repspace eval robustness sts stsb-en-test.csv --encoder minilm --perturb typos,casing\n\n"
    "  repspace eval robustness retrieval cranfield-beir --perturb typos --rate 0.2"
), no_args_is_help=True, rich_markup_mode=None)
eval_app.add_typer(robustness_app, name="robustness")

#: ``--rate``'s default: :data:`repspace.engines.eval.perturb.DEFAULT_RATE` (not imported: the CLI loads engines
#: only when a command runs; a test holds them equal).
DEFAULT_RATE = 0.1

Perturb = Annotated[str, typer.Option(
    "--perturb", help="Perturbations, comma-separated: typos, casing, punctuation, synonyms (WordNet), reorder; "
                      "or all.")]
Rate = Annotated[float, typer.Option(
    "--rate", help="Share of each text's eligible words (places) a perturbation changes, rounded up.")]
Seed = Annotated[int, typer.Option("--seed", help="Seed of the perturbations, the bootstrap and the test.")]
Bootstrap = Annotated[int, typer.Option(
    "--bootstrap", min=0, help="Resamples of the 95% intervals and of the randomization tests (0: none).")]
Json = Annotated[bool, typer.Option(
    "--json", help="Print one JSON object: the original score, and per perturbation its score, drop, interval, "
                   "p-value and the texts it changed.")]


@dataclass(frozen=True)
class PerturbArgs(OptionGroup):
    """What is perturbed and how much, and how the drops are tested and shown."""

    perturb: Perturb = "all"
    rate: Rate = DEFAULT_RATE
    seed: Seed = 0
    bootstrap: Bootstrap = 1000
    json: Json = False


def _go(task: str, source: Path, subject: EncoderArgs, args: PerturbArgs, **options: Any) -> None:
    from repspace.interfaces.cli.ingest import _layer
    from repspace.workflows.robustness import robustness

    enc_options = {k: v for k, v in (("pooling", subject.pooling), ("prompt", subject.prompt)) if v is not None}
    encoder, space = one_model(subject, "eval robustness")
    store = open_store(create=False) if space is not None else None
    with progress_bar(args.json) as bar:
        result = robustness(task, source, perturbations=comma_list(args.perturb), rate=args.rate, seed=args.seed,
                            bootstrap=args.bootstrap, store=store, encoder=encoder, space=space,
                            layer=_layer(subject.layer), encoder_options=enc_options or None,
                            batch_size=subject.batch_size, progress=bar, **options)
    if args.json:
        print_json(result.to_dict())
        return
    _print(result)


def _interval(low: float | None, high: float | None) -> str:
    return "" if low is None or high is None else f"[{low:.4f}, {high:.4f}]"


def _print(result: Any) -> None:
    info = result.info
    ci = result.interval
    original = f"{result.original:.4f}" + ("" if ci is None else f" {_interval(ci.low, ci.high)}")
    table = Table(Column("perturbation", no_wrap=True), result.main_metric, "drop", Column("95% CI", no_wrap=True),
                  "p", "changed", title=f"{result.task_name} ({result.split}): {info.get('subject', '')}, "
                                         f"original {result.main_metric} {original}")
    for p in result.perturbed:
        table.add_row(p.perturbation, f"{p.score:.4f}", f"{p.drop:+.4f}", _interval(p.ci_low, p.ci_high),
                      "" if p.p_value is None else f"{p.p_value:.3g}", f"{p.changed}/{p.texts}")
    out.print(table)
    note(f"{info['n_units']} {info['units']}; perturbed: {info['texts_perturbed']}; rate {info['rate']:g}, "
         f"seed {info['seed']}; {result.evaluation_time:.1f} s")


@robustness_app.command("sts")
def sts_cmd(
    *,
    file: Annotated[Path, typer.Argument(help="CSV of sentence1,sentence2,score (header optional).")],
    subject: EncoderArgs,
    args: PerturbArgs,
) -> None:
    """Spearman correlation on the pairs as they are and with both sentences perturbed; the drop, tested.

    The drop's interval is a paired bootstrap over the pairs and its p-value a paired
    randomization test (each pair's two cosines swapped at random).

    Examples:

      repspace eval robustness sts stsb-en-test.csv

      repspace eval robustness sts stsb-en-test.csv --encoder static --perturb typos,synonyms --rate 0.2

      repspace eval robustness sts stsb-en-test.csv --perturb all --seed 1 --json
    """
    _go("sts", file, subject, args)


@robustness_app.command("retrieval")
def retrieval_cmd(
    *,
    folder: Annotated[Path, typer.Argument(help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/<split>.tsv.")],
    split: Annotated[str, typer.Option(help="The qrels split to score.")] = "test",
    subject: EncoderArgs,
    args: PerturbArgs,
) -> None:
    """nDCG@10 with the queries as they are and perturbed (the documents stay as they are, as PTEB does).

    The drop's interval is a paired bootstrap over the judged queries and its p-value a
    paired randomization test on their nDCG@10.

    Examples:

      repspace eval robustness retrieval cranfield-beir

      repspace eval robustness retrieval cranfield-beir --perturb typos,casing --rate 0.2 --json
    """
    _go("retrieval", folder, subject, args, split=split)

