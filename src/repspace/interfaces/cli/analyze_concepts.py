"""``repspace analyze hierarchy|circular|topics|parallelograms``: the structure of concepts in a stored space.

Each command parses its options, calls one workflow of :mod:`repspace.workflows.analyze` and prints its result
(a table, or ``--json`` with the names of docs/METRICS.md).
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer
from rich.table import Table

from repspace.core.errors import InputError
from repspace.interfaces.cli._common import SpaceArg, note, open_store, out, print_json
from repspace.interfaces.cli.analyze import analyze_app
from repspace.interfaces.cli.options import Json

Seed = Annotated[int, typer.Option(help="Seed of the random baseline.")]


def _words(text: str, what: str) -> list[str]:
    """A comma-separated word list (blanks around the words dropped); an empty word is refused."""
    words = [w.strip() for w in text.split(",")]
    if not words or any(not w for w in words):
        raise InputError(f"{what} must be comma-separated words with none empty, not {text!r}")
    return words


@analyze_app.command("hierarchy")
def hierarchy_cmd(
    space: SpaceArg,
    root: Annotated[str, typer.Option(help="The WordNet noun synset at the top of the hierarchy.")]
    = "entity.n.01",
    depth: Annotated[int, typer.Option(help="Hyponym steps below the root.")] = 4,
    min_words: Annotated[int, typer.Option(help="Fewest words of the space a concept needs.")] = 20,
    shuffles: Annotated[int, typer.Option(help="Shuffles of the space's rows behind the baseline.")] = 5,
    whiten: Annotated[bool, typer.Option("--whiten/--no-whiten", help="Whiten the space first (the causal "
                                                                      "inner product).")] = True,
    top: Annotated[int, typer.Option(min=0, help="Pairs listed at each end.")] = 5,
    seed: Seed = 0,
    json: Json = False,
) -> None:
    """Hierarchical orthogonality (Park et al.): cos(child − parent, parent) per WordNet pair, vs shuffled rows.

    Concept vectors are LDA-style estimates from each synset's words (its lemmas and its hyponyms') in the
    whitened space; 0 is orthogonal.

    Examples:

      repspace analyze hierarchy glove

      repspace analyze hierarchy glove --root animal.n.01 --depth 3 --min-words 10 --json
    """
    from repspace.workflows.analyze import hierarchy_space

    r = hierarchy_space(open_store(create=False).space(space), root=root, depth=depth, min_words=min_words,
                        whiten=whiten, shuffles=shuffles, seed=seed)
    d = r.to_dict()
    if json:
        print_json(d)
        return
    b = d["baseline"]
    t = Table("", "mean cos(child − parent, parent)", "mean |cos|", "mean cos(child, parent)",
              title=f"{space}: {d['n_pairs']} pairs of {d['n_concepts']} concepts under {root} (depth {depth})")
    t.add_row("WordNet", f"{d['mean_cosine']:+.4f}", f"{d['mean_abs_cosine']:.4f}",
              f"{d['mean_parent_child_cosine']:+.4f}")
    if b["shuffles"]:
        t.add_row(f"shuffled ×{b['shuffles']}", f"{b['mean_cosine']:+.4f}", f"{b['mean_abs_cosine']:.4f}",
                  f"{b['mean_parent_child_cosine']:+.4f}")
    out.print(t)
    ranked = sorted(d["pairs"], key=lambda p: abs(p["cosine"]))
    for label, pairs in (("most orthogonal", ranked[:top]), ("least orthogonal", ranked[::-1][:top])):
        if pairs and top:
            out.print(f"{label}: " + ", ".join(f"{p['child']} < {p['parent']} ({p['cosine']:+.3f})" for p in pairs))


@analyze_app.command("circular")
def circular_cmd(
    space: SpaceArg,
    items: Annotated[str, typer.Option(help="The family in its cyclic order, comma-separated ids.")],
    permutations: Annotated[int, typer.Option(help="Random orderings behind the p-value.")] = 1000,
    seed: Seed = 0,
    json: Json = False,
) -> None:
    """Circular features (Engels et al.): a cyclic family on its top two principal directions, in order?

    Reports the resultant length R of the items' angles against the evenly spaced cycle (1: a circle in order),
    its p-value against random orderings, and each item's angle.

    Examples:

      repspace analyze circular glove --items monday,tuesday,wednesday,thursday,friday,saturday,sunday

      repspace analyze circular glove --items spring,summer,autumn,winter --permutations 5000 --json
    """
    from repspace.workflows.analyze import circular_space

    r = circular_space(open_store(create=False).space(space), _words(items, "--items"), permutations=permutations,
                       seed=seed)
    d = r.to_dict()
    if json:
        print_json(d)
        return
    t = Table("item", "angle°", "error°", title=f"{space}: {d['n']} items, top-2 variance "
                                                 f"{d['explained_variance']:.3f}")
    for it in d["items"]:
        t.add_row(it["id"], f"{it['angle']:.1f}", f"{it['angle_error']:+.1f}")
    out.print(t)
    base = d["baseline"]
    shown = "" if base["mean"] is None else f" (random orderings: mean {base['mean']:.3f}, q95 {base['q95']:.3f})"
    out.print(f"resultant R {d['resultant']:.4f}{shown}, p = {d['p_value']:.4f}; order agreement "
              f"{d['order_agreement']:.3f}, radius cv {d['radius_cv']:.3f}")


@analyze_app.command("topics")
def topics_cmd(
    space: SpaceArg,
    label_field: Annotated[str, typer.Option("--label-field", help="The metadata field that names each item's "
                                                                   "topic.")],
    normalize: Annotated[bool, typer.Option("--normalize", help="Cosines instead of inner products.")] = False,
    center: Annotated[bool, typer.Option("--center", help="Subtract the items' mean first.")] = False,
    top: Annotated[int, typer.Option(min=0, help="Topics listed (largest first).")] = 20,
    json: Json = False,
) -> None:
    """Topic geometry: mean inner product of pairs within a topic vs across topics.

    Examples:

      repspace analyze topics docs --label-field topic

      repspace analyze topics docs --label-field lang --normalize --center --json
    """
    from repspace.workflows.analyze import topics_space

    d = topics_space(open_store(create=False).space(space), label_field, normalize=normalize,
                     center=center).to_dict()
    if json:
        print_json(d)
        return
    t = Table("topic", "items", "within", "across", title=f"{space}: {d['n']:,} items in {d['n_topics']} topics "
                                                          f"of {label_field!r}")
    for row in d["topics"][:top]:
        t.add_row(row["topic"], f"{row['n']:,}", "—" if row["within"] is None else f"{row['within']:.4f}",
                  f"{row['across']:.4f}")
    out.print(t)
    out.print(f"within {d['within']:.4f}, across {d['across']:.4f}, separation {d['separation']:+.4f} "
              f"(all pairs {d['all_pairs']:.4f})")


@analyze_app.command("parallelograms")
def parallelograms_cmd(
    space: SpaceArg,
    quad: Annotated[Optional[list[str]], typer.Option(help="A quadruple a,b,c,d (a : b :: c : d); repeat the "
                                                           "option, at least twice.")] = None,
    distractors: Annotated[int, typer.Option(help="Distractor directions projected out.")] = 2,
    draws: Annotated[int, typer.Option(help="Random projections behind the baseline.")] = 20,
    seed: Seed = 0,
    json: Json = False,
) -> None:
    """Concept-crystal parallelograms: residual of a : b :: c : d before and after projecting out distractors.

    The distractors are LDA's least discriminant directions of the other quadruples' difference vectors; the
    baseline projects out as many random directions.

    Examples:

      repspace analyze parallelograms glove --quad man,woman,king,queen --quad france,paris,italy,rome

      repspace analyze parallelograms glove --distractors 5 --quad big,bigger,small,smaller --quad a,b,c,d
    """
    from repspace.workflows.analyze import parallelograms_space

    quads = [_words(q, "--quad") for q in quad or []]
    if len(quads) < 2:
        raise InputError(f"give at least 2 quadruples (--quad a,b,c,d, repeated), got {len(quads)}")
    d = parallelograms_space(open_store(create=False).space(space), quads, distractors=distractors, draws=draws,
                             seed=seed).to_dict()
    if json:
        print_json(d)
        return
    t = Table("a : b :: c : d", "before", "after", "random", title=f"{space}: parallelogram residual, "
                                                                   f"{distractors} directions projected out")
    for row in d["quads"]:
        a, b, c, e = row["quad"]
        t.add_row(f"{a} : {b} :: {c} : {e}", f"{row['before']:.4f}", f"{row['after']:.4f}", f"{row['random']:.4f}")
    t.add_row("mean", f"{d['mean_before']:.4f}", f"{d['mean_after']:.4f}", f"{d['mean_random']:.4f}")
    out.print(t)
    note("residual ‖(b − a) − (d − c)‖ / (‖b − a‖ + ‖d − c‖): 0 is a parallelogram; distractors fitted on the "
         "other quadruples")
