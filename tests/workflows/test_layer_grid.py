"""``layer_grid`` on STS-B pairs with MiniLM: each cell is the single-layer, single-width evaluation run, and the best
cell per budget is the best affordable cell."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.workflows.evaluate import run
from repspace.workflows.layer_grid import layer_grid
from tests._data_subsets import sts_head

pytestmark = pytest.mark.slow  # loads MiniLM

ENC = "hf-layers:minilm"


def test_cells_equal_single_runs_and_best_cells_are_the_best_affordable(shared_data, tmp_path):
    pairs = sts_head(shared_data, tmp_path / "sts.csv", 120)
    g = layer_grid(ENC, "sts", pairs, dims="16,64,full", bootstrap=100, seed=1, plot=tmp_path / "grid.png")
    assert g.layers == tuple(range(7)) and g.dims == (16, 64, 384) and g.bytes_per_vector == (64, 256, 1536)
    assert (g.ci_low <= g.scores).all() and (g.scores <= g.ci_high).all()
    for layer, dims, j in ((0, "64", 1), (6, "16", 0)):
        single = run("sts", pairs, encoder=ENC, layer=layer, dims=dims, methods=("prefix",), bootstrap=0,
                     plot=tmp_path / f"l{layer}.png")
        assert g.scores[layer, j] == pytest.approx(single.results[0].main_score, abs=1e-9)
    for b in g.best:
        affordable = np.array(g.bytes_per_vector) <= b.budget
        assert b.score == g.scores[:, affordable].max() and b.bytes_per_vector <= b.budget
    assert g.best[-1].layer == 6  # the last layer is the trained one: best at full width on STS
    assert Path(g.plot).read_bytes()[:4] == b"\x89PNG"
    assert g.to_dict()["cells"][0] == {"layer": 0, "dims": 16, "bytes_per_vector": 64, "score": g.scores[0, 0],
                                       "ci_low": g.ci_low[0, 0], "ci_high": g.ci_high[0, 0]}


def test_dims_above_the_width_and_an_encoder_without_layers_are_refused(shared_data, tmp_path):
    pairs = sts_head(shared_data, tmp_path / "sts.csv", 20)
    with pytest.raises(InputError, match="--dims 512 above the width of hf-layers:minilm: it has 384"):
        layer_grid(ENC, "sts", pairs, dims="64,512", plot=tmp_path / "g.png")
    with pytest.raises(InputError, match="no layers"):
        layer_grid("static", "sts", pairs, plot=tmp_path / "g.png")
    assert not (tmp_path / "g.png").exists()
