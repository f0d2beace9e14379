"""``layer_deviation``: per-layer scores against the engine on the encoder's states, out-of-domain texts deviating
more on real data, metadata written and read back, and its refusals."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.geometry.deviation import manifold_deviation
from repspace.workflows.layer_deviation import layer_deviation

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)

ENCODER = "hf-layers:minilm"


@pytest.fixture(scope="module")
def corpora(shared_data: Path) -> dict[str, list[str]]:
    """STS-B train sentence1 (reference, 150), STS-B test sentence1 (in-domain, 40), Cranfield titles (40)."""
    def sts(name: str, n: int) -> list[str]:
        with (shared_data / "stsb" / name).open(newline="", encoding="utf-8") as f:
            return [row[0] for row, _ in zip(csv.reader(f), range(n))]

    with (shared_data / "cranfield-beir" / "corpus.jsonl").open(encoding="utf-8") as f:
        titles = [json.loads(line)["title"] for line, _ in zip(f, range(40))]
    return {"reference": sts("stsb-en-train.csv", 150), "inside": sts("stsb-en-test.csv", 40), "outside": titles}


@pytest.mark.slow  # loads MiniLM
def test_out_of_domain_texts_deviate_more_and_scores_are_the_engines(corpora):
    from sklearn.metrics import roc_auc_score

    from repspace.engines.encoders import get_encoder

    texts = corpora["inside"] + corpora["outside"]
    r = layer_deviation(ENCODER, corpora["reference"], texts, k=10, layers=[0, -1])
    assert r.layers == (0, 6) and r.n_texts == 80 and r.n_reference == 150
    states = get_encoder(ENCODER).encode_layers(corpora["reference"] + texts, layers=[0, 6])
    for j in range(2):
        direct = manifold_deviation(states[j][:150], states[j][150:], k=10)
        np.testing.assert_allclose(r.deviations[j].distance, direct.distance, rtol=0, atol=1e-5)
    auroc = roc_auc_score(np.r_[np.zeros(40), np.ones(40)], r.deviations[1].z)
    assert auroc > 0.8, auroc  # aeronautics titles lie off the manifold of everyday STS-B sentences
    pct = r.deviations[1].percentile
    assert np.mean(pct[40:] > 0.95) > np.mean(pct[:40] > 0.95)
    assert r.summary()[1]["share_above"] == pytest.approx(np.mean(pct > 0.95))
    assert r.to_dict()["items"][0]["z"][1] == pytest.approx(r.deviations[1].z[0])


@pytest.mark.slow  # loads MiniLM
def test_metadata_is_written_read_back_and_a_readonly_store_refuses(tmp_path, corpora):
    from repspace.core.store import Store

    path = tmp_path / "s.db"
    space = Store(path).create_space("docs", dim=2)
    texts = corpora["inside"][:3] + corpora["outside"][:3]
    space.add([f"d{i}" for i in range(6)], np.ones((6, 2)), texts=texts, metadata=[{"n": i} for i in range(6)])
    r = layer_deviation(ENCODER, corpora["reference"][:30], space=space, k=5, layers=[-1], write_metadata="rema")
    assert r.saved == 6 and r.metadata_keys == ("rema",) and r.ids == tuple(f"d{i}" for i in range(6))
    got = space.get([f"d{i}" for i in range(6)])
    assert [g.metadata["n"] for g in got] == list(range(6))
    np.testing.assert_allclose([g.metadata["rema"] for g in got], r.deviations[0].z, atol=1e-6)
    r = layer_deviation(ENCODER, corpora["reference"][:30], space=space, k=5, layers=[0, 1], write_metadata="dev")
    assert r.metadata_keys == ("dev_L0", "dev_L1") and "dev_L1" in space.get(["d0"])[0].metadata
    from repspace.workflows.explore import map_fields

    assert {"name": "rema", "kind": "number", "count": 6} in map_fields(space).fields  # the explorer colours by it
    ro = Store(path, create=False, readonly=True).space("docs")
    with pytest.raises(InputError, match="read-only"):
        layer_deviation(ENCODER, corpora["reference"][:30], space=ro, k=5, layers=[-1], write_metadata="x")
    assert "x" not in ro.get(["d0"])[0].metadata


def test_bad_input_is_refused_before_any_model_runs():
    with pytest.raises(InputError, match="empty"):
        layer_deviation(ENCODER, [], ["a"])
    with pytest.raises(InputError, match="from 1 to 2"):
        layer_deviation(ENCODER, ["a", "b", "c"], ["a"], k=3)
    with pytest.raises(InputError, match="stored space"):
        layer_deviation(ENCODER, ["a", "b", "c"], ["a"], k=1, write_metadata="x")
    with pytest.raises(InputError, match="one of the two"):
        layer_deviation(ENCODER, ["a", "b", "c"], k=1)


@pytest.mark.slow  # loads MiniLM's config
def test_a_layer_out_of_range_is_refused():
    with pytest.raises(InputError, match="layer"):
        layer_deviation(ENCODER, ["a", "b", "c"], ["a"], k=1, layers=[9])
