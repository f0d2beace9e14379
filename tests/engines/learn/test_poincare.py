"""Poincare embeddings (gensim) and their Euclidean baseline: determinism, the hand-written loop against gensim,
reconstruction against gensim's ReconstructionEvaluation, a small WordNet hierarchy, bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.learn.poincare import (
    _Graph,
    _params,
    _train_loop,
    check_relations,
    load_poincare_model,
    reconstruction,
    relations_fingerprint,
    train_euclidean,
    train_poincare,
)
from repspace.engines.learn.wordnet import hypernym_closure, wordnet_available

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)

needs_wordnet = pytest.mark.skipif(not wordnet_available(),
                                   reason="WordNet 3.0 is not in /usr/share/wordnet (Debian package wordnet-base)")

#: A small closure: two families under one root (12 relations, 9 nodes).
TOY = [("dog", "canine"), ("wolf", "canine"), ("canine", "carnivore"), ("dog", "carnivore"), ("wolf", "carnivore"),
       ("cat", "feline"), ("lion", "feline"), ("feline", "carnivore"), ("cat", "carnivore"), ("lion", "carnivore"),
       ("bear", "carnivore"), ("panda", "carnivore")]
SMALL = {"size": 3, "negative": 3, "epochs": 4, "burn_in": 2}


@pytest.fixture(scope="module")
def feline() -> list[tuple[str, str]]:
    """The closure under feline.n.01: 60 synsets, 169 (child, ancestor) pairs."""
    if not wordnet_available():
        pytest.skip("WordNet 3.0 is not in /usr/share/wordnet (Debian package wordnet-base)")
    return hypernym_closure("feline.n.01")


@pytest.fixture(scope="module")
def feline_trained(feline):
    """Poincare and Euclidean, 5 dimensions, 30 epochs after 10 of burn-in (about 2 s each)."""
    kw = {"size": 5, "negative": 10, "epochs": 30, "burn_in": 10, "seed": 3}
    return train_poincare(feline, **kw), train_euclidean(feline, **kw)


def test_same_seed_is_bit_identical_and_another_seed_is_not():
    a, b, c = (train_poincare(TOY, seed=s, **SMALL) for s in (5, 5, 6))
    assert a.keys == b.keys == c.keys
    assert a.vectors.tobytes() == b.vectors.tobytes()  # (model_bytes differ: gensim stamps the save time)
    assert not np.array_equal(a.vectors, c.vectors)
    assert a.recipe == b.recipe and c.recipe["params"]["seed"] == 6
    e1, e2 = train_euclidean(TOY, seed=5, **SMALL), train_euclidean(TOY, seed=5, **SMALL)
    assert e1.vectors.tobytes() == e2.vectors.tobytes() and e1.keys == a.keys


def test_relation_order_and_duplicates_do_not_matter():
    a = train_poincare(TOY, **SMALL)
    b = train_poincare(list(reversed(TOY)) + TOY[:3], **SMALL)
    assert a.keys == b.keys and a.vectors.tobytes() == b.vectors.tobytes()
    assert a.recipe["relations_fingerprint"] == b.recipe["relations_fingerprint"] == relations_fingerprint(sorted(TOY))
    assert b.info["duplicates_dropped"] == 3 and a.info["duplicates_dropped"] == 0


_CHILD = """
import json, sys
from repspace.engines.learn.poincare import train_euclidean, train_poincare
rel = [tuple(p) for p in json.loads(sys.argv[1])]
p = train_poincare(rel, size=3, negative=3, epochs=3, burn_in=1, seed=2)
e = train_euclidean(rel, size=3, negative=3, epochs=3, burn_in=1, seed=2)
print(json.dumps([list(p.keys), p.vectors.tobytes().hex(), e.vectors.tobytes().hex()]))
"""


def test_identical_across_processes_whatever_the_hash_seed():
    outs = []
    for hash_seed in ("1", "987"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(TOY)], env=env, capture_output=True,
                              text=True, check=True, timeout=120)
        outs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    assert outs[0] == outs[1]
    here_p = train_poincare(TOY, size=3, negative=3, epochs=3, burn_in=1, seed=2)
    assert outs[0][1] == here_p.vectors.tobytes().hex() and outs[0][0] == list(here_p.keys)


def test_epoch_by_epoch_training_equals_one_gensim_call_and_reports_progress():
    from gensim.models.poincare import PoincareModel

    seen: list[tuple[str, int, int]] = []
    r = train_poincare(TOY, seed=4, progress=lambda *a: seen.append(a), **SMALL)
    ref = PoincareModel(sorted(TOY), size=3, negative=3, burn_in=2, seed=4)
    ref.train(epochs=4, batch_size=10)
    assert r.vectors.tobytes() == ref.kv.vectors.astype(np.float32).tobytes()
    m = load_poincare_model(r)
    np.testing.assert_array_equal(m.kv.vectors, ref.kv.vectors)
    assert list(m.kv.index_to_key) == list(r.keys)
    assert seen == [("burn-in", 0, 2), ("burn-in", 1, 2), ("burn-in", 2, 2),
                    ("train", 0, 4), ("train", 1, 4), ("train", 2, 4), ("train", 3, 4), ("train", 4, 4)]


def test_the_saved_model_goes_on_training_as_gensims_own_after_its_burn_in():
    """The model in ``model_bytes`` is left with its burn-in done: one more ``train`` call runs at ``alpha``,
    without a second burn-in, giving the vectors gensim's own model gives after the same call."""
    from gensim.models.poincare import PoincareModel

    r = train_poincare(TOY, seed=4, **SMALL)
    ref = PoincareModel(sorted(TOY), size=3, negative=3, burn_in=2, seed=4)
    ref.train(epochs=4, batch_size=10)
    m = load_poincare_model(r)
    m.train(epochs=1, batch_size=10)
    ref.train(epochs=1, batch_size=10)
    np.testing.assert_array_equal(m.kv.vectors, ref.kv.vectors)
    assert m.alpha == ref.alpha == 0.1


