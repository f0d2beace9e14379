"""``repspace analyze compat-head`` and ``repspace analyze doc-profile``: keeping two spaces compatible, and the
similarity profiles of a space's documents."""

from __future__ import annotations

from typing import Annotated, Optional

import typer
from rich.table import Table

from repspace.interfaces.cli._common import SpaceArg, open_store, out, print_json
from repspace.interfaces.cli.analyze import analyze_app
from repspace.interfaces.cli.options import Json


def _fmt(v: float | None, spec: str = ".4f") -> str:
    return "—" if v is None else format(v, spec)


@analyze_app.command("compat-head")
def compat_head_cmd(
    old: Annotated[str, typer.Argument(help="The old model's space (the index you have).")],
    new: Annotated[str, typer.Argument(help="The new model's space, of the same items.")],
    label_field: Annotated[str, typer.Option("--label-field", help="Metadata field of classes (in OLD).")],
    test_fraction: Annotated[float, typer.Option(help="Share of each class's items held out as queries.")] = 0.3,
    l2: Annotated[float, typer.Option(help="L2 penalty of the heads.")] = 1e-3,
    seed: Annotated[int, typer.Option(help="Seed of the held-out sample.")] = 0,
    json: Json = False,
) -> None:
    """Fit d-simplex compatibility heads (CoReS) on two spaces and report Shen et al.'s criteria before and after.

    Both heads map onto the same fixed class prototypes, so new-model queries through theirs can search the old
    index through its head. Measured on held-out items: same-label mAP of old queries (old), of new queries
    (cross) on the old gallery, and of the new model re-indexed (new); compatible = cross > old; the shares of
    relevant pairs the new query is at least as close to, and of other pairs at least as far from.

    Examples:

      repspace analyze compat-head docs-old docs-new --label-field topic

      repspace analyze compat-head docs-old docs-new --label-field topic --json
    """
    from repspace.workflows.analyze import compat_head_spaces

    store = open_store(create=False)
    r = compat_head_spaces(store.space(old), store.space(new), label_field, test_fraction=test_fraction, l2=l2,
                           seed=seed)
    d = r.to_dict()
    if json:
        print_json(d)
        return
    t = Table("", "old mAP", "cross mAP", "new mAP", "compatible", "update gain", "relevant closer",
              "irrelevant farther", title=f"{old} → {new}: {d['n_classes']} classes, heads fitted on "
                                          f"{d['n_train']:,} items, criteria on {d['n_test']:,} held out")
    for label, c in (("before (raw)", d["before"]), ("after (heads)", d["after"])):
        if c is None:
            t.add_row(label, "—", "dimensions differ", "", "", "", "", "")
            continue
        t.add_row(label, _fmt(c["old"]), _fmt(c["cross"]), _fmt(c["new"]), "yes" if c["compatible"] else "no",
                  _fmt(c["update_gain"], ".3f"), _fmt(c["relevant_closer"], ".3f"),
                  _fmt(c["irrelevant_farther"], ".3f"))
    out.print(t)


@analyze_app.command("doc-profile")
def doc_profile_cmd(
    space: SpaceArg,
    doc_field: Annotated[str, typer.Option("--doc-field", help="Metadata field naming each item's document.")],
    position_field: Annotated[str, typer.Option("--position-field", help="Metadata field of its position.")],
    doc: Annotated[Optional[list[str]], typer.Option("--doc", help="Only this document (repeat for more).")] = None,
    matrix: Annotated[bool, typer.Option("--matrix/--no-matrix", help="Include each document's similarity "
                                                                      "matrix in --json.")] = True,
    top: Annotated[int, typer.Option(min=0, help="Documents listed in the table.")] = 20,
    json: Json = False,
) -> None:
    """Document similarity profiles: successive-sentence cosines and within-document similarity matrices.

    Items are sentences: --doc-field names their document, --position-field their place in it.

    Examples:

      repspace analyze doc-profile sentences --doc-field doc --position-field pos

      repspace analyze doc-profile sentences --doc-field doc --position-field pos --doc d17 --json
    """
    from repspace.workflows.analyze import doc_profile_space

    r = doc_profile_space(open_store(create=False).space(space), doc_field, position_field, documents=doc)
    d = r.to_dict(matrix=matrix)
    if json:
        print_json(d)
        return
    t = Table("document", "sentences", "mean successive", "min successive", "mean within", "series",
              title=f"{space}: {d['n_documents']:,} documents, {d['n_sentences']:,} sentences")
    for p in d["documents"][:top]:
        series = " ".join(f"{v:.2f}" for v in p["successive"][:12]) + (" …" if len(p["successive"]) > 12 else "")
        t.add_row(p["document"], str(p["n_sentences"]), _fmt(p["mean_successive"], ".3f"),
                  _fmt(p["min_successive"], ".3f"), _fmt(p["mean_within"], ".3f"), series)
    out.print(t)
    out.print(f"mean successive {_fmt(d['mean_successive'])}, mean within {_fmt(d['mean_within'])}, mean between "
              f"documents {_fmt(d['mean_between'])} ({d['n_between_pairs']:,} sampled pairs)")
