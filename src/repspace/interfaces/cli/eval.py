"""``repspace eval``: score an encoder, each of its layers, or a stored space on a task."""

from __future__ import annotations

import json as json_module
import re
import secrets
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.table import Column, Table
from rich.text import Text

from repspace.interfaces.cli._app import command_group
from repspace.interfaces.cli._common import (
    _RAW_CONTROLS_IN_JSON,
    comma_list,
    note,
    open_store,
    out,
    progress_bar,
    show_saved,
)
from repspace.interfaces.cli.eval_parts import print_parts
from repspace.interfaces.cli.options import OptionGroup

eval_app = command_group("eval", help=(
    "Evaluate an encoder, its layers, or a stored space on real tasks.\n\n"
    "Examples:\n\n"
    "  repspace eval sts stsb-en-test.csv --encoder minilm\n\n"
    "  repspace eval retrieval cranfield-beir --encoder hf-layers:minilm --layer all\n\n"
    "  repspace eval sts stsb-en-test.csv --dims 32,64,128,full --precision float32,int8,binary\n\n"
    "  repspace eval sts stsb-en-test.csv --transform center,whiten128\n\n"
    "  repspace eval retrieval cranfield-beir --hubness csls\n\n"
    "  repspace eval sts stsb-en-test.csv --mteb-task STSBenchmark --output-dir results\n\n"
    "  repspace eval sts stsb-en-test.csv --encoder static --encoder minilm"
))

Encoder = Annotated[Optional[str], typer.Option(help="Encoder spec (default minilm), e.g. static, hf-layers:minilm.")]
SpaceOpt = Annotated[Optional[str], typer.Option("--space", help="Evaluate this stored space instead of an encoder.")]
#: ``--encoder`` and ``--space`` of the eval commands: repeatable, each model is scored and every pair compared.
Encoders = Annotated[Optional[list[str]], typer.Option(
    "--encoder", help="Encoder spec (default minilm), e.g. static, hf-layers:minilm; repeat it (and --space) to "
                      "compare models.")]
Spaces = Annotated[Optional[list[str]], typer.Option(
    "--space", help="Evaluate this stored space (beside or instead of encoders); repeatable.")]
Layer = Annotated[Optional[str], typer.Option(help="hf-layers: a layer index, or 'all' (one forward pass).")]
Pooling = Annotated[Optional[str], typer.Option(help="hf-layers pooling: mean, cls, last or max.")]
Prompt = Annotated[Optional[str], typer.Option(help="Text prepended to every input before encoding.")]
BatchSize = Annotated[int, typer.Option(min=1, help="Texts per encoder batch.")]
Dims = Annotated[Optional[str], typer.Option(help="Sweep dimensions, e.g. 16,32,64,full (prefix and PCA); with "
                                                  "--layer all, the layer x dimension grid.")]
Precision = Annotated[Optional[str], typer.Option(help="Sweep precisions: float32,float16,int8,binary.")]
Methods = Annotated[str, typer.Option(help="Sweep reductions: prefix (Matryoshka truncation), pca, or both.")]
Plot = Annotated[Optional[Path], typer.Option(help="Sweep plot PNG (default <task>-tradeoff.png).")]
Save = Annotated[bool, typer.Option("--save", help="Record the results in the store.")]
Json = Annotated[bool, typer.Option(
    "--json", help="Print a JSON list of TaskResults; mteb's TaskResult.from_dict reads each element.")]
OutputDir = Annotated[Optional[Path], typer.Option(
    "--output-dir", help="Also write the results in MTEB's results layout (as `mteb run --output-folder`): "
                         "DIR/results/<model>/<revision>/<task>.json and model_meta.json.")]
Language = Annotated[Optional[str], typer.Option(
    "--language", help="The data's languages as MTEB writes them, e.g. eng-Latn or eng-Latn,deu-Latn "
                       "(default eng-Latn, the language of the data sets repspace ships).")]
