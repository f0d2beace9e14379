"""Exact MaxSim (:func:`repspace.engines.search.muvera.maxsim_search`): its three paths agree with a brute-force
loop and with each other, and its scores equal PyLate's ``colbert_scores`` on real token vectors.

The PyLate check runs ``pylate==1.6.0`` in a separate virtual environment (``make pylate-reference`` builds it;
``$REPSPACE_PYLATE_PYTHON`` may name another one's Python) from a subprocess on the same saved vectors, and skips,
saying so, where that environment is absent. Why a separate one: pip's resolution of ``pylate==1.6.0`` in the
project's environment replaces the pinned torch 2.13.0 (CPU) with torch 2.11.0 and two dozen CUDA packages (its
``fast-plaid`` pin; ``pip install --dry-run``), so it cannot be a test extra; its scoring module needs only torch,
numpy, transformers, datasets and tqdm, which the separate environment installs beside it (pylate with
``--no-deps``).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.search.muvera import FDEConfig, MultiVectorIndex, chamfer_scores, maxsim_search

pytestmark = pytest.mark.numerics

ROOT = Path(__file__).resolve().parents[3]
#: The Python of the separate environment holding pylate 1.6.0 (``make pylate-reference``).
PYLATE_PYTHON = Path(os.environ.get("REPSPACE_PYLATE_PYTHON", ROOT / ".venv-pylate" / "bin" / "python"))
SCRIPT = ROOT / "tests" / "_pylate_maxsim.py"
#: Cranfield subset of the PyLate check: documents, queries, tokens per text.
N_DOCS, N_QUERIES, MAX_LENGTH = 12, 4, 48


def _loop_maxsim(q: np.ndarray, d: np.ndarray) -> float:
    """ColBERT's score by its definition, one dot product at a time in float64."""
    return float(sum(max(float(np.dot(qi.astype(np.float64), dj.astype(np.float64))) for dj in d) for qi in q))


@pytest.fixture(scope="module")
def toy() -> tuple[MultiVectorIndex, list[np.ndarray], list[np.ndarray]]:
    rng = np.random.default_rng(7)
    docs = [rng.standard_normal((int(n), 16)).astype(np.float32) for n in rng.integers(1, 12, size=80)]
    docs[40] = docs[3].copy()  # a duplicate: ties go to the lower document on every path
    queries = [rng.standard_normal((int(n), 16)).astype(np.float32) for n in rng.integers(1, 8, size=6)]
    queries.append(docs[3][:2] + 0.01)
    return MultiVectorIndex.build(docs, FDEConfig(dim=16, k_sim=3, d_proj=8, reps=6)), docs, queries


def test_exact_path_is_the_definition(toy) -> None:
    """Every document's exact score equals the per-token loop (float32 output of a float64 sum: |s| * 2**-24, plus
    the float32 inputs' products summed exactly, so 1e-6 relative holds); order by score, then lower document."""
    index, docs, queries = toy
    scores, rows = maxsim_search(index, queries, k=len(docs))
    for i, q in enumerate(queries):
        want = np.array([_loop_maxsim(q, d) for d in docs])
        np.testing.assert_allclose(scores[i], want[rows[i]], rtol=1e-6, atol=1e-6)
        assert rows[i].tolist() == np.lexsort((np.arange(len(docs)), -want)).tolist()


def test_three_paths_agree(toy) -> None:
    """MUVERA with every document shortlisted, and a given shortlist that holds the exact top k (padded, repeated
    and shuffled), return the exact path's rows and scores bit for bit: one float64 pass settles them all."""
    index, docs, queries = toy
    exact = maxsim_search(index, queries, k=5)
    muvera = maxsim_search(index, queries, k=5, candidates=len(docs))
    rng = np.random.default_rng(0)
    extra = rng.integers(0, len(docs), size=(len(queries), 7))
    given = np.concatenate([exact[1], extra, exact[1][:, :2], np.full((len(queries), 3), -1)], axis=1)
    given = np.stack([rng.permutation(r) for r in given])
    mine = maxsim_search(index, queries, k=5, shortlist=given)
    for got in (muvera, mine):
        assert np.array_equal(got[1], exact[1]) and np.array_equal(got[0], exact[0])
    assert 3 in exact[1][-1] and 40 in exact[1][-1]  # the duplicate pair, in document order
    assert exact[1][-1].tolist().index(3) < exact[1][-1].tolist().index(40)


