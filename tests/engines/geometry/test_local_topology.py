"""Local-topology features against a brute-force computation: scikit-learn's NearestNeighbors (algorithm="brute",
float64) for the neighbours, the Levina-Bickel formula written out, scipy.stats.entropy for both entropies."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import softmax
from scipy.stats import entropy
from sklearn.neighbors import NearestNeighbors

from repspace.core.errors import InputError
from repspace.engines.geometry.intrinsic import local_id
from repspace.engines.geometry.local_topology import local_topology


def _reference(X, base, k, metric, tau=0.1, labels=None):
    """The four features from sklearn's brute-force neighbours in float64, written out."""
    X = np.asarray(X, np.float64)
    B = X if base is None else np.asarray(base, np.float64)
    own = base is None
    nn = NearestNeighbors(n_neighbors=k + own, metric={"cosine": "cosine", "l2": "euclidean"}[metric],
                          algorithm="brute").fit(B)
    dist, idx = nn.kneighbors(X)
    if own:  # the item itself is its own nearest (distinct rows): drop it
        assert (idx[:, 0] == np.arange(len(X))).all()
        dist, idx = dist[:, 1:], idx[:, 1:]
    if metric == "cosine":
        sims, T = 1 - dist, np.sqrt(2 * dist)
    else:
        sims, T = -dist, dist
    with np.errstate(divide="ignore"):  # a 0 distance (the query in the datastore): unused by the caller
        lid = (k - 1) / np.log(T[:, -1:] / T[:, :-1]).sum(axis=1)
    if labels is None:
        ent = entropy(softmax(sims / tau, axis=1), axis=1)
    else:
        lab = np.asarray(labels)
        ent = np.array([entropy(np.unique(lab[row], return_counts=True)[1]) for row in idx])
    return {"kdist": dist[:, -1], "mean_kdist": dist.mean(axis=1), "local_id": lid, "entropy": ent}, idx


def _close(t, ref, *, dist_tol, lid_rtol):
    assert np.allclose(t.kdist, ref["kdist"], atol=dist_tol, rtol=0)
    assert np.allclose(t.mean_kdist, ref["mean_kdist"], atol=dist_tol, rtol=0)
    assert np.allclose(t.local_id, ref["local_id"], rtol=lid_rtol, atol=0)
    assert np.allclose(t.entropy, ref["entropy"], atol=1e-4, rtol=0)


@pytest.fixture()
def glove(glove_vectors) -> np.ndarray:
    return np.asarray(glove_vectors[:3000], np.float64)


def test_self_cosine_equals_brute_force(glove):
    X = glove[:1500]
    t = local_topology(X, k=10)
    ref, _ = _reference(X, None, 10, "cosine")
    # float32 search: cosine distances within ~1e-6, the log ratios of the local ID within 1e-3
    _close(t, ref, dist_tol=2e-6, lid_rtol=2e-3)
    assert (t.method, t.against, t.entropy_of, t.n, t.m) == ("exact", False, "softmax", 1500, 1500)


def test_against_another_set_l2_with_labels_equals_brute_force(glove):
    X, B = glove[:400], glove[1000:3000]
    labels = [f"c{i % 7}" for i in range(len(B))]
    t = local_topology(X, B, k=8, metric="l2", labels=labels)
    ref, _ = _reference(X, B, 8, "l2", labels=labels)
    _close(t, ref, dist_tol=1e-4, lid_rtol=2e-3)
    assert (t.against, t.entropy_of, t.temperature) == (True, "labels", None)


def test_ip_distances_and_euclidean_local_id():
    rng = np.random.default_rng(0)
    X, B = rng.standard_normal((200, 6)), rng.standard_normal((900, 6))
    t = local_topology(X, B, k=5, metric="ip")
    ips = X @ B.T
    top = np.argsort(-ips, axis=1, kind="stable")[:, :5]
    s = np.take_along_axis(ips, top, axis=1)
    assert np.allclose(t.kdist, -s[:, -1], atol=1e-5)
    T = np.sort(np.linalg.norm(X[:, None, :] - B[top], axis=2), axis=1)
    assert np.allclose(t.local_id, 4 / np.log(T[:, -1:] / T[:, :-1]).sum(axis=1), rtol=1e-3)
    assert np.allclose(t.entropy, entropy(softmax(s / 0.1, axis=1), axis=1), atol=1e-4)


