"""``repspace interpret``: probes, semantic axes, concept erasure and sparse dictionaries over stored spaces.

The group and its first commands; :mod:`~repspace.interfaces.cli.interpret_axes` and
:mod:`~repspace.interfaces.cli.interpret_dictionary` add the others.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.table import Table

from repspace.interfaces.cli._app import command_group
from repspace.interfaces.cli._common import SpaceArg, comma_list, note, open_store, out, print_json, progress_bar
from repspace.interfaces.cli.options import Json, OptionGroup

interpret_app = command_group("interpret", help=(
    "Read a space: what a probe decodes from it (with a control task), semantic, POLAR and rank axes, "
    "concept bases, concept erasure, group transport, token-state decomposition, sparse dictionaries "
    "(matching pursuit, pair attribution, latent matching, feature universality across models, cross-layer "
    "feature flow).\n\n"
    "Examples:\n\n"
    "  repspace interpret probe docs --label-field lang\n\n"
    "  repspace interpret axis glove --pos good,excellent --neg bad,terrible --save sentiment\n\n"
    "  repspace interpret erase docs --label-field lang --out docs-no-lang\n\n"
    "  repspace interpret sae glove --latents 4096 -k 32 --html sae.html\n\n"
    "  repspace interpret attribute glove king queen --dictionary sae-4096-k32-s0"
))

#: ``--save`` of the axis commands: the metadata key their scores are written under.
SaveScores = Annotated[Optional[str], typer.Option(help="Write each item's score into its metadata under this key.")]
#: ``--top`` of the axis commands.
EndsTop = Annotated[int, typer.Option(help="Items listed at each end.")]


def ends_table(title: str, top: list[dict], bottom: list[dict], *, high: str = "highest",
               low: str = "lowest") -> Table:
    """A table of the items at both ends of an axis, side by side, with their scores."""
    t = Table(title=title)
    for col, justify in ((high, "left"), ("score", "right"), (low, "left"), ("score", "right")):
        t.add_column(col, justify=justify)
    for a, b in zip(top, bottom):
        t.add_row(a["id"], f"{a['score']:.3f}", b["id"], f"{b['score']:.3f}")
    return t


@dataclass(frozen=True)
class AxisScores(OptionGroup):
    """What becomes of an axis's scores (axis, rank-axis): saved into the metadata, listed, printed as JSON."""

    save: SaveScores = None
    top: EndsTop = 10
    json: Json = False


def show_axis(r: Any, title: str, against: str | None, scores: AxisScores, *, p99: bool, notes: tuple[str, ...] = (),
              **ends: str) -> None:
    """An axis's result: its JSON, or the table of its ends (``ends``: the columns' ``high`` and ``low``) with
    ``notes``, its significance against ``against`` (with the random directions' 99th percentile when
    ``p99``) and how many scores were saved."""
    d = r.to_dict(top=scores.top)
    if scores.json:
        print_json(d)
        return
    out.print(ends_table(f"{title} ({d['n']:,} items)", d["top"], d["bottom"], **ends))
    for line in notes:
        note(line)
    if r.significance is not None:
        s = r.significance
        tail = f", 99th {s.random_p99:.4f}" if p99 else ""
        note(f"Spearman rho with {against!r}: {s.rho:.4f}; random directions' |rho| 95th percentile "
             f"{s.random_p95:.4f}{tail}; p = {s.p_value:.4g}")
    if scores.save:
        note(f"saved {r.saved:,} scores as metadata {scores.save!r}")


