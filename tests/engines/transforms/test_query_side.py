"""A derived space's encoder (base encoder + fitted chain) keeps the base encoder's query side."""

from __future__ import annotations


import numpy as np

from repspace.engines.transforms import parse_transforms
from repspace.workflows.stored_transforms import encoder_for_space
from repspace.workflows.stored_transforms import TransformedEncoder, apply_chain

from _asymmetric import DOCS, SynonymEncoder, registered


def _fitted(base: SynonymEncoder, spec: str = "center,normalize") -> list:
    X = base.encode(list(DOCS.values()))
    chain = []
    for step in parse_transforms(spec):
        step.fit(X)
        X = step.transform(X)
        chain.append(step)
    return chain


def test_transformed_encoder_applies_the_chain_to_the_query_side() -> None:
    base = SynonymEncoder()
    chain = _fitted(base)
    enc = TransformedEncoder(base, chain)
    assert enc.asymmetric and enc.dim == base.dim
    queries = enc.encode_queries(["feline", "merlot"])
    expected = apply_chain(chain, base.encode_queries(["feline", "merlot"]))
    np.testing.assert_array_equal(queries, expected)
    # not the document side: "feline" as a document has no topic word
    assert not np.allclose(queries[0], enc.encode(["feline"])[0])
    # and the query lands on its document after the chain
    docs = enc.encode(list(DOCS.values()))
    assert int(np.argmax(docs @ queries[0])) == list(DOCS).index("d-cat")
    assert enc.encode_queries([]).shape == (0, base.dim)


def test_derived_space_queries_go_through_base_query_side_and_chain(store) -> None:
    from repspace.workflows.transform import derive_space

    with registered() as base:
        texts = list(DOCS.values())
        store.create_space("raw", dim=base.dim, provenance=base.provenance()).add(
            list(DOCS), base.encode(texts), texts=texts)
        derived = derive_space(store, "raw", "centered", "center,normalize")
        enc = encoder_for_space(derived)
        assert isinstance(enc, TransformedEncoder) and enc.asymmetric
        np.testing.assert_allclose(enc.encode_queries(["feline"]),
                                   apply_chain(enc.chain, base.encode_queries(["feline"])), rtol=1e-6)
