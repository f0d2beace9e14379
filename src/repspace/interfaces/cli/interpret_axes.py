"""``repspace interpret polar|rank-axis|concepts|decompose|transport``: bases, axes and group maps of a stored space."""

from __future__ import annotations

from typing import Annotated, Optional

import typer
from rich.table import Table

from repspace.interfaces.cli._common import SpaceArg, comma_list, note, open_store, out, print_json
from repspace.interfaces.cli.interpret import AxisScores, Json, ends_table, interpret_app, show_axis


@interpret_app.command("polar")
def polar_cmd(
    space: SpaceArg,
    axes: Annotated[list[str], typer.Option("--axis", help="An axis NAME=POS1,POS2:NEG1,NEG2 (poles: ids or "
                                                           "texts); repeat for each axis.")],
    top: Annotated[int, typer.Option(help="Items listed at each end of each axis.")] = 5,
    per_item: Annotated[bool, typer.Option("--per-item", help="With --json, every item's coordinates.")] = False,
    json: Json = False,
) -> None:
    """POLAR coordinates: every item written in the basis of several named axes, accounting for their overlap
    (X pinv(A); Mathew et al. 2020), with the basis's condition number.

    Examples:

      repspace interpret polar glove --axis "size=big,huge:small,tiny" --axis "mood=good:bad"

      repspace interpret polar docs --axis "tone=a happy story:a sad story" --json --per-item
    """
    from repspace.workflows.interpret_axes import polar_space

    r = polar_space(open_store(create=False).space(space), axes)
    d = r.to_dict(top=top, per_item=per_item)
    if json:
        print_json(d)
        return
    for ax in d["axes"]:
        out.print(ends_table(f"POLAR axis {ax['name']} in {space} ({d['n']:,} items)", ax["top"], ax["bottom"]))
    cond = "inf (dependent axes)" if d["condition"] is None else f"{d['condition']:.2f}"
    note(f"{d['m']} axes in {d['d']} dimensions; condition number {cond}")


@interpret_app.command("rank-axis")
def rank_axis_cmd(
    space: SpaceArg,
    ranked: Annotated[str, typer.Option("--ranked", help="Items in increasing order (ids or texts), "
                                                         "comma-separated, at least 2.")],
    against: Annotated[Optional[str], typer.Option(help="A numeric metadata field to test the scores against, "
                                                        "against random directions.")] = None,
    scores: AxisScores = AxisScores(),
) -> None:
    """An axis from a few items given in order (top half's mean minus bottom half's), every item scored by its
    cosine with it; the Spearman rho of the given items' scores with their order.

    Examples:

      repspace interpret rank-axis glove --ranked tiny,small,big,huge

      repspace interpret rank-axis glove --ranked cold,cool,warm,hot --against temperature --save heat
    """
    from repspace.workflows.interpret_axes import rank_axis_space

    r = rank_axis_space(open_store(create=False).space(space), comma_list(ranked), against=against, save=scores.save)
    show_axis(r, f"rank axis {' < '.join(r.ranked)} in {space}", against, scores, p99=False,
              notes=(f"Spearman rho of the ranked items' scores with their order: {r.rho_ranked:.4f}",))


@interpret_app.command("concepts")
def concepts_cmd(
    space: SpaceArg,
    concepts: Annotated[str, typer.Option("--concepts", help="The concept vocabulary: ids or texts, "
                                                             "comma-separated (each its own name).")],
    granularity: Annotated[Optional[int], typer.Option(help="Merge the concepts into this many basis vectors "
                                                            "(default: one per concept).")] = None,
    linkage: Annotated[str, typer.Option(help="How concepts merge: average, complete or single.")] = "average",
    items: Annotated[Optional[str], typer.Option(help="Only these ids, comma-separated (default: every item).")
                     ] = None,
    top: Annotated[int, typer.Option(help="Basis vectors listed per item.")] = 3,
    limit: Annotated[int, typer.Option(help="Items shown in the table (--json: all).")] = 20,
    json: Json = False,
) -> None:
    """Items re-expressed as cosines to a named concept vocabulary (a concept basis), optionally merged into
    fewer basis vectors; r2 is the share of each item in the span of the basis.

    Examples:

      repspace interpret concepts glove --concepts animal,color,food,number --items cat,red,apple

      repspace interpret concepts glove --concepts cat,dog,red,blue --granularity 2 --json
    """
    from repspace.workflows.interpret_bases import concept_space

    r = concept_space(open_store(create=False).space(space), comma_list(concepts), granularity=granularity,
                      linkage=linkage, items=None if items is None else comma_list(items))
    d = r.to_dict(top=top)
    if json:
        print_json(d)
        return
    t = Table(title=f"{space} in a basis of {d['granularity']} concepts ({d['n']:,} items, "
                    f"mean r2 {d['r2_mean']:.3f})")
    for col in ("item", "closest concepts", "r2"):
        t.add_column(col, justify="right" if col == "r2" else "left")
    for it in d["items"][:limit]:
        t.add_row(it["id"], ", ".join(it["top"]), f"{it['r2']:.3f}")
    out.print(t)


