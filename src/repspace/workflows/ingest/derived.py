"""Sparse spaces derived from a dense space: its top-k SAE codes, or its texts' BM25 impact weights.

Both keep the source's ids, texts and metadata and record a recipe in the new space's
provenance (``derived``), so that a text query is encoded the way the rows were
(:func:`derived_text_query`, which ``repspace search NAME "text"`` runs):

* ``sae-codes`` (:func:`derive_sae_codes`): each item's codes under a dictionary fitted by
  ``repspace interpret sae`` (non-negative, at most ``k`` per row, the model's own
  :meth:`~repspace.workflows.dictionary.Dictionary.transform`); a text query goes through the
  source space's encoder (query side), then the same dictionary. The source and its dictionary
  must still be current when the space is searched by text (a stale dictionary is refused).
* a space ingested through a sparse encoder (``--encoder sparse:<folder>``, its spec in the
  provenance, no ``derived`` recipe): a text query is that model's ``encode_query``.
* ``bm25`` (:func:`derive_bm25`): uniCOIL-style impact weights (Lin & Ma 2021): each document's
  BM25 weight of every term it holds (bm25s's matrix, as :class:`~repspace.engines.search.lexical.
  LexicalIndex` builds it), the vocabulary as feature names; a text query is its terms' counts
  times ``k1 + 1`` (the factor bm25s leaves out), so the inner product is the document's BM25 score.

Examples
--------
>>> from repspace.store import example_space
>>> src = example_space(6, 4, texts=["red fox", "red red fox", "blue whale", "a cat", "the dog", "dog and cat"])
>>> r = derive_bm25(src.store, src.name, "t-bm25", stemmer=None, stopwords=None)
>>> r.space, r.count, r.n_features
('t-bm25', 6, 8)
>>> [(h.id, round(h.score, 4)) for h in src.store.space("t-bm25").search("red fox", k=2)]
[('i1', 2.1868), ('i0', 2.1331)]
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from repspace.core.errors import InputError
from repspace.core.limits import WRITE_BATCH
from repspace.core.sparse import SparseRows
from repspace.core.store import Space, Store
from repspace.workflows.ingest._target import created_or_existing, existing_space

__all__ = ["DerivedSparseReport", "derive_bm25", "derive_sae_codes", "derived_text_query"]

#: BM25 variants whose score is the document's term weights summed (bm25l and bm25+ add a per-term
#: part to every document, which no sparse document vector holds).
IMPACT_METHODS = ("lucene", "robertson", "atire")
#: Metrics an SAE-code space may be searched by.
SAE_METRICS = ("ip", "cosine")
#: How a query of an SAE-code space is coded: the SAE's encoder (as the items), or its inner products with the atoms.
QUERY_CODES = ("encoder", "decoder")


@dataclass(frozen=True)
class DerivedSparseReport:
    """What a derivation wrote: the new space, its source, the recipe and its size.

    Examples
    --------
    >>> DerivedSparseReport("s", "src", "bm25", 3, 10, 12, 0, {"method": "lucene"}, 0.1).to_dict()["nnz"]
    12
    """

    space: str
    source: str
    kind: str
    count: int
    n_features: int
    nnz: int
    empty_rows: int
    recipe: dict[str, Any]
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return asdict(self)


def _refuse_existing_space(store: Store, name: str) -> None:
    if existing_space(store, name) is not None:
        raise InputError(f"space {name!r} exists; derive into a new space (or delete it first)")


def _write(store: Store, name: str, src: Space, rows: SparseRows, items: list[Any], recipe: dict[str, Any],
           features: list[str] | None, metric: str = "ip") -> None:
    prov = {"encoder": f"derived:{recipe['kind']}", "derived": recipe}
    with created_or_existing(store, name, rows.n_features, metric, "float32", prov, layout="sparse",
                             features=features) as target:
        for lo in range(0, len(items), WRITE_BATCH):
            part = items[lo : lo + WRITE_BATCH]
            target.add([it.id for it in part], rows.take(np.arange(lo, lo + len(part))),
                       [it.text for it in part], [it.metadata for it in part], on_conflict="error")


def _report(name: str, src: Space, kind: str, rows: SparseRows, recipe: dict[str, Any], t0: float
            ) -> DerivedSparseReport:
    return DerivedSparseReport(name, src.name, kind, len(rows), rows.n_features, rows.nnz,
                               int((rows.row_nnz() == 0).sum()), recipe, time.perf_counter() - t0)


def derive_sae_codes(store: Store, source: str, dictionary: str, out: str, *,
                     dictionary_space: str | None = None, metric: str = "ip",
                     query_k: int | str | None = None, query_code: str = "encoder") -> DerivedSparseReport:
    """Write the top-k SAE codes of every item of the dense space ``source`` as the sparse space ``out``.

    The codes are ``load_dictionary(source, dictionary).transform(vectors)``: non-negative, at most
    ``k`` per row; ids, texts and metadata are copied. Searched by inner product.

    ``dictionary_space`` names another dense space whose dictionary encodes ``source``: a dictionary fitted
    on many more vectors of the same encoder (sentences and passages of other sets) than ``source`` holds
    (a few thousand documents fit a dictionary that reconstructs new vectors poorly). Its recorded encoder
    and dimension must be the source's (:class:`InputError` otherwise); text queries load the dictionary
    from that space, so it must stay current there too.

    ``metric`` is the new space's: ``ip`` (the codes' inner product) or ``cosine`` (the codes normalised:
    an item with many strong latents no longer outscores one that shares the query's few).

    ``query_k`` is how many latents code a text query (the recipe's ``query_k``): ``None`` the dictionary's
    ``k``, as the items; more than ``k`` (up to the number of latents), or ``0`` / ``"all"`` for every positive
    pre-activation, keeps more of the query (its coding, not the items', is where top-k codes lose most on
    retrieval: EVALUATION.md) at the cost of more posting lists read per query. The items stay top-``k``.
    A negative value or one above the number of latents is refused (:class:`InputError`) before anything
    is written.

    ``query_code`` is how a query is coded: ``encoder`` (the SAE's encoder, top ``query_k`` of its
    pre-activations after ReLU, as the items) or ``decoder`` (the query's inner products with the atoms,
    ``W_dec x``, the top ``query_k`` positive ones, 0: every positive one: the score is then the query's
    inner product with each item's decoding, less the part the dropped weights carry).

    Examples
    --------
    >>> from repspace.store import example_space
    >>> from repspace.workflows.dictionary import fit_dictionary
    >>> src = example_space(200, 8)
    >>> _ = fit_dictionary(src, 16, 4, epochs=1)
    >>> r = derive_sae_codes(src.store, src.name, "sae-16-k4-s0", "codes")
    >>> r.count, r.n_features, r.nnz <= 4 * 200, src.store.space("codes").info().layout
    (200, 16, True, 'sparse')
    >>> big = src.store.create_space("big", dim=8)  # the same (unrecorded) encoder, more vectors
    >>> _ = big.add([f"b{j}" for j in range(600)], np.random.default_rng(1).standard_normal((600, 8)))
    >>> _ = fit_dictionary(big, 32, 4, epochs=1)
    >>> r = derive_sae_codes(src.store, src.name, "sae-32-k4-s0", "codes2", dictionary_space="big")
    >>> r.count, r.n_features, r.recipe["dictionary_space"]
    (200, 32, 'big')
    >>> r = derive_sae_codes(src.store, src.name, "sae-16-k4-s0", "codes3", query_k="all")
    >>> r.recipe["k"], r.recipe["query_k"]  # the items: top 4; a query: every positive latent
    (4, 0)
    >>> derive_sae_codes(src.store, src.name, "sae-16-k4-s0", "codes4", query_code="decoder").recipe["query_code"]
    'decoder'
    """
    from repspace.workflows.dictionary import load_dictionary

    from repspace.core.checks import check_choice

    t0 = time.perf_counter()
    check_choice(metric, "the metric of an SAE-code space", SAE_METRICS)
    check_choice(query_code, "the query coding of an SAE-code space", QUERY_CODES)
    src = store.space(source)
    src.require_dense("deriving SAE codes")
    _refuse_existing_space(store, out)
    owner = src if dictionary_space is None else _dictionary_owner(store, src, dictionary_space)
    d = load_dictionary(owner, dictionary)
    qk = _query_k(query_k, int(d.model.k), int(d.model.n_latents))
    items, vectors = src.dump()
    rows = SparseRows.from_scipy(d.transform(vectors))
    recipe = {"kind": "sae-codes", "source": src.name, "source_uid": src.uid, "dictionary": d.name,
              "k": int(d.model.k), "query_k": qk, "query_code": query_code, "normalized": d.normalized,
              "dictionary_space": owner.name,
              "dictionary_space_uid": owner.uid}
    _write(store, out, src, rows, items, recipe, None, metric)
    return _report(out, src, "sae-codes", rows, recipe, t0)


#: ``query_k`` naming every positive latent (stored as 0 in the recipe).
QUERY_K_ALL = "all"


def _query_k(value: int | str | None, k: int, n_latents: int) -> int:
    """The recipe's ``query_k``: latents per text query, 0 for all (``None``: ``k``; ``"all"``: 0)."""
    if value is None:
        return k
    if isinstance(value, str):
        text = value.strip().lower()
        if text == QUERY_K_ALL:
            return 0
        if not text.lstrip("-").isdigit():
            raise InputError(f"query_k must be an integer or {QUERY_K_ALL!r}, got {value!r}")
        value = int(text)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InputError(f"query_k must be an integer or {QUERY_K_ALL!r}, got {value!r}")
    if not 0 <= value <= n_latents:
        raise InputError(f"query_k must be between 0 (every positive latent) and the dictionary's {n_latents} "
                         f"latents, got {value}")
    return int(value)


def sae_query_codes(dictionary: Any, vectors: Any, recipe: dict[str, Any]) -> Any:
    """Query vectors coded as a derived SAE-code space's recipe says: by the encoder or the atoms
    (``query_code``), the top ``query_k`` latents (0: every positive one).

    ``dictionary`` is the recipe's (:func:`~repspace.workflows.dictionary.load_dictionary`); a recipe
    written before ``query_k`` existed codes queries with the encoder and the items' ``k``. Returns a
    CSR matrix.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> from repspace.workflows.dictionary import fit_dictionary, load_dictionary
    >>> src = example_space(200, 8)
    >>> d = load_dictionary(src, fit_dictionary(src, 16, 4, epochs=1).name)
    >>> sae_query_codes(d, src.vectors()[:3], {"k": 4, "query_k": 4}).getnnz(axis=1).tolist()
    [4, 4, 4]
    """
    qk = int(recipe.get("query_k", recipe["k"]))
    if recipe.get("query_code", "encoder") == "decoder":
        return dictionary.atom_scores(vectors, k=None if qk == 0 else qk).tocsr()
    return dictionary.transform(vectors, k=int(dictionary.model.n_latents) if qk == 0 else qk).tocsr()


#: Provenance keys that name an encoder: two spaces agreeing on all of them hold vectors of one encoder.
ENCODER_KEYS = ("encoder", "model_fingerprint", "layer", "pooling", "normalize", "prompt")


def _dictionary_owner(store: Store, src: Space, name: str) -> Space:
    """The dense space ``name`` whose dictionary may encode ``src``: the same dimension and recorded encoder."""
    owner = store.space(name)
    owner.require_dense("holding a dictionary")
    if owner.dim != src.dim:
        raise InputError(f"space {name!r} has dimension {owner.dim} and {src.name!r} {src.dim}: a dictionary "
                         "encodes vectors of the dimension it was fitted on")
    mine, theirs = ({k: p.get(k) for k in ENCODER_KEYS} for p in (src.provenance, owner.provenance))
    if mine != theirs:
        differ = [k for k in ENCODER_KEYS if mine[k] != theirs[k]]
        raise InputError(f"spaces {src.name!r} and {name!r} were embedded differently ({', '.join(differ)} "
                         "differ): a dictionary only encodes vectors of the encoder it was fitted on")
    return owner


def derive_bm25(store: Store, source: str, out: str, *, method: str = "lucene", k1: float = 1.5, b: float = 0.75,
                stemmer: str | None = "english", stopwords: str | None = "en") -> DerivedSparseReport:
    """Write each item's BM25 term weights (uniCOIL-style impacts) over its text as the sparse space ``out``.

    Features are the terms of bm25s's vocabulary, sorted (the tokens as its tokenizer gives them); an item
    without text, or with no term, gets an empty row. A query of term counts times ``k1 + 1``
    (:func:`derived_text_query`) scores each document exactly as BM25 does.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> src = example_space(3, 4, texts=["cats purr", "dogs bark", "cats and dogs"])
    >>> r = derive_bm25(src.store, src.name, "lex")
    >>> r.n_features, src.store.space("lex").feature_names()
    (4, ['bark', 'cat', 'dog', 'purr'])
    """
    from repspace.core.checks import check_choice
    from repspace.engines.search.lexical import LexicalIndex, LexicalParams

    t0 = time.perf_counter()
    check_choice(method, "the BM25 method of an impact space", IMPACT_METHODS)
    params = LexicalParams(method=method, k1=k1, b=b, stemmer=stemmer, stopwords=stopwords)
    src = store.space(source)
    _refuse_existing_space(store, out)
    items = _all_items(src)
    texts = [it.text or "" for it in items]
    if not any(t.strip() for t in texts):
        raise InputError(f"space {src.name!r} has no texts: BM25 weights come from the items' texts")
    ix = LexicalIndex.build(texts, np.arange(len(items)), method=method, k1=k1, b=b, stemmer=stemmer,
                            stopwords=stopwords)
    if ix.model is None:
        raise InputError(f"the texts of space {src.name!r} hold no term (after stop words)")
    import scipy.sparse as sps

    sc = ix.model.scores  # bm25s's (documents × terms) CSC arrays: one slice of documents per term
    weights = sps.csr_matrix((np.asarray(sc["data"]), np.asarray(sc["indices"]), np.asarray(sc["indptr"])),
                             shape=(len(sc["indptr"]) - 1, int(sc["num_docs"])))  # (terms × documents)
    vocab = ix.model.vocab_dict
    names = sorted(vocab)  # bm25s numbers its terms in an order that may change between runs: features sorted
    order = np.array([vocab[t] for t in names], dtype=np.int64)
    rows = SparseRows.from_scipy(weights[order].T.tocsr())
    recipe = {"kind": "bm25", "source": src.name, "source_uid": src.uid, **params.to_dict(),
              "query_weight": params.scale}
    _write(store, out, src, rows, items, recipe, names)
    return _report(out, src, "bm25", rows, recipe, t0)


def _all_items(src: Space) -> list[Any]:
    """Every live item of a space (dense or sparse), in row order."""
    if src.info().layout == "sparse":
        rows, _ = src.sparse_rows()
        found = src.items(rows)
        return [found[int(r)] for r in rows]
    return src.dump()[0]


def derived_text_query(space: Space, text: str) -> dict[str, float]:
    """A text as a query of a derived sparse space, by its recipe: ``{feature: weight}``.

    Raises :class:`InputError` when the space has no recipe (it was ingested, not derived) or
    when nothing of the text maps to a feature.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> src = example_space(3, 4, texts=["cats purr", "dogs bark", "cats and dogs"])
    >>> _ = derive_bm25(src.store, src.name, "lex")
    >>> derived_text_query(src.store.space("lex"), "two cats, one cat")
    {'cat': 5.0}
    """
    recipe = space.provenance.get("derived")
    if not isinstance(recipe, dict) and str(space.provenance.get("encoder", "")).startswith("sparse:"):
        return _sparse_encoder_query(space, text)
    if not isinstance(recipe, dict):
        raise InputError(f"space {space.name!r} holds sparse vectors and no encoder: search it with a stored id "
                         "(--id), a sparse query (--sparse-query '{\"12\": 0.5}') or a vector of its "
                         f"{space.dim} features")
    if recipe.get("kind") == "bm25":
        return _bm25_query(space, text, recipe)
    return _sae_query(space, text, recipe)


def _sparse_encoder_query(space: Space, text: str) -> dict[str, float]:
    """The text through the ``encode_query`` of the sparse encoder that made the space (its recorded spec)."""
    from repspace.workflows.stored_transforms import encoder_for_space

    enc = encoder_for_space(space)
    row = enc.encode_sparse_queries([text])
    names = space.feature_names()
    if row.nnz == 0:
        raise InputError(f"no token of the query has a weight in the model of space {space.name!r}: "
                         "it matches nothing")
    idx, val = row.row(0)
    return {(names[j] if names is not None else str(j)): float(w) for j, w in zip(idx, val)}


def _bm25_query(space: Space, text: str, recipe: dict[str, Any]) -> dict[str, float]:
    from repspace.engines.search.lexical import LexicalParams, tokenize

    params = LexicalParams(**{k: recipe[k] for k in ("method", "k1", "b", "stemmer", "stopwords")})
    known = space.feature_ids() or {}  # kept per space: not the whole vocabulary as a set per query
    out: dict[str, float] = {}
    for token in tokenize([text], params)[0]:
        if token in known:
            out[token] = out.get(token, 0.0) + params.scale
    if not out:
        raise InputError(f"no term of the query is in the vocabulary of space {space.name!r}")
    return out


def _sae_query(space: Space, text: str, recipe: dict[str, Any]) -> dict[str, float]:
    from repspace.workflows.dictionary import load_dictionary
    from repspace.workflows.stored_transforms import encoder_for_space

    src = space.store.space(recipe["source"])
    if src.uid != recipe.get("source_uid"):
        raise InputError(f"space {recipe['source']!r} is not the space {space.name!r} was derived from "
                         "(it was deleted and made again); derive the codes again")
    owner = src
    if recipe.get("dictionary_space", src.name) != src.name:
        owner = space.store.space(recipe["dictionary_space"])
        if owner.uid != recipe.get("dictionary_space_uid"):
            raise InputError(f"space {owner.name!r} is not the space whose dictionary encoded {space.name!r} "
                             "(it was deleted and made again); derive the codes again")
    d = load_dictionary(owner, recipe["dictionary"])
    enc = encoder_for_space(src)
    vec = np.asarray((getattr(enc, "encode_queries", None) or enc.encode)([text]), dtype=np.float32)
    codes = sae_query_codes(d, vec, recipe)
    if codes.nnz == 0:
        raise InputError("the query activates no latent of the dictionary: it matches nothing")
    return {str(int(j)): float(w) for j, w in zip(codes.indices, codes.data)}
