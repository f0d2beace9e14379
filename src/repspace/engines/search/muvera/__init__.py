"""Multi-vector search: MUVERA fixed-dimensional encodings, then exact Chamfer reranking.

A multi-vector item is a set of vectors (one per token, see
:func:`repspace.engines.encoders.tokens.encode_tokens`) and two sets are compared by
**Chamfer similarity** (ColBERT's late interaction, "max-sim"):
``chamfer(Q, P) = Σ_{q ∈ Q} max_{p ∈ P} <q, p>``. Exact search evaluates it
against every document; MUVERA (Dhulipala et al. 2024, "MUVERA: Multi-Vector
Retrieval via Fixed Dimensional Encodings") turns each set into one
fixed-dimensional vector (an *FDE*) whose inner product approximates Chamfer
similarity, so that a single-vector search finds candidates which are then
reranked exactly.

How an FDE is made (one *repetition*; ``reps`` independent ones are
concatenated):

1. **SimHash partitions.** ``k_sim`` random Gaussian hyperplanes give each
   vector ``k_sim`` sign bits, i.e. one of ``B = 2**k_sim`` partitions (here
   the bits read as a binary number; the paper's Gray-code numbering only
   renames the partitions).
2. **Projection.** Each vector is mapped by a random ``±1/√d_proj`` matrix to
   ``d_proj`` dimensions (``d_proj=None``: no projection). One matrix per
   repetition, shared by every partition, as in the paper.
3. **Aggregation, asymmetric.** A *query*'s block for partition ``k`` is the
   **sum** of its projected vectors in ``k``; a *document*'s is their
   **average**. With ``fill_empty``, a document partition holding none of its
   vectors gets the projected vector whose bits are nearest to the
   partition's in Hamming distance (the first such vector on ties), so that
   every query vector finds something to match. Queries are never filled.
4. Optionally, the concatenated ``reps · B · d_proj`` vector is reduced to
   ``final_dim`` by a Count-Sketch (each coordinate added with a random sign
   to one random output coordinate), which preserves inner products in
   expectation.

Then ``<fde_query(Q), fde_document(P)> = Σ_reps Σ_{q ∈ Q} <ψ(q), ψ(avg of P in q's partition)>``,
an estimate of ``reps · chamfer(Q, P)`` that gets better as ``reps`` grows.

Why this is written here: no library on the dependency list makes FDEs
(google/graph-mining's reference code is a C++/Python research tool, not a
package). The encodings are vectorised with numpy over every token of a
batch of documents; Chamfer scores are blocked matrix products with
segment maxima (``np.maximum.reduceat``), and each query's best are scored
again in float64, one pair at a time, so that order and ties do not depend on
the CPU (:data:`TIE_BAND`). :class:`MultiVectorIndex` searches
the FDEs exactly with :func:`repspace.core.exact.exact_search` (fine for
thousands of documents; a larger corpus would put them in an HNSW index).

Examples
--------
>>> import numpy as np
>>> from repspace.engines.search import normalize_rows
>>> rng = np.random.default_rng(0)
>>> docs = [normalize_rows(rng.standard_normal((int(n), 8))) for n in rng.integers(3, 9, size=50)]
>>> queries = [normalize_rows(d[:2] + 0.1) for d in docs[:3]]  # each query resembles one document
>>> index = MultiVectorIndex.build(docs, FDEConfig(dim=8, k_sim=3, d_proj=8, reps=8))
>>> scores, rows = index.search(queries, k=1, candidates=10)
>>> rows[:, 0].tolist()
[0, 1, 2]
>>> bool(np.array_equal(rows, index.exact_search(queries, k=1)[1]))
True
"""

from repspace.engines.search.muvera.chamfer import TIE_BAND, chamfer, chamfer_scores
from repspace.engines.search.muvera.fde import BATCH_ENTRIES, MAX_K_SIM, FDEConfig, fde_documents, fde_queries
from repspace.engines.search.muvera.index import MultiVectorIndex
from repspace.engines.search.muvera.maxsim import maxsim_search

__all__ = [
    "BATCH_ENTRIES",
    "MAX_K_SIM",
    "TIE_BAND",
    "FDEConfig",
    "MultiVectorIndex",
    "chamfer",
    "chamfer_scores",
    "fde_documents",
    "fde_queries",
    "maxsim_search",
]