@interpret_app.command("decompose")
def decompose_cmd(
    space: Annotated[str, typer.Argument(help="A space of token states.")],
    position_field: Annotated[str, typer.Option("--position-field", help="The metadata field of each token's "
                                                                         "position.")],
    context_field: Annotated[str, typer.Option("--context-field", help="The metadata field of each token's "
                                                                       "context (its text).")],
    method: Annotated[str, typer.Option(help="means (simple group means) or ols (two-way additive fit).")
                      ] = "means",
    json: Json = False,
) -> None:
    """Split token states into positional, context and residual parts: the share of the variance each carries,
    beside the share a factor without effect would get by chance.

    Examples:

      repspace interpret decompose tokens --position-field pos --context-field doc

      repspace interpret decompose tokens --position-field pos --context-field doc --method ols --json
    """
    from repspace.workflows.interpret_bases import decompose_space

    r = decompose_space(open_store(create=False).space(space), position_field, context_field, method=method)
    d = r.to_dict()
    if json:
        print_json(d)
        return
    t = Table(title=f"variance of {space} ({d['n_tokens']:,} tokens, {d['n_positions']} positions, "
                    f"{d['n_contexts']} contexts; {method})")
    for col in ("part", "share", "by chance"):
        t.add_column(col, justify="left" if col == "part" else "right")
    t.add_row("position", f"{d['positional_share']:.4f}", f"{d['chance_positional_share']:.4f}")
    t.add_row("context", f"{d['context_share']:.4f}", f"{d['chance_context_share']:.4f}")
    t.add_row("residual", f"{d['residual_share']:.4f}", "")
    t.add_row("cross", f"{d['cross_share']:.4f}", "")
    out.print(t)


@interpret_app.command("transport")
def transport_cmd(
    space: SpaceArg,
    field: Annotated[str, typer.Option("--field", help="The metadata field of the groups.")],
    source: Annotated[str, typer.Option("--from", help="The group to move (a value of --field).")],
    target: Annotated[str, typer.Option("--to", help="The group to move it onto.")],
    out_space: Annotated[str, typer.Option("--out", help="The new space (group --from moved).")],
    dims: Annotated[int, typer.Option(help="Principal components the map acts in.")] = 10,
    reg: Annotated[float, typer.Option(help="Added to the diagonal of both groups' covariances.")] = 0.0,
    seed: Annotated[int, typer.Option(help="Seed of the held-out split of the comparison.")] = 0,
    json: Json = False,
) -> None:
    """Move one group onto another by the Gaussian optimal-transport map (its mean and covariance become the
    other's in the top principal components) and store the result as a new space; the held-out accuracy of a
    linear and a quadratic classifier of the groups after each map (none, mean direction, LEACE, transport).

    Examples:

      repspace interpret transport docs --field lang --from de --to en --out docs-de-as-en --dims 16
    """
    from repspace.workflows.transport import transport_space

    store = open_store(create=False)
    r = transport_space(store, store.space(space), field, source, target, out_space, dims=dims, reg=reg, seed=seed)
    if json:
        print_json(r.to_dict())
        return
    c = r.comparison
    t = Table(title=f"{field} {source} ({r.n_a:,}) → {target} ({r.n_b:,}) in {space}: held-out accuracy "
                    f"(majority rate {c.majority_rate:.3f})")
    for col in ("map", "linear", "quadratic", "displacement"):
        t.add_column(col, justify="left" if col == "map" else "right")
    for s in c.scores:
        t.add_row(s.method, f"{s.accuracy:.3f}", f"{s.quadratic_accuracy:.3f}", f"{s.displacement:.3f}")
    out.print(t)
    note(f"wrote {r.count:,} items to {r.out!r}: {r.n_a:,} of them moved (mean squared move {r.displacement:.4f})")
