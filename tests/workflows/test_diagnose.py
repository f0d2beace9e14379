"""The diagnose workflow: stored spaces, per-item results saved as metadata, every layer of an encoder."""

from __future__ import annotations

import numpy as np
import pytest

from repspace import ConflictError, InputError, NotFoundError, Store
from repspace.engines.geometry import diagnose, hubness
from repspace.workflows.diagnose import diagnose_layers, diagnose_space

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


@pytest.fixture()
def glove_space(tmp_path, glove_vectors):
    x = np.ascontiguousarray(glove_vectors[:3000], np.float32)
    store = Store(tmp_path / "s.db")
    sp = store.create_space("glove", dim=50)
    sp.add([f"w{i}" for i in range(3000)], x, metadata=[{"rank": i} for i in range(3000)])
    yield sp, x
    store.close()


def test_save_writes_per_item_results_that_filters_see(glove_space):
    sp, x = glove_space
    sp.delete(["w5", "w17"])  # dead rows: the saved values must land on the right items
    report = diagnose_space(sp, k=10, save=True)
    live = np.delete(np.arange(3000), [5, 17])
    direct = hubness(x[live], k=10, metric="cosine")
    assert np.array_equal(report.hubness.k_occurrence, direct.k_occurrence)
    items = sp.get([f"w{i}" for i in live[:50]])
    assert [it.metadata["k_occurrence"] for it in items] == direct.k_occurrence[:50].tolist()
    assert all(it.metadata["rank"] == int(it.id[1:]) for it in items)  # other keys kept
    assert [it.metadata["hub"] for it in items] == direct.hub_flag[:50].tolist()
    local = report.intrinsic_dimension.local
    assert items[3].metadata["local_id"] == pytest.approx(local[3], abs=1e-6)
    top = int(direct.k_occurrence.max())
    hits = sp.filter_rows(f"k_occurrence >= {top}")
    assert len(hits) == int((direct.k_occurrence >= top).sum()) >= 1
    assert len(sp.filter_rows("hub")) == int(direct.hub_flag.sum())


def test_save_is_refused_whole_when_the_space_changed_meanwhile(glove_space, monkeypatch):
    import repspace.workflows.diagnose as workflow

    sp, x = glove_space
    real = workflow.diagnose

    def diagnose_then_someone_writes(*args, **kwargs):
        result = real(*args, **kwargs)
        other = Store(sp.store.path)  # another connection commits while the metrics are computed
        other.space("glove").add(["late"], x[:1] + 1.0)
        other.close()
        return result

    monkeypatch.setattr(workflow, "diagnose", diagnose_then_someone_writes)
    with pytest.raises(ConflictError, match="changed while"):
        diagnose_space(sp, k=5, save=True)
    assert all("k_occurrence" not in it.metadata for it in sp.get(["w0", "w1", "late"]))


def test_update_metadata_merges_replaces_and_refuses_unknown_ids(glove_space):
    sp, _ = glove_space
    before = sp.info().generation
    assert sp.update_metadata(["w1", "w2"], [{"lang": "en"}, {"rank": None}]) == 2
    a, b = sp.get(["w1", "w2"])
    assert a.metadata == {"rank": 1, "lang": "en"} and b.metadata == {}
    assert sp.info().generation == before + 1
    sp.update_metadata(["w1"], [{"only": True}], merge=False)
    assert sp.get(["w1"])[0].metadata == {"only": True}
    with pytest.raises(NotFoundError):
        sp.update_metadata(["w3", "nope"], [{"x": 1}, {"x": 2}])
    assert sp.get(["w3"])[0].metadata == {"rank": 3}  # nothing of the refused batch was written
    with pytest.raises(InputError):
        sp.update_metadata(["w3"], [{"bad": float("nan")}])


@pytest.mark.slow  # loads MiniLM (hf-layers)
def test_layers_from_one_pass_equal_each_layer_alone():
    texts = [f"the {w} sat on the mat number {i}" for i, w in enumerate(["cat", "dog", "bird", "fish"] * 10)]
    result = diagnose_layers("hf-layers:minilm", texts, layers=[0, 3, -1], k=5)
    assert result.layers == (0, 3, 6) and len(result.diagnoses) == 3
    from repspace.engines.encoders import get_encoder

    alone = get_encoder("hf-layers:minilm", layer=3).encode(texts)
    assert result.diagnoses[1].to_dict()["hubness.k_skewness"] == pytest.approx(
        diagnose(alone, k=5).to_dict()["hubness.k_skewness"], abs=1e-6)
    assert result.diagnoses[0].to_dict() != result.diagnoses[2].to_dict()
    data = result.to_dict()
    assert [row["layer"] for row in data["layers"]] == [0, 3, 6] and "layer" not in data["provenance"]


def test_layers_refuse_a_single_vector_encoder_and_too_few_texts():
    with pytest.raises(InputError, match="one vector per text"):
        diagnose_layers("minilm", ["a b c"] * 20, k=5)
    with pytest.raises(InputError, match="needs more than"):
        diagnose_layers("hf-layers:minilm", ["a", "b"], k=5)


