"""``repspace interpret universality|flow``: kept dictionaries of several spaces compared feature by feature."""

from __future__ import annotations

from typing import Annotated, Optional

import typer
from rich.table import Table

from repspace.core.errors import InputError
from repspace.interfaces.cli._common import note, open_store, out, print_json
from repspace.interfaces.cli.interpret import Json, interpret_app


def _fmt(v: float | None, spec: str = ".4f") -> str:
    return "—" if v is None else format(v, spec)


def _layer(text: str) -> tuple[str, str]:
    """``SPACE:DICTIONARY`` split at its last colon (dictionary names hold none)."""
    space, sep, name = text.rpartition(":")
    if not sep or not space or not name:
        raise InputError(f"a layer is SPACE:DICTIONARY (e.g. layer4:sae-512-k8-s0), not {text!r}")
    return space, name


@interpret_app.command("universality")
def universality_cmd(
    space_a: Annotated[str, typer.Argument(help="The space of the first dictionary (one model or layer).")],
    dictionary_a: Annotated[str, typer.Argument(help="Its dictionary.")],
    space_b: Annotated[str, typer.Argument(help="The space of the second one (the same items by id; any "
                                                "dimension).")],
    dictionary_b: Annotated[str, typer.Argument(help="Its dictionary.")],
    match: Annotated[str, typer.Option("--match", help="hungarian (one to one) or max (each A feature's most "
                                                       "correlated B feature, many to one, as the paper).")
                     ] = "hungarian",
    min_correlation: Annotated[Optional[float], typer.Option(help="Keep only pairs correlated at least this much.")
                               ] = None,
    random: Annotated[int, typer.Option("--random", help="Random pairings behind the baseline.")] = 20,
    seed: Annotated[int, typer.Option(help="Seed of the random pairings.")] = 0,
    per_feature: Annotated[bool, typer.Option("--per-feature", help="With --json, every matched pair.")] = False,
    json: Json = False,
) -> None:
    """SAE feature universality (Lan et al. 2024): match two dictionaries' features by the correlation of their
    activations over the items both spaces hold, then SVCCA of the matched features' decoder directions and
    activations, each beside random pairings.

    Examples:

      repspace interpret universality minilm sae-1024-k16-s0 e5 sae-1024-k16-s0

      repspace interpret universality layer3 sae-512-k8-s0 layer6 sae-512-k8-s0 --match max --json
    """
    from repspace.workflows.dictionary_universality import universality_dictionaries

    store = open_store(create=False)
    r = universality_dictionaries(store.space(space_a), dictionary_a, store.space(space_b), dictionary_b,
                                  method=match, min_correlation=min_correlation, n_random=random, seed=seed)
    d = r.to_dict(per_feature=per_feature)
    if json:
        print_json(d)
        return
    m = d["match"]
    t = Table(title=f"{space_a}/{r.dictionary_a} ↔ {space_b}/{r.dictionary_b}: {m['n_pairs']:,} pairs "
                    f"({m['method']}) over {d['n_inputs']:,} shared items")
    for col in ("SVCCA of", "matched", "random mean", "random sd", "p"):
        t.add_column(col, justify="left" if col == "SVCCA of" else "right")
    for name in ("decoder", "activations"):
        t.add_row(name, _fmt(d[f"svcca_{name}"]), _fmt(d[f"{name}_random_mean"]), _fmt(d[f"{name}_random_sd"]),
                  _fmt(d[f"{name}_random_p"], ".3f"))
    out.print(t)
    note(f"pairs: mean correlation {_fmt(m['mean_correlation'])}, median {_fmt(m['median_correlation'])}; "
         f"live features {m['live_a']:,} of {m['n_a']:,} and {m['live_b']:,} of {m['n_b']:,}; "
         f"B features matched once {m['share_unique']:.3f}")


@interpret_app.command("flow")
def flow_cmd(
    layers: Annotated[list[str], typer.Argument(help="SPACE:DICTIONARY of each layer, in layer order (two or "
                                                     "more; the spaces hold the same items by id).")],
    threshold: Annotated[float, typer.Option(help="Smallest activation correlation of an edge.")] = 0.5,
    mode: Annotated[str, typer.Option(help="threshold (every pair at or above it) or top1 (each feature's most "
                                           "correlated successor, if at or above it).")] = "threshold",
    graph: Annotated[bool, typer.Option("--graph/--no-graph", help="Nodes and edges in --json.")] = True,
    json: Json = False,
) -> None:
    """Cross-layer feature flow (S285): link each layer's dictionary features to the next layer's by activation
    correlation; per step, how many features persist, die and are born; --json gives the graph (nodes with
    their fate, edges with their correlation).

    Examples:

      repspace interpret flow layer2:sae-512-k8-s0 layer4:sae-512-k8-s0 layer6:sae-512-k8-s0

      repspace interpret flow layer2:sae-512-k8-s0 layer4:sae-512-k8-s0 --mode top1 --threshold 0.3 --json
    """
    from repspace.workflows.dictionary_universality import flow_dictionaries

    pairs = [_layer(x) for x in layers]
    store = open_store(create=False)
    r = flow_dictionaries([(store.space(s), name) for s, name in pairs], threshold=threshold, mode=mode)
    d = r.to_dict(nodes=graph)
    if json:
        print_json(d)
        return
    t = Table(title=f"feature flow over {len(pairs)} layers, {d['n_inputs']:,} shared items "
                    f"(correlation ≥ {threshold}, {mode})")
    for col in ("step", "live", "persists", "dies", "born", "edges", "mean weight"):
        t.add_column(col, justify="left" if col == "step" else "right")
    for s in d["steps"]:
        t.add_row(f"{d['labels'][s['layer']]} → {d['labels'][s['next_layer']]}", str(d["live"][s["layer"]]),
                  str(s["persists"]), str(s["dies"]), str(s["born"]), str(s["n_edges"]),
                  _fmt(s["mean_weight"], ".3f"))
    out.print(t)
