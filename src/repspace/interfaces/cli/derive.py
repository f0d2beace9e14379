"""``repspace derive sae-codes|bm25``: a searchable sparse space from a dense space (SAE codes, BM25 impacts)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Optional

import typer

from repspace.interfaces.cli._app import command_group
from repspace.interfaces.cli._common import SpaceArg, note, open_store, print_json
from repspace.interfaces.cli.options import Json

if TYPE_CHECKING:
    from repspace.workflows.ingest.derived import DerivedSparseReport

derive_app = command_group("derive", help=(
    "Sparse spaces derived from a dense space, with its ids, texts and metadata, searchable by text.\n\n"
    "Examples:\n\n"
    "  repspace derive sae-codes docs --dictionary sae-2048-k32-s0 --out docs-sae\n\n"
    "  repspace derive bm25 docs --out docs-bm25"
))

Out = Annotated[str, typer.Option("--out", help="Name of the new sparse space.")]


def _show(r: DerivedSparseReport, json: bool) -> None:
    if json:
        print_json(r.to_dict())
        return
    note(f"wrote {r.count:,} items to sparse space {r.space!r} ({r.n_features:,} features, {r.nnz:,} non-zeros, "
         f"{r.empty_rows:,} empty rows) in {r.seconds:.1f} s; search it: repspace search {r.space} \"text\"")


@derive_app.command("sae-codes")
def sae_codes_cmd(
    space: SpaceArg,
    dictionary: Annotated[str, typer.Option("--dictionary", help="A dictionary of the space (sae-N-kK-sS, as "
                                                                 "'repspace interpret sae' names it).")],
    out_space: Out,
    dictionary_space: Annotated[Optional[str], typer.Option(
        "--dictionary-space", help="Take the dictionary from this space (same encoder and dimension), e.g. one "
                                   "fitted on many more sentences and passages than SPACE holds.")] = None,
    metric: Annotated[str, typer.Option(help="The new space's metric: ip (the codes' inner product) or "
                                             "cosine.")] = "ip",
    query_k: Annotated[Optional[str], typer.Option(
        "--query-k", help="Latents coding a text query: N (default: the dictionary's k, as the items), or 0 / "
                          "'all' for every positive one (more of the query kept, more postings read).")] = None,
    query_code: Annotated[str, typer.Option(
        "--query-code", help="How a text query is coded: encoder (the SAE's, as the items) or decoder (its inner "
                             "products with the atoms, the top --query-k positive ones).")] = "encoder",
    json: Json = False,
) -> None:
    """Write each item's top-k SAE codes (non-negative, at most k per item) as a sparse space searched by inner
    product; text queries go through the space's encoder, then the same dictionary.

    Examples:

      repspace derive sae-codes docs --dictionary sae-2048-k32-s0 --out docs-sae

      repspace derive sae-codes docs --dictionary sae-8192-k128-s0 --dictionary-space sentences --out docs-sae \\
          --metric cosine --query-k all

      repspace derive sae-codes docs --dictionary sae-256-k8-s0 --out codes --json
    """
    from repspace.workflows.ingest.derived import derive_sae_codes

    _show(derive_sae_codes(open_store(create=False), space, dictionary, out_space,
                           dictionary_space=dictionary_space, metric=metric, query_k=query_k,
                           query_code=query_code), json)


@derive_app.command("bm25")
def bm25_cmd(
    space: SpaceArg,
    out_space: Out,
    method: Annotated[str, typer.Option(help="BM25 variant: lucene, robertson or atire.")] = "lucene",
    k1: Annotated[float, typer.Option(help="BM25 k1.")] = 1.5,
    b: Annotated[float, typer.Option(help="BM25 b.")] = 0.75,
    stemmer: Annotated[Optional[str], typer.Option(help="Snowball stemmer ('none': no stemming).")] = "english",
    stopwords: Annotated[Optional[str], typer.Option(help="Stop-word list ('none': keep every word).")] = "en",
    json: Json = False,
) -> None:
    """Write each item's BM25 term weights over its text (uniCOIL-style impacts) as a sparse space; a text query
    is its terms' counts, so searching it gives each item's BM25 score.

    Examples:

      repspace derive bm25 docs --out docs-bm25

      repspace derive bm25 docs --out docs-bm25-raw --stemmer none --stopwords none --json
    """
    from repspace.workflows.ingest.derived import derive_bm25

    r = derive_bm25(open_store(create=False), space, out_space, method=method, k1=k1, b=b,
                    stemmer=None if stemmer == "none" else stemmer,
                    stopwords=None if stopwords == "none" else stopwords)
    _show(r, json)
