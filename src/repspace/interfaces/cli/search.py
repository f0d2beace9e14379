"""``repspace search``: nearest items by text, id or vector."""

from __future__ import annotations

import json as jsonlib
from pathlib import Path
from typing import Annotated, Any, Optional

import numpy as np
import typer
from rich.table import Table

from repspace.core.errors import InputError
from repspace.interfaces.cli._app import app
from repspace.interfaces.cli._common import (
    note,
    open_store,
    out,
    print_json,
    progress_bar,
)


def _load_vector(vector: str | None, vector_file: Path | None) -> np.ndarray | None:
    """The query vector as given (its dtype kept: the search refuses lossy casts and extra rows)."""
    if vector is not None:
        try:
            arr = np.asarray(jsonlib.loads(vector))
        except (ValueError, TypeError, RecursionError):
            arr = None
        if arr is None or not (np.issubdtype(arr.dtype, np.number) and not np.issubdtype(arr.dtype, np.complexfloating)):
            raise InputError("--vector must be a JSON list of numbers, e.g. '[0.1, 0.2]'")
        return arr
    if vector_file is not None:
        try:
            return np.load(vector_file, allow_pickle=False)
        except (OSError, ValueError, EOFError) as e:
            raise InputError(f"{vector_file}: cannot read a vector: {str(e).splitlines()[0]}") from None
    return None


def _load_sparse(sparse_query: str | None) -> dict[str, object] | None:
    """``--sparse-query`` as given: a JSON object of feature (id or token) to weight."""
    if sparse_query is None:
        return None
    try:
        value = jsonlib.loads(sparse_query)
    except (ValueError, RecursionError):
        value = None
    if not isinstance(value, dict):
        raise InputError("--sparse-query must be a JSON object of feature to weight, e.g. '{\"12\": 0.5}'")
    return value


def _gaussian_vector(text: str) -> str:
    """``--gaussian '{"mean": [...], "variance": [...]}'`` as the query vector (means then variances), as JSON."""
    try:
        value = jsonlib.loads(text)
    except (ValueError, RecursionError):
        value = None
    if not isinstance(value, dict) or set(value) != {"mean", "variance"} or not all(
            isinstance(value[k], list) for k in value):
        raise InputError("--gaussian must be a JSON object {\"mean\": [numbers], \"variance\": [numbers]}")
    if len(value["mean"]) != len(value["variance"]):
        raise InputError(f"--gaussian: a mean of {len(value['mean'])} numbers and a variance of "
                         f"{len(value['variance'])}")
    return jsonlib.dumps(value["mean"] + value["variance"])


def _search(space: str, query: str | None, id: str | None, vector: str | None, vector_file: Path | None,
            sparse_query: str | None, json: bool, **options: Any) -> Any:
    """One query's search: a text, an id, a vector or a sparse query (exactly one)."""
    given = sum(x is not None for x in (query, id, vector, vector_file, sparse_query))
    if given != 1:
        raise InputError("give exactly one of: a query text, --id, --vector, --vector-file, --sparse-query, or a set "
                         "query (--all-of, --none-of)")
    from repspace.workflows.search.request import SearchRequest

    vec = _load_vector(vector, vector_file)
    sparse = _load_sparse(sparse_query)
    # every option is checked here, before the store is opened or a text embedded
    given_query = vec if vec is not None else sparse if sparse is not None else query
    request = SearchRequest.of(given_query, id=id, **options)
    sp = open_store(create=False).space(space)
    with progress_bar(json) as bar:
        return sp.search(request, progress=bar)


