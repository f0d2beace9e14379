"""``repspace compare``: how alike two stored spaces are on the items they share, and which items moved."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table

from repspace.core.errors import InputError
from repspace.interfaces.cli._app import app
from repspace.interfaces.cli._common import EncoderLayers, EncoderTexts, MetricsJson, RayAddress
from repspace.interfaces.cli._common import (
    comma_list,
    note,
    open_store,
    out,
    parse_layers,
    print_json,
)


@app.command("compare")
def compare_cmd(
    a: Annotated[Optional[str], typer.Argument(help="The old (reference) space (omit with --encoder).")] = None,
    b: Annotated[Optional[str], typer.Argument(help="The new space.")] = None,
    measures: Annotated[Optional[str], typer.Option(help="Comma-separated measures (default: all): cka_linear, "
                                                         "cka_debiased, mutual_knn, neighbourhood_jaccard, rsa, "
                                                         "procrustes, svcca.")] = None,
    k: Annotated[int, typer.Option("-k", help="Neighbours per item for the kNN measures.")] = 10,
    changed: Annotated[int, typer.Option(help="List this many items whose neighbourhoods changed most.")] = 0,
    save: Annotated[bool, typer.Option("--save", help="Write each item's jaccard (and jaccard_vs) into its "
                                                      "metadata in both spaces.")] = False,
    exact: Annotated[Optional[bool], typer.Option("--exact/--hnsw", help="Exact or HNSW kNN graphs (default: "
                                                                          "exact up to 50,000 items).")] = None,
    encoder: Annotated[Optional[str], typer.Option(help="Compare the layers of an encoder instead of two spaces: "
                                                        "hf-layers:<folder> (hf-layers:minilm is bundled).")] = None,
    layers: EncoderLayers = "all",
    other: Annotated[Optional[str], typer.Option(help="With --encoder: a second encoder whose layers form the "
                                                      "columns (default: the same encoder).")] = None,
    texts: EncoderTexts = None,
    measure: Annotated[str, typer.Option(help="With --encoder: the measure of the layer x layer matrix.")] =
        "cka_linear",
    heatmap: Annotated[Optional[Path], typer.Option(help="With --encoder: write the matrix as a PNG heatmap.")] =
        None,
    backend: Annotated[str, typer.Option(help="local (default) or ray: the moment pass of CKA, Procrustes and SVCCA "
                                              "on a Ray cluster.")] = "local",
    ray_address: RayAddress = None,
    json: MetricsJson = False,
) -> None:
    """Compare two spaces over the items they share (joined on id): CKA, mutual k-NN, RSA, Procrustes, SVCCA.

    Examples:

      repspace compare docs-minilm docs-e5

      repspace compare glove glove-abtt --measures cka_linear,mutual_knn --changed 20

      repspace compare glove glove-abtt --measures cka_linear,svcca --backend ray --ray-address head:6379

      repspace compare old new --save && repspace search new --id x --where "jaccard < 0.2"

      repspace compare --encoder hf-layers:minilm --layers all --texts sentences.txt --heatmap layers.png
    """
    from repspace.engines.compare import MEASURES
    from repspace.workflows.compare import compare_spaces

    if encoder is not None:
        if a is not None or b is not None:
            raise InputError("give two spaces or --encoder, not both")
        if texts is None:
            raise InputError("--encoder needs --texts FILE")
        if backend != "local":
            raise InputError("--backend ray compares two stored spaces; it does not combine with --encoder")
        _layers(encoder, other, texts, layers, measure, k, heatmap, json)
        return
    if a is None or b is None:
        raise InputError("give two spaces to compare, or --encoder hf-layers:<folder> with --texts FILE")
    store = open_store(create=False)
    names = None if measures is None else comma_list(measures)
    r = compare_spaces(store.space(a), store.space(b), measures=names, k=k, changed=changed, save=save, exact=exact,
                       backend=backend, ray_address=ray_address)
    if json:
        print_json(r.to_dict())
        return
    table = Table("measure", "value", "larger = more similar", title=f"{a} vs {b}: {r.n_shared:,} shared items "
                  f"(of {r.n_a:,} and {r.n_b:,}), k={k}")
    for key, value in r.comparison.scores().items():
        table.add_row(key, f"{value:.4f}", "yes" if MEASURES[key].larger_is_more_similar else "no (a distance)")
    out.print(table)
    for key, why in r.comparison.skipped.items():
        out.print(f"- {key}: not computed ({why})")
    if r.changed:
        moved = Table("id", "jaccard", "lost", "gained", title=f"{len(r.changed)} items whose neighbourhoods "
                                                               "changed most")
        for c in r.changed:
            moved.add_row(c["id"], f"{c['jaccard']:.3f}", ", ".join(c["lost"][:5]),
                          ", ".join(c["gained"][:5]))
        out.print(moved)
    if save:
        note(f"saved jaccard in the metadata of {r.n_shared:,} items of {a} and of {b}")


def _layers(encoder: str, other: str | None, texts: Path, layers: str, measure: str, k: int, heatmap: Path | None,
            json: bool) -> None:
    from repspace.workflows.compare import compare_layers
    from repspace.workflows.ingest import read_texts

    items = read_texts(texts)
    m = compare_layers(encoder, items, layers=parse_layers(layers), other=other, measure=measure, k=k)
    if heatmap is not None:
        m.heatmap(heatmap)
    if json:
        print_json(m.to_dict())
    else:
        table = Table("", *[c.split("@")[-1] for c in m.cols], title=f"{measure}: {encoder} (rows) vs "
                      f"{other or encoder} (columns), {m.n:,} texts")
        for label, row in zip(m.rows, m.values):
            table.add_row(label.split("@")[-1], *[f"{v:.3f}" for v in row])
        out.print(table)
    if heatmap is not None:
        note(f"heatmap: {heatmap}")
