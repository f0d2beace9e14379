"""Document similarity profiles against a direct computation: Cranfield abstracts cut into sentences, embedded by
the static encoder, each document's series and matrix recomputed with loops over its sentences."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.analyze import doc_profiles

pytestmark = pytest.mark.numerics


@pytest.fixture(scope="module")
def sentences(shared_data):
    from repspace.engines.encoders import get_encoder

    path = shared_data / "cranfield-beir" / "corpus.jsonl"
    if not path.is_file():
        pytest.skip(f"{path} is absent (the shared data sets)")
    texts, docs, pos = [], [], []
    for line in path.read_text(encoding="utf-8").splitlines()[:40]:
        d = json.loads(line)
        for p, s in enumerate(t for t in re.split(r"(?<=\.)\s+", d["text"]) if t.strip()):
            texts.append(s)
            docs.append(d["_id"])
            pos.append(p)
    return np.asarray(get_encoder("static").encode(texts), dtype=np.float64), docs, pos


def test_series_and_matrices_equal_loops_over_each_documents_sentences(sentences):
    X, docs, pos = sentences
    perm = np.random.default_rng(0).permutation(len(X))  # rows shuffled: the profile must restore the order
    r = doc_profiles(X[perm], [docs[i] for i in perm], [pos[i] for i in perm], ids=[str(i) for i in perm])
    cos = lambda a, b: float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))  # noqa: E731
    assert r.n_documents == len(set(docs)) and sum(p.n_sentences for p in r.documents) == len(X)
    means = []
    for p in r.documents:
        rows = sorted((i for i in range(len(X)) if docs[i] == p.document), key=lambda i: pos[i])
        assert p.ids == [str(i) for i in rows] and p.positions == sorted(pos[i] for i in rows)
        want = [cos(X[a], X[b]) for a, b in zip(rows, rows[1:])]
        # float64 cosines of 64-d rows: rounding near 1e-16 per product, far below 1e-12
        assert np.allclose(p.successive, want, atol=1e-12)
        M = [[cos(X[a], X[b]) for b in rows] for a in rows]
        assert np.allclose(p.matrix, M, atol=1e-12)
        if len(rows) > 1:
            off = [M[a][b] for a in range(len(rows)) for b in range(len(rows)) if a != b]
            assert p.mean_within == pytest.approx(np.mean(off), abs=1e-12)
            assert p.min_successive == pytest.approx(min(want), abs=1e-12)
            means.append(np.mean(want))
    assert r.mean_successive == pytest.approx(np.mean(means), abs=1e-12)
    # sentences of one abstract are closer than sentences of two different ones
    assert r.mean_within > r.mean_between and r.n_between_pairs > 90_000


def test_bad_positions_are_refused(sentences):
    X, docs, pos = sentences
    with pytest.raises(InputError, match="two sentences at one position"):
        doc_profiles(X[:3], ["a"] * 3, [0, 1, 1])
    with pytest.raises(InputError, match="positions for"):
        doc_profiles(X[:3], ["a"] * 3, [0, 1])
