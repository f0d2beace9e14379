"""The align workflow: maps fitted on shared items, scored on held-out ones, stored as derived spaces."""

from __future__ import annotations

import json

import numpy as np
import pytest

from repspace import ConflictError, InputError, Store
from repspace.interfaces.cli import main
from repspace.workflows.align import align_spaces
from repspace.workflows.search import knn
from repspace.workflows.stored_transforms import stored_transforms

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


def _glove_and_moved_copy(glove_vectors, n: int, noise: float) -> tuple[np.ndarray, np.ndarray]:
    """The ``n`` most frequent GloVe words and a copy rotated, shifted by 0.3 and given Gaussian ``noise``."""
    x = np.ascontiguousarray(glove_vectors[:n], np.float32)
    rng = np.random.default_rng(0)
    q, _ = np.linalg.qr(rng.standard_normal((50, 50)))
    y = (x @ q + 0.3 + noise * rng.standard_normal(x.shape)).astype(np.float32)
    return x, y


@pytest.fixture()
def store(store, glove_vectors):
    """tests/conftest.py's fresh store holding ``old`` (3,000 GloVe words) and ``new`` (a moved copy of 2,500)."""
    x, y = _glove_and_moved_copy(glove_vectors, 3000, noise=0.3)
    store.create_space("old", dim=50).add([f"w{i}" for i in range(3000)], x, texts=[f"t{i}" for i in range(3000)])
    store.create_space("new", dim=50).add([f"w{i}" for i in range(500, 3000)], y[500:])
    return store, x, y


@pytest.mark.parametrize("method", ["procrustes", "ridge", "relative"])
def test_methods_fit_on_pairs_and_score_on_held_out_items(store, method):
    s, x, y = store
    r = align_spaces(s, "old", "new", method=method, pairs=1500, test=500)
    assert (r.n_shared, r.n_train, r.n_test) == (2500, 1500, 500)
    assert r.scores.top1 > (0.9 if method != "relative" else 0.5)
    assert r.scores.mean_rank >= 1.0 and r.scores_csls.top1 >= r.scores.top1 - 0.02
    if method == "ridge":
        assert r.params["alpha"] > 0


@pytest.fixture()
def unpaired(tmp_path, glove_vectors):
    """Two spaces over 900 words: GloVe, and a rotated, shifted, slightly noisy copy."""
    x, y = _glove_and_moved_copy(glove_vectors, 900, noise=0.05)
    s = Store(tmp_path / "u.db")
    ids = [f"w{i}" for i in range(900)]
    s.create_space("a", dim=50).add(ids, x)
    s.create_space("b", dim=50).add(ids, y)
    yield s
    s.close()


@pytest.mark.parametrize("init", ["profiles", "gw"])
def test_unsupervised_finds_the_withheld_pairing(unpaired, init):
    r = align_spaces(unpaired, "a", "b", method="unsupervised", pairs=600, test=300, init=init)
    assert r.params["init"] == init and r.params["matching_precision"] > 0.95 and r.params["n_pairs_found"] > 500
    assert r.params["trustworthy"] is True and r.params["n_agree"] >= 2 and r.params["warnings"] == []
    assert r.scores.top1 > 0.9


def test_unsupervised_cli_stores_the_mapped_space(capsys, unpaired):
    code = main(["--store", str(unpaired.path), "align", "a", "b", "--method", "unsupervised", "--pairs", "600",
                 "--test", "300", "--out", "a-in-b"])
    captured = capsys.readouterr()
    assert code == 0 and "without being given any" in captured.err and len(unpaired.space("a-in-b")) == 900
    assert "starts reached this pairing" in captured.err and "do not trust" not in captured.err


def test_unsupervised_cli_warns_when_the_map_is_not_reproduced(capsys, tmp_path, glove_vectors):
    s = Store(tmp_path / "n.db")
    ids = [f"w{i}" for i in range(400)]
    s.create_space("words", dim=50).add(ids, np.ascontiguousarray(glove_vectors[:400], np.float32))
    noise = np.random.default_rng(3).standard_normal((400, 50)).astype(np.float32)
    s.create_space("noise", dim=50).add(ids, noise)
    s.close()
    code = main(["--store", str(tmp_path / "n.db"), "--quiet", "align", "words", "noise", "--method",
                 "unsupervised", "--pairs", "300", "--test", "100"])
    err = capsys.readouterr().err
    assert code == 0 and "warning: do not trust this map: only 1 of 3 starts" in " ".join(err.split())


def test_fewer_pairs_fit_worse(store):
    s, *_ = store
    few = align_spaces(s, "old", "new", method="ridge", pairs=30, test=500)
    many = align_spaces(s, "old", "new", method="ridge", pairs=1500, test=500)
    assert few.scores.top1 < many.scores.top1


def test_out_stores_the_mapped_space_and_maps_queries(store):
    s, x, y = store
    r = align_spaces(s, "old", "new", method="procrustes", pairs=2000, test=500, out="old-in-new")
    mapped = s.space("old-in-new")
    assert r.out == "old-in-new" and mapped.dim == 50 and len(mapped) == 3000
    assert mapped.get(["w7"])[0].text == "t7"  # items the target never had are mapped too
    prov = mapped.provenance
    assert prov["derived_from"]["aligned_to"]["space"] == "new" and prov["transforms_spec"] == "affine"
    chain = stored_transforms(mapped)
    assert np.allclose(chain[0].transform(x[:5]), mapped.vectors()[:5], atol=1e-5)
    # a mapped old vector finds its own item among the new space's vectors
    hits = knn(s.space("new"), mapped.vectors_of(["w1200"]), 1, method="exact").rows[0]
    assert s.space("new").items([int(hits[0])])[int(hits[0])].id == "w1200"
    with pytest.raises(ConflictError):
        align_spaces(s, "old", "new", method="procrustes", out="old-in-new")


@pytest.mark.parametrize("kwargs, message", [
    ({"method": "vec2vec"}, "method must be one of procrustes"),
    ({"method": "relative", "out": "x"}, "third space"),
    ({"pairs": 2400, "test": 500}, "not enough"),
    ({"pairs": 0}, "positive integer"),
    ({"method": "unsupervised", "init": "nope", "out": "x"}, "init must be one of"),
])
def test_bad_requests(store, kwargs, message):
    s, *_ = store
    with pytest.raises(InputError, match=message):
        align_spaces(s, "old", "new", **kwargs)
    assert sorted(sp.name for sp in s.spaces()) == ["new", "old"]


def test_cli(capsys, store):
    s, *_ = store
    code = main(["--store", str(s.path), "align", "old", "new", "--pairs", "1000", "--test", "300", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["n_train"] == 1000 and data["plain"]["top1"] > 0.9
    code = main(["--store", str(s.path), "align", "old", "new", "--method", "nope"])
    err = capsys.readouterr().err
    assert code != 0 and "method must be one of procrustes" in err and len(err.strip().splitlines()) == 1
