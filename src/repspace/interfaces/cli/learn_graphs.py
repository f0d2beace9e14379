"""``repspace learn poincare|node2vec``: learn a space from an edge list."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from repspace.interfaces.cli._common import note, open_store, print_json, progress_bar
from repspace.interfaces.cli.learn import Json, Seed, SpaceName, Workers, learn_app

Edges = Annotated[Path, typer.Argument(help="Edge list: one 'source<TAB>target[<TAB>weight]' line per edge "
                                            "('#' comments and blank lines skipped).", show_default=False)]
Hierarchy = Annotated[str, typer.Argument(help="Relations: one 'child<TAB>parent' line each (a hierarchy's "
                                               "transitive closure), or wordnet:SYNSET (e.g. wordnet:mammal.n.01).",
                                          show_default=False)]
Nodes = Annotated[Optional[Path], typer.Option(
    "--nodes", help="File of allowed node names (one a line): an edge naming another node is an error.")]
Encoding = Annotated[str, typer.Option(help="Text encoding of the edge list.")]


def _done(report: Any, json: bool, what: str) -> None:
    if json:
        print_json(report.to_dict())
        return
    note(f"{report.space}: {report.n:,} nodes × {report.dim} ({report.metric}), {what}, seed "
         f"{report.recipe.get('params', {}).get('seed', report.recipe.get('seed'))}, {report.train_seconds:.1f} s")


@learn_app.command("poincare")
def poincare_cmd(
    edges: Hierarchy,
    space: SpaceName,
    nodes: Nodes = None,
    encoding: Encoding = "utf-8",
    dim: Annotated[int, typer.Option("--dim", min=1, help="Dimensions of the Poincare ball.")] = 10,
    negative: Annotated[int, typer.Option(min=1, help="Negative samples per relation.")] = 10,
    epochs: Annotated[int, typer.Option(min=1, help="Passes over the relations.")] = 50,
    burn_in: Annotated[int, typer.Option("--burn-in", min=0, help="Epochs at the low burn-in learning rate "
                                                                 "first (Nickel & Kiela: 10).")] = 10,
    alpha: Annotated[float, typer.Option(help="Learning rate after the burn-in.")] = 0.1,
    seed: Seed = 0,
    json: Json = False,
) -> None:
    """Learn Poincare embeddings of a hierarchy (gensim's PoincareModel): a space with the poincare metric.

    EDGES holds 'child<TAB>parent' relations, for a hierarchy its transitive
    closure (every ancestor of each node); or wordnet:SYNSET for the closure of
    WordNet's hypernyms under SYNSET (Debian's wordnet-base). Each node becomes an item at a point
    of the unit ball: general nodes near the centre, specific ones near the
    edge. Search, diagnose and compare use the hyperbolic distance; what needs a
    vector space (indexes, PCA, whitening, CKA) says so. Training is
    deterministic for a seed.

    Examples:

      repspace learn poincare wordnet:mammal.n.01 --space mammals --dim 10 --epochs 50

      repspace learn poincare closure.tsv --space taxonomy --dim 5

      repspace search mammals --id dog.n.01 -k 10

      repspace diagnose mammals
    """
    from repspace.workflows.learn.graphs import learn_poincare

    store = open_store(create=True)
    with progress_bar(json) as bar:
        report = learn_poincare(store, space, edges, nodes=nodes, encoding=encoding, progress=bar, size=dim,
                                negative=negative, epochs=epochs, burn_in=burn_in, alpha=alpha, seed=seed)
    _done(report, json, f"{report.details['relations']:,} relations, {epochs} epochs")


@learn_app.command("node2vec")
def node2vec_cmd(
    edges: Edges,
    space: SpaceName,
    p: Annotated[float, typer.Option("--p", help="Return parameter: a high p rarely steps back to the previous "
                                                 "node.")] = 1.0,
    q: Annotated[float, typer.Option("--q", help="In-out parameter: q < 1 explores outward (DFS-like, "
                                                 "communities), q > 1 stays local (BFS-like, roles).")] = 1.0,
    directed: Annotated[bool, typer.Option("--directed", help="Each line is one direction only.")] = False,
    nodes: Nodes = None,
    encoding: Encoding = "utf-8",
    dimensions: Annotated[int, typer.Option("--dim", min=1, help="Dimensions.")] = 128,
    walk_length: Annotated[int, typer.Option("--walk-length", min=2, help="Nodes per walk.")] = 80,
    num_walks: Annotated[int, typer.Option("--num-walks", min=1, help="Walks from every node.")] = 10,
    window: Annotated[int, typer.Option(min=1, help="Skip-gram context window.")] = 10,
    epochs: Annotated[int, typer.Option(min=1, help="Skip-gram passes over the walks.")] = 1,
    seed: Seed = 0,
    workers: Workers = 1,
    json: Json = False,
) -> None:
    """Learn node2vec vectors (biased random walks, then skip-gram): one item per node, cosine.

    Edges are 'source<TAB>target[<TAB>weight]' (undirected unless --directed;
    repeated edges add their weights). Self-loops, bad weights and (with
    --nodes) unknown nodes are refused with the file's line number.

    Examples:

      repspace learn node2vec karate.tsv --space karate --p 1 --q 0.5 --dim 16 --seed 0

      repspace search karate --id 33 -k 5
    """
    from repspace.workflows.learn.graphs import learn_node2vec

    store = open_store(create=True)
    with progress_bar(json) as bar:
        report = learn_node2vec(store, space, edges, directed=directed, nodes=nodes, encoding=encoding, progress=bar,
                                dimensions=dimensions, walk_length=walk_length, num_walks=num_walks, p=p, q=q,
                                window=window, epochs=epochs, seed=seed, workers=workers)
    _done(report, json, f"{report.details['edges']['edges']:,} edges, p={p:g}, q={q:g}")
