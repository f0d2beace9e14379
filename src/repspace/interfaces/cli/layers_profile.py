"""``repspace layers profile``: per layer, how a model treats the tokens of real inputs, and which layer to use."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich import box
from rich.table import Table

from repspace.interfaces.cli._common import EncoderLayers, note, out, parse_layers, print_json, progress_bar
from repspace.interfaces.cli.layers import layers_app

#: Columns of the table: (JSON name, header).
_COLUMNS = (("prompt_entropy", "H"), ("curvature", "curv"), ("augmentation_invariance", "inv"),
            ("infonce", "nce"), ("lidar", "lidar"), ("dime", "dime"),
            ("intrinsic_dimension", "ID"), ("intrinsic_dimension_shuffled", "ID~"),
            ("neighbourhood_overlap", "ovl"), ("neighbourhood_overlap_shuffled", "ovl~"),
            ("mean_cosine", "cos"), ("mean_cosine_shuffled", "cos~"))
#: What the short headers mean, printed under the table.
_LEGEND = ("H: prompt entropy (H<a>: alpha-entropy), curv: curvature, inv: augmentation invariance, nce: InfoNCE "
           "loss, ID: TwoNN, ovl: neighbourhood overlap, cos: mean token cosine; ~: tokens shuffled")


@layers_app.command("profile")
def profile_cmd(
    encoder: Annotated[list[str], typer.Option("--encoder", help="hf-layers:<folder> (hf-layers:minilm is "
                                                                   "bundled); repeat it to compare models.")],
    texts: Annotated[Path, typer.Option("--texts", help="The inputs (.txt one per line, .jsonl, .csv or .parquet).")],
    text_col: Annotated[str, typer.Option(help="Text column of --texts tables.")] = "text",
    layers: EncoderLayers = "all",
    alpha: Annotated[Optional[list[float]], typer.Option("--alpha", help="Also the alpha-entropy of this order "
                                                                          "(repeatable; 1 is prompt_entropy).")] = None,
    k: Annotated[int, typer.Option("-k", help="Neighbours of the neighbourhood overlap.")] = 3,
    augment: Annotated[str, typer.Option(help="Perturbations behind the augmentation invariance (typos, casing, "
                                              "punctuation, synonyms, reorder), or none.")] = "typos",
    rate: Annotated[float, typer.Option(help="Share of each text's sites a perturbation changes.")] = 0.1,
    invariance: Annotated[Optional[str], typer.Option(help="Also Layer by Layer's pair figures over (input, "
                                                           "perturbation) pairs: infonce, lidar, dime "
                                                           "(comma-separated) or all.")] = None,
    group: Annotated[int, typer.Option(help="Inputs per group behind --invariance's figures.")] = 250,
    shuffle: Annotated[bool, typer.Option("--shuffle/--no-shuffle", help="The shuffled-token baseline of the "
                                                                         "geometry figures.")] = True,
    task: Annotated[Optional[tuple[str, Path]], typer.Option(help="Score each layer on a task: 'sts FILE' "
                                                                  "(sentence1,sentence2,score CSV).")] = None,
    pooling: Annotated[Optional[str], typer.Option(help="hf-layers pooling: mean, cls, last or max.")] = None,
    bootstrap: Annotated[int, typer.Option(help="Resamples of the inputs behind each interval (0: none).")] = 1000,
    seed: Annotated[int, typer.Option(help="Seed of the perturbations, shuffles and bootstrap.")] = 0,
    batch_size: Annotated[int, typer.Option(help="Texts per forward pass.")] = 32,
    html: Annotated[Optional[Path], typer.Option("--html", help="Write a self-contained HTML page: every "
                                                               "figure against depth, one line per model.")] = None,
    json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Prompt entropy, curvature, augmentation invariance and token-cloud geometry per layer, with intervals.

    Examples:

      repspace layers profile --encoder hf-layers:minilm --texts sentences.txt

      repspace layers profile --encoder hf-layers:minilm --texts sentences.txt --task sts stsb-en-test.csv

      repspace layers profile --encoder hf-layers:minilm --texts sentences.txt --invariance all

      repspace layers profile --encoder hf-layers:minilm --encoder hf-layers:e5 --texts s.txt --html layers.html
    """
    from repspace.workflows.ingest import read_texts
    from repspace.workflows.layer_profile import profile_encoders

    items = read_texts(texts, text_col=text_col)
    task_name, task_file = task if task else (None, None)
    with progress_bar(json) as bar:
        result = profile_encoders(encoder, items, layers=parse_layers(layers), alphas=alpha or (), k=k,
                                  augment=None if augment.strip().lower() == "none" else augment, rate=rate,
                                  invariance=invariance, group=group,
                                  shuffle=shuffle, task=task_name, task_data=task_file, bootstrap=bootstrap,
                                  seed=seed, batch_size=batch_size, options={"pooling": pooling} if pooling else None,
                                  progress=bar)
    if html is not None:
        from repspace.interfaces.reports import write_layer_profile_html

        write_layer_profile_html(html, result.profiles, title=f"layer profile on {texts.name}")
    if json:
        print_json(result.to_dict())
    else:
        for p in result.profiles:
            _print(p)
    if html is not None:
        note(f"report: {html}")


def _fmt(f: Any) -> str:
    return "—" if f is None else f"{f.mean:.3g}"


def _print(p: Any) -> None:
    heads = dict(_COLUMNS)
    heads.update({n: f"H{n.rsplit('_', 1)[1]}" for n in p.figures if n.startswith("prompt_entropy_alpha_")})
    names = list(p.figures)
    table = Table("L", *(heads[n] for n in names), *(["task"] if p.task_scores else []), box=box.SIMPLE_HEAD,
                  padding=(0, 1, 0, 0), title=f"{p.encoder}: {p.n_inputs:,} inputs (means; --json for intervals)")
    for j, layer in enumerate(p.layers):
        cells = [_fmt(p.figures[n][j]) for n in names] + ([_fmt(p.task_scores[j])] if p.task_scores else [])
        table.add_row(str(layer), *cells)
    out.print(table)
    out.print(_LEGEND)
    if p.best_layer is not None:
        out.print(f"best layer on {p.task}: {p.best_layer} ({p.task_scores[p.layers.index(p.best_layer)].mean:.4f})")
