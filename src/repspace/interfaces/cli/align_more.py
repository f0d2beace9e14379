"""``repspace align-anchors|align-discover|align-subspace|text-to-concept``: more ways to compare and join two spaces.

Beside ``repspace align`` (one command, which takes SOURCE TARGET itself, so it cannot also be a group): each
command parses its options, calls one workflow of the align capability and prints its result (a table, or
``--json`` with the names of docs/METRICS.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import numpy as np
import typer
from rich.table import Table

from repspace.core.errors import InputError
from repspace.interfaces.cli._app import app
from repspace.interfaces.cli._common import comma_list, note, open_store, out, print_json, progress_bar
from repspace.interfaces.cli.options import Json

Source = Annotated[str, typer.Argument(help="The space to map from.")]
Target = Annotated[str, typer.Argument(help="The space to map into.")]
Seed = Annotated[int, typer.Option(help="Seed of the split.")]


def _ints(text: str, what: str) -> list[int]:
    try:
        values = [int(x) for x in comma_list(text)]
    except ValueError:
        raise InputError(f"{what} must be comma-separated positive integers, not {text!r}") from None
    if not values:
        raise InputError(f"{what} must name at least one integer")
    return values


def _directions(path: Path | None, what: str) -> np.ndarray | None:
    if path is None:
        return None
    try:
        arr = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise InputError(f"{what}: cannot read {path} as a .npy array ({e})") from None
    return np.asarray(arr)


@app.command("align-anchors")
def align_anchors_cmd(
    source: Source,
    target: Target,
    seed_anchors: Annotated[int, typer.Option(help="Shared items drawn at random as the seed anchors.")] = 10,
    seed_ids: Annotated[Optional[str], typer.Option(help="The seed anchors by id, comma-separated (instead of "
                                                         "--seed-anchors).")] = None,
    grow: Annotated[int, typer.Option(help="Anchors to add at most; seed + grow must reach the smaller "
                                           "dimension.")] = 50,
    candidates: Annotated[Optional[int], typer.Option(help="Shared items that may become anchors (default: up to "
                                                           "2,000).")] = None,
    fit: Annotated[Optional[int], typer.Option(help="Items whose agreement the growth raises (default: a fifth, "
                                                    "at most 1,000).")] = None,
    test: Annotated[Optional[int], typer.Option(help="Held-out items to judge on (default: a fifth, at most "
                                                     "1,000).")] = None,
    center: Annotated[bool, typer.Option("--center/--no-center", help="Centre each relative vector (Pearson "
                                                                      "profiles).")] = True,
    objective: Annotated[str, typer.Option(help="gap (agreement with the partner minus the mean agreement with "
                                                "every target) or agreement.")] = "gap",
    seed: Seed = 0,
    json: Json = False,
) -> None:
    """Grow a seed set of parallel anchors for relative representations (greedy forward selection).

    Agreement: the mean cosine between an item's two relative vectors (cosines to the anchors in each
    space); gap: that minus the mean cosine between any item's source and any item's target vector. Judged
    on held-out items with the seed alone, the grown set, and the seed plus as many random candidates.

    Examples:

      repspace align-anchors glove minilm-words --seed-anchors 10 --grow 50

      repspace align-anchors a b --seed-ids cat,dog,car --grow 60 --json
    """
    from repspace.workflows.align_anchors import grow_space_anchors

    ids = comma_list(seed_ids) if seed_ids is not None else None
    with progress_bar(json) as bar:
        r = grow_space_anchors(open_store(create=False), source, target, seed_anchors=seed_anchors, seed_ids=ids,
                               grow=grow, candidates=candidates, fit=fit, test=test, center=center,
                               objective=objective, seed=seed, progress=bar)
    d = r.to_dict()
    if json:
        print_json(d)
        return
    t = Table("anchors", "count", "agreement (held out)", "gap (held out)", "top1", "mean rank",
              title=f"{source} ↔ {target}: {d['n_added']} anchors grown from {d['n_seed']} "
                    f"(fit on {d['n_fit']:,}, judged on {d['n_test']:,})")
    counts = {"before": d["n_seed"], "after": d["n_seed"] + d["n_added"], "random": d["n_seed"] + d["n_added"]}
    for name, label in (("before", "seed"), ("after", "grown"), ("random", "seed + random")):
        s = d["retrieval"][name]
        t.add_row(label, str(counts[name]), f"{d['test']['agreement'][name]:.4f}", f"{d['test']['gap'][name]:.4f}",
                  f"{s['top1']:.3f}", f"{s['mean_rank']:.1f}")
    out.print(t)
    note(f"{objective} on the fitting items: {d['fit']['before']:.4f} → {d['fit']['after']:.4f}"
         + ("; stopped early: no candidate raised it" if d["stopped_early"] else ""))


@app.command("align-discover")
def align_discover_cmd(
    source: Source,
    target: Target,
    seed_anchors: Annotated[int, typer.Option(help="Shared items drawn at random as the seed anchors.")] = 10,
    seed_ids: Annotated[Optional[str], typer.Option(help="The seed anchors by id, comma-separated (instead of "
                                                         "--seed-anchors).")] = None,
    rounds: Annotated[int, typer.Option(help="Rounds of discovery.")] = 3,
    per_round: Annotated[int, typer.Option(help="Pairs adopted per round at most.")] = 50,
    candidates: Annotated[Optional[int], typer.Option(help="Shared items given unpaired (default: up to "
                                                           "2,000).")] = None,
    test: Annotated[Optional[int], typer.Option(help="Held-out items to judge on (default: a fifth, at most "
                                                     "1,000).")] = None,
    center: Annotated[bool, typer.Option("--center/--no-center", help="Centre each relative vector.")] = True,
    seed: Seed = 0,
    json: Json = False,
) -> None:
    """Discover anchor pairs among shared items given without their pairing, from a seed (bootstrapping).

    Each round pairs the candidates that are mutual nearest neighbours in the relative space of the anchors
    known so far. The ids tell how many found pairs are right (precision); held-out items judge the seed
    alone, the seed plus the found pairs, and the seed plus the right partners of the same items (oracle).

    Examples:

      repspace align-discover glove minilm-words --seed-anchors 20 --rounds 3 --per-round 50
    """
    from repspace.workflows.align_anchors import discover_space_anchors

    ids = comma_list(seed_ids) if seed_ids is not None else None
    r = discover_space_anchors(open_store(create=False), source, target, seed_anchors=seed_anchors, seed_ids=ids,
                               rounds=rounds, per_round=per_round, candidates=candidates, test=test, center=center,
                               seed=seed)
    d = r.to_dict()
    if json:
        print_json(d)
        return
    t = Table("anchors", "count", "agreement (held out)", "gap (held out)", "top1", "mean rank",
              title=f"{source} ↔ {target}: {d['n_found']} pairs found among {d['n_candidates']:,} unpaired "
                    f"candidates from {d['n_seed']} seed ({d['precision']:.1%} right)")
    counts = {"before": d["n_seed"], "after": d["n_seed"] + d["n_found"], "oracle": d["n_seed"] + d["n_found"]}
    for name, label in (("before", "seed"), ("after", "seed + found"), ("oracle", "seed + right partners")):
        s = d["retrieval"][name]
        t.add_row(label, str(counts[name]), f"{d['test']['agreement'][name]:.4f}", f"{d['test']['gap'][name]:.4f}",
                  f"{s['top1']:.3f}", f"{s['mean_rank']:.1f}")
    out.print(t)


@app.command("align-subspace")
def align_subspace_cmd(
    source: Source,
    target: Target,
    ranks: Annotated[Optional[str], typer.Option(help="Comma-separated ranks: one map per top-r principal "
                                                      "subspace of each side.")] = None,
    basis_source: Annotated[Optional[Path], typer.Option(help="A .npy (k × d) of source directions (with "
                                                              "--basis-target).")] = None,
    basis_target: Annotated[Optional[Path], typer.Option(help="A .npy of target directions.")] = None,
    method: Annotated[str, typer.Option(help="procrustes or ridge, between the projections.")] = "procrustes",
    pairs: Annotated[Optional[int], typer.Option(help="Shared items to fit on (default: all not held out).")] =
        None,
    test: Annotated[Optional[int], typer.Option(help="Held-out shared items to score on (default: a fifth, at "
                                                     "most 1,000).")] = None,
    seed: Seed = 0,
    json: Json = False,
) -> None:
    """Fit maps between projections of both spaces on subspaces; score them beside the full-space map.

    Scores in the target's full space on held-out pairs: top1, mean cosine, mean rank (cosine and CSLS).

    Examples:

      repspace align-subspace static minilm --ranks 8,16,32,64

      repspace align-subspace a b --basis-source a_dirs.npy --basis-target b_dirs.npy --json
    """
    from repspace.workflows.align_subspace import subspace_align_spaces

    r = subspace_align_spaces(open_store(create=False), source, target,
                              ranks=_ints(ranks, "--ranks") if ranks is not None else (), method=method,
                              basis_x=_directions(basis_source, "--basis-source"),
                              basis_y=_directions(basis_target, "--basis-target"), pairs=pairs, test=test, seed=seed)
    d = r.to_dict()
    if json:
        print_json(d)
        return
    t = Table("subspace", "variance kept (src / tgt)", "top1", "mean cosine", "mean rank", "top1 csls",
              title=f"{source} → {target} ({method}): fit on {d['n_train']:,} pairs, scored on {d['n_test']:,}")
    for s in d["subspaces"]:
        label = f"{'given' if s['given'] else 'top'} {s['rank_x']} / {s['rank_y']}"
        p = s["plain"]
        t.add_row(label, f"{s['variance_x']:.3f} / {s['variance_y']:.3f}", f"{p['top1']:.3f}",
                  f"{p['mean_cosine']:.3f}", f"{p['mean_rank']:.1f}", f"{s['csls']['top1']:.3f}")
    f = d["full"]
    t.add_row("full space", "1 / 1", f"{f['top1']:.3f}", f"{f['mean_cosine']:.3f}", f"{f['mean_rank']:.1f}",
              f"{d['full_csls']['top1']:.3f}")
    out.print(t)


def _names(items: list[str]) -> dict[str, str]:
    names = {}
    for item in items:
        label, sep, text = item.partition("=")
        if not sep or not label.strip() or not text.strip():
            raise InputError(f"--label-text takes LABEL=TEXT (e.g. pos=positive), not {item!r}")
        names[label.strip()] = text.strip()
    return names


@app.command("text-to-concept")
def text_to_concept_cmd(
    source: Source,
    target: Annotated[str, typer.Argument(help="The text encoder's space to map into (its encoder encodes the "
                                               "labels).")],
    label_field: Annotated[str, typer.Option(help="The metadata field of SOURCE holding each item's class.")],
    label_text: Annotated[Optional[list[str]], typer.Option(help="LABEL=TEXT: the text a label is written as "
                                                                 "(repeatable; default: the label itself).")] =
        None,
    template: Annotated[str, typer.Option(help="Each label's text replaces {} in this prompt.")] = "{}",
    method: Annotated[str, typer.Option(help="ridge or procrustes, from SOURCE into TARGET.")] = "ridge",
    test_fraction: Annotated[float, typer.Option(help="Share of each class held out.")] = 0.5,
    encoder: Annotated[Optional[str], typer.Option(help="Encoder of the label texts (default: TARGET's "
                                                        "own).")] = None,
    seed: Seed = 0,
    json: Json = False,
) -> None:
    """Text-to-concept: classify SOURCE's items zero-shot by mapping them into a text encoder's space.

    Labels are written as text, encoded into TARGET, and each held-out item takes the label nearest its
    mapped vector; beside it a linear probe trained on SOURCE's labelled items, and the majority class.

    Examples:

      repspace text-to-concept static minilm --label-field label --template "a {} movie review"

      repspace text-to-concept static minilm --label-field label --label-text pos=positive --method procrustes
    """
    from repspace.workflows.text_to_concept import text_to_concept_spaces

    r = text_to_concept_spaces(open_store(create=False), source, target, label_field=label_field,
                               names=_names(label_text or []), template=template, method=method,
                               test_fraction=test_fraction, seed=seed, encoder=encoder)
    d = r.to_dict()
    if json:
        print_json(d)
        return
    t = Table("classifier", "accuracy", title=f"{source} → {target} ({method}, {d['n_pairs']:,} pairs): "
                                               f"{d['n_test']:,} held-out items of {len(d['label_texts'])} labels")
    t.add_row("zero-shot through the map", f"{d['zero_shot_accuracy']:.3f}")
    t.add_row(f"linear probe on {source} ({d['n_train']:,} labelled)", f"{d['probe_accuracy']:.3f}")
    t.add_row("majority class", f"{d['majority']:.3f}")
    if d["target_accuracy"] is not None:
        t.add_row(f"zero-shot in {target} itself ({d['n_target_test']:,} items)", f"{d['target_accuracy']:.3f}")
    out.print(t)