def test_hand_written_loop_with_the_poincare_geometry_reproduces_gensim(feline):
    """The Euclidean trainer shares init, shuffles, negatives and batching with this loop; with the Poincare
    geometry the loop gives gensim's vectors bit for bit, which checks all of them."""
    from gensim.models.poincare import PoincareModel

    rel, _ = check_relations(feline)
    params = _params(4, 10, 3, 2, 0.1, 0.01, 1.0, 10, 7)
    mine, _ = _train_loop(_Graph(rel), params, "poincare", None)
    ref = PoincareModel(rel, size=4, negative=10, burn_in=2, seed=7)
    ref.train(epochs=3, batch_size=10)
    np.testing.assert_array_equal(mine, ref.kv.vectors)


def test_recipe_and_result(feline_trained, feline):
    p, e = feline_trained
    assert p.method == "poincare" and e.method == "euclidean-hierarchy"
    assert p.keys == e.keys and len(p.keys) == 60 and len(set(p.keys)) == 60
    assert p.vectors.dtype == np.float32 and not p.vectors.flags.writeable and p.vectors.shape == (60, 5)
    assert np.all(np.linalg.norm(p.vectors, axis=1) < 1)
    for r in (p, e):
        rec = r.recipe
        assert rec["params"] == {"size": 5, "negative": 10, "epochs": 30, "burn_in": 10, "alpha": 0.1,
                                 "burn_in_alpha": 0.01, "regularization_coeff": 1.0, "batch_size": 10, "seed": 3}
        assert rec["relations"] == 169 and rec["nodes"] == 60 and rec["deterministic"] is True
        assert rec["relations_fingerprint"] == relations_fingerprint(sorted(feline))
        assert {"gensim_version", "numpy_version"} <= set(rec)
        json.dumps(r.to_dict())
    # counts: relations each node is part of (feline.n.01 is the ancestor of all 59 others).
    assert p.counts[p.index("feline.n.01")] == 59
    assert p.seconds > 0 and p.model_bytes and e.model_bytes == b""
    assert len(e.info["losses"]) == 40 and e.info["losses"][-1] < e.info["losses"][0]


def test_poincare_reconstructs_the_feline_hierarchy_better_than_euclidean(feline_trained, feline):
    p, e = feline_trained
    hyp = reconstruction(p.keys, p.vectors, feline)
    euc = reconstruction(e.keys, e.vectors, feline, metric="l2")
    assert hyp["pairs"] == euc["pairs"] == 169 and hyp["nodes"] == 59
    # Measured: Poincare mean rank 1.9, MAP 0.86; Euclidean 4.6, 0.61 (5-d, 30 epochs, seed 3).
    assert hyp["mean_rank"] < euc["mean_rank"] and hyp["map"] > euc["map"]
    assert hyp["map"] > 0.6
    # General synsets sit near the centre, specific ones near the boundary.
    norm = dict(zip(p.keys, np.linalg.norm(p.vectors, axis=1)))
    assert norm["feline.n.01"] < norm["cat.n.01"] < norm["tabby.n.01"]


