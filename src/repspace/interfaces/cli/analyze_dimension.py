"""``repspace analyze limit|dimension|track``: free-embedding capacity, linear vs nonlinear intrinsic dimension,
and label-free quality tracked over several spaces.

Each command parses its options, calls one library function and prints its result (a table, or ``--json`` with
the names of docs/METRICS.md).
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer
from rich.table import Table

from repspace.core.errors import InputError
from repspace.interfaces.cli._common import EncoderLayers, EncoderTexts, open_store, out, parse_layers, print_json
from repspace.interfaces.cli._common import progress_bar
from repspace.interfaces.cli.analyze import analyze_app
from repspace.interfaces.cli.options import Json


def _numbers(text: str) -> list[int]:
    """A comma-separated list of integers."""
    try:
        return [int(v) for v in text.split(",")]
    except ValueError:
        raise InputError(f"--n must be comma-separated integers like 10,20,40, not {text!r}") from None


@analyze_app.command("limit")
def limit_cmd(
    n: Annotated[str, typer.Option("--n", help="Numbers of documents, comma-separated.")] = "10,20,40",
    k: Annotated[int, typer.Option("--k", help="Relevant documents per query (every k-subset is a query).")] = 2,
    loss: Annotated[str, typer.Option(help="infonce (the LIMIT experiment) or margin (max-margin).")] = "infonce",
    d_max: Annotated[int, typer.Option(help="Largest dimension tried.")] = 64,
    seed: Annotated[int, typer.Option(help="Seed of the initial vectors.")] = 0,
    json: Json = False,
) -> None:
    """Free-embedding capacity (LIMIT): the smallest dimension in which optimised free vectors realise every
    top-k subset of n documents, beside the paper's fitted curve.

    Examples:

      repspace analyze limit --n 10,20,40

      repspace analyze limit --n 6,10 --loss margin --json
    """
    from repspace.engines.analyze import limit_curve

    c = limit_curve(_numbers(n), k=k, loss=loss, d_max=d_max, seed=seed)
    d = c.to_dict()
    if json:
        print_json(d)
        return
    t = Table("n", "queries", "critical d", "paper's d", "paper's critical n at d", title=f"free embeddings, k={k}, "
                                                                                          f"{loss} loss")
    for p in d["points"]:
        shown = "—" if p["paper_critical_n"] is None else f"{p['paper_critical_n']:.1f}"
        t.add_row(str(p["n"]), f"{p['queries']:,}", str(p["critical_d"] or f"> {d_max}"), str(p["paper_d"]), shown)
    out.print(t)


@analyze_app.command("dimension")
def dimension_cmd(
    space: Annotated[Optional[str], typer.Argument(help="The space (omit with --encoder).")] = None,
    k: Annotated[int, typer.Option("-k", help="Neighbours of the MLE estimate.")] = 20,
    encoder: Annotated[Optional[str], typer.Option(help="Per layer of an encoder instead of a space: "
                                                        "hf-layers:<folder>.")] = None,
    layers: EncoderLayers = "all",
    texts: EncoderTexts = None,
    text_col: Annotated[str, typer.Option(help="Text column of --texts tables.")] = "text",
    json: Json = False,
) -> None:
    """Linear (PCA components for 90/95/99% of the variance) beside nonlinear (TwoNN, MLE) intrinsic dimension.

    Examples:

      repspace analyze dimension glove

      repspace analyze dimension --encoder hf-layers:minilm --texts sentences.txt --layers 0,3,6 --json
    """
    rows: list[tuple[str, dict]] = []
    if encoder is not None:
        if space is not None:
            raise InputError("give a space or --encoder, not both")
        if texts is None:
            raise InputError("--encoder needs --texts FILE")
        from repspace.workflows.analyze import dimension_layers
        from repspace.workflows.ingest import read_texts

        with progress_bar(json) as bar:
            r = dimension_layers(encoder, read_texts(texts, text_col=text_col), layers=parse_layers(layers), k=k,
                                 progress=bar)
        d = r.to_dict()
        rows = [(f"layer {x['layer']}", x) for x in d["layers"]]
        title = f"{encoder} on {texts.name}"
    elif space is None:
        raise InputError("give a space, or --encoder hf-layers:<folder> with --texts FILE")
    else:
        from repspace.workflows.analyze import dimension_space

        d = dimension_space(open_store(create=False).space(space), k=k).to_dict()
        rows, title = [(space, d)], f"{space}: {d['n']:,} items × {d['d']}"
    if json:
        print_json(d)
        return
    t = Table("", "PCA 90%", "PCA 95%", "PCA 99%", "TwoNN", "MLE", "PCA 99% / TwoNN", title=title)
    for label, x in rows:
        t.add_row(label, *[str(x["pca"][p]) for p in ("p90", "p95", "p99")], f"{x['twonn']:.2f}",
                  f"{x['mle']:.2f}", f"{x['linear_to_nonlinear']:.2f}")
    out.print(t)


@analyze_app.command("track")
def track_cmd(
    spaces: Annotated[list[str], typer.Argument(help="Two or more spaces (checkpoints or layers), in order.")],
    views_field: Annotated[Optional[str], typer.Option(help="Metadata field naming the sample an item is a "
                                                            "view of (LiDAR, alignment).")] = None,
    k: Annotated[int, typer.Option("-k", help="Neighbours of the local intrinsic dimension.")] = 20,
    json: Json = False,
) -> None:
    """Label-free quality over several spaces: LiDAR and alignment over views, uniformity, local ID.

    Examples:

      repspace analyze track ckpt1 ckpt2 ckpt3 --views-field sample

      repspace analyze track layer3 layer6 --json
    """
    from repspace.workflows.analyze import track_spaces

    if len(spaces) < 2:
        raise InputError(f"tracking needs at least 2 spaces (checkpoints or layers), got {len(spaces)}")
    store = open_store(create=False)
    d = track_spaces([store.space(s) for s in spaces], views_field=views_field, k=k).to_dict()
    if json:
        print_json(d)
        return
    t = Table("space", "items", "LiDAR", "alignment", "uniformity", "local ID mean", "local ID median",
              title=f"label-free quality{f' (views: {views_field})' if views_field else ''}")
    for q in d["spaces"]:
        t.add_row(q["space"], f"{q['n']:,}", "—" if q["lidar"] is None else f"{q['lidar']:.2f}",
                  "—" if q["alignment"] is None else f"{q['alignment']:.4f}", f"{q['uniformity']:.4f}",
                  f"{q['local_id_mean']:.2f}", f"{q['local_id_median']:.2f}")
    out.print(t)
