"""The robustness workflow: a subject (encoder, layer, stored space) scored by the engine, arguments refused before
a model loads, and a stored space embedding only the perturbed texts with its own encoder."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from _data_subsets import cranfield_head, sts_head

from repspace.core.errors import InputError
from repspace.engines.encoders import get_encoder
from repspace.engines.eval.robustness import retrieval_robustness, sts_robustness
from repspace.engines.eval.sts import load_sts
from repspace.workflows.robustness import robustness

pytestmark = pytest.mark.numerics


@pytest.fixture()
def sts_file(tmp_path: Path, shared_data: Path) -> Path:
    return sts_head(shared_data, tmp_path / "stsb-small-test.csv", 100)


def _same(a, b) -> None:
    da, db = a.to_dict(), b.to_dict()
    for d in (da, db):
        d["evaluation_time"] = 0.0
        d["repspace"] = {k: v for k, v in d["repspace"].items() if k in ("units", "n_units", "rate", "seed")}
    assert da == db


def test_an_encoder_subject_gives_the_engines_result(sts_file, tmp_path, shared_data):
    r = robustness("sts", sts_file, encoder="static", perturbations="typos,punctuation", seed=2, bootstrap=100)
    _same(r, sts_robustness(get_encoder("static"), load_sts(sts_file), "typos,punctuation", seed=2, bootstrap=100))
    assert r.info["subject"] == "static" and r.info["encoder"] == "static"
    folder = cranfield_head(shared_data, tmp_path / "cran", 200, judged_queries_only=True)
    r = robustness("retrieval", folder, encoder="static", perturbations="casing", bootstrap=50)
    from repspace.engines.eval.retrieval import load_beir

    _same(r, retrieval_robustness(get_encoder("static"), load_beir(folder), "casing", bootstrap=50))


def test_a_stored_space_embeds_only_the_perturbed_texts(store, sts_file):
    enc = get_encoder("static")
    pairs = load_sts(sts_file)
    texts = sorted(set(pairs.texts()))
    store.create_space("sts", dim=enc.dim, provenance=enc.provenance()).add(
        [f"t{i}" for i in range(len(texts))], enc.encode(texts), texts=texts)
    r = robustness("sts", sts_file, store=store, space="sts", perturbations="typos", bootstrap=0)
    direct = sts_robustness(enc, pairs, "typos", bootstrap=0)
    assert r.original == pytest.approx(direct.original, abs=1e-6)
    assert r.perturbed[0].score == pytest.approx(direct.perturbed[0].score, abs=1e-6)
    assert r.info["space"] == "sts" and r.info["subject"] == "space sts"
    vectors = np.random.default_rng(0).normal(size=(len(texts), 2))
    store.create_space("pre", dim=2).add([f"t{i}" for i in range(len(texts))], vectors, texts=texts)
    with pytest.raises(InputError, match="space pre holds no vector for .* cannot embed them"):
        robustness("sts", sts_file, store=store, space="pre", perturbations="typos", bootstrap=0)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"task": "wordsim"}, "task must be one of sts, retrieval"),
    ({"perturbations": "typos,spelling"}, "perturbation must be one of"),
    ({"rate": 2.0}, r"rate must be a number in \(0, 1\]"),
    ({"seed": -1}, "seed must be"),
    ({"bootstrap": -1}, "bootstrap must be"),
    ({"encoder": "static", "space": "x"}, "not both"),
    ({"space": "x"}, "a store is needed"),
    ({"layer": "all"}, "scores one layer"),
])
def test_bad_arguments_are_refused_before_any_model_loads(sts_file, kwargs, message):
    # an unknown encoder would fail with another message: each check runs before the encoder is looked up
    args = {"task": "sts", **({} if "space" in kwargs else {"encoder": "no-such-encoder"}), **kwargs}
    with pytest.raises(InputError, match=message):
        robustness(args.pop("task"), sts_file, **args)
