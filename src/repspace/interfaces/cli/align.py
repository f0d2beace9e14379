"""``repspace align``: a map from one space into another, fitted on shared items and scored on held-out ones."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from repspace.interfaces.cli._app import app
from repspace.interfaces.cli._common import note, open_store, out, print_json, warn
from repspace.interfaces.cli.options import Json


@app.command("align")
def align_cmd(
    source: Annotated[str, typer.Argument(help="The space to map from.")],
    target: Annotated[str, typer.Argument(help="The space to map into.")],
    method: Annotated[str, typer.Option(help="procrustes, ridge (lambda by cross-validation), relative, or "
                                             "unsupervised (no pairs used).")] = "procrustes",
    pairs: Annotated[int | None, typer.Option(help="Shared items to fit on (default: all not held out).")] =
        None,
    test: Annotated[int | None, typer.Option(help="Held-out shared items to score on (default: a fifth, at "
                                                     "most 1,000).")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the split.")] = 0,
    init: Annotated[str, typer.Option(help="Initial matching of --method unsupervised: profiles (sorted "
                                           "similarity profiles) or gw (Gromov-Wasserstein).")] = "profiles",
    out_space: Annotated[str | None, typer.Option("--out", help="Store SOURCE mapped into TARGET as this new "
                                                                   "space.")] = None,
    json: Json = False,
) -> None:
    """Fit a map between two spaces on the items they share and score it on held-out pairs.

    Scores: top1 (the mapped item's nearest target is its pair), mean cosine
    and mean rank, with and without CSLS.

    Examples:

      repspace align docs-old docs-new --method procrustes --pairs 1000

      repspace align docs-new docs-old --method ridge --out docs-new-in-old

      repspace align docs-old docs-new --method unsupervised --init gw
    """
    from repspace.workflows.align import align_spaces

    r = align_spaces(open_store(create=False), source, target, method=method, pairs=pairs, test=test, seed=seed,
                     out=out_space, init=init)
    if json:
        print_json(r.to_dict())
        return
    table = Table("scoring", "top1", "mean cosine", "mean rank",
                  title=f"{source} → {target} ({method}): fit on {r.n_train:,} pairs, scored on {r.n_test:,}")
    for label, s in (("cosine", r.scores), ("csls", r.scores_csls)):
        table.add_row(label, f"{s.top1:.3f}", f"{s.mean_cosine:.3f}", f"{s.mean_rank:.1f}")
    out.print(table)
    if method == "unsupervised":
        p = r.params
        note(f"found {p['n_pairs_found']:,} pairs without being given any ({p['matching_precision']:.1%} of them "
             f"right) in {p['n_iter']} rounds; {p['n_agree']} of {p['n_restarts']} starts reached this pairing")
        for warning in p["warnings"]:
            warn(f"do not trust this map: {warning}")
    if r.out:
        note(f"stored {source} mapped into {target} as {r.out}")
