"""The profile's InfoNCE, LiDAR and DiME: groups in stream order, each group's figure from its pooled pairs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.eval.perturb import perturb
from repspace.engines.geometry.invariance import dime, infonce, lidar
from repspace.workflows.layer_invariance import PairGroups, parse_pair_figures
from repspace.workflows.layer_profile import profile_layers

pytestmark = pytest.mark.numerics

ENCODER = "hf-layers:minilm"


def test_groups_follow_the_stream_and_leave_out_the_tail():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 23, 5))
    b = a + 0.3 * rng.standard_normal(a.shape)
    g = PairGroups(("infonce", "dime"), n_layers=2, group=10, seed=4)
    for s in (0, 7, 9, 23):  # chunks of 7, 2 and 14 inputs
        if s:
            g.add(a[:, prev:s], b[:, prev:s])
        prev = s
    g.finish()
    assert g.left_out == 3 and len(g.values["infonce"][1]) == 2
    for k, start in enumerate((0, 10)):
        x, y = a[1, start:start + 10], b[1, start:start + 10]
        assert g.values["infonce"][1][k] == pytest.approx(infonce(x, y), abs=1e-12)
        assert g.values["dime"][1][k] == pytest.approx(dime(x, y, rng=np.random.default_rng([4, start])), abs=1e-12)
    few = PairGroups(("lidar",), n_layers=1, group=10, seed=0)
    few.add(a[:1, :6], b[:1, :6])
    few.finish()  # fewer inputs than a group: they are the one group
    assert few.left_out == 0 and few.values["lidar"][0] == [pytest.approx(lidar(a[0, :6], b[0, :6]), abs=1e-12)]


@pytest.mark.slow  # loads MiniLM
def test_profile_pair_figures_equal_the_figures_of_the_pooled_pairs(stsb_dev_sentence1):
    texts = stsb_dev_sentence1[:60]
    p = profile_layers(ENCODER, texts, layers=[0, 6], invariance="all", group=25, shuffle=False, bootstrap=0,
                       batch_size=7, seed=2)
    assert p.skipped["infonce"] == 10 and p.figure("dime", 6).n == 2 and p.settings["invariance_group"] == 25
    from repspace.engines.encoders import get_encoder

    enc = get_encoder(ENCODER)
    noisy = perturb(texts, ("typos",), rate=0.1, seed=2)
    x = enc.encode_layers(texts, layers=[0, 6], batch_size=64)
    y = enc.encode_layers(noisy, layers=[0, 6], batch_size=64)
    for j, layer in enumerate(p.layers):
        groups = [(x[j, s:s + 25], y[j, s:s + 25], s) for s in (0, 25)]
        assert p.figure("infonce", layer).mean == pytest.approx(np.mean([infonce(a, b) for a, b, _ in groups]),
                                                               abs=1e-4)
        assert p.figure("lidar", layer).mean == pytest.approx(np.mean([lidar(a, b) for a, b, _ in groups]),
                                                             abs=1e-4)
        want = np.mean([dime(a, b, rng=np.random.default_rng([2, s])) for a, b, s in groups])
        assert p.figure("dime", layer).mean == pytest.approx(want, abs=1e-4)


@pytest.mark.slow  # loads MiniLM
def test_on_real_text_the_trained_last_layer_is_the_most_invariant(stsb_dev_sentence1):
    """MiniLM's last layer is trained to map paraphrases together: its typo'd inputs find their originals."""
    p = profile_layers(ENCODER, stsb_dev_sentence1[:100], layers=[0, 3, 6], invariance="infonce,dime", group=100,
                       shuffle=False, bootstrap=0)
    nce = {layer: p.figure("infonce", layer).mean for layer in p.layers}
    chance = math.log(199)  # 2N - 1 candidates, every cosine alike
    assert nce[6] < nce[3] - 1 and nce[6] < nce[0] and nce[6] < chance - 2
    assert p.figure("dime", 6).mean > p.figure("dime", 3).mean > 0


def test_pair_figures_need_a_perturbation_and_known_names():
    assert parse_pair_figures("lidar, infonce") == ("infonce", "lidar")
    with pytest.raises(InputError, match="unknown invariance figure"):
        parse_pair_figures("nce")
    with pytest.raises(InputError, match="augmentation"):
        profile_layers(ENCODER, ["a cat"], augment=None, invariance="all")
    with pytest.raises(InputError, match="group"):
        profile_layers(ENCODER, ["a cat"], invariance="all", group=1)
