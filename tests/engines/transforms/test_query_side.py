"""A derived space's encoder (base encoder + fitted chain) keeps the base encoder's query side."""

from __future__ import annotations

import numpy as np
from _asymmetric import DOCS, SynonymEncoder, registered

from repspace.engines.transforms import parse_transforms
from repspace.workflows.stored_transforms import TransformedEncoder, encoder_for_space

# By hand, from the test encoder's vectors (topic counts for cat, dog, sea, wine, then 0.1). The four documents are
# the four unit topic vectors, each with 0.1 last, so "center" fitted on them subtracts (1/4, 1/4, 1/4, 1/4, 0.1).
# "feline" as a query is read as "cat": (1, 0, 0, 0, 0.1), centred (3/4, -1/4, -1/4, -1/4, 0), whose norm is
# sqrt(3/4); "merlot" likewise on the wine axis. As a document "feline" has no topic word: (0, 0, 0, 0, 0.1),
# centred (-1/4, -1/4, -1/4, -1/4, 0), norm 1/2.
_S = np.sqrt(0.75)
FELINE_QUERY = np.array([0.75, -0.25, -0.25, -0.25, 0.0]) / _S
MERLOT_QUERY = np.array([-0.25, -0.25, -0.25, 0.75, 0.0]) / _S
FELINE_DOCUMENT = np.array([-0.5, -0.5, -0.5, -0.5, 0.0])


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
    calls = base.query_calls
    queries = enc.encode_queries(["feline", "merlot"])
    assert base.query_calls == calls + 1  # through the base encoder's query side
    assert queries.dtype == np.float32 and queries.shape == (2, base.dim)
    np.testing.assert_allclose(queries, [FELINE_QUERY, MERLOT_QUERY], atol=1e-6)
    # not the document side: "feline" as a document has no topic word
    np.testing.assert_allclose(enc.encode(["feline"]), [FELINE_DOCUMENT], atol=1e-6)
    # and the query lands on its document after the chain
    docs = enc.encode(list(DOCS.values()))
    assert int(np.argmax(docs @ queries[0])) == list(DOCS).index("d-cat")
    assert int(np.argmax(docs @ queries[1])) == list(DOCS).index("d-wine")
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
        calls = base.query_calls
        # the chain was fitted on the stored documents: the same hand-computed vectors as above
        np.testing.assert_allclose(enc.encode_queries(["feline", "merlot"]), [FELINE_QUERY, MERLOT_QUERY], atol=1e-6)
        assert base.query_calls == calls + 1
        np.testing.assert_allclose(enc.encode(["feline"]), [FELINE_DOCUMENT], atol=1e-6)
