"""One query is searched on one FAISS OpenMP thread (`core.threads.one_faiss_thread`): the same rows and scores
as the batched search on every thread, and the caller's thread count is back afterwards, also after an error."""

from __future__ import annotations

import faiss
import numpy as np
import pytest

from repspace.core.space import Metric
from repspace.core.threads import one_faiss_thread
from repspace.engines.search.funnel import FunnelIndex
from repspace.engines.search.hnsw import HNSWIndex, HNSWParams

pytestmark = pytest.mark.numerics


@pytest.fixture
def two_threads():
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(2)
    yield
    faiss.omp_set_num_threads(before)


def _data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    return rng.standard_normal((3000, 24)).astype(np.float32), rng.standard_normal((40, 24)).astype(np.float32)


def test_hnsw_one_query_per_call_equals_the_batch(two_threads):
    x, q = _data()
    index = HNSWIndex(24, Metric.COSINE, HNSWParams(m=16))
    index.add(x, np.arange(len(x)))
    batch_d, batch_i = index.search(q, k=10, ef=48)
    for j in range(len(q)):
        d, i = index.search(q[j], k=10, ef=48)
        assert faiss.omp_get_max_threads() == 2
        np.testing.assert_array_equal(i[0], batch_i[j])
        np.testing.assert_array_equal(d[0], batch_d[j])  # one thread per query either way: the same arithmetic


def test_funnel_one_query_per_call_equals_the_batch(two_threads):
    x, q = _data()
    index = FunnelIndex("hnsw16,int8", 24, Metric.COSINE).train(x)
    index.add(x, np.arange(len(x)))
    batch_d, batch_i = index.search(q, 10, ef=48)
    for j in range(len(q)):
        d, i = index.search(q[j], 10, ef=48)
        assert faiss.omp_get_max_threads() == 2
        np.testing.assert_array_equal(i[0], batch_i[j])
        np.testing.assert_array_equal(d[0], batch_d[j])


def test_the_thread_count_comes_back_after_an_error(two_threads):
    with pytest.raises(RuntimeError), one_faiss_thread(1):
        assert faiss.omp_get_max_threads() == 1
        raise RuntimeError("inside")
    assert faiss.omp_get_max_threads() == 2
    with one_faiss_thread(5):  # several queries keep every thread
        assert faiss.omp_get_max_threads() == 2