MtebTask = Annotated[Optional[str], typer.Option(
    "--mteb-task", help="Name the task as this registered MTEB task (sts, retrieval, reranking, bitext, "
                        "summarization; checked against the installed mteb), e.g. STSBenchmark.")]
TransformOpt = Annotated[Optional[str], typer.Option(
    "--transform", help="Repair the vectors first: a chain such as center,whiten128,normalize or abtt3 "
                        "(center, normalize, whiten[K], abtt[D], pca[K], tldrK), fitted on the task's own vectors "
                        "without labels.")]
Bootstrap = Annotated[int, typer.Option(
    "--bootstrap", min=0, help="Resamples of the 95% interval of the main score (0: none).")]
Seed = Annotated[int, typer.Option(
    "--seed", min=0, max=2**32 - 1, help="Seed of the bootstrap and of the comparisons' tests.")]
By = Annotated[Optional[str], typer.Option(
    "--by", help="Also score each part of the data split by this column of its file (a CSV header name, a JSON "
                 "key, metadata.domain nested) and their macro average (sts, pairclass, classification, "
                 "clustering, retrieval: a key of queries.jsonl, reranking, summarization).")]
#: ``--restrict-vocab`` of the word tasks (wordsim, analogy).
RestrictVocab = Annotated[Optional[int], typer.Option(min=1, help="Space: only its first N words.")]


@dataclass(frozen=True)
class EncoderArgs(OptionGroup):
    """What is scored: an encoder (a layer of it, its pooling and prompt) or a stored space."""

    encoder: Encoders = None
    space: Spaces = None
    layer: Layer = None
    pooling: Pooling = None
    prompt: Prompt = None
    batch_size: BatchSize = 64


def one_model(subject: EncoderArgs, command: str) -> tuple[str | None, str | None]:
    """The one ``(encoder, space)`` of a command that scores a single model (the options repeat for the tasks
    that compare several); more than one is one error line."""
    from repspace.core.errors import InputError

    encoders, spaces = list(subject.encoder or []), list(subject.space or [])
    if encoders and spaces:
        raise InputError("give --encoder or --space, not both")
    if len(encoders) + len(spaces) > 1:
        raise InputError(f"{command} scores one model: give one --encoder or one --space")
    return (encoders[0] if encoders else None), (spaces[0] if spaces else None)


@dataclass(frozen=True)
class SweepArgs(OptionGroup):
    """The dimension and precision sweep (sts, pairclass, retrieval)."""

    dims: Dims = None
    precision: Precision = None
    methods: Methods = "prefix,pca"
    plot: Plot = None


#: What a task without the sweep passes for it.
_NO_SWEEP: dict[str, Any] = {"dims": None, "precision": None, "methods": "prefix", "plot": None}


@dataclass(frozen=True)
class ResultArgs(OptionGroup):
    """What becomes of the results (every task): recorded in the store, printed as JSON, written in MTEB's
    results layout under the task and languages named, with the main score's bootstrap interval (and several
    models' comparisons) seeded, and split by a column of the data (``--by``); and the repair fitted on the
    task's vectors first."""

    bootstrap: Bootstrap = 1000
    seed: Seed = 0
    save: Save = False
    json: Json = False
    transform: TransformOpt = None
    output_dir: OutputDir = None
    language: Language = None
    mteb_task: MtebTask = None
    by: By = None


def _layer(value: str | None) -> Any:
    from repspace.interfaces.cli.ingest import _layer as parse

    return parse(value)


