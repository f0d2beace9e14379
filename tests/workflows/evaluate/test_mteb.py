"""Evaluation runs written in MTEB's results layout, read back by mteb 2.26.24's ResultCache and TaskResult."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from _data_subsets import sts_head

from repspace import InputError
from repspace.engines.eval import TaskResult, data_revision
from repspace.engines.eval.sts import StsPairs
from repspace.workflows.evaluate import (
    encoder_subjects,
    evaluate,
    lookup_mteb_task,
    run,
    write_mteb,
)
from repspace.workflows.evaluate._mteb import experiment_kwargs, model_of

mteb = pytest.importorskip("mteb", reason="mteb is a test dependency (pyproject.toml, extra 'test')")
from mteb.cache import ResultCache  # noqa: E402
from mteb.models import ModelMeta  # noqa: E402
from mteb.results import TaskResult as MtebTaskResult  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:is_cross_encoder is deprecated:DeprecationWarning")


@pytest.fixture(scope="module")
def sts_file(tmp_path_factory, shared_data) -> Path:
    return sts_head(shared_data, tmp_path_factory.mktemp("sts") / "stsb100-test.csv", 100)


def _load(root: Path, **kw):
    return ResultCache(root).load_results(include_remote=False, **kw)


def test_a_sweep_is_one_model_with_one_experiment_per_codec(tmp_path, sts_file):
    report = run("sts", sts_file, encoder="static", dims="16,full", precision="float32,binary", methods=["prefix"],
                 plot=tmp_path / "p.png", output_dir=tmp_path / "out")
    assert len(report.written) == len(report.results) == 4
    # one model, one revision, an experiment per codec (mteb hides experiments unless asked)
    assert _load(tmp_path / "out").model_results == []
    loaded = _load(tmp_path / "out", load_experiments="match_name")
    (model,) = {(m.model_name, m.model_revision) for m in loaded}
    assert model[0] == "repspace/static"
    by_experiment = {m.experiment_name: m.task_results[0] for m in loaded}
    assert set(by_experiment) == {"codec_prefix16", "codec_full", "codec_prefix16,binary", "codec_binary"}
    for r in report.results:
        assert by_experiment[f"codec_{experiment_kwargs(r.info)['codec']}"].get_score() == r.main_score
    for meta_path in (tmp_path / "out").rglob("model_meta.json"):
        meta = ModelMeta.model_validate_json_resolved(meta_path.read_text())
        assert meta.name == "repspace/static" and meta.embed_dim == 64 and meta.experiment_name == meta_path.parent.name


def test_every_result_is_stamped_with_the_data_revision_and_languages(tmp_path, sts_file):
    report = run("sts", sts_file, encoder="static", language="eng-Latn,fra-Latn")
    (r,) = report.results
    assert r.dataset_revision == data_revision(sts_file) and r.languages == ("eng-Latn", "fra-Latn")
    d = report.to_dict()[0]
    assert MtebTaskResult.from_dict(d).get_score(languages=["fra"]) == r.main_score
    assert report.written == []


def test_the_same_recipe_is_the_same_model_revision_and_another_is_not():
    pairs = StsPairs(["a cat", "a man runs", "stocks fell"], ["a kitten", "a man jogs", "a cat"],
                     np.array([5.0, 4.0, 0.0]), "toy")
    (a,), (b,) = evaluate("sts", encoder_subjects("static"), pairs), evaluate("sts", encoder_subjects("static"), pairs)
    (c,) = evaluate("sts", encoder_subjects("static", options={"normalize": False}), pairs)
    assert model_of(a)[:2] == model_of(b)[:2]
    assert model_of(a)[0] == model_of(c)[0] and model_of(a)[1] != model_of(c)[1]
    # the local folder of the weights is not part of the revision, their fingerprint is
    moved = a.with_info(provenance={**a.info["provenance"], "model": "/elsewhere"})
    assert model_of(moved)[1] == model_of(a)[1]
    refit = a.with_info(provenance={**a.info["provenance"], "model_fingerprint": "0" * 64})
    assert model_of(refit)[1] != model_of(a)[1]


def test_settings_are_experiment_kwargs():
    base = {"encoder": "hf-layers:minilm", "layer": 2, "index": "exact+bm25 (rrf, lexical weight 0.5)",
            "lexical": "hybrid", "lexical_weight": 0.5, "transform": "center",
            "hubness_reduction": {"method": "csls", "kappa": 10}}
    assert experiment_kwargs(base) == {"layer": 2, "transform": "center", "lexical": "hybrid", "lexical_weight": 0.5,
                                       "hubness": "csls", "kappa": 10}
    assert experiment_kwargs({"space": "s", "index": "hnsw16,ef100"}) == {"index": "hnsw16,ef100"}
    bm25 = TaskResult("retrieval:x", "test", "ndcg_at_10", {"ndcg_at_10": 0.3}, 1.0,
                      {"encoder": "minilm", "index": "bm25", "provenance": {"model_fingerprint": "x"}})
    name, revision, meta = model_of(bm25)
    assert name == "repspace/bm25" and revision.startswith("bm25s-") and meta["model_type"] == ["sparse"]


def test_a_stored_space_is_a_model_whose_revision_is_its_generation(tmp_path, store, sts_file):
    from repspace.engines.eval import load_sts

    pairs = load_sts(sts_file)
    texts = list(dict.fromkeys(pairs.texts()))
    rng = np.random.default_rng(0)
    sp = store.create_space("sts:space", dim=8)
    sp.add([f"t{i}" for i in range(len(texts))], rng.standard_normal((len(texts), 8)), texts=texts)
    report = run("sts", sts_file, store=store, space="sts:space", output_dir=tmp_path / "out")
    (path,) = report.written
    uid = report.results[0].info["space_uid"]
    assert path.parent == tmp_path / "out" / "results" / "repspace__space-sts_space" / f"{uid}-1"
    loaded = MtebTaskResult.from_disk(path)
    assert loaded.get_score() == report.results[0].main_score
    assert loaded.scores["test"][0]["repspace"]["space"] == "sts:space"


def test_lookup_of_a_registered_task():
    t = lookup_mteb_task("STSBenchmark", "sts")
    assert (t.main_metric, t.languages, t.splits) == ("cosine_spearman", ("eng-Latn",), ("test",))
    assert lookup_mteb_task("SciFact", "retrieval").main_metric == "ndcg_at_10"
    t.check_split("test")
    with pytest.raises(InputError, match="MTEB scores STSBenchmark on test; this data is the 'dev' split"):
        t.check_split("dev")


@pytest.mark.parametrize("name, task, message", [
    ("NoSuchTask", "sts", "mteb has no task 'NoSuchTask'"),
    ("SciFact", "sts", "MTEB's SciFact is a Retrieval task, not STS"),
    ("STSBenchmarkMultilingualSTS", "sts", "has the subsets en, de"),
    ("STSBenchmark", "clustering", "applies to sts, retrieval"),
    ("STS/Benchmark", "sts", "letters, digits"),
])
def test_lookup_refuses_what_the_data_cannot_be(name, task, message):
    with pytest.raises(InputError, match=message):
        lookup_mteb_task(name, task)


def test_run_names_a_registered_task_and_takes_its_languages(tmp_path, sts_file):
    report = run("sts", sts_file, encoder="static", mteb_task="STSBenchmark", output_dir=tmp_path)
    (r,) = report.results
    assert (r.mteb_task, r.mteb_main_metric, r.languages) == ("STSBenchmark", "cosine_spearman", ("eng-Latn",))
    (path,) = report.written
    assert path.name == "STSBenchmark.json"
    loaded = _load(tmp_path, tasks=["STSBenchmark"])
    scores = loaded.get_aggregated_scores()
    assert math.isclose(scores["repspace/static"]["Mean(Task)"], r.main_score)
    dev = sts_file.with_name("stsb100-dev.csv")
    dev.write_text(sts_file.read_text())
    with pytest.raises(InputError, match="this data is the 'dev' split"):
        run("sts", dev, encoder="static", mteb_task="STSBenchmark")
    with pytest.raises(InputError, match="is a file, not a folder"):
        run("sts", sts_file, encoder="static", output_dir=sts_file)


def test_written_files_are_json_mteb_reads_without_repspace(tmp_path):
    r = TaskResult("sts:toy", "test", "spearman", {"spearman": np.float64(0.5)}, 1.0,
                   {"encoder": "static", "n": np.int64(3), "v": np.array([1.0, 2.0])})
    (path,) = write_mteb(tmp_path, [r])
    data = json.loads(path.read_text())
    assert data["scores"]["test"][0]["repspace"]["n"] == 3 and data["scores"]["test"][0]["repspace"]["v"] == [1.0, 2.0]
    assert MtebTaskResult.from_disk(path).get_score() == 0.5