def test_reconstruction_equals_gensims_evaluation(feline_trained, feline, tmp_path: Path):
    from gensim.models.poincare import ReconstructionEvaluation

    p, _ = feline_trained
    model = load_poincare_model(p)
    path = tmp_path / "feline.tsv"
    path.write_text("".join(f"{c}\t{a}\n" for c, a in feline), encoding="utf-8")
    theirs = ReconstructionEvaluation(str(path), model.kv).evaluate()
    mine = reconstruction(model.kv.index_to_key, model.kv.vectors, feline, count_self=True)
    assert mine["mean_rank"] == pytest.approx(theirs["mean_rank"], abs=1e-9)
    assert mine["map"] == pytest.approx(theirs["MAP"], abs=1e-9)
    # gensim counts u itself as a non-neighbour closer than every neighbour: exactly one more rank.
    plain = reconstruction(model.kv.index_to_key, model.kv.vectors, feline)
    assert plain["mean_rank"] == pytest.approx(theirs["mean_rank"] - 1, abs=1e-9)


def test_reconstruction_by_hand():
    keys = ["root", "a", "b", "a1"]
    X = np.array([[0.0, 0.0], [0.5, 0.0], [-0.5, 0.0], [0.6, 0.05]])
    rel = [("a", "root"), ("b", "root"), ("a1", "a"), ("a1", "root")]
    out = reconstruction(keys, X, rel)
    # a: root ranked behind a1 (rank 2, AP 1/2); b: rank 1; a1: ranks 1, 1 -> mean rank 5/4, MAP (1/2 + 1 + 1)/3.
    assert out == {"mean_rank": 1.25, "map": pytest.approx(2.5 / 3), "nodes": 3, "pairs": 4}
    sym = reconstruction(keys, X, rel, symmetric=True)
    assert sym["nodes"] == 4 and sym["pairs"] == 8
    assert reconstruction(keys, X, rel, metric="l2")["pairs"] == 4
    perfect = reconstruction(["x", "y", "z"], np.array([[0.0, 0.0], [0.1, 0.0], [0.9, 0.0]]), [("x", "y")])
    assert perfect == {"mean_rank": 1.0, "map": 1.0, "nodes": 1, "pairs": 1}


def test_bad_input_is_one_line():
    with pytest.raises(InputError, match="no relations"):
        train_poincare([])
    with pytest.raises(InputError, match=r"relation 2 is a self-loop \('b', 'b'\)"):
        train_poincare([("a", "b"), ("c", "b"), ("b", "b"), ("d", "d")])
    with pytest.raises(InputError, match=r"relation 1 must be a \(child, parent\) pair of non-empty strings"):
        train_euclidean([("a", "b"), (1, "b")])
    with pytest.raises(InputError, match="relation 0 must be"):
        train_poincare([("a", "b", "c")])
    with pytest.raises(InputError, match="relation 0 must be"):
        train_poincare(["ab"])
    with pytest.raises(InputError, match="relations must be a sequence"):
        train_poincare("a\tb")
    with pytest.raises(InputError, match="negative=10 is too many"):
        train_poincare([("a", "b")])
    with pytest.raises(InputError, match="size must be a positive integer"):
        train_poincare(TOY, size=0)
    with pytest.raises(InputError, match="burn_in must be a non-negative integer"):
        train_euclidean(TOY, burn_in=-1)
    with pytest.raises(InputError, match="alpha must be a positive number"):
        train_poincare(TOY, alpha=float("nan"))
    with pytest.raises(InputError, match="seed must be"):
        train_poincare(TOY, seed=-1)
    with pytest.raises(InputError, match="metric must be"):
        reconstruction(["a", "b"], np.zeros((2, 2)), [("a", "b")], metric="cosine")
    with pytest.raises(InputError, match="'c', which is not among the 2 keys"):
        reconstruction(["a", "b"], np.zeros((2, 2)), [("a", "c")])
    with pytest.raises(InputError, match="outside the open Poincare ball"):
        reconstruction(["a", "b"], np.array([[0.0, 0.0], [1.0, 0.0]]), [("a", "b")])
    with pytest.raises(InputError, match="not a gensim PoincareModel"):
        load_poincare_model(b"not a pickle")
    with pytest.raises(InputError, match="has no gensim PoincareModel"):
        load_poincare_model(train_euclidean(TOY, **SMALL))


def test_euclidean_diverging_says_so():
    with pytest.raises(InputError, match="training diverged"):
        train_euclidean(TOY, alpha=1e300, burn_in=0, epochs=2, negative=3, size=2)