def _go(task: str, source: Path | None, *, encoder: str | list[str] | None, space: str | list[str] | None,
        layer: str | None = None,
        pooling: str | None = None, prompt: str | None = None, batch_size: int, dims: str | None, precision: str | None,
        methods: str, plot: Path | None, save: bool, json: bool, output_dir: Path | None = None,
        language: str | None = None, mteb_task: str | None = None, **options: Any) -> None:
    from repspace.workflows.evaluate import run

    enc_options = {k: v for k, v in (("pooling", pooling), ("prompt", prompt)) if v is not None}
    store = open_store() if (space is not None or save) else None
    with progress_bar(json) as bar:
        report = run(task, source, store=store, encoder=encoder or None, space=space or None, layer=_layer(layer),
                     encoder_options=enc_options or None, dims=dims, precision=precision,
                     methods=comma_list(methods), plot=plot, save=save,
                     batch_size=batch_size, progress=bar, output_dir=output_dir, language=language,
                     mteb_task=mteb_task, **options)
    if json:
        _print_json(report.to_dict())
    elif report.tradeoff and "subject" in report.tradeoff[0]:
        _print_grid(report)
    elif report.tradeoff:
        _print_tradeoff(report)
    else:
        _print_results(report)
        _print_comparisons(report)
    if not json:
        print_parts(report, swept=bool(report.tradeoff))
        _note_repairs(report)
    if report.plot is not None:
        note(f"plot: {report.plot}")
    show_saved(report, output_dir)


