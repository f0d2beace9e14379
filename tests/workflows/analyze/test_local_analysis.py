"""The similarity-ci and local-topology workflows on stored spaces: sets selected by id or by a metadata field
equal the engine on the same rows; features saved as metadata; a datastore that holds the item finds it at 0."""

from __future__ import annotations

import numpy as np
import pytest

from repspace.analyze import local_topology, local_topology_space, similarity_ci, similarity_ci_space
from repspace.core.errors import InputError
from repspace.store import example_store


@pytest.fixture()
def store():
    st = example_store()
    rng = np.random.default_rng(0)
    X = rng.standard_normal((120, 8))
    st.create_space("s", dim=8).add([f"i{r}" for r in range(120)], X,
                                    metadata=[{"word": f"w{r % 12}"} for r in range(120)])
    st.create_space("half", dim=8).add([f"i{r}" for r in range(60)], X[:60])
    return st, X.astype(np.float32).astype(np.float64)


def test_sets_by_field_are_every_context_of_the_word(store):
    st, X = store
    r = similarity_ci_space(st.space("s"), ["w0"], ["w1"], ["w2"], by="word", resamples=100, spread_pairs=None)
    rows = [np.arange(120)[np.arange(120) % 12 == j] for j in range(3)]
    direct = similarity_ci(X[rows[0]], X[rows[1]], X[rows[2]], resamples=100)
    assert r.ci.to_dict() == direct.to_dict() and r.sizes == (10, 10, 10) and r.spread is None
    with pytest.raises(InputError, match="set b is empty"):
        similarity_ci_space(st.space("s"), ["i0"], [])


def test_saved_features_and_a_datastore_holding_the_item(store):
    st, X = store
    r = local_topology_space(st.space("s"), k=4, save="t")
    assert r.saved == 120
    meta = st.space("s").get(["i7"])[0].metadata
    assert meta["t_kdist"] == round(float(r.topology.kdist[7]), 6) and meta["word"] == "w7"
    # the first 60 items are in the datastore too: left out of their own neighbours by default
    a = local_topology_space(st.space("s"), k=4, against=st.space("half"))
    assert a.topology.against and a.to_dict()["against"] == "half" and a.same_id_excluded == 60
    own = local_topology(X[:60], k=4)  # the first 60 against themselves: the same neighbours
    assert np.allclose(a.topology.kdist[:60], own.kdist, atol=1e-6)
    assert np.allclose(a.topology.kdist[60:], local_topology(X[60:], X[:60], 4).kdist, atol=1e-6)
    kept = local_topology_space(st.space("s"), k=4, against=st.space("half"), exclude_same_id=False)
    assert kept.same_id_excluded == 0
    assert np.allclose(kept.topology.kdist, local_topology(X, X[:60], 4).kdist, atol=1e-6)
    assert np.isfinite(kept.topology.local_id).all()  # a 0 distance to itself, floored: finite
