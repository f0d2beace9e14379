"""``repspace eval evalrank|weat``: ranking similar pairs (EvalRank) and the word association test of bias (WEAT)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from repspace.interfaces.cli._common import note, open_store, print_json, progress_bar, show_saved
from repspace.interfaces.cli.eval import (
    Bootstrap,
    EncoderArgs,
    Json,
    Save,
    _layer,
    _print_results,
    eval_app,
    one_model,
)

Kind = Annotated[Optional[str], typer.Option(
    "--kind", help="What FILE holds: sts (CSV sentence1,sentence2,score) or wordsim (word1 word2 score); "
                   "default: sts for a .csv file, wordsim otherwise.")]
MinScore = Annotated[Optional[float], typer.Option(
    "--min-score", help="Positive pairs: gold score at least this (default 4.0 for sts; wordsim takes the top "
                        "quarter of its pairs by score, as the EvalRank paper does).")]
TopShare = Annotated[Optional[float], typer.Option(
    "--top-share", min=0.0, max=1.0, help="Positive pairs: this share of the pairs, highest scores first "
                                          "(instead of --min-score).")]
Background = Annotated[int, typer.Option(
    min=0, help="Word pairs on a --space: its first N items join the pool as distractors (the paper adds "
                "20000 frequent words).")]
WordSet = Annotated[Path, typer.Option(help="One word or phrase per line ('#' comments and blank lines skipped).")]
Permutations = Annotated[int, typer.Option(
    "--permutations", min=0, help="Partitions of X u Y behind the p-value: all of them when there are at most "
                                  "this many, else this many drawn at random (0: no test).")]
Seed = Annotated[int, typer.Option(min=0, help="Seed of the bootstrap (and of WEAT's random partitions).")]


def _show(report: Any, json: bool) -> None:
    if json:
        print_json(report.to_dict())
    else:
        _print_results(report)
    show_saved(report)


def _subject(subject: EncoderArgs, command: str) -> dict[str, Any]:
    options = {k: v for k, v in (("pooling", subject.pooling), ("prompt", subject.prompt)) if v is not None}
    encoder, space = one_model(subject, command)
    return {"encoder": encoder, "space": space, "layer": _layer(subject.layer),
            "encoder_options": options or None, "batch_size": subject.batch_size}


@eval_app.command("evalrank")
def evalrank_cmd(
    *,
    file: Annotated[Path, typer.Argument(help="STS CSV (sentence1,sentence2,score) or word pairs "
                                              "(word1 word2 score).")],
    kind: Kind = None,
    min_score: MinScore = None,
    top_share: TopShare = None,
    background: Background = 0,
    subject: EncoderArgs,
    bootstrap: Bootstrap = 1000,
    seed: Seed = 0,
    save: Save = False,
    json: Json = False,
) -> None:
    """EvalRank (Wang et al. 2022): MRR (main) and Hits@1/3/10 of each positive pair's partner among all items.

    Each positive pair (a, b) is ranked both ways, a -> b and b -> a, among every distinct
    item of the file (the query left out); a tie goes to the partner. The interval
    resamples the positive pairs.

    Examples:

      repspace eval evalrank stsb-en-test.csv --encoder minilm

      repspace eval evalrank EN-SIMLEX-999.txt --space glove

      repspace eval evalrank EN-WS-353-ALL.txt --space glove --background 20000 --json
    """
    from repspace.core.errors import InputError
    from repspace.workflows.evaluate import run_evalrank

    if min_score is not None and top_share is not None:
        raise InputError("give --min-score or --top-share, not both")
    store = open_store() if (subject.space is not None or save) else None
    with progress_bar(json) as bar:
        report = run_evalrank(file, kind=kind, store=store, min_score=min_score, top_share=top_share,
                              background=background, save=save, progress=bar, bootstrap=bootstrap, seed=seed,
                              **_subject(subject, "eval evalrank"))
    _show(report, json)


@eval_app.command("weat")
def weat_cmd(
    *,
    x: Annotated[Path, typer.Option("--x", help="Target words X, e.g. flowers.txt.")],
    y: Annotated[Path, typer.Option("--y", help="Target words Y, e.g. insects.txt.")],
    a: Annotated[Path, typer.Option("--a", help="Attribute words A, e.g. pleasant.txt.")],
    b: Annotated[Path, typer.Option("--b", help="Attribute words B, e.g. unpleasant.txt.")],
    permutations: Permutations = 100_000,
    subject: EncoderArgs,
    bootstrap: Bootstrap = 1000,
    seed: Seed = 0,
    save: Save = False,
    json: Json = False,
) -> None:
    """WEAT (Caliskan et al. 2017): effect size (main), test statistic and one-sided permutation p-value.

    A positive effect size: X is closer to A (and Y to B) than the other way round.
    Words missing from a --space are skipped and counted (one per line of each file;
    a space's item ids are its words, matched through lower-cased forms). The
    interval resamples the target words within X and within Y.

    Examples:

      repspace eval weat --space glove --x flowers.txt --y insects.txt --a pleasant.txt --b unpleasant.txt

      repspace eval weat --encoder minilm --x math.txt --y arts.txt --a male.txt --b female.txt --json
    """
    from repspace.workflows.evaluate import run_weat

    store = open_store() if (subject.space is not None or save) else None
    with progress_bar(json) as bar:
        report = run_weat(x, y, a, b, store=store, permutations=permutations, save=save, progress=bar,
                          bootstrap=bootstrap, seed=seed, **_subject(subject, "eval weat"))
    _show(report, json)
    if not json and report.results:
        info = report.results[0].info
        if "p_value_method" in info:
            note(f"p-value: {info['p_value_method']}, over {info['partitions']:,} partitions of X u Y")