def _print_json(data: Any) -> None:
    """``print_json``, with each per-unit array (``repspace.units``) on one line, not a line per unit."""
    token, folded = secrets.token_hex(8), []

    def fold(value: Any, in_units: bool) -> Any:
        if isinstance(value, dict):
            return {k: fold(v, in_units or k == "units") for k, v in value.items()}
        if isinstance(value, list):
            if in_units and not any(isinstance(v, (list, dict)) for v in value):
                folded.append(json_module.dumps(value, ensure_ascii=False, default=str))
                return f"{token}:{len(folded) - 1}"
            return [fold(v, in_units) for v in value]
        return value

    text = json_module.dumps(fold(data, False), ensure_ascii=False, indent=2, default=str)
    text = re.sub(f'"{token}:(\\d+)"', lambda m: folded[int(m.group(1))], text)
    sys.stdout.write(_RAW_CONTROLS_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n")


def _note_repairs(report: Any) -> None:
    """One line each for the transform and the hubness reduction the results were scored with."""
    info = report.results[0].info if report.results else {}
    fit = info.get("transform_fit")
    if info.get("transform") and isinstance(fit, dict):
        note(f"transform {info['transform']}: fitted on {fit['n']} {fit['on']} (no labels), "
             f"{fit['dim_in']} -> {fit['dim_out']} dimensions")
    red = info.get("hubness_reduction")
    if isinstance(red, dict):
        note(f"hubness reduction {red['method']} (kappa {red['kappa']}, every document scored)")


#: Rows shown for one result, where a task reports many more scores (all are in --json).
_SHOWN = {
    "retrieval": ["ndcg_at_10", "ndcg_at_100", "recall_at_10", "recall_at_100", "precision_at_10", "mrr_at_10",
                  "map_at_100"],
    "sts": ["spearman", "pearson"],
    "reranking": ["map_at_1000", "mrr_at_10", "ndcg_at_10", "recall_at_10"],
}
#: The header of the main score's bootstrap interval.
_CI = "95% CI"


def _ci_column() -> Column:
    """The interval's column: never wrapped (``[0.8120, 0.8450]`` stays on one line)."""
    return Column(_CI, no_wrap=True)


def _ci(result: Any) -> str:
    """``[low, high]`` of a result's interval (``""`` without one)."""
    ci = result.interval
    return "" if ci is None else _ci_text(ci.low, ci.high)


def _ci_text(low: float, high: float) -> str:
    return f"[{low:.4f}, {high:.4f}]"


#: Columns shown when several subjects share one table (all scores are in --json).
_HEADLINE = {
    "sts": ["spearman", "pearson"],
    "retrieval": ["ndcg_at_10", "recall_at_10", "recall_at_100", "mrr_at_10", "map_at_100"],
    "pairclass": ["cosine_ap", "cosine_accuracy", "cosine_f1"],
    "classification": ["accuracy", "f1_macro", "knn_accuracy"],
    "reranking": ["map_at_1000", "mrr_at_10", "ndcg_at_10"],
    "summarization": ["spearman", "pearson", "dot_spearman"],
}


def _print_results(report: Any) -> None:
    first = report.results[0]
    title = f"{first.task_name} ({first.split}): {first.info.get('subject', '')}"
    with_ci = any(r.interval is not None for r in report.results)
    if len(report.results) == 1:
        table = Table("metric", "score", *([_ci_column()] if with_ci else []), title=title)
        shown = _SHOWN.get(first.task_name.split(":")[0], list(first.scores))
        for key in [k for k in first.scores if k in shown]:
            main = key == first.main_metric
            table.add_row(key + (" (main)" if main else ""), f"{first.scores[key]:.4f}",
                          *([_ci(first) if main else ""] if with_ci else []))
        out.print(table)
        if len(shown) < len(first.scores):
            note(f"{len(first.scores)} scores in --json and --output-dir")
    else:
        keys = [k for k in _HEADLINE.get(first.task_name.split(":")[0], []) if k in first.scores] or list(first.scores)
        # the interval's column right after the main score's
        at = keys.index(first.main_metric) + 1 if first.main_metric in keys else len(keys)
        heads = [*keys[:at], *([_ci_column()] if with_ci else []), *keys[at:]]
        table = Table("subject", *heads, "seconds", title=f"{first.task_name} ({first.split})")
        for r, name in zip(report.results, _names(report), strict=True):
            cells = [f"{r.scores[k]:.4f}" for k in keys]
            table.add_row(name, *cells[:at], *([_ci(r)] if with_ci else []), *cells[at:],
                          f"{r.evaluation_time:.1f}")
        out.print(table)
    note(f"{first.evaluation_time:.1f} s")
    extra = {k: v for k, v in first.info.items() if k.startswith(("n_", "oov")) and isinstance(v, int)}
    if extra:
        note(", ".join(f"{k}={v}" for k, v in extra.items()))


def _names(report: Any) -> list[str]:
    """Each result's name in the table: as the comparisons name it (pairs 0-1, 0-2 ...), else its subject."""
    if not report.comparisons:
        return [r.info.get("subject", "") for r in report.results]
    first = report.comparisons[0].a
    return [first, *(c.b for c in report.comparisons if c.a == first)]


def _print_comparisons(report: Any) -> None:
    """Every pair of models: the difference of their main scores, its 95% CI and the Holm-corrected p-value."""
    from repspace.engines.eval.comparisons import SIGNIFICANCE_LEVEL

    if not report.comparisons:
        return
    first = report.results[0]
    table = Table("a", "b", "a - b", _ci_column(), "p (Holm)", Column("", no_wrap=True),
                  title=f"{first.task_name} ({first.split}): {first.main_metric}, every pair")
    for c in report.comparisons:
        table.add_row(c.a, c.b, f"{c.difference:+.4f}", "" if c.ci_low is None else _ci_text(c.ci_low, c.ci_high),
                      "" if c.p_value is None else f"{c.p_value:.4f}",
                      "*" if c.p_value is not None and c.p_value <= SIGNIFICANCE_LEVEL else "")
    out.print(table)
    if all(c.p_value is None for c in report.comparisons):
        note("no interval or test without resamples (--bootstrap 0)")
    else:
        n = len(report.comparisons)
        note(f"* p <= {SIGNIFICANCE_LEVEL}: paired randomization test, Holm-corrected across the {n} "
             f"pair{'s' if n != 1 else ''}; the CI is the paired bootstrap's")


def _print_tradeoff(report: Any) -> None:
    """The sweep's rows, smallest vectors first: codec, bytes, the main score, its 95% interval (a column only
    when some row has one) and the score relative to the uncompressed ``full`` codec's."""
    first = report.results[0]
    with_ci = any(row.get("ci_low") is not None for row in report.tradeoff)
    table = Table("codec", "bytes/vector", first.main_metric, *([_ci_column()] if with_ci else []), "relative",
                  title=f"{first.task_name}: {first.info.get('subject', '')}")
    for row in report.tradeoff:
        rel = row.get("relative")
        ci = "" if row.get("ci_low") is None else _ci_text(row["ci_low"], row["ci_high"])
        table.add_row(row["codec"], str(row["bytes_per_vector"]), f"{row['main_score']:.4f}",
                      *([ci] if with_ci else []), "" if rel is None else f"{rel:.3f}")
    out.print(table)


def _end(value: float) -> str:
    """An interval's end in three decimals, without the leading zero of a value in (-1, 1): ``.801``, ``-.012``."""
    text = f"{value:.3f}"
    return text.replace("0.", ".", 1) if text.lstrip("-").startswith("0.") else text


def _print_grid(report: Any) -> None:
    """The layer x codec grid: a row per codec, a column per layer, each cell the main score and, on a second
    line, its 95% interval as ``.801–.823``.

    The interval gets its own line, its two ends in three decimals without the leading zero and joined by a
    dash, so that a cell is at most 11 characters wide (``-.490–-.201``): a codec column and 7 layers (MiniLM's)
    fit in 120 columns, where ``0.8123 [0.8012, 0.8234]`` on one line would need 25 per cell, near 200 in all.
    Its ends are shown rather than a half-width (``±0.011``) because a percentile bootstrap interval is not
    symmetric about the score; the exact ends are in ``--json`` (``ci_low``/``ci_high`` of each result).
    """
    first = report.results[0]
    grid = report.grid()
    with_ci = any(ci is not None for row in grid["intervals"] for ci in row)
    heads = [s if layer is None else f"L{layer}" for s, layer in zip(grid["subjects"], grid["layers"], strict=True)]
    title = f"{first.task_name}: {first.main_metric} by codec (rows) and layer (columns)"
    table = Table(Column("codec", no_wrap=True), *heads, title=title + (" with its 95% CI" if with_ci else ""),
                  show_lines=with_ci)
    for j, codec in enumerate(grid["codecs"]):
        cells = []
        for scores, intervals in zip(grid["scores"], grid["intervals"], strict=True):
            score, ci = scores[j], intervals[j]
            text = "" if score is None else f"{score:.4f}"
            # a Text: the console escapes the newline of a plain string (our own digits, nothing to escape here)
            cells.append(text if ci is None else Text(f"{text}\n{_end(ci[0])}–{_end(ci[1])}"))
        table.add_row(codec, *cells)
    out.print(table)
    note(f"layers: {grid['subjects'][0]} ... {grid['subjects'][-1]}")


def _sweep_command(task: str, file_help: str, doc: str) -> Any:
    """The command of a sentence-pair task with the dimension and precision sweep (sts, pairclass): one
    signature, ``file_help`` as its FILE's help and ``doc`` as its own."""

    def command(*, file: Path = typer.Argument(..., help=file_help), subject: EncoderArgs, sweep: SweepArgs,
                results: ResultArgs) -> None:
        _go(task, file, **asdict(subject), **asdict(sweep), **asdict(results))

    command.__doc__ = doc
    command.__name__ = command.__qualname__ = f"{task}_cmd"
    return eval_app.command(task)(command)


sts_cmd = _sweep_command("sts", "CSV of sentence1,sentence2,score (header optional).", doc="""\
Spearman (main) and Pearson correlation of cosine similarity with gold scores.

    MTEB's names are reported beside them (cosine_spearman, cosine_pearson, and the
    euclidean_ and manhattan_ correlations). A --transform is fitted on the split's
    distinct sentences (both sides).

    Examples:

      repspace eval sts stsb-en-test.csv

      repspace eval sts stsb-en-test.csv --encoder hf-layers:minilm --layer all

      repspace eval sts stsb-en-test.csv --dims 32,64,128,full --precision float32,int8,binary

      repspace eval sts stsb-en-test.csv --encoder hf-layers:minilm --layer all --dims 64,128,full

      repspace eval sts stsb-en-test.csv --transform center,whiten128

      repspace eval sts stsb-en-test.csv --mteb-task STSBenchmark --output-dir results
    """)


@eval_app.command("retrieval")
def retrieval_cmd(
    *,
    folder: Annotated[Path, typer.Argument(help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/<split>.tsv.")],
    split: Annotated[str, typer.Option(help="The qrels split to score.")] = "test",
    index: Annotated[Optional[str], typer.Option(help="Score an approximate index: hnsw32, hnsw16,ef64.")] = None,
    bm25: Annotated[bool, typer.Option("--bm25", help="Score BM25 over the corpus texts alone.")] = False,
    hybrid: Annotated[bool, typer.Option("--hybrid", help="Score dense + BM25 (reciprocal-rank fusion).")] = False,
    lexical_weight: Annotated[float, typer.Option(help="Hybrid: weight of the BM25 list.")] = 1.0,
    multivector: Annotated[bool, typer.Option("--multivector", help="Token states, MUVERA + Chamfer.")] = False,
    candidates: Annotated[int, typer.Option(min=1, help="Multi-vector: documents reranked per query.")] = 100,
    hubness: Annotated[Optional[str], typer.Option(
        "--hubness", help="Query-time hubness reduction: csls, mutual-proximity or local-scaling "
                          "(every document scored exactly).")] = None,
    kappa: Annotated[int, typer.Option(min=1, help="Hubness reduction: neighbours behind each statistic.")] = 10,
    subject: EncoderArgs,
    sweep: SweepArgs,
    results: ResultArgs,
) -> None:
    """nDCG@10 (main); nDCG, MAP, recall, precision and MRR at 1, 3, 5, 10, 20, 100 and 1000 (trec_eval definitions).

    Exact rankings go 1000 deep, as MTEB's do; with --index or --hybrid the ranking goes
    100 deep and the scores stop at 100.

    A --transform is fitted on the corpus documents, then applied to documents and queries.

    Examples:

      repspace eval retrieval cranfield-beir

      repspace eval retrieval cranfield-beir --index hnsw16,ef32

      repspace eval retrieval cranfield-beir --dims 64,128,full --precision float32,binary

      repspace eval retrieval cranfield-beir --hybrid

      repspace eval retrieval cranfield-beir --encoder hf-layers:minilm --multivector --candidates 100

      repspace eval retrieval cranfield-beir --transform abtt3 --hubness csls

      repspace eval retrieval cranfield-beir --output-dir results --json
    """
    from repspace.core.errors import InputError

    if bm25 and hybrid:
        raise InputError("choose --bm25 or --hybrid, not both")
    _go("retrieval", folder, **asdict(subject), **asdict(sweep), **asdict(results), split=split, index=index,
        lexical="bm25" if bm25 else "hybrid" if hybrid else None, lexical_weight=lexical_weight, hubness=hubness,
        kappa=kappa, **({"multivector": True, "candidates": candidates} if multivector else {}))


@eval_app.command("wordsim")
def wordsim_cmd(
    *,
    file: Annotated[Path, typer.Argument(help="Word pairs with a score: word1 word2 score (tab or space).")],
    restrict_vocab: RestrictVocab = None,
    subject: EncoderArgs,
    results: ResultArgs,
) -> None:
    """Spearman correlation of word-pair cosine with human similarity; OOV pairs dropped and counted.

    A --transform is fitted on the whole vocabulary of a --space (its first N words with
    --restrict-vocab), or on the task's distinct words with an --encoder.

    Examples:

      repspace eval wordsim EN-WS-353-ALL.txt --space glove

      repspace eval wordsim EN-SIMLEX-999.txt --encoder static

      repspace eval wordsim EN-WS-353-ALL.txt --space glove --transform abtt2
    """
    _go("wordsim", file, **asdict(subject), **_NO_SWEEP, **asdict(results), restrict_vocab=restrict_vocab)


@eval_app.command("analogy")
def analogy_cmd(
    *,
    file: Annotated[Path, typer.Argument(help="Analogies in the questions-words format (': section', 'a b c d').")],
    restrict_vocab: RestrictVocab = None,
    encoder: Encoders = None,
    space: Spaces = None,
    batch_size: BatchSize = 64,
    results: ResultArgs,
) -> None:
    """Analogy accuracy by 3CosAdd (main) and 3CosMul.

    A --transform is fitted on the searched vocabulary (as for wordsim).

    Examples:

      repspace eval analogy questions-words.txt --space glove --restrict-vocab 30000

      repspace eval analogy questions-words.txt --space glove --restrict-vocab 30000 --transform abtt2
    """
    _go("analogy", file, encoder=encoder, space=space, batch_size=batch_size, **_NO_SWEEP, **asdict(results),
        restrict_vocab=restrict_vocab)


def _labelled(task: str, file: Path | None, text_col: str, label_col: str, label_field: str | None, **kw: Any) -> None:
    from repspace.core.errors import InputError

    if (file is None) == (label_field is None):
        raise InputError(f"{task} needs a labelled FILE, or --space with --label-field (one of them)")
    _go(task, file, text_col=text_col, label_col=label_col, label_field=label_field, **_NO_SWEEP, **kw)


def _labelled_command(task: str, doc: str) -> Any:
    """The command of a labelled-texts task (clustering, classification): one signature, ``doc`` as its help."""

    def command(
        *,
        file: Annotated[Optional[Path], typer.Argument(help="CSV or JSONL with a text and a label column.")] = None,
        text_col: Annotated[str, typer.Option(help="Column with the texts.")] = "text",
        label_col: Annotated[str, typer.Option(help="Column with the labels.")] = "label",
        label_field: Annotated[Optional[str], typer.Option(help="With --space: metadata field holding labels.")
                               ] = None,
        protocol: Annotated[str, typer.Option(
            help="repspace, or mteb: MTEB's evaluator's protocol and score names (clustering also mteb-legacy)."
        )] = "repspace",
        train: Annotated[Optional[Path], typer.Option(
            help="classification --protocol mteb: the training split, same columns (default: MTEB's 5-fold "
                 "cross-validation of FILE).")] = None,
        subject: EncoderArgs,
        results: ResultArgs,
    ) -> None:
        _labelled(task, file, text_col, label_col, label_field, protocol=protocol, train=train, **asdict(subject),
                  **asdict(results))

    command.__doc__ = doc
    command.__name__ = command.__qualname__ = f"{task}_cmd"
    return eval_app.command(task)(command)


clustering_cmd = _labelled_command("clustering", doc="""\
V-measure of k-means (k = number of labels, 10 restarts, mean of 5 seeds).

    A --transform is fitted on the distinct texts (or the labelled vectors of a space), never on labels.
    --protocol mteb runs MTEB's: mini-batch k-means on 10 draws of a 4% sample (v_measure, ami).

    Examples:

      repspace eval clustering news.csv --text-col title --label-col topic

      repspace eval clustering --space docs --label-field module

      repspace eval clustering news.csv --protocol mteb --output-dir results
    """)

classification_cmd = _labelled_command("classification", doc="""\
Logistic-regression accuracy (main), macro F1 and kNN accuracy, 5-fold stratified.

    A --transform is fitted once on all the items (unsupervised, no labels; the held-out folds do shape it).
    --protocol mteb runs MTEB's: logistic regression on 8 items per label, 10 experiments.

    Examples:

      repspace eval classification reviews.jsonl --label-col sentiment

      repspace eval classification --space docs --label-field module --json

      repspace eval classification test.csv --train train.csv --protocol mteb --output-dir results
    """)


pairclass_cmd = _sweep_command("pairclass", "CSV with header sentence1,sentence2,label (label 0 or 1).", doc="""\
Average precision (main) of cosine for telling paired from unpaired sentences.

    A --transform is fitted on the file's distinct sentences (both sides), never on the labels.

    Examples:

      repspace eval pairclass paraphrases.csv --encoder minilm

      repspace eval pairclass paraphrases.csv --encoder minilm --transform center
    """)


@eval_app.command("results")
def results_cmd(
    space: Annotated[Optional[list[str]], typer.Argument(
        help="Only results about this space; with --compare, the ids of the results to compare.",
        metavar="[SPACE | ID...]")] = None,
    task: Annotated[Optional[str], typer.Option(help="Only this task (sts:stsb-en-test) or family (sts).")] = None,
    compare: Annotated[bool, typer.Option(
        "--compare", help="Compare the results pair by pair (difference, 95% CI, Holm-corrected p): those whose "
                          "ids are given, else all of one task.")] = False,
    bootstrap: Annotated[int, typer.Option(
        "--bootstrap", min=0, help="--compare: resamples of each pair's interval and test (0: none).")] = 1000,
    seed: Seed = 0,
    json: Json = False,
) -> None:
    """Results recorded with --save; 'stale' marks spaces that changed since. --compare tests them against each other.

    Examples:

      repspace eval results

      repspace eval results glove --task wordsim --json

      repspace eval results --compare --task sts

      repspace eval results --compare 3 4 7
    """
    from repspace.core.errors import InputError

    args = list(space or [])
    if compare:
        from repspace.workflows.evaluate import compare_saved

        bad = [a for a in args if not a.isdecimal()]
        if bad:
            raise InputError(f"--compare takes the ids of saved results (repspace eval results lists them), "
                             f"not {bad[0]!r}")
        report = compare_saved(open_store(create=False), [int(a) for a in args] or None, task=task,
                               n_resamples=bootstrap, seed=seed)
        if json:
            _print_json(report.to_dict())
        else:
            _print_results(report)
            _print_comparisons(report)
        return
    if len(args) > 1:
        raise InputError(f"give one space, not {len(args)} (result ids go with --compare)")
    saved = open_store(create=False).results(space=args[0] if args else None, task=task)
    if json:
        _print_json([s.to_dict() for s in saved])
        return
    table = Table("id", "subject", "task", "split", "metric", "score", _ci_column(), "generation", "recorded")
    for s in saved:
        meta = s.result.get("repspace", {})
        layer = meta.get("layer")
        subject = s.subject + (f"@{layer}" if layer is not None and "@" not in s.subject else "")
        repairs = [r for r in (meta.get("transform"), (meta.get("hubness_reduction") or {}).get("method")) if r]
        if repairs:
            subject += f" [{' + '.join(repairs)}]"
        gen = "" if s.generation is None else f"{s.generation}{' (stale)' if s.stale else ''}"
        table.add_row(str(s.id), subject, s.task_name, s.split, s.main_metric, f"{s.main_score:.4f}",
                      _saved_ci(s.result), gen, s.created_at[:19])
    out.print(table)


def _saved_ci(result: dict[str, Any]) -> str:
    """The ``[ci_low, ci_high]`` a recorded result carries beside its main score (``""`` without them)."""
    entries = next(iter((result.get("scores") or {}).values()), None)
    entry = entries[0] if isinstance(entries, list) and entries and isinstance(entries[0], dict) else {}
    low, high = entry.get("ci_low"), entry.get("ci_high")
    return _ci_text(low, high) if isinstance(low, (int, float)) and isinstance(high, (int, float)) else ""
