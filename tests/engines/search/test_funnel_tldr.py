"""The ``tldrD`` first stage: the spec grammar, and search equal to brute force over the mapped vectors.

The funnel trains TLDR (:mod:`repspace.core.tldr`) on the sample; the test takes the map it
holds, maps GloVe rows and queries itself in float64 (``x @ W.T``, renormalised for cosine), and
searches them by brute force: the first stage must return the same rows, and ``>rerank10`` must
return the exact top 10 among the brute-force top 100. A saved and loaded index answers the same.
"""

from __future__ import annotations

import faiss
import numpy as np
import pytest
from _data_subsets import glove_rows

from repspace.core.errors import InputError
from repspace.core.exact import exact_search, normalize_rows
from repspace.engines.search.funnel import FunnelIndex
from repspace.engines.search.specs import ACCEPTED_FORMS, parse_spec

pytestmark = pytest.mark.numerics

N, N_QUERIES, K = 3000, 50, 10


def test_spec_grammar():
    spec = parse_spec("TLDR64, HNSW32, int8 > rerank")
    assert (str(spec), spec.slug, spec.kind, spec.dims, spec.graph_m) == (
        "tldr64,hnsw32,int8>rerank10", "tldr64-hnsw32-int8", "tldr", 64, 32)
    assert spec.needs_training and spec.vector_bytes(384) == 64 + 8 + 4 * 2 * 32
    assert "tldr64[,hnsw32][,int8|fp16][>rerank10]" in ACCEPTED_FORMS


@pytest.mark.parametrize("text, message", [
    ("tldr0>rerank", "dimensions must be between 1"),
    ("tldr>rerank", "tldr needs a number, e.g. tldr64"),
    ("tldr8,ef64", "ef needs a graph"),
    ("tldr8,ivf64", "does not fit after tldr8"),
])
def test_bad_specs(text, message):
    with pytest.raises(InputError, match=message):
        parse_spec(text)


def test_more_dimensions_than_the_vectors_have():
    with pytest.raises(InputError, match=r"tldr64 keeps more dimensions than the vectors have \(50\)"):
        FunnelIndex("tldr64>rerank", 50, "cosine")


@pytest.fixture(scope="module")
def glove(shared_data):
    x = glove_rows(0, N)
    return x, glove_rows(N, N_QUERIES)


@pytest.fixture(scope="module")
def built(glove):
    x, _ = glove
    ix = FunnelIndex("tldr8", 50, "cosine").train(x)
    ix.add(x, np.arange(N))
    return ix


def _mapped(ix, v):
    W = ix._proj.astype(np.float64)  # the (8, 50) map the stage holds
    return normalize_rows((normalize_rows(v).astype(np.float64) @ W.T).astype(np.float32))


def test_first_stage_equals_brute_force_over_the_mapped_vectors(glove, built):
    x, q = glove
    assert isinstance(built.pca_, faiss.LinearTransform) and built.reduced_dim == 8
    scores, rows = built.search(q, K)
    ref_scores, ref_rows = exact_search(_mapped(built, q), _mapped(built, x), K, "ip")
    np.testing.assert_allclose(scores, ref_scores, atol=1e-5)
    same = rows == ref_rows
    assert same.mean() > 0.99, same.mean()  # a swap only where two scores tie within float32 rounding
    assert np.all(np.abs(scores[~same] - ref_scores[~same]) <= 1e-5)


def test_rerank_is_the_exact_top_of_the_brute_force_shortlist(glove, built):
    x, q = glove
    view = built.with_search_params("tldr8>rerank10")
    _, rows = view.search(q, K, fetch=lambda r: x[r])
    _, short = exact_search(_mapped(built, q), _mapped(built, x), K * 10, "ip")
    xn, qn = normalize_rows(x).astype(np.float64), normalize_rows(q).astype(np.float64)
    for i in range(N_QUERIES):
        s = xn[short[i]] @ qn[i]
        best = short[i][np.lexsort((short[i], -s))[:K]]
        assert set(rows[i]) == set(best), i


def test_saved_index_answers_the_same(glove, built, tmp_path):
    _, q = glove
    path = str(tmp_path / "tldr8.faiss")
    built.save(path)
    back = FunnelIndex.load(path, "tldr8", 50, "cosine")
    assert np.array_equal(back.search(q, K)[1], built.search(q, K)[1])
    assert np.array_equal(back._proj, built._proj)
