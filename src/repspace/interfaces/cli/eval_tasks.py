"""``repspace eval reranking | bitext | summarization``: the task types scored as MTEB's evaluators score them.

They share the option groups of the other ``repspace eval`` commands (what is
scored, the compression sweep, what becomes of the results).
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Optional

import typer

from repspace.interfaces.cli.eval import EncoderArgs, ResultArgs, SweepArgs, _go, eval_app


@eval_app.command("reranking")
def reranking_cmd(
    *,
    file: Annotated[Path, typer.Argument(help='JSON lines, one query each: {"query": ..., "positive": [...], '
                                              '"negative": [...]} (MTEB\'s reranking layout).')],
    subject: EncoderArgs,
    sweep: SweepArgs,
    results: ResultArgs,
) -> None:
    """MAP over each query's candidates (main, map_at_1000) and MRR@10, ranked by cosine as MTEB's reranking does.

    Queries are embedded with the encoder's query side, candidates as documents;
    nDCG, recall and precision at MTEB's cut-offs are in --json. A query without a
    negative is left out (as MTEB does); one without a positive is an error. A
    --transform is fitted on the distinct candidates.

    Examples:

      repspace eval reranking askubuntu-test.jsonl --encoder minilm

      repspace eval reranking askubuntu-test.jsonl --mteb-task AskUbuntuDupQuestions --output-dir results
    """
    _go("reranking", file, **asdict(subject), **asdict(sweep), **asdict(results))


@eval_app.command("bitext")
def bitext_cmd(
    *,
    file: Annotated[Path, typer.Argument(help="CSV (or .tsv) of sentence1,sentence2 rows (header optional); or, "
                                              "with SECOND, the first list's sentences, one per line.")],
    second: Annotated[Optional[Path], typer.Argument(
        help="The second list's sentences, one per line, aligned with FILE's lines.")] = None,
    subject: EncoderArgs,
    sweep: SweepArgs,
    results: ResultArgs,
) -> None:
    """F1 (main), precision, recall and accuracy of matching each sentence to its nearest translation by cosine.

    Scored as MTEB's bitext mining: the gold match of sentence i is sentence i of the
    other list; precision, recall and F1 are support-weighted over the matched
    sentences. The two lists must have the same length. A --transform is fitted on
    the distinct sentences of both lists.

    Examples:

      repspace eval bitext stsb-en-de-test.tsv --encoder e5 --language eng-Latn,deu-Latn

      repspace eval bitext en.txt de.txt --encoder e5 --output-dir results
    """
    source = file if second is None else (file, second)
    _go("bitext", source, **asdict(subject), **asdict(sweep), **asdict(results))  # type: ignore[arg-type]


@eval_app.command("summarization")
def summarization_cmd(
    *,
    file: Annotated[Path, typer.Argument(help='JSON lines, one text each: {"text", "human_summaries": [...], '
                                              '"machine_summaries": [...], "relevance": [...]} (SummEval\'s layout '
                                              "in MTEB).")],
    subject: EncoderArgs,
    sweep: SweepArgs,
    results: ResultArgs,
) -> None:
    """Spearman (main) and Pearson of human scores with each machine summary's best cosine to the references.

    Per text, then averaged over the texts, as MTEB's SummarizationEvaluator computes
    them (cosine_ and dot_ correlations beside them); a text whose human scores or
    similarities are all equal is left out and counted. A --transform is fitted on
    the distinct summaries.

    Examples:

      repspace eval summarization summeval.jsonl --encoder minilm

      repspace eval summarization summeval.jsonl --mteb-task SummEvalSummarization.v2 --output-dir results
    """
    _go("summarization", file, **asdict(subject), **asdict(sweep), **asdict(results))