def test_a_shortlist_is_only_rescored(toy) -> None:
    """Documents outside the shortlist never appear; as many columns as the longest row's distinct documents (at
    most k), a shorter row padded with -1 / -inf."""
    index, docs, queries = toy
    scores, rows = maxsim_search(index, queries[:2], k=4, shortlist=np.array([[9, 2, -1, 9], [5, -1, -1, -1]]))
    assert rows.shape == (2, 2) and sorted(rows[0].tolist()) == [2, 9]
    assert rows[1].tolist() == [5, -1] and np.isneginf(scores[1][1])
    assert scores[1][0] == pytest.approx(_loop_maxsim(queries[1], docs[5]), rel=1e-6)


@pytest.mark.parametrize("kwargs, fragment", [
    ({"k": 0}, "k must be"),
    ({"k": 2, "candidates": 1}, "candidates"),
    ({"k": 2, "candidates": 10, "shortlist": np.zeros((1, 3), int)}, "not both"),
    ({"k": 2, "shortlist": np.array([[0, 80]])}, "[0, 80)"),
    ({"k": 2, "shortlist": np.array([[0.5, 1.0]])}, "shortlist must be"),
    ({"k": 2, "shortlist": np.zeros((2, 3), int)}, "n_queries=1"),
])
def test_bad_input_is_one_error(toy, kwargs, fragment) -> None:
    index, _, queries = toy
    with pytest.raises(InputError) as e:
        maxsim_search(index, queries[:1], **kwargs)
    assert fragment in str(e.value) and "\n" not in str(e.value)


@pytest.fixture(scope="module")
def cranfield_tokens(shared_data: Path) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """L2-normalised MiniLM token states (last layer, no [CLS]/[SEP]) of a few Cranfield documents and queries."""
    from repspace.engines.encoders import get_encoder, set_threads
    from repspace.engines.encoders.tokens import encode_tokens
    from repspace.engines.eval.retrieval import load_beir

    data = load_beir(shared_data / "cranfield-beir")
    enc = get_encoder("hf-layers:minilm", max_length=MAX_LENGTH)
    before = set_threads(None)
    set_threads(1)
    try:
        docs = encode_tokens(enc, list(data.corpus_texts[:N_DOCS]))
        queries = encode_tokens(enc, list(data.query_texts[:N_QUERIES]))
    finally:
        set_threads(before)
    return docs, queries


@pytest.mark.slow
def test_scores_equal_pylate_on_cranfield_token_vectors(cranfield_tokens, tmp_path) -> None:
    """PyLate 1.6.0's ``colbert_scores`` (torch, float64) and ours on the same saved vectors: equal to 1e-5.

    Ours are float32 roundings of a float64 sum of at most MAX_LENGTH terms in [-1, 1]: off by at most
    MAX_LENGTH * 2**-24 = 2.9e-6 from PyLate's float64 figure; the blocked float32 scores of
    :func:`chamfer_scores` add each dot product's float32 error (384 terms, about 384 * 2**-24 per token at worst,
    far less in practice): 1e-5 absolute holds for both, and the order is PyLate's.
    """
    if not PYLATE_PYTHON.exists():
        pytest.skip(f"no PyLate reference environment at {PYLATE_PYTHON} (make pylate-reference builds it; "
                    "$REPSPACE_PYLATE_PYTHON may name another)")
    docs, queries = cranfield_tokens
    saved = tmp_path / "tokens.npz"
    np.savez(saved, **{f"q{i}": q for i, q in enumerate(queries)}, **{f"d{j}": d for j, d in enumerate(docs)})
    done = subprocess.run([str(PYLATE_PYTHON), str(SCRIPT), str(saved), str(tmp_path / "pylate.npy")],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": ""})
    assert done.returncode == 0, done.stderr[-3000:]
    reference = np.load(tmp_path / "pylate.npy")
    assert reference.shape == (N_QUERIES, N_DOCS) and np.isfinite(reference).all()
    index = MultiVectorIndex.build(docs, FDEConfig(dim=docs[0].shape[1]))
    scores, rows = maxsim_search(index, queries, k=N_DOCS)
    for i in range(N_QUERIES):
        np.testing.assert_allclose(scores[i], reference[i][rows[i]], rtol=0, atol=1e-5)
        np.testing.assert_allclose(chamfer_scores(queries[i], docs), reference[i], rtol=0, atol=1e-5)
        assert np.all(np.diff(reference[i][rows[i]]) <= 1e-5)  # PyLate's order, but for ties within 1e-5
    top = maxsim_search(index, queries, k=3, candidates=N_DOCS)  # MUVERA + rescoring, every doc shortlisted
    assert np.array_equal(top[1], rows[:, :3])
    print(f"\nPyLate colbert_scores vs ours, {N_QUERIES} queries x {N_DOCS} Cranfield docs: largest difference "
          f"{np.max(np.abs(np.take_along_axis(reference, rows, 1) - scores)):.2e}")
