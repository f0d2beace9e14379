"""Search of a multi-vector space equals :func:`maxsim_search` on the same arrays (MUVERA + rescoring, exact, a
filter's matches), and its exact MaxSim scores equal PyLate's ``colbert_scores`` on token vectors read back from
the store; options that only a dense space has are one error line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from repspace.core.errors import InputError, NotFoundError
from repspace.engines.search.muvera import FDEConfig, MultiVectorIndex, maxsim_search
from repspace.workflows.search import multivector_index, search_space

pytestmark = pytest.mark.numerics

TESTS = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(TESTS / "engines" / "search"))


@pytest.fixture
def space(store):
    rng = np.random.default_rng(11)
    sets = [rng.standard_normal((int(n), 16)).astype(np.float32) for n in rng.integers(1, 10, size=300)]
    sets = [s / np.linalg.norm(s, axis=1, keepdims=True) for s in sets]
    sp = store.create_space("tok", dim=16, metric="ip", layout="multivector")
    sp.add([f"d{i}" for i in range(300)], sets, metadata=[{"n": i} for i in range(300)])
    return sp, sets


def _ids(res) -> list[str]:
    return [h.id for h in res]


def test_search_equals_maxsim_search_on_the_same_arrays(space) -> None:
    """Same rows, scores equal to float32 rounding of the same float64 sums (bit for bit: one settle pass)."""
    sp, sets = space
    index = MultiVectorIndex.build(sets, FDEConfig(dim=16))
    rng = np.random.default_rng(3)
    for q in [sets[5][:3] + 0.05 * rng.standard_normal((3, 16)).astype(np.float32), sets[77]]:
        exact = maxsim_search(index, [q], k=10)
        got = sp.search(q, k=10, method="exact")
        assert _ids(got) == [f"d{r}" for r in exact[1][0]] and got.plan.method == "maxsim-exact"
        assert [h.score for h in got] == exact[0][0].tolist()
        muvera = maxsim_search(index, [q], k=10, candidates=40)
        got = sp.search(q, k=10, candidates=40)
        assert _ids(got) == [f"d{r}" for r in muvera[1][0]] and got.plan.method == "muvera>maxsim"
        assert [h.score for h in got] == muvera[0][0].tolist() and got.plan.candidates == 40


def test_an_id_query_leaves_its_item_out_and_a_filter_scores_its_matches(space) -> None:
    sp, sets = space
    index = MultiVectorIndex.build(sets, FDEConfig(dim=16))
    exact = maxsim_search(index, [sets[9]], k=6)
    assert exact[1][0][0] == 9  # its own item scores highest
    assert _ids(sp.search(id="d9", k=5, method="exact")) == [f"d{r}" for r in exact[1][0][1:]]
    allowed = np.arange(100, 300)
    want = maxsim_search(index, [sets[9]], k=5, shortlist=allowed[None, :])
    got = sp.search(id="d9", k=5, where="n >= 100")
    assert _ids(got) == [f"d{r}" for r in want[1][0]] and got.plan.candidates == 200


def test_index_is_built_once_per_generation_and_sees_deletes(space) -> None:
    sp, sets = space
    assert multivector_index(sp)[2] == "built" and multivector_index(sp)[2] == "loaded"
    top = _ids(sp.search(sets[4], k=1, method="exact"))
    assert top == ["d4"]
    sp.delete(["d4"])
    rows, index, action = multivector_index(sp)
    assert action == "built" and len(index) == 299 and 4 not in rows.tolist()
    assert "d4" not in _ids(sp.search(sets[4], k=5, method="exact"))
    assert "d4" not in _ids(sp.search(sets[4], k=5, candidates=20))


@pytest.mark.parametrize("options, fragment", [
    ({"hybrid": True, "query": "x"}, "hybrid does not apply to multi-vector space"),
    ({"mmr": 0.5}, "mmr does not apply"),
    ({"hubness": "csls"}, "hubness does not apply"),
    ({"ef": 32}, "ef does not apply"),
    ({"method": "hnsw"}, "method hnsw does not apply"),
    ({"index": "hnsw16"}, "index does not apply"),
    ({"method": "exact", "candidates": 50}, "do not combine with exact"),
    ({"candidates": 3}, "must be at least k (10)"),
    ({"query": "a text"}, "ingested precomputed"),
    ({"query": np.ones((2, 5))}, "(n_tokens, 16)"),
    ({"query": np.full((1, 16), np.nan)}, "NaN or inf"),
    ({"query": {"3": 1.0}}, "a sparse query does not apply"),
])
def test_dense_only_options_and_bad_queries_are_one_line(space, options, fragment) -> None:
    sp, sets = space
    options = dict(options)
    query = options.pop("query", sets[0])
    with pytest.raises(InputError) as e:
        search_space(sp, query, k=10, **options)
    assert fragment in str(e.value) and "\n" not in str(e.value)


def test_unknown_id_and_candidates_on_a_dense_space(space, store) -> None:
    sp, _ = space
    with pytest.raises(NotFoundError, match="'nope'"):
        sp.search(id="nope")
    dense = store.create_space("dense", dim=2)
    dense.add(["a"], [[1.0, 0.0]])
    for query in (np.array([1.0, 0.0]), None):
        with pytest.raises(InputError, match="candidates .* apply to multi-vector spaces"):
            dense.search(query, candidates=10, **({} if query is not None else {"id": "a"}))


@pytest.mark.slow
def test_exact_maxsim_equals_pylate_on_stored_cranfield_tokens(store, shared_data, tmp_path) -> None:
    """Cranfield texts ingested as MiniLM token states (the CLI's recipe), read back from the store, scored by
    PyLate 1.6.0's ``colbert_scores`` (float64, its own venv): our exact search's scores equal them to 1e-5 (float32
    output of a float64 sum of at most 48 cosines, see test_maxsim.py) and its order is theirs."""
    from test_maxsim import MAX_LENGTH, PYLATE_PYTHON, SCRIPT

    python = Path(os.environ.get("REPSPACE_PYLATE_PYTHON", PYLATE_PYTHON))
    if not python.exists():
        pytest.skip(f"no PyLate reference environment at {python} (make pylate-reference builds it; "
                    "$REPSPACE_PYLATE_PYTHON may name another)")
    from repspace.engines.eval.retrieval import load_beir
    from repspace.workflows.ingest import ingest_multivector
    from repspace.workflows.ingest.readers import Records

    data = load_beir(shared_data / "cranfield-beir")
    n_docs = 20
    ingest_multivector(store, "cran", Records("cranfield", list(data.corpus_ids[:n_docs]),
                                              list(data.corpus_texts[:n_docs]), None, [{}] * n_docs),
                       max_length=MAX_LENGTH)
    sp = store.space("cran")
    docs = sp.token_sets(np.arange(n_docs))
    from repspace.workflows.token_recipe import text_query_tokens

    queries = [text_query_tokens(sp, t) for t in data.query_texts[:3]]
    saved = tmp_path / "tokens.npz"
    np.savez(saved, **{f"q{i}": q for i, q in enumerate(queries)}, **{f"d{j}": d for j, d in enumerate(docs)})
    done = subprocess.run([str(python), str(SCRIPT), str(saved), str(tmp_path / "pylate.npy")],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": ""})
    assert done.returncode == 0, done.stderr[-3000:]
    reference = np.load(tmp_path / "pylate.npy")
    for i, text in enumerate(data.query_texts[:3]):
        res = sp.search(text, k=n_docs, method="exact")
        rows = [data.corpus_ids.index(h.id) for h in res]
        np.testing.assert_allclose([h.score for h in res], reference[i][rows], rtol=0, atol=1e-5)
        assert np.all(np.diff(reference[i][rows]) <= 1e-5)
