"""A sparse space searched with ``index="sparse,seismic"``: equal to the exact search when nothing is pruned,
filtered, persisted per generation (a second process loads what the first built) and rebuilt when rows change.

The reference is the space's own exact search (``index=None``, itself checked against scipy.sparse
brute force in test_sparse_search.py): with ``lambda=all, alpha=1, heap=0, cut=all, rescore=2``
Seismic scores every row sharing a feature with the query and the best are scored again from the
stored weights, so ids must be equal and scores equal to 1e-6.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sps

from repspace.core.errors import InputError
from repspace.engines.search.seismic import parse_seismic_spec
from repspace.workflows.search.indexes import build_index, drop_index, list_indexes
from repspace.workflows.search.seismic import seismic_paths

pytestmark = pytest.mark.numerics

NO_PRUNING = "sparse,seismic,lambda=all,alpha=1,heap=0,cut=all,rescore=2"


def _space(store, name: str = "s", metric: str = "ip", n: int = 600, n_features: int = 80, seed: int = 0):
    m = sps.random_array((n, n_features), density=0.08, format="csr", dtype=np.float32,
                         rng=np.random.default_rng(seed))
    m.data = (m.data + 0.05).astype(np.float32)
    m.sort_indices()
    sp = store.create_space(name, dim=n_features, metric=metric, layout="sparse")
    sp.add([f"d{i}" for i in range(n)], m, metadata=[{"group": i % 10} for i in range(n)])
    return sp


def _same(a, b) -> None:
    assert [h.id for h in a] == [h.id for h in b]
    np.testing.assert_allclose([h.score for h in a], [h.score for h in b], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("metric", ["ip", "cosine"])
def test_no_pruning_equals_the_exact_search_and_the_index_is_built_once(store, metric):
    sp = _space(store, metric=metric)
    first = sp.search(id="d3", k=10, index=NO_PRUNING)
    assert first.plan.method == "sparse-seismic" and first.plan.index_action == "built"
    _same(first, sp.search(id="d3", k=10))
    for i in (5, 77, 412):
        res = sp.search(id=f"d{i}", k=10, index=NO_PRUNING)
        assert res.plan.index_action == "loaded"
        _same(res, sp.search(id=f"d{i}", k=10))
    query = {"3": 1.0, "17": 0.5, "60": 2.0}
    _same(sp.search(query, k=25, index=NO_PRUNING), sp.search(query, k=25))


def test_a_filter_over_fetches_or_scores_its_matches(store):
    sp = _space(store)
    broad, narrow = "group < 8", "group = 3"  # 80% of the rows; 10% (Seismic would be asked for 40% of them)
    for where, method in ((broad, "sparse-seismic"), (narrow, "sparse-exact")):
        res = sp.search(id="d9", k=10, where=where, index=NO_PRUNING)
        assert res.plan.method == method and res.plan.candidates == (480 if where == broad else 60)
        _same(res, sp.search(id="d9", k=10, where=where))
    assert "the filter's matches among 28 rows found" in sp.search(id="d9", k=10, where=broad,
                                                                     index=NO_PRUNING).plan.reason


@pytest.mark.slow
def test_a_second_process_loads_the_persisted_index_and_a_change_rebuilds_it(store, tmp_path):
    sp = _space(store)
    assert sp.search(id="d1", k=5, index=NO_PRUNING).plan.index_action == "built"
    path, stamp = seismic_paths(sp, parse_seismic_spec(NO_PRUNING))
    assert path.is_file() and json.loads(stamp.read_text())["generation"] == sp.info().generation
    script = ("import json, sys; from repspace import Store; sp = Store(sys.argv[1]).space('s'); "
              f"r = sp.search(id='d1', k=5, index={NO_PRUNING!r}); "
              "print(json.dumps([r.plan.index_action, [h.id for h in r]]))")

    def child() -> list:
        out = subprocess.run([sys.executable, "-c", script, str(store.path)], capture_output=True, text=True,
                             timeout=120, check=True)
        return json.loads(out.stdout)  # nothing else on stdout: Seismic's progress messages are silenced

    assert child() == ["loaded", [h.id for h in sp.search(id="d1", k=5)]]
    sp.add(["new"], sps.csr_array(np.ones((1, 80), np.float32)))
    action, ids = child()
    assert action == "rebuilt" and ids[0] == "new"


def test_index_build_list_and_drop(store):
    sp = _space(store)
    r = build_index(sp, "sparse,seismic,lambda=50,heap=0.5")
    assert (r.spec, r.action, r.ntotal) == ("sparse,seismic,lambda=50,beta=0.1,alpha=0.4", "built", 600)
    assert build_index(sp, "sparse,seismic,lambda=50,cut=3").action == "loaded"  # query knobs: the same index
    assert [(x.spec, x.action) for x in list_indexes(sp)] == [(r.spec, "current")]
    sp.delete(["d0"])
    assert [x.action for x in list_indexes(sp)] == ["stale (rebuilt on next use)"]
    assert drop_index(sp, "sparse,seismic,lambda=50").action == "dropped" and list_indexes(sp) == []


def test_a_dropped_index_is_built_again_by_the_next_search_of_the_same_process(store):
    sp = _space(store)
    assert sp.search(id="d1", k=5, index="sparse,seismic,lambda=50").plan.index_action == "built"
    assert sp.search(id="d1", k=5, index="sparse,seismic,lambda=50").plan.index_action == "loaded"
    drop_index(sp, "sparse,seismic,lambda=50")
    assert sp.search(id="d1", k=5, index="sparse,seismic,lambda=50").plan.index_action == "built"
    assert [x.action for x in list_indexes(sp)] == ["current"]


@pytest.mark.parametrize("spec, message", [
    ("sparse,seismic,gamma=1", "seismic parameter 'gamma=1' is not one of"),
    ("sparse,seismic,lambda=-1", "seismic lambda must be at least 1 (or 'all'), not -1"),
    ("hnsw32", "index 'hnsw32' does not apply to sparse space 's'"),
])
def test_bad_specs_are_one_line_and_build_nothing(store, spec, message):
    sp = _space(store, n=50)
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")) as e:
        sp.search(id="d1", k=3, index=spec)
    assert "\n" not in str(e.value) and not (store.index_dir / sp.uid).exists()
