"""``repspace layers lens`` and ``repspace layers grid``: states read as vocabulary tokens; the layer x width grid."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.table import Column, Table
from rich.text import Text

from repspace.core.errors import InputError
from repspace.interfaces.cli._common import note, open_store, out, print_json, progress_bar
from repspace.interfaces.cli.layers import layers_app

#: Tokens shown per cell when a table has a column per layer (``--json`` has all ``k``).
_PER_LAYER_CELL = 3

LensEncoder = Annotated[str, typer.Option("--encoder", help="An encoder with hidden states: hf-layers:<folder> "
                                                            "(hf-layers:minilm is bundled).")]
Json = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def _layers(value: str) -> str | list[int]:
    text = value.strip().lower()
    if text == "all":
        return "all"
    try:
        return [int(x) for x in text.split(",")]
    except ValueError:
        raise InputError(f"--layer must be 'all' or layer indexes such as 0 or 0,3,-1, got {value!r}") from None


def _top(top: list[dict[str, Any]], n: int) -> str:
    return " ".join(t["token"] for t in top[:n])


@layers_app.command("lens")
def lens_cmd(
    encoder: LensEncoder,
    text: Annotated[Optional[str], typer.Option("--text", help="The text whose tokens are read.")] = None,
    space: Annotated[Optional[str], typer.Option("--space", help="Read a stored space's items instead (zero-pass "
                                                                 "projection; vectors of the model's width).")] = None,
    ids: Annotated[Optional[list[str]], typer.Option("--id", help="With --space: an item to read (repeatable; "
                                                                  "default its first --limit items).")] = None,
    limit: Annotated[int, typer.Option(min=1, help="With --space and no --id: items read.")] = 10,
    layer: Annotated[str, typer.Option("--layer", help="'all' or layer indexes (0 = embeddings, -1 = last).")] = "all",
    k: Annotated[int, typer.Option("-k", min=1, help="Vocabulary tokens per state.")] = 10,
    score: Annotated[Optional[str], typer.Option(help="dot (the tied unembedding's logit; default for --text) or "
                                                      "cosine (default for --space).")] = None,
    tuned: Annotated[Optional[Path], typer.Option(
        "--tuned", help="Fit the tuned lens on this texts file first (.txt one per line, .jsonl, .csv, .parquet).")
    ] = None,
    text_col: Annotated[str, typer.Option(help="Text column of --tuned tables.")] = "text",
    ridge: Annotated[float, typer.Option(min=0.0, help="Relative ridge penalty of the tuned lens.")] = 1e-3,
    special: Annotated[bool, typer.Option("--special", help="Also read [CLS], [SEP]... tokens.")] = False,
    all_tokens: Annotated[bool, typer.Option("--all-tokens", help="Also show special and [unused*] vocabulary "
                                                                  "tokens in the top lists.")] = False,
    json: Json = False,
) -> None:
    """Each token's state at each layer, projected onto the model's token embeddings: its top tokens.

    The logit lens (and, with --tuned, the tuned lens: a ridge translator per layer to
    the last, its fit on held-out texts reported); --space reads stored vectors the same
    way with no forward pass.

    Examples:

      repspace layers lens --encoder hf-layers:minilm --text "The capital of France is Paris."

      repspace layers lens --encoder hf-layers:minilm --text "paris" --layer 0 -k 5

      repspace layers lens --encoder hf-layers:minilm --text "a cat sat" --tuned sentences.txt

      repspace layers lens --encoder hf-layers:minilm --space docs --id d1 --id d2
    """
    from repspace.workflows.lens import space_lens, token_lens

    if (text is None) == (space is None):
        raise InputError("give --text TEXT or --space NAME (one of them)")
    if space is not None:
        if tuned is not None:
            raise InputError("--tuned reads token states of a text; it does not combine with --space")
        result = space_lens(open_store(), space, encoder, ids=ids, limit=limit, k=k, score=score or "cosine",
                            all_tokens=all_tokens)
        if json:
            print_json(result.to_dict())
            return
        table = Table("id", f"top {k} tokens",
                      title=f"{space} through {encoder}'s vocabulary ({result.projection.score})")
        for item in result.to_dict()["items"]:
            table.add_row(item["id"], _top(item["top"], k))
        out.print(table)
        return
    if ids:
        raise InputError("--id names stored items; give it with --space")
    from repspace.workflows.ingest import read_texts

    texts = None if tuned is None else read_texts(tuned, text_col=text_col)
    with progress_bar(json) as bar:
        result = token_lens(encoder, text, layers=_layers(layer), k=k, score=score or "dot", skip_special=not special,
                            tuned=texts, ridge=ridge, all_tokens=all_tokens, progress=bar)
    if json:
        print_json(result.to_dict())
        return
    data = result.to_dict()
    if result.tuned is not None:
        _print_fit(result.tuned.to_dict())
    _print_lens(data, "top", f"{encoder}: logit lens ({result.score})", k)
    if result.tuned is not None:
        _print_lens(data, "tuned_top", f"{encoder}: tuned lens ({result.score})", k)


def _print_lens(data: dict[str, Any], key: str, title: str, k: int) -> None:
    """A row per input token; one layer: its top ``k`` tokens; several: a column per layer, the top few each."""
    layers = data["layers"]
    n = k if len(layers) == 1 else min(k, _PER_LAYER_CELL)
    heads = [f"L{row['layer']}" for row in layers]
    table = Table(Column("token", no_wrap=True), *heads, title=title)
    for i, token in enumerate(data["tokens"]):
        table.add_row(token, *[Text("\n".join(t["token"] for t in row["tokens"][i][key][:n])) if len(layers) > 1
                               else _top(row["tokens"][i][key], n) for row in layers])
    table.show_lines = len(layers) > 1
    out.print(table)
    if n < k:
        note(f"the top {n} of {k} per layer; --layer L shows all {k}, --json every layer's")


def _print_fit(tuned: dict[str, Any]) -> None:
    table = Table("layer", "R²", "KL tuned", "KL plain", "top-1 tuned", "top-1 plain",
                  title=f"tuned lens to layer {tuned['last_layer']}: fit on {tuned['n_held_out']} held-out of "
                        f"{tuned['n_texts']} texts")
    for f in tuned["fits"]:
        table.add_row(str(f["layer"]), f"{f['r2']:.3f}", f"{f['kl_tuned']:.3f}", f"{f['kl_plain']:.3f}",
                      f"{f['top1_tuned']:.3f}", f"{f['top1_plain']:.3f}")
    out.print(table)
    note("KL: nats from the last layer's vocabulary distribution; top-1: share of held-out tokens whose top token "
         "is the last layer's")


def _end(value: float) -> str:
    from repspace.interfaces.cli.eval import _end as end

    return end(value)


@layers_app.command("grid")
def grid_cmd(
    encoder: LensEncoder,
    task: Annotated[tuple[str, Path], typer.Option("--task", help="The task and its data: sts FILE, pairclass "
                                                                  "FILE or retrieval FOLDER.")],
    dims: Annotated[str, typer.Option(help="Prefix widths, e.g. 32,64,128,full.")] = "32,64,128,full",
    plot: Annotated[Optional[Path], typer.Option(help="Heat map PNG (default <task>-layer-grid.png).")] = None,
    pooling: Annotated[Optional[str], typer.Option(help="hf-layers pooling: mean, cls, last or max.")] = None,
    batch_size: Annotated[int, typer.Option(min=1, help="Texts per forward pass.")] = 64,
    bootstrap: Annotated[int, typer.Option(min=0, help="Resamples of each cell's 95% interval (0: none).")] = 1000,
    seed: Annotated[int, typer.Option(min=0, max=2**32 - 1, help="Seed of the bootstrap.")] = 0,
    json: Json = False,
) -> None:
    """Score every (layer, prefix width) cell in one pass (2DMSE's grid): a table, a heat map, the best cell per
    bytes-per-vector budget.

    Examples:

      repspace layers grid --encoder hf-layers:minilm --task sts stsb-en-test.csv --dims 32,64,128,full

      repspace layers grid --encoder hf-layers:minilm --task retrieval cranfield-beir --json
    """
    from repspace.workflows.layer_grid import layer_grid

    name, source = task
    with progress_bar(json) as bar:
        result = layer_grid(encoder, name, source, dims=dims, bootstrap=bootstrap, seed=seed, batch_size=batch_size,
                            plot=plot or Path(f"{name}-layer-grid.png"), progress=bar,
                            encoder_options={"pooling": pooling} if pooling else None)
    if json:
        print_json(result.to_dict())
        return
    with_ci = bool((result.ci_low == result.ci_low).any())  # NaN != NaN: no interval anywhere
    table = Table(Column("layer", no_wrap=True), *[f"{d}d" for d in result.dims], show_lines=with_ci,
                  title=f"{result.task}: {result.metric} by layer (rows) and prefix width (columns)"
                        + (" with its 95% CI" if with_ci else ""))
    for i, layer in enumerate(result.layers):
        table.add_row(f"L{layer}", *[_cell(result, i, j) for j in range(len(result.dims))])
    out.print(table)
    best = Table("bytes/vector", "layer", "dims", result.metric, *(["95% CI"] if with_ci else []),
                 title="best cell per budget")
    for b in result.best:
        ci = [] if not with_ci else ["" if b.ci_low is None else f"{b.ci_low:.4f}–{b.ci_high:.4f}"]
        best.add_row(str(b.budget), f"L{b.layer}", str(b.dims), f"{b.score:.4f}", *ci)
    out.print(best)
    note(f"heat map: {result.plot}")


def _cell(result: Any, i: int, j: int) -> Any:
    score, low, high = result.scores[i, j], result.ci_low[i, j], result.ci_high[i, j]
    if score != score:
        return ""
    return f"{score:.4f}" if low != low else Text(f"{score:.4f}\n{_end(low)}–{_end(high)}")
