"""``repspace compare``: how alike two stored spaces are on the items they share, and which items moved."""

from __future__ import annotations

from typing import Annotated, Optional

import typer
from rich.markup import escape
from rich.table import Table

from repspace.cli._app import app
from repspace.cli._common import note, open_store, out, print_json


@app.command("compare")
def compare_cmd(
    a: Annotated[str, typer.Argument(help="The old (reference) space.")],
    b: Annotated[str, typer.Argument(help="The new space.")],
    measures: Annotated[Optional[str], typer.Option(help="Comma-separated measures (default: all): cka_linear, "
                                                         "cka_debiased, mutual_knn, neighbourhood_jaccard, rsa, "
                                                         "procrustes, svcca.")] = None,
    k: Annotated[int, typer.Option("-k", help="Neighbours per item for the kNN measures.")] = 10,
    changed: Annotated[int, typer.Option(help="List this many items whose neighbourhoods changed most.")] = 0,
    save: Annotated[bool, typer.Option("--save", help="Write each item's jaccard (and jaccard_vs) into its "
                                                      "metadata in both spaces.")] = False,
    exact: Annotated[Optional[bool], typer.Option("--exact/--hnsw", help="Exact or HNSW kNN graphs (default: "
                                                                          "exact up to 50,000 items).")] = None,
    json: Annotated[bool, typer.Option("--json", help="Print JSON (METRICS.md names).")] = False,
) -> None:
    """Compare two spaces over the items they share (joined on id): CKA, mutual k-NN, RSA, Procrustes, SVCCA.

    Examples:

      repspace compare docs-minilm docs-e5

      repspace compare glove glove-abtt --measures cka_linear,mutual_knn --changed 20

      repspace compare old new --save && repspace search new --id x --where "jaccard < 0.2"
    """
    from repspace.compare import MEASURES
    from repspace.comparison import compare_spaces

    store = open_store()
    names = None if measures is None else [m.strip() for m in measures.split(",") if m.strip()]
    r = compare_spaces(store.space(a), store.space(b), measures=names, k=k, changed=changed, save=save, exact=exact)
    if json:
        print_json(r.to_dict())
        return
    table = Table("measure", "value", "larger = more similar", title=f"{a} vs {b}: {r.n_shared:,} shared items "
                  f"(of {r.n_a:,} and {r.n_b:,}), k={k}")
    for key, value in r.comparison.scores().items():
        table.add_row(key, f"{value:.4f}", "yes" if MEASURES[key].larger_is_more_similar else "no (a distance)")
    out.print(table)
    for key, why in r.comparison.skipped.items():
        out.print(f"- {key}: not computed ({escape(why)})")
    if r.changed:
        moved = Table("id", "jaccard", "lost", "gained", title=f"{len(r.changed)} items whose neighbourhoods "
                                                               "changed most")
        for c in r.changed:
            moved.add_row(escape(c["id"]), f"{c['jaccard']:.3f}", escape(", ".join(c["lost"][:5])),
                          escape(", ".join(c["gained"][:5])))
        out.print(moved)
    if save:
        note(f"saved jaccard in the metadata of {r.n_shared:,} items of {a} and of {b}")