@app.command("search")
def search_cmd(
    space: Annotated[str, typer.Argument(help="Space to search.")],
    query: Annotated[Optional[str], typer.Argument(help="Query text (embedded with the space's encoder).")] = None,
    id: Annotated[Optional[str], typer.Option("--id", help="Search with this stored item's vector.")] = None,
    vector: Annotated[Optional[str], typer.Option(help="Query vector as a JSON list.")] = None,
    vector_file: Annotated[Optional[Path], typer.Option(help="Query vector in a .npy file.")] = None,
    sparse_query: Annotated[Optional[str], typer.Option(help="Sparse spaces: a JSON object of feature id (or "
                                                              "token) to weight, e.g. '{\"12\": 0.5}'.")] = None,
    k: Annotated[int, typer.Option("-k", "--k", min=1, help="Number of results.")] = 10,
    where: Annotated[Optional[str], typer.Option(help="Metadata filter, e.g. \"year >= 2020 and not draft\".")] = None,
    exact: Annotated[bool, typer.Option("--exact", help="Exact search (blocked BLAS).")] = False,
    hnsw: Annotated[bool, typer.Option("--hnsw", help="HNSW search (the index is built or updated first).")] = False,
    ef: Annotated[Optional[int], typer.Option(min=1, help="HNSW search beam (default 64).")] = None,
    index: Annotated[Optional[str], typer.Option(help="Index spec: hnsw32, int8>rescore4, pca64>rerank... "
                                                      "(instead of --exact or --hnsw).")] = None,
    hybrid: Annotated[bool, typer.Option("--hybrid", help="Fuse dense results with BM25 over the texts.")] = False,
    bm25: Annotated[bool, typer.Option("--bm25", help="BM25 over the stored texts only.")] = False,
    fusion: Annotated[Optional[str], typer.Option(help="Hybrid fusion: rrf (reciprocal rank, the default) "
                                                       "or sum.")] = None,
    lexical_weight: Annotated[Optional[float], typer.Option(help="Hybrid: weight of the BM25 list "
                                                                 "(default 1).")] = None,
    mmr: Annotated[Optional[float], typer.Option(help="Diversify with MMR, lambda in [0, 1].")] = None,
    mmr_length: Annotated[Optional[str], typer.Option(
        help="With --mmr: diversify lengths instead (DL-MMR): 'text' (words) or a numeric metadata field.")] = None,
    hubness: Annotated[Optional[str], typer.Option(help="Re-rank with hubness reduction: csls, "
                                                         "mutual-proximity or local-scaling.")] = None,
    kappa: Annotated[int, typer.Option(min=1, help="Hubness reduction: neighbourhood size of the "
                                                   "per-item statistics.")] = 10,
    gaussian: Annotated[Optional[str], typer.Option(
        "--gaussian", help="Gaussian spaces: the query Gaussian as JSON, '{\"mean\": [...], \"variance\": [...]}'.")
                        ] = None,
    rerank: Annotated[Optional[Path], typer.Option(
        "--rerank", help="Reorder the candidates (dense, or hybrid with --hybrid) with a reranker: a model file "
                         "written by 'repspace rerank train'.")] = None,
    candidates: Annotated[Optional[int], typer.Option(help="Multi-vector spaces: documents MUVERA shortlists for "
                                                           "exact MaxSim rescoring (default 100).")] = None,
    all_of: Annotated[Optional[list[str]], typer.Option(
        "--all-of", help="Set query (SetCSE): a stored id the hits should be near (repeat for several).")] = None,
    none_of: Annotated[Optional[list[str]], typer.Option(
        "--none-of", help="Set query: a stored id the hits should be far from (repeat for several).")] = None,
    explain: Annotated[bool, typer.Option("--explain", help="Say how the search was run.")] = False,
    json: Annotated[bool, typer.Option("--json", help="Print a JSON list of {id, score, text, metadata}.")] = False,
) -> None:
    """Find the nearest items to a text, a stored item, a vector, or a set of examples (--all-of, --none-of).

    Without --exact or --hnsw, spaces up to 50,000 items (and selective
    filters) are searched exactly, larger ones with HNSW. A multi-vector space
    (token vectors) is searched by MaxSim: MUVERA's shortlist of --candidates
    documents rescored exactly, or every document with --exact.

    Examples:

      repspace search docs "parse a date string" -k 5

      repspace search glove --id king --where "not _id like 'king%'"

      repspace search docs "sorting" --where "module in ('functools', 'heapq')" --json

      repspace search docs "parse dates" --index 'int8>rescore4' --explain

      repspace search docs "parse dates" --hybrid --lexical-weight 0.5

      repspace search docs "parse dates" --mmr 0.7

      repspace search docs "parse dates" --mmr 0.5 --mmr-length text

      repspace search glove --id king --hubness csls

      repspace search cran "flow over a swept wing" --hybrid --rerank cran-ranker.json

      repspace search glove --all-of king --all-of woman --none-of man

      repspace search splade --sparse-query '{"retrieval": 1.2, "sparse": 0.8}' --json

      repspace search colbert "parse dates" --candidates 200

      repspace search colbert --id doc7 --exact
    """
    if exact and hnsw:  # two flags for one value (method); --index with either is refused by search_space
        raise InputError("choose one of --exact, --hnsw")
    method = "exact" if exact else "hnsw" if hnsw else "auto"
    if gaussian is not None:  # a Gaussian space's query vector: its means then its variances
        if vector is not None:
            raise InputError("give --gaussian or --vector, not both")
        vector = _gaussian_vector(gaussian)
    if all_of or none_of:
        from repspace.interfaces.cli.search_sets import set_query_result

        res = set_query_result(space, all_of or [], none_of or [], k=k, where=where, method=method, ef=ef,
                               index=index, json=json,
                               others={"a query text": query, "--id": id, "--vector": vector,
                                       "--vector-file": vector_file, "--sparse-query": sparse_query, "--hybrid": hybrid or None,
                                       "--bm25": bm25 or None, "--fusion": fusion, "--lexical-weight": lexical_weight,
                                       "--mmr": mmr, "--mmr-length": mmr_length,
                                       "--hubness": hubness, "--rerank": rerank, "--candidates": candidates})
    else:
        res = _search(space, query, id, vector, vector_file, sparse_query, k=k, where=where, method=method, ef=ef, index=index,
                      hybrid=hybrid, bm25=bm25, fusion=fusion, lexical_weight=lexical_weight, mmr=mmr,
                      mmr_length=mmr_length, hubness=hubness, kappa=kappa, candidates=candidates, json=json,
                      rerank=None if rerank is None else str(rerank))
    hits, plan = res.hits, res.plan
    if json:
        print_json(res.to_dict() if explain else [h.to_dict() for h in hits])
        return
    table = Table("#", "id", "score", "text", "metadata")
    for rank, h in enumerate(hits, 1):
        text = (h.text or "").replace("\n", " ")
        table.add_row(str(rank), h.id, f"{h.score:.4f}", text[:100] + ("…" if len(text) > 100 else ""),
                      jsonlib.dumps(h.metadata, ensure_ascii=False)[:60])
    out.print(table)
    if explain:
        effort = f", ef={plan.ef}" if plan.ef else ""
        action = f", index {plan.index_action}" if plan.index_action else ""
        note(f"plan: {plan.method} over {plan.candidates} of {plan.total} items{effort}{action} ({plan.reason})")
