"""``repspace analyze``: the structure and capacity questions of the analysis papers, asked of stored spaces.

The group and its first commands (``ricci``, ``capacity``); each later question registers its command on
:data:`analyze_app` from its own module ``analyze_<topic>.py`` (imported by
:func:`repspace.interfaces.cli.build_app`).
"""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer
from rich.table import Table

from repspace.core.errors import InputError
from repspace.interfaces.cli._app import command_group
from repspace.interfaces.cli._common import SpaceArg, note, open_store, out, print_json, progress_bar
from repspace.interfaces.cli.options import Json

analyze_app = command_group("analyze", help=(
    "Ask a space the questions of the analysis papers: the Ollivier-Ricci curvature of its kNN graph (alone, "
    "or against another space over their shared items), its near-orthogonality tolerance and capacity.\n\n"
    "Examples:\n\n"
    "  repspace analyze ricci docs -k 10 --save curvature\n\n"
    "  repspace analyze ricci old --against new --json\n\n"
    "  repspace analyze capacity docs"
))


def _summary_row(table: Table, label: str, s: dict[str, float]) -> None:
    table.add_row(label, *[f"{s[c]:.4f}" for c in ("mean", "min", "q05", "median", "q95", "max")])


def _summary_table(title: str) -> Table:
    return Table("", "mean", "min", "q05", "median", "q95", "max", title=title)


@analyze_app.command("ricci")
def ricci_cmd(
    space: SpaceArg,
    k: Annotated[int, typer.Option("-k", help="Neighbours per item of the kNN graph (symmetrised by union).")] = 10,
    alpha: Annotated[float, typer.Option(help="Idleness: the share of a node's mass that stays on it.")] = 0.5,
    exact: Annotated[Optional[bool], typer.Option("--exact/--hnsw", help="Exact or HNSW kNN graph (default: "
                                                                         "exact up to 50,000 items).")] = None,
    save: Annotated[Optional[str], typer.Option(help="Write each item's node curvature into its metadata under "
                                                     "this key.")] = None,
    against: Annotated[Optional[str], typer.Option(help="Compare with this space's graph over the shared "
                                                        "items.")] = None,
    top: Annotated[int, typer.Option(min=0, help="Items listed at each end.")] = 5,
    json: Json = False,
) -> None:
    """Ollivier-Ricci curvature of a space's kNN graph: per edge, per item, and its mean (mean_curvature).

    Examples:

      repspace analyze ricci glove -k 10

      repspace analyze ricci glove --save curvature --json

      repspace search glove --id king --where "curvature < -0.3"

      repspace analyze ricci minilm --against e5
    """
    from repspace.workflows.analyze import ricci_space, ricci_spaces

    if against is not None and save is not None:
        raise InputError("--save stores one space's curvature; it does not combine with --against")
    store = open_store(create=False)
    a = store.space(space)
    if against is not None:
        b = store.space(against)
        with progress_bar(json) as bar:
            c = ricci_spaces(a, b, k=k, alpha=alpha, exact=exact, progress=bar)
        _show_comparison(c.to_dict(top=top), json)
        return
    with progress_bar(json) as bar:
        r = ricci_space(a, k=k, alpha=alpha, exact=exact, save=save, progress=bar)
    d = r.to_dict(top=top)
    if json:
        print_json(d)
    else:
        t = _summary_table(f"{space}: {d['n']:,} items, {d['n_edges']:,} edges, k={k}, alpha={alpha}")
        _summary_row(t, "edge", d["edge_curvature"])
        _summary_row(t, "item", d["node_curvature"])
        out.print(t)
        out.print(f"mean_curvature {d['mean_curvature']:.4f}")
        for label, items in (("most negative", d["most_negative"]), ("most positive", d["most_positive"])):
            if items:
                out.print(f"{label}: " + ", ".join(f"{i['id']} ({i['curvature']:.3f})" for i in items))
    if save:
        note(f"saved the node curvature of {r.saved:,} items as metadata {save!r}")


def _show_comparison(d: dict[str, Any], json: bool) -> None:
    if json:
        print_json(d)
        return
    t = _summary_table(f"{d['a']} vs {d['b']}: {d['n_shared']:,} shared items")
    _summary_row(t, f"{d['a']} edge", d["first"]["edge_curvature"])
    _summary_row(t, f"{d['b']} edge", d["second"]["edge_curvature"])
    _summary_row(t, f"{d['a']} item", d["first"]["node_curvature"])
    _summary_row(t, f"{d['b']} item", d["second"]["node_curvature"])
    _summary_row(t, "item b − a", d["node_difference"])
    out.print(t)
    corr = d["node_correlation"]
    shown = {k: ("—" if v is None else f"{v:.4f}") for k, v in corr.items()}
    out.print(f"item curvature correlation: Pearson {shown['pearson']}, Spearman {shown['spearman']}")
    for label, items in (("largest drops", d["largest_drops"]), ("largest rises", d["largest_rises"])):
        if items:
            out.print(f"{label}: " + ", ".join(f"{i['id']} ({i['curvature']:+.3f})" for i in items))


@analyze_app.command("capacity")
def capacity_cmd(
    space: SpaceArg,
    pairs: Annotated[int, typer.Option(help="Every distinct pair up to this many, else this many sampled.")]
    = 1_000_000,
    seed: Annotated[int, typer.Option(help="Seed of the sampled pairs.")] = 0,
    json: Json = False,
) -> None:
    """Near-orthogonality tolerance ε = μ + 2σ of the pairwise cosines, and the capacity it implies.

    The capacity is the number of directions with pairwise |cos| ≤ ε that fit in the space's dimension by the
    adjusted Johnson-Lindenstrauss relation of Guha (2026); it is fitted for ε < 0.1.

    Examples:

      repspace analyze capacity glove

      repspace analyze capacity docs --pairs 200000 --json
    """
    from repspace.workflows.analyze import capacity_space

    r = capacity_space(open_store(create=False).space(space), pairs=pairs, seed=seed)
    d = r.to_dict()
    if json:
        print_json(d)
        return
    t = Table("figure", "value", title=f"{space}: {d['n']:,} items × {d['d']} "
                                        f"({'all' if d['exact'] else 'sampled'} {d['n_pairs']:,} pairs)")
    t.add_row("cosine mean μ", f"{d['cosine_mean']:.4f}")
    t.add_row("cosine std σ", f"{d['cosine_std']:.4f}")
    t.add_row("epsilon μ + 2σ", f"{d['epsilon']:.4f}")
    for q, v in d["abs_cosine_quantiles"].items():
        t.add_row(f"|cos| {q}", f"{v:.4f}")
    t.add_row("capacity (log10)", f"{d['capacity_log10']:.2f}")
    out.print(t)
    if not d["in_fitted_range"]:
        note("epsilon ≥ 0.1: beyond the range the capacity relation was fitted on (the paper calls it "
             "indeterminate)")
