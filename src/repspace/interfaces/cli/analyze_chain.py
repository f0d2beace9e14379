"""``repspace analyze compat-chain``: cross-model retrieval and the compatibility criteria over a chain of updates."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table

from repspace.core.errors import InputError
from repspace.interfaces.cli._common import comma_list, out, print_json, progress_bar
from repspace.interfaces.cli.analyze import analyze_app
from repspace.interfaces.cli.options import Json


def _fmt(v: float | None, spec: str = ".4f") -> str:
    return "—" if v is None else format(v, spec)


def _layers(text: str) -> list[int]:
    try:
        return [int(x) for x in comma_list(text)]
    except ValueError:
        raise InputError(f"--layers must be comma-separated layer numbers (e.g. 2,4,6), not {text!r}") from None


@analyze_app.command("compat-chain")
def compat_chain_cmd(
    data: Annotated[Path, typer.Option("--data", help="A BEIR folder: corpus.jsonl, queries.jsonl, qrels/.")],
    encoder: Annotated[Optional[list[str]], typer.Option("--encoder", help="An encoder spec per version, oldest "
                                                                           "first (repeat: --encoder static "
                                                                           "--encoder minilm).")] = None,
    layers: Annotated[Optional[str], typer.Option(help="Or: layers of one layered encoder as the versions, "
                                                       "oldest first (2,4,6).")] = None,
    layered: Annotated[str, typer.Option(help="The layered encoder of --layers.")] = "hf-layers:minilm",
    method: Annotated[str, typer.Option(help="How new queries reach an old index: procrustes or ridge (a map "
                                             "fitted on the corpus both embedded), raw (none; one dimension), "
                                             "head (d-simplex heads, CoReS).")] = "procrustes",
    test_fraction: Annotated[float, typer.Option(help="head: share of the queries held out (the rest are the "
                                                      "heads' classes).")] = 1 / 3,
    l2: Annotated[Optional[float], typer.Option(help="head: the heads' L2 penalty.")] = None,
    seed: Annotated[int, typer.Option(help="head: seed of the held-out queries.")] = 0,
    split: Annotated[str, typer.Option(help="The qrels split.")] = "test",
    index: Annotated[Optional[str], typer.Option(help="exact (default) or hnsw<M>[,ef<E>].")] = None,
    batch_size: Annotated[int, typer.Option(help="Texts per forward pass.")] = 64,
    json: Json = False,
) -> None:
    """Model-update compatibility along a chain m0 → m1 → m2 …: nDCG@10 of every newer model's queries on every
    older model's index (cross-model retrieval) beside each model re-indexed (the diagonal), Shen et al.'s
    criteria for every pair, CoReS's AC (share of compatible pairs) and AM (mean of the matrix), and
    transitivity (is m2 compatible with m0 when m2 ~ m1 and m1 ~ m0?).

    Examples:

      repspace analyze compat-chain --data ../shared/data/cranfield-beir --layers 2,4,6

      repspace analyze compat-chain --data cranfield-beir --encoder static --encoder minilm --method ridge --json
    """
    from repspace.workflows.analyze import compat_chain_encoders

    if (encoder is None) == (layers is None):
        raise InputError("name the chain's versions with --encoder (repeated) or with --layers, one of the two")
    with progress_bar(json) as bar:
        r = compat_chain_encoders(data, encoders=encoder, layered=layered,
                                  layers=None if layers is None else _layers(layers), split=split,
                                  batch_size=batch_size, progress=bar, method=method, test_fraction=test_fraction,
                                  l2=l2, seed=seed, index=index)
    d = r.to_dict()
    if json:
        print_json(d)
        return
    names = d["models"]
    t = Table("queries of ↓ on the index of →", *names,
              title=f"nDCG@10 on {d['info'].get('data')} ({d['n_queries']:,} queries, {d['n_documents']:,} "
                    f"documents), {d['method']}: cross-model retrieval, the diagonal re-indexed")
    for i, row in enumerate(d["matrix"]):
        t.add_row(names[i], *[_fmt(v) for v in row])
    out.print(t)
    crit = Table("new → old index", "old", "cross", "new", "compatible", "update gain", "relevant closer",
                 "irrelevant farther", title="Compatibility criteria (Shen et al. 2020) of each pair")
    for p in d["pairs"]:
        crit.add_row(f"{names[p['new_model']]} → {names[p['old_model']]}", _fmt(p["old"]), _fmt(p["cross"]),
                     _fmt(p["new"]), "yes" if p["compatible"] else "no", _fmt(p["update_gain"], ".3f"),
                     _fmt(p["relevant_closer"], ".3f"), _fmt(p["irrelevant_farther"], ".3f"))
    out.print(crit)
    out.print(f"AC (share of compatible pairs) {d['ac']:.3f}; AM (mean nDCG@10 of the matrix) {d['am']:.4f}")
    for tr in d["triples"]:
        premise = tr["new_middle"] and tr["middle_old"]
        verdict = ("holds" if tr["new_old"] else "FAILS") if premise else "premise not met"
        out.print(f"transitivity {names[tr['new']]} ~ {names[tr['middle']]} ~ {names[tr['old']]}: "
                  f"{names[tr['new']]} → {names[tr['old']]} {'compatible' if tr['new_old'] else 'not compatible'}"
                  f" ({verdict})")
