"""``repspace interpret pursuit|attribute|match``: reading a dictionary kept by ``repspace interpret sae``."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from repspace.interfaces.cli._common import SpaceArg, note, open_store, out, print_json
from repspace.interfaces.cli.interpret import Json, interpret_app

Dictionary = Annotated[str, typer.Option("--dictionary", help="A dictionary of the space (sae-N-kK-sS, as "
                                                              "'repspace interpret sae' names it).")]


@interpret_app.command("pursuit")
def pursuit_cmd(
    space: SpaceArg,
    dictionary: Dictionary,
    k: Annotated[int | None, typer.Option("-k", help="Steps (atoms per item; default: the dictionary's k).")
                 ] = None,
    positive: Annotated[bool, typer.Option("--positive", help="Only positive codes, as the autoencoder's.")
                        ] = False,
    json: Json = False,
) -> None:
    """Encode every item by matching pursuit over the dictionary's atoms and compare its reconstruction error
    with the autoencoder's: the difference is the encoder's amortisation gap.

    Examples:

      repspace interpret pursuit glove --dictionary sae-4096-k32-s0

      repspace interpret pursuit glove --dictionary sae-256-k8-s0 -k 16 --positive --json
    """
    from repspace.workflows.dictionary_reading import pursue_dictionary

    r = pursue_dictionary(open_store(create=False).space(space), dictionary, k=k, positive=positive)
    d = r.to_dict()
    if json:
        print_json(d)
        return
    t = Table(title=f"matching pursuit over {r.dictionary} of {space} ({r.n:,} items, {r.k} steps)")
    for col in ("encoder", "FVU", "L0"):
        t.add_column(col, justify="left" if col == "encoder" else "right")
    t.add_row("matching pursuit", f"{r.fvu_pursuit:.4f}", f"{r.l0_pursuit:.2f}")
    t.add_row("autoencoder", f"{r.fvu_sae:.4f}", "")
    out.print(t)
    note("residual share after each step: " + ", ".join(f"{v:.3f}" for v in r.residual_shares))


@interpret_app.command("attribute")
def attribute_cmd(
    space: SpaceArg,
    a: Annotated[str, typer.Argument(help="One item's id.")],
    b: Annotated[str, typer.Argument(help="The other item's id.")],
    dictionary: Dictionary,
    top: Annotated[int, typer.Option(help="Latents listed (largest contributions).")] = 10,
    json: Json = False,
) -> None:
    """Which latents make two items similar: the cosine of their reconstructions split exactly over the active
    latents and the bias (the contributions sum to it).

    Examples:

      repspace interpret attribute glove king queen --dictionary sae-4096-k32-s0
    """
    from repspace.workflows.dictionary_reading import attribute_items

    r = attribute_items(open_store(create=False).space(space), dictionary, a, b)
    d = r.to_dict(top=top)
    if json:
        print_json(d)
        return
    t = Table(title=f"cos({a}, {b}) = {d['cosine']:.4f} through {r.dictionary} (bias {d['bias']:.4f})")
    for col in ("latent", "contribution", f"code {a}", f"code {b}"):
        t.add_column(col, justify="right")
    for row in d["latents"]:
        t.add_row(str(row["latent"]), f"{row['contribution']:.4f}", f"{row['code_x']:.4f}", f"{row['code_y']:.4f}")
    out.print(t)


@interpret_app.command("match")
def match_cmd(
    space_a: Annotated[str, typer.Argument(help="The space of the first dictionary.")],
    dictionary_a: Annotated[str, typer.Argument(help="Its dictionary.")],
    space_b: Annotated[str, typer.Argument(help="The space of the second dictionary (same dimension).")],
    dictionary_b: Annotated[str, typer.Argument(help="Its dictionary.")],
    threshold: Annotated[float, typer.Option(help="Cosine above which a one-to-one pair counts as shared.")
                         ] = 0.9,
    per_latent: Annotated[bool, typer.Option("--per-latent", help="With --json, every latent's match.")] = False,
    json: Json = False,
) -> None:
    """Match the latents of two dictionaries (two seeds, layers or models of one dimension) by the cosine of
    their decoder directions: each latent's best match, how many are mutual, and the one-to-one matching.

    Examples:

      repspace interpret match glove sae-1024-k16-s0 glove sae-1024-k16-s1

      repspace interpret match layer6 sae-512-k8-s0 layer7 sae-512-k8-s0 --json --per-latent
    """
    from repspace.workflows.dictionary_reading import match_dictionaries

    store = open_store(create=False)
    r = match_dictionaries(store.space(space_a), dictionary_a, store.space(space_b), dictionary_b,
                           threshold=threshold)
    d = r.to_dict(per_latent=per_latent)
    if json:
        print_json(d)
        return
    m, s = d["match"], d["one_to_one"]
    t = Table(title=f"{space_a}/{r.dictionary_a} → {space_b}/{r.dictionary_b} ({m['n']:,} latents)")
    for col in ("measure", "value"):
        t.add_column(col, justify="left" if col == "measure" else "right")
    t.add_row("best match: mean cosine", f"{m['mean_cosine']:.4f}")
    t.add_row("best match: median cosine", f"{m['median_cosine']:.4f}")
    t.add_row("mutual best matches", f"{m['share_mutual']:.3f}")
    t.add_row("one-to-one: mean cosine", f"{s['mean_cosine']:.4f}")
    t.add_row(f"one-to-one: share ≥ {threshold}", f"{s['share_matched']:.3f}")
    out.print(t)
