"""``repspace diagnose``: the geometry of a stored space, or of every layer of an encoder, as a table, JSON or HTML."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.table import Table

from repspace.core.errors import InputError
from repspace.interfaces.cli._app import app
from repspace.interfaces.cli._common import EncoderLayers, EncoderTexts, MetricsJson, RayAddress
from repspace.interfaces.cli._common import (
    note,
    open_store,
    out,
    parse_layers,
    print_json,
    progress_bar,
)

#: Columns of the per-layer table (METRICS.md names).
LAYER_COLUMNS = ("hubness.k_skewness", "hubness.robin_hood", "isotropy.mean_cosine", "isotropy.isoscore",
                 "intrinsic_dimension.twonn", "rank.effective_rank", "spectrum.alpha", "uniformity")


@app.command("diagnose")
def diagnose_cmd(
    space: Annotated[Optional[str], typer.Argument(help="The space (omit with --encoder).")] = None,
    k: Annotated[int, typer.Option("-k", help="Neighbourhood size of the hubness metrics.")] = 10,
    exact: Annotated[Optional[bool], typer.Option("--exact/--hnsw",
                                                  help="Exact or HNSW neighbour graphs (default: exact up to "
                                                       "50,000 items).")] = None,
    save: Annotated[bool, typer.Option("--save", help="Write k_occurrence, hub and local_id into each item's "
                                                      "metadata (for --where filters and exports).")] = False,
    html: Annotated[Optional[Path], typer.Option("--html", help="Write a self-contained HTML report "
                                                                "with plots.")] = None,
    encoder: Annotated[Optional[str], typer.Option(help="Diagnose an encoder's layers instead of a space: "
                                                        "hf-layers:<folder> (hf-layers:minilm is bundled).")] = None,
    layers: EncoderLayers = "all",
    texts: EncoderTexts = None,
    text_col: Annotated[str, typer.Option(help="Text column of --texts tables.")] = "text",
    pooling: Annotated[Optional[str], typer.Option(help="hf-layers pooling: mean, cls, last or max.")] = None,
    batch_size: Annotated[int, typer.Option(help="Texts per forward pass.")] = 64,
    backend: Annotated[str, typer.Option(help="local (default) or ray: the exact kNN graphs of hubness and local "
                                              "ID on a Ray cluster.")] = "local",
    ray_address: RayAddress = None,
    json: MetricsJson = False,
) -> None:
    """Hubness, isotropy, intrinsic dimension, rank, spectrum and uniformity, with readings.

    Examples:

      repspace diagnose docs

      repspace diagnose glove -k 20 --json

      repspace diagnose glove --save --html glove.html

      repspace diagnose glove --backend ray --ray-address head:6379

      repspace search glove --id king --where "k_occurrence > 40"

      repspace diagnose --encoder hf-layers:minilm --layers all --texts sentences.txt --html layers.html
    """
    if encoder is not None:
        if space is not None:
            raise InputError("give a space or --encoder, not both")
        if save:
            raise InputError("--save writes into a stored space; it does not combine with --encoder")
        if backend != "local":
            raise InputError("--backend ray measures a stored space; it does not combine with --encoder")
        if texts is None:
            raise InputError("--encoder needs --texts FILE")
        _layers(encoder, texts, text_col=text_col, layers=layers, pooling=pooling, k=k, exact=exact,
                batch_size=batch_size, html=html, json=json)
        return
    if space is None:
        raise InputError("give a space to diagnose, or --encoder hf-layers:<folder> with --texts FILE")
    from repspace.workflows.diagnose import diagnose_space

    sp = open_store(create=False).space(space)
    report = diagnose_space(sp, k=k, exact=exact, save=save, backend=backend, ray_address=ray_address)
    if html is not None:
        from repspace.interfaces.reports import write_diagnosis_html

        write_diagnosis_html(html, report, title=f"space {space}", provenance=sp.provenance)
    if json:
        print_json(report.to_dict())
    else:
        _print_one(report, f"{space}: {report.n:,} × {report.d} ({report.metric})")
    if save:
        note(f"saved k_occurrence, hub and local_id in the metadata of {report.n:,} items of {space}")
    if html is not None:
        note(f"report: {html}")


def _layers(encoder: str, texts: Path, *, text_col: str, layers: str, pooling: str | None, k: int,
            exact: bool | None, batch_size: int, html: Path | None, json: bool) -> None:
    from repspace.workflows.diagnose import diagnose_layers
    from repspace.workflows.ingest import read_texts

    chosen = parse_layers(layers)
    items = read_texts(texts, text_col=text_col)
    options = {"pooling": pooling} if pooling else None
    with progress_bar(json) as bar:
        result = diagnose_layers(encoder, items, layers=chosen, k=k, exact=exact, options=options,
                                 batch_size=batch_size, progress=bar)
    if html is not None:
        from repspace.interfaces.reports import write_diagnosis_html

        write_diagnosis_html(html, result.diagnoses[-1], title=f"{encoder} on {texts.name}",
                             layers=result.labelled(), provenance=result.provenance)
    if json:
        print_json(result.to_dict())
    else:
        table = Table("layer", *[c.split(".")[-1] for c in LAYER_COLUMNS],
                      title=f"{encoder}: {len(items):,} texts, k={k}")
        for lay, d in zip(result.layers, result.diagnoses):
            flat = d.to_dict()
            table.add_row(str(lay), *[_fmt(flat.get(c)) for c in LAYER_COLUMNS])
        out.print(table)
        last = result.diagnoses[-1]
        out.print(f"layer {result.layers[-1]}:")
        for line in last.readings:
            out.print(f"- {line}")
    if html is not None:
        note(f"report: {html}")


def _fmt(value: Any) -> str:
    if isinstance(value, dict):
        value = value.get("value", value)
    if isinstance(value, float):
        return f"{value:.4g}"
    return "—" if value is None else str(value)


def _print_one(report: Any, title: str) -> None:
    data = report.to_dict()
    table = Table("metric", "value", title=title)
    for key, value in data.items():
        if key in ("readings", "n", "d", "metric") or isinstance(value, list):
            continue
        table.add_row(key, _fmt(value) if isinstance(value, (dict, float)) else str(value))
    out.print(table)
    for line in report.readings:
        out.print(f"- {line}")