def test_local_id_is_the_diagnose_estimator(glove):
    X = glove[:1200]
    t = local_topology(X, k=20, metric="l2")
    assert np.allclose(t.local_id, local_id(X, 20, exact=True), rtol=1e-9)


def test_hnsw_graph_reports_recall_and_agrees_where_neighbours_agree(glove):
    X = glove[:2500]
    seen = []
    t = local_topology(X, k=10, exact=False, progress=lambda *a: seen.append(a))
    ref, _ = _reference(X, None, 10, "cosine")
    assert t.method == "hnsw" and t.recall >= 0.95
    same = np.isclose(t.kdist, ref["kdist"], atol=2e-6)
    assert same.mean() >= 0.8
    assert ("knn graph", 1, 1) in seen and seen[-1] == ("local topology", 2500, 2500)


def test_blocks_do_not_change_the_result(glove, monkeypatch):
    import repspace.engines.geometry.local_topology as lt

    X = glove[:700]
    whole = local_topology(X, k=6)
    monkeypatch.setattr(lt, "BLOCK", 64)
    seen = []
    blocked = local_topology(X, k=6, progress=lambda *a: seen.append(a))
    for f in ("kdist", "mean_kdist", "local_id", "entropy"):
        assert np.array_equal(whole.feature(f), blocked.feature(f))
    assert len(seen) == 1 + 11 and seen[-1] == ("local topology", 700, 700)


def test_summary_json(glove):
    d = local_topology(glove[:300], k=5).to_dict()
    assert set(d["features"]) == {"kdist", "mean_kdist", "local_id", "entropy"}
    assert d["features"]["entropy"]["max"] <= np.log(5) + 1e-9
    assert d["features"]["kdist"]["q50"] == pytest.approx(
        float(np.median(local_topology(glove[:300], k=5).kdist)), abs=1e-9)


@pytest.mark.parametrize("call, fragment", [
    (lambda: local_topology(np.eye(5), k=1), "k must be"),
    (lambda: local_topology(np.eye(5), k=5), "needs at least 6"),
    (lambda: local_topology(np.eye(5), np.eye(3), k=2), "dimensions"),
    (lambda: local_topology(np.eye(5), k=2, metric="hamming"), "metric"),
    (lambda: local_topology(np.eye(5), k=2, metric="poincare"), "vector-space"),
    (lambda: local_topology(np.eye(5), k=2, labels=["a"]), "one per datastore row"),
    (lambda: local_topology(np.eye(5), k=2, temperature=0), "temperature"),
    (lambda: local_topology(np.full((5, 2), np.inf), k=2), "finite"),
])
def test_bad_input_is_one_error_line(call, fragment):
    with pytest.raises(InputError, match=fragment) as e:
        call()
    assert "\n" not in str(e.value)


def test_exclude_leaves_the_named_datastore_row_out(glove):
    X, B = glove[:300], glove[:900]  # the queries are the datastore's first 300 rows
    t = local_topology(X, B, k=6, metric="l2", exclude=np.arange(300))
    ref, idx = _reference(X, B, 6 + 1, "l2")
    assert (idx[:, 0] == np.arange(300)).all()
    d = np.sort(np.linalg.norm(X[:, None] - B[idx[:, 1:]], axis=2), axis=1)
    assert np.allclose(t.kdist, d[:, -1], atol=1e-4)
    none = local_topology(X, B, k=6, metric="l2", exclude=np.full(300, -1))
    assert np.allclose(none.kdist, local_topology(X, B, k=6, metric="l2").kdist)
    with pytest.raises(InputError, match="exclude applies"):
        local_topology(X, k=6, exclude=np.arange(300))
    with pytest.raises(InputError, match="one datastore row"):
        local_topology(X, B, k=6, exclude=np.arange(5))
