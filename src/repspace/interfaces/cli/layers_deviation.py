"""``repspace layers deviation`` and ``repspace layers moments``: REMA manifold deviation per layer, and the
moment probe (mean, variance and low-rank covariance of the token states) beside the mean-pooled probe."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich import box
from rich.table import Table

from repspace.interfaces.cli._common import EncoderLayers, note, open_store, out, parse_layers, print_json, progress_bar
from repspace.interfaces.cli.layers import layers_app

Json = Annotated[bool, typer.Option("--json", help="Print JSON.")]


@layers_app.command("deviation")
def deviation_cmd(
    encoder: Annotated[str, typer.Option("--encoder", help="hf-layers:<folder> (hf-layers:minilm is bundled).")],
    reference: Annotated[Path, typer.Option("--reference", help="Texts the model handles well (.txt one per "
                                                                  "line, .jsonl, .csv or .parquet).")],
    texts: Annotated[Optional[Path], typer.Option("--texts", help="The texts to score (or --space).")] = None,
    space: Annotated[Optional[str], typer.Option("--space", help="Score this stored space's items (their texts).")
                     ] = None,
    write_metadata: Annotated[Optional[str], typer.Option("--write-metadata", help="With --space: write each "
                                                                                   "item's z-score under this key "
                                                                                   "(KEY_L<layer> per layer).")
                              ] = None,
    text_col: Annotated[str, typer.Option(help="Text column of table files.")] = "text",
    layer: Annotated[str, typer.Option("--layer", help="'all' or layer indexes like 0,3,-1.")] = "all",
    k: Annotated[int, typer.Option("-k", help="Nearest reference states per text.")] = 10,
    metric: Annotated[str, typer.Option(help="Distance: l2 (the paper's) or cosine.")] = "l2",
    batch_size: Annotated[int, typer.Option(help="Texts per forward pass.")] = 32,
    json: Json = False,
) -> None:
    """Per layer, each text's mean distance to its k nearest reference states (REMA), as a z-score and a
    percentile of the reference's own leave-one-out distances; a table of per-layer summaries.

    Examples:

      repspace layers deviation --encoder hf-layers:minilm --reference good.txt --texts new.txt

      repspace layers deviation --encoder hf-layers:minilm --reference good.txt --space docs --write-metadata rema
    """
    from repspace.workflows.ingest import read_texts
    from repspace.workflows.layer_deviation import layer_deviation

    ref = read_texts(reference, text_col=text_col)
    scored = read_texts(texts, text_col=text_col) if texts is not None else None
    target = open_store(create=False).space(space) if space is not None else None
    with progress_bar(json) as bar:
        r = layer_deviation(encoder, ref, scored, layers=parse_layers(layer), k=k, metric=metric, space=target,
                            write_metadata=write_metadata, batch_size=batch_size, progress=bar)
    if json:
        print_json(r.to_dict())
        return
    table = Table("L", "ref mean", "ref std", "mean dist", "mean z", "median pct", "share > p95", box=box.SIMPLE_HEAD,
                  title=f"{r.encoder}: {r.n_texts:,} texts against {r.n_reference:,} reference texts "
                        f"(k={r.k}, {r.metric})")
    for row in r.summary():
        table.add_row(str(row["layer"]), *(_fmt(row[n]) for n in ("baseline_mean", "baseline_std", "mean_distance",
                                                                  "mean_z", "median_percentile", "share_above")))
    out.print(table)
    if r.saved:
        note(f"wrote {r.saved:,} items' z-scores as metadata {', '.join(r.metadata_keys)}")


def _fmt(x: Any) -> str:
    return "—" if x is None else f"{x:.4g}"


@layers_app.command("moments")
def moments_cmd(
    encoder: Annotated[str, typer.Option("--encoder", help="hf-layers:<folder> (hf-layers:minilm is bundled).")],
    labels: Annotated[Path, typer.Option("--labels", help="Labelled texts, SentEval's format: split<TAB>label<TAB>"
                                                            "sentence per line (every split is used).")],
    layer: Annotated[str, typer.Option("--layer", help="'all' or layer indexes like 0,3,-1.")] = "all",
    rank: Annotated[int, typer.Option("--rank", help="Directions of the fixed covariance basis.")] = 8,
    kind: Annotated[str, typer.Option(help="logistic (classes) or ridge (numbers).")] = "logistic",
    cv: Annotated[int, typer.Option(help="Cross-validation folds.")] = 5,
    control: Annotated[str, typer.Option(help="Control task: permute or random-type.")] = "permute",
    seed: Annotated[int, typer.Option(help="Seed of the folds and the control.")] = 0,
    batch_size: Annotated[int, typer.Option(help="Texts per forward pass.")] = 32,
    json: Json = False,
) -> None:
    """The moment probe: the probe of `interpret probe` on each layer's mean-pooled states, on mean + variance
    and on mean + variance + the token covariance in a fixed rank-r basis, with control tasks and intervals.

    Examples:

      repspace layers moments --encoder hf-layers:minilm --labels sentence_length.txt --layer 0,3,6

      repspace layers moments --encoder hf-layers:minilm --labels past_present.txt --rank 4 --json
    """
    from repspace.workflows.moment_probe import moment_probe_file

    with progress_bar(json) as bar:
        r = moment_probe_file(encoder, labels, layers=parse_layers(layer), rank=rank, kind=kind, cv=cv,
                              control=control, seed=seed, batch_size=batch_size, progress=bar)
    d = r.to_dict()
    if json:
        print_json(d)
        return
    table = Table("L", "features", "d", "score [95% CI]", "control", "selectivity", box=box.SIMPLE_HEAD,
                  title=f"{r.encoder}: moment probe of {labels.name} ({r.n:,} texts, {cv} folds, rank {r.rank})")
    for row in d["rows"]:
        table.add_row(str(row["layer"]), row["features"], str(row["d"]),
                      f"{row['score']:.4f} [{row['ci_low']:.4f}, {row['ci_high']:.4f}]",
                      f"{row['control_score']:.4f}", f"{row['selectivity']:.4f}")
    out.print(table)
