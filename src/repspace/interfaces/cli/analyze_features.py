"""``repspace analyze ideal-words|feature-audit|feature-norms|simplex``: how known features and categories sit in a
space.

Each command parses its options, calls one workflow of :mod:`repspace.workflows.analyze` and prints its result
(a table, or ``--json`` with the names of docs/METRICS.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table

from repspace.core.errors import InputError
from repspace.interfaces.cli._common import SpaceArg, note, open_store, out, print_json
from repspace.interfaces.cli.analyze import analyze_app
from repspace.interfaces.cli.options import Json

Seed = Annotated[int, typer.Option(help="Seed of the cross-validation split.")]
METHOD_LABELS = {"ideal_words": "ideal words (c + a_i + o_j)", "mean": "mean of the other cells",
                 "object": "same object's other cells", "attribute": "same attribute's other cells"}


def _list(text: str | None, what: str) -> list[str]:
    """A comma-separated list (blanks around the names dropped); an empty name is refused."""
    words = [w.strip() for w in (text or "").split(",")]
    if not words or any(not w for w in words):
        raise InputError(f"{what} must be comma-separated names with none empty, not {text!r}")
    return words


@analyze_app.command("ideal-words")
def ideal_words_cmd(
    space: Annotated[Optional[str], typer.Argument(help="The space (omit with --encoder).")] = None,
    attributes: Annotated[Optional[str], typer.Option(help="The grid's rows, comma-separated (red,green,...).")]
    = None,
    objects: Annotated[Optional[str], typer.Option(help="The grid's columns, comma-separated (car,cup,...).")]
    = None,
    template: Annotated[str, typer.Option(help="A cell's id or text from its attribute and object.")]
    = "{attribute} {object}",
    row: Annotated[Optional[list[str]], typer.Option(help="Instead of --attributes/--objects: one row of the grid "
                                                          "as comma-separated ids; repeat per attribute.")] = None,
    encoder: Annotated[Optional[str], typer.Option(help="Encode the cell texts with this encoder (minilm, "
                                                        "static, ...) instead of reading a space.")] = None,
    normalize: Annotated[bool, typer.Option("--normalize/--no-normalize", help="Unit-length cells first.")]
    = True,
    top: Annotated[int, typer.Option(min=0, help="Worst-predicted cells listed.")] = 5,
    json: Json = False,
) -> None:
    """Ideal words (Trager et al.): an attribute × object grid as c + a_i + o_j, each cell predicted from the others.

    Reports the variance the additive fit explains and, per left-out cell, the cosine of its prediction and the
    rank of the true cell among all cells, beside predicting it by the mean of the other cells.

    Examples:

      repspace analyze ideal-words --encoder minilm --attributes red,green,blue --objects car,cup,hat

      repspace analyze ideal-words glove --row walk,walked,walking --row go,went,going --row see,saw,seeing
    """
    from repspace.workflows.analyze import ideal_words_encoder, ideal_words_grid, ideal_words_space

    if row and (attributes or objects or encoder):
        raise InputError("give the grid as --row lists of ids, or as --attributes and --objects, not both")
    if encoder is not None and space is not None:
        raise InputError("give a space or --encoder, not both")
    if row:
        if space is None:
            raise InputError("--row names ids of a space: give the space")
        r = ideal_words_grid(open_store(create=False).space(space), [_list(x, "--row") for x in row],
                             normalize=normalize)
    else:
        if attributes is None or objects is None:
            raise InputError("give --attributes and --objects (or the grid as --row lists of ids)")
        attrs, objs = _list(attributes, "--attributes"), _list(objects, "--objects")
        if encoder is not None:
            r = ideal_words_encoder(encoder, attrs, objs, template=template, normalize=normalize)
        elif space is None:
            raise InputError("give a space whose ids are the cells, or --encoder to encode them")
        else:
            r = ideal_words_space(open_store(create=False).space(space), attrs, objs, template=template,
                                  normalize=normalize)
    d = r.to_dict()
    if json:
        print_json(d)
        return
    t = Table("prediction of a left-out cell", "mean cosine", "mean rank", "top-1",
              title=f"{d['source']}: {d['n_attributes']} × {d['n_objects']} grid, additive fit explains "
                    f"{d['explained_variance']:.3f} of its variance")
    for name, stats in d["held_out"].items():
        t.add_row(METHOD_LABELS[name], f"{stats['mean_cosine']:.4f}", f"{stats['mean_rank']:.2f}",
                  f"{stats['top1']:.3f}")
    out.print(t)
    worst = sorted(d["cells"], key=lambda c: (-c["rank"], c["cosine"]))[:top]
    if worst:
        out.print("worst cells: " + ", ".join(f"{c['attribute']} × {c['object']} (rank {c['rank']}, "
                                              f"cos {c['cosine']:.3f})" for c in worst))
    note(f"rank among all {d['n_cells']} cells by cosine to the prediction (1 best)")


@analyze_app.command("feature-audit")
def feature_audit_cmd(
    space: SpaceArg,
    feature: Annotated[Optional[list[str]], typer.Option(help="A metadata field; repeat the option.")] = None,
    categorical: Annotated[Optional[list[str]], typer.Option(help="A numeric field read as classes; repeat.")]
    = None,
    json: Json = False,
) -> None:
    """Representation strength: the share of the space's variance each metadata field explains on its own.

    One least-squares regression of the vectors per field (numbers one column, text and booleans one-hot);
    R² beside its chance level p/(n − 1).

    Examples:

      repspace analyze feature-audit docs --feature lang --feature length

      repspace analyze feature-audit words --feature pos --feature cluster --categorical cluster --json
    """
    from repspace.workflows.analyze import feature_audit_space

    if not feature:
        raise InputError("name at least one metadata field with --feature F")
    d = feature_audit_space(open_store(create=False).space(space), feature, categorical=categorical or ()
                            ).to_dict()
    if json:
        print_json(d)
        return
    t = Table("feature", "kind", "items", "levels", "R²", "adjusted R²", "chance",
              title=f"{space}: variance explained per feature ({d['dim']} dimensions)")
    for f in d["features"]:
        t.add_row(f["feature"], f["kind"], f"{f['n']:,}", "—" if f["levels"] is None else str(f["levels"]),
                  f"{f['r2']:.4f}", "—" if f["adjusted_r2"] is None else f"{f['adjusted_r2']:.4f}",
                  f"{f['chance_r2']:.4f}")
    out.print(t)


@analyze_app.command("feature-norms")
def feature_norms_cmd(
    space: SpaceArg,
    norms: Annotated[Path, typer.Option(help="CSV with a header: a word column and one numeric column per norm.")],
    word_column: Annotated[Optional[str], typer.Option(help="The column of words (default the first).")] = None,
    components: Annotated[int, typer.Option(help="PLS latent components.")] = 10,
    folds: Annotated[int, typer.Option(help="Cross-validation folds.")] = 5,
    top: Annotated[int, typer.Option(min=0, help="Norms listed at each end.")] = 10,
    seed: Seed = 0,
    json: Json = False,
) -> None:
    """Feature-norm prediction: each human norm from the word vectors, PLSR beside ridge, cross-validated R².

    Examples:

      repspace analyze feature-norms glove --norms binder.csv

      repspace analyze feature-norms glove --norms mcrae.csv --word-column concept --components 20 --json
    """
    from repspace.workflows.analyze import feature_norms_space

    d = feature_norms_space(open_store(create=False).space(space), norms, word_column=word_column,
                            components=components, folds=folds, seed=seed).to_dict()
    if json:
        print_json(d)
        return
    ranked = sorted(d["norms"], key=lambda s: -max(s["pls_r2"], s["ridge_r2"]))
    shown = ranked if len(ranked) <= 2 * top else ranked[:top] + ranked[-top:]
    t = Table("norm", "PLSR R²", "ridge R²", title=f"{space}: {d['n_norms']} norms of {d['n']} words "
                                                   f"({d['missing']} of {d['words']} not in the space), "
                                                   f"{d['folds']}-fold")
    for s in shown:
        t.add_row(s["norm"], f"{s['pls_r2']:.4f}", f"{s['ridge_r2']:.4f}")
    t.add_row("mean", f"{d['mean_pls_r2']:.4f}", f"{d['mean_ridge_r2']:.4f}")
    out.print(t)
    note(f"PLSR with {d['components']} components is better on {d['pls_wins']} of {d['n_norms']} norms")


@analyze_app.command("simplex")
def simplex_cmd(
    space: SpaceArg,
    synsets: Annotated[str, typer.Option(help="Sibling WordNet noun synsets, comma-separated.")]
    = "mammal.n.01,bird.n.01,fish.n.01,reptile.n.01",
    folds: Annotated[int, typer.Option(help="Folds of the held-out membership test.")] = 5,
    whiten: Annotated[bool, typer.Option("--whiten/--no-whiten", help="Whiten the space first (the causal "
                                                                      "inner product).")] = True,
    seed: Seed = 0,
    json: Json = False,
) -> None:
    """Categorical concepts as simplices (Park et al.): k sibling categories' vectors, affinely independent?

    Concept vectors are LDA-style estimates from each synset's words (its lemmas and its hyponyms') in the
    whitened space; held-out words go to the nearest vertex.

    Examples:

      repspace analyze simplex glove

      repspace analyze simplex glove --synsets dog.n.01,cat.n.01,horse.n.01 --folds 3 --json
    """
    from repspace.workflows.analyze import simplex_space

    d = simplex_space(open_store(create=False).space(space), _list(synsets, "--synsets"), whiten=whiten,
                      folds=folds, seed=seed).to_dict()
    if json:
        print_json(d)
        return
    t = Table("category", "words", title=f"{space}: {d['k']} categories ({d['shared']} shared words left out)")
    for c, n in zip(d["categories"], d["sizes"]):
        t.add_row(c, f"{n:,}")
    out.print(t)
    cond = "—" if d["condition"] is None else f"{d['condition']:.2f}"
    out.print(f"affinely independent: {'yes' if d['affinely_independent'] else 'no'} (rank {d['rank']} of "
              f"{d['k'] - 1}); volume {d['volume']:.4g}, condition {cond}, regularity {d['regularity']:.3f}")
    out.print(f"held-out nearest vertex {d['accuracy']:.3f} (balanced {d['balanced_accuracy']:.3f}), nearest mean "
              f"{d['centroid_accuracy']:.3f} (balanced {d['centroid_balanced_accuracy']:.3f}), chance "
              f"{d['chance']:.3f} (balanced {1 / d['k']:.3f}), {d['folds']}-fold")