@interpret_app.command("probe")
def probe_cmd(
    space: SpaceArg,
    label_field: Annotated[str, typer.Option("--label-field", help="The metadata field to decode.")],
    kind: Annotated[str, typer.Option(help="logistic (classes), ridge (numbers) or sparse (k-sparse: which "
                                           "dimensions carry it).")] = "logistic",
    k: Annotated[Optional[int], typer.Option("-k", help="Dimensions of a sparse probe (default: a sweep).")] = None,
    cv: Annotated[int, typer.Option(help="Cross-validation folds.")] = 5,
    control: Annotated[str, typer.Option(help="Control task: permute (labels shuffled) or random-type (each id "
                                              "a random label).")] = "permute",
    seed: Annotated[int, typer.Option(help="Seed of the folds and the control.")] = 0,
    json: Json = False,
) -> None:
    """Decode a metadata field from the vectors, cross-validated, beside a control task: the score, the
    control's score and the selectivity (their difference). Items without the field are left out.

    Examples:

      repspace interpret probe docs --label-field lang

      repspace interpret probe words --label-field length --kind ridge --json

      repspace interpret probe docs --label-field kind --kind sparse
    """
    from repspace.workflows.interpret import probe_space

    r = probe_space(open_store(create=False).space(space), label_field, kind=kind, k=k, cv=cv, control=control,
                    seed=seed)
    if json:
        print_json({"space": space, "label_field": label_field, **r.to_dict()})
        return
    t = Table(title=f"{kind} probe of {label_field!r} in {space} ({r.n:,} items, {cv} folds)")
    for col in ("measure", "value"):
        t.add_column(col)
    t.add_row(r.metric, f"{r.score:.4f} ± {r.score_std:.4f}")
    t.add_row(f"control ({r.control})", f"{r.control_score:.4f}")
    t.add_row("selectivity", f"{r.selectivity:.4f}")
    if r.chance is not None:
        t.add_row("majority rate", f"{r.chance:.4f}")
    if r.k is not None:
        t.add_row("k (dimensions)", f"{r.k}: {', '.join(str(d) for d in r.dimensions[:16])}")
    out.print(t)


@interpret_app.command("axis")
def axis_cmd(
    space: SpaceArg,
    pos: Annotated[str, typer.Option("--pos", help="The positive pole: ids or texts, comma-separated.")],
    neg: Annotated[str, typer.Option("--neg", help="The negative pole: ids or texts, comma-separated.")],
    expand: Annotated[Optional[int], typer.Option(help="Add each pole's N nearest items (An et al. 2018).")
                      ] = None,
    against: Annotated[Optional[str], typer.Option(help="A numeric metadata field to correlate the scores with, "
                                                        "against random directions.")] = None,
    scores: AxisScores = AxisScores(),
) -> None:
    """A semantic axis (SemAxis) from two poles, every item scored by its cosine with it.

    Examples:

      repspace interpret axis glove --pos good --neg bad

      repspace interpret axis glove --pos good,excellent --neg bad,awful --against valence --json

      repspace interpret axis docs --pos "a happy story" --neg "a sad story" --save mood
    """
    from repspace.workflows.interpret import axis_space

    r = axis_space(open_store(create=False).space(space), comma_list(pos), comma_list(neg), expand=expand,
                   against=against, save=scores.save)
    show_axis(r, f"axis {pos} <-> {neg} in {space}", against, scores, p99=True, high="most positive",
              low="most negative")


@interpret_app.command("erase")
def erase_cmd(
    space: SpaceArg,
    label_field: Annotated[str, typer.Option("--label-field", help="The concept to erase (a metadata field of "
                                                                   "classes).")],
    out_space: Annotated[str, typer.Option("--out", help="The new, derived space.")],
    json: Json = False,
) -> None:
    """Erase a concept with LEACE (no linear classifier can recover it) into a derived space; text queries go
    through the same eraser.

    Examples:

      repspace interpret erase docs --label-field lang --out docs-no-lang

      repspace interpret probe docs-no-lang --label-field lang      # down to the majority rate
    """
    from repspace.workflows.interpret import erase_space, probe_space

    store = open_store(create=False)
    src = store.space(space)
    new = erase_space(store, src, label_field, out_space)
    after = probe_space(new, label_field)
    result = {"space": space, "out": new.name, "label_field": label_field, "count": new.info().count,
              "probe_after": {"score": after.score, "majority": after.chance, "control_score": after.control_score}}
    if json:
        print_json(result)
        return
    note(f"wrote {new.info().count:,} items to {new.name!r}; a logistic probe of {label_field!r} there scores "
         f"{after.score:.4f} (majority rate {after.chance:.4f})")


