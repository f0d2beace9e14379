"""``repspace analyze similarity-ci|local-topology``: how sure a cosine comparison is, and each item's local
neighbourhood.

Each command parses its options, calls one workflow of :mod:`repspace.workflows.analyze` and prints its result
(a table, or ``--json`` with the names of docs/METRICS.md).
"""

from __future__ import annotations

from typing import Annotated, Optional

import numpy as np
import typer
from rich.table import Table

from repspace.core.errors import InputError
from repspace.interfaces.cli._common import SpaceArg, note, open_store, out, print_json, progress_bar
from repspace.interfaces.cli.analyze import analyze_app
from repspace.interfaces.cli.options import Json


def _names(text: str | None, what: str) -> list[str] | None:
    """A comma-separated list (blanks around the names dropped); an empty name is refused."""
    if text is None:
        return None
    names = [w.strip() for w in text.split(",")]
    if any(not w for w in names):
        raise InputError(f"{what} must be comma-separated names with none empty, not {text!r}")
    return names


@analyze_app.command("similarity-ci")
def similarity_ci_cmd(
    space: SpaceArg,
    a: Annotated[str, typer.Option("--a", help="Item ids (comma-separated) whose mean is the first vector.")],
    b: Annotated[str, typer.Option("--b", help="Item ids whose mean is compared with a.")],
    c: Annotated[Optional[str], typer.Option("--c", help="Item ids whose mean is compared with a too: "
                                                         "cos(a, b) vs cos(a, c).")] = None,
    by: Annotated[Optional[str], typer.Option(help="Select the sets by this metadata field's values instead of "
                                                   "ids (a word's contexts: --by word --a bank).")] = None,
    over: Annotated[str, typer.Option(help="Resample the sets' items, or the dimensions.")] = "items",
    resamples: Annotated[int, typer.Option(help="Bootstrap resamples.")] = 1000,
    level: Annotated[float, typer.Option(help="Confidence level of the percentile intervals.")] = 0.95,
    pairs: Annotated[int, typer.Option(help="Distinct pairs behind the spread-out statistics (0: none).")]
    = 200_000,
    seed: Annotated[int, typer.Option(help="Seed of the resamples and of the sampled pairs.")] = 0,
    json: Json = False,
) -> None:
    """Bootstrap intervals on cos(a, b), cos(a, c) and their difference, and how often their order flips.

    Each of a, b, c is the mean of a set of items (a word set, or a word's encodings in several contexts);
    each resample redraws every set's items. Beside them, the spread of the space's non-matching pairs:
    mean cosine, its second moment, and d times it (1 for a spread-out space).

    Examples:

      repspace analyze similarity-ci glove --a doctor,nurse,surgeon --b man,he,him --c woman,she,her

      repspace analyze similarity-ci contexts --by word --a bank --b river --c money --json
    """
    from repspace.workflows.analyze import similarity_ci_space

    if pairs < 0:
        raise InputError(f"--pairs must be ≥ 0, got {pairs}")
    r = similarity_ci_space(open_store(create=False).space(space), _names(a, "--a"), _names(b, "--b"),
                            _names(c, "--c"), by=by, over=over, resamples=resamples, level=level, seed=seed,
                            spread_pairs=pairs or None)
    d = r.to_dict()
    if json:
        print_json(d)
        return
    ci = d["ci"]
    t = Table("", "estimate", f"{level:.0%} low", f"{level:.0%} high", "std",
              title=f"{space}: sets of {', '.join(map(str, ci['sizes']))} items, {ci['resamples']} resamples "
                    f"over {ci['over']}")
    for label, key in (("cos(a, b)", "cos_ab"), ("cos(a, c)", "cos_ac"), ("difference", "difference")):
        if ci[key] is not None:
            v = ci[key]
            t.add_row(label, f"{v['estimate']:+.4f}", f"{v['low']:+.4f}", f"{v['high']:+.4f}", f"{v['std']:.4f}")
    out.print(t)
    if ci["flip_share"] is not None:
        out.print(f"order flips in {ci['flip_share']:.1%} of resamples")
    if d["spread"] is not None:
        s = d["spread"]
        out.print(f"non-matching pairs ({s['n_pairs']:,}): mean cosine {s['mean']:+.4f}, second moment "
                  f"{s['second_moment']:.4f}, d × second moment {s['d_second_moment']:.2f} (1 when spread out)")
    for name, gone in d["missing"].items():
        if gone:
            note(f"set {name}: not in the space: {', '.join(gone[:10])}{' ...' if len(gone) > 10 else ''}")


@analyze_app.command("local-topology")
def local_topology_cmd(
    space: SpaceArg,
    k: Annotated[int, typer.Option("-k", help="Neighbours per item.")] = 10,
    against: Annotated[Optional[str], typer.Option(help="The datastore searched (default: the space itself, "
                                                        "each item excluded).")] = None,
    label_field: Annotated[Optional[str], typer.Option(help="Entropy of the neighbours' values of this "
                                                            "datastore field instead of the softmax.")] = None,
    temperature: Annotated[float, typer.Option(help="Temperature of the softmax over neighbour "
                                                    "similarities.")] = 0.1,
    exact: Annotated[Optional[bool], typer.Option("--exact/--hnsw", help="Exact or HNSW kNN graph of the space "
                                                                         "(default: exact up to 50,000 "
                                                                         "items).")] = None,
    save: Annotated[Optional[str], typer.Option(help="Write PREFIX_kdist, PREFIX_mean_kdist, PREFIX_local_id "
                                                     "and PREFIX_entropy into each item's metadata.")] = None,
    keep_same_id: Annotated[bool, typer.Option("--keep-same-id", help="With --against: keep the datastore's item "
                                                                      "of an item's own id among its "
                                                                      "neighbours.")] = False,
    json: Json = False,
) -> None:
    """Per-item distance to the k-th neighbour, mean kNN distance, local intrinsic dimension (Levina-Bickel)
    and neighbourhood entropy, against the space itself or another space.

    Examples:

      repspace analyze local-topology docs -k 10 --save lt

      repspace search docs --id d42 --where "lt_local_id > 30"

      repspace analyze local-topology queries --against docs --label-field topic --json
    """
    from repspace.workflows.analyze import local_topology_space

    store = open_store(create=False)
    sp = store.space(space)
    other = None if against is None else store.space(against)
    with progress_bar(json) as bar:
        r = local_topology_space(sp, k=k, against=other, label_field=label_field, temperature=temperature,
                                 exact=exact, save=save, exclude_same_id=not keep_same_id, progress=bar)
    d = r.to_dict()
    if json:
        print_json(d)
    else:
        where = f"against {against}" if against else "against itself"
        t = Table("", "mean", "q05", "median", "q95", "max",
                  title=f"{space} {where}: {d['n']:,} items, k={k}, {d['metric']}, {d['method']}"
                        + ("" if d["recall"] is None else f" (recall {d['recall']:.3f})"))
        for f, s in d["features"].items():
            t.add_row(f, *[f"{s[c]:.4f}" for c in ("mean", "q05", "q50", "q95", "max")])
        out.print(t)
        what = (f"the softmax of neighbour similarities (τ = {temperature:g})" if d["entropy_of"] == "softmax"
                else f"the neighbours' {label_field}")
        out.print(f"entropy of {what} (nats; at most log k = {np.log(k):.4f})")
    if save:
        note(f"saved {', '.join(d['fields'])} of {r.saved:,} items as metadata")