@interpret_app.command("sae")
def sae_cmd(
    space: SpaceArg,
    latents: Annotated[int, typer.Option("--latents", help="Dictionary size (latents).")],
    k: Annotated[int, typer.Option("-k", help="Active latents per item (at most --latents).")],
    epochs: Annotated[Optional[int], typer.Option(help="Passes over the training items (default: 8, more for a "
                                                       "small space, so that training takes 300 steps).")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the hold-out, the initial dictionary and the batches.")] = 0,
    holdout: Annotated[float, typer.Option(help="Share of the items held out of training and measured apart.")
                       ] = 0.1,
    save_top: Annotated[Optional[str], typer.Option("--save-top", help="Write each item's top active latents "
                                                    "([[latent, activation], ...], at most 8) into its metadata "
                                                    "under this key.")] = None,
    html: Annotated[Optional[Path], typer.Option(help="Also write a self-contained HTML report to this file.")
                    ] = None,
    multik: Annotated[int, typer.Option("--multik", help="CSR's Multi-TopK term: the top N latents (k <= N <= "
                                        "--latents, CSR: 4k) reconstruct each item too, weighted 1/8, for queries "
                                        "coded with more than k latents (derive sae-codes --query-k); 0: off.")] = 0,
    json: Json = False,
) -> None:
    """Fit a sparse dictionary: a top-k sparse autoencoder on the space's vectors (cosine spaces: normalised
    rows), measured on held-out items (FVU, NMSE, L0, dead latents), with its most frequent latents and their
    top items. The model is kept beside the store (STORE.indexes/<uid>/dictionaries/sae-N-kK-sS.npz) while the
    space's vectors stay as they are.

    Examples:

      repspace interpret sae glove --latents 4096 -k 32

      repspace interpret sae docs --latents 1024 -k 16 --save-top sae --html sae.html

      repspace interpret sae docs --latents 256 -k 8 --epochs 20 --json

      repspace interpret sae sentences --latents 8192 -k 128 --multik 512
    """
    from repspace.workflows.dictionary import fit_dictionary

    sp = open_store(create=False).space(space)
    with progress_bar(json) as bar:
        r = fit_dictionary(sp, latents, k, epochs=epochs, seed=seed, holdout=holdout, save_top=save_top,
                           progress=bar, multik=multik)
    if html is not None:
        from repspace.interfaces.reports import write_dictionary_html

        write_dictionary_html(r, html)
    if json:
        print_json(r.to_dict())
    else:
        d = r.to_dict()
        t = Table(title=f"dictionary {r.name} of {space} ({r.n:,} items: {r.n_train:,} trained on, "
                        f"{r.n_heldout:,} held out; {r.epochs} epochs, {r.seconds:.1f} s)")
        for col in ("measure", "train", "held out"):
            t.add_column(col, justify="left" if col == "measure" else "right")
        for label, key in (("FVU", "fvu"), ("NMSE", "nmse"), ("L0", "l0"), ("dead fraction", "dead_fraction")):
            t.add_row(label, _fmt(d[f"{key}_train"]), _fmt(d[f"{key}_heldout"]))
        out.print(t)
        lat = Table(title="most frequent latents")
        for col in ("latent", "density", "top items"):
            lat.add_column(col, justify="left" if col == "top items" else "right")
        for s in r.latents[:10]:
            lat.add_row(str(s.latent), f"{s.density:.4f}", ", ".join(i for i, _, _ in s.items[:6]))
        out.print(lat)
    note(f"dictionary: {r.path}")
    if save_top:
        note(f"saved the top latents of {r.saved:,} items as metadata {save_top!r}")
    if html is not None:
        note(f"report: {html}")


def _fmt(value: Optional[float]) -> str:
    return "—" if value is None else f"{value:.4f}"
