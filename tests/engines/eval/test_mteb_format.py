"""MTEB's results format, checked by mteb 2.26.24 itself: its TaskResult and ModelMeta models read what we write."""

from __future__ import annotations

import hashlib
import json
import math
import shutil

import pytest

from repspace.core.errors import InputError
from repspace.engines.eval import (
    MTEB_VERSION,
    TaskResult,
    data_revision,
    parse_languages,
)
from repspace.engines.eval.mteb_format import (
    MODEL_META_KEYS,
    experiment_name,
    model_meta,
    results_folder,
    write_model_meta,
    write_task_result,
)

mteb = pytest.importorskip("mteb", reason="mteb is a test dependency (pyproject.toml, extra 'test')")
# mteb writes is_cross_encoder into model_meta.json and warns that it is deprecated when it reads it back.
pytestmark = pytest.mark.filterwarnings("ignore:is_cross_encoder is deprecated:DeprecationWarning")
from mteb.models import ModelMeta  # noqa: E402
from mteb.results import TaskResult as MtebTaskResult  # noqa: E402


def sts_result(split: str = "test", score: float = 0.8, **kw) -> TaskResult:
    scores = {"spearman": score, "pearson": score - 0.01, "cosine_spearman": score, "cosine_pearson": score - 0.01}
    info = {"encoder": "static", "n_pairs": 120, "provenance": {"pooling": "mean", "nested": [1, {"a": None}]}}
    return TaskResult("sts:stsb-small-test", split, "spearman", scores, 1.25, info, **kw)


def test_the_installed_mteb_is_the_version_written():
    assert mteb.__version__ == MTEB_VERSION


# ---------------------------------------------------------------------------- dataset_revision, languages


def test_data_revision_of_a_file_is_its_sha256(tmp_path):
    p = tmp_path / "pairs.csv"
    p.write_bytes(b"a cat,a kitten,4.5\n")
    assert data_revision(p) == hashlib.sha256(b"a cat,a kitten,4.5\n").hexdigest()
    p.write_bytes(b"a cat,a kitten,4.0\n")
    assert data_revision(p) == hashlib.sha256(b"a cat,a kitten,4.0\n").hexdigest()
    with pytest.raises(InputError, match="does not exist"):
        data_revision(tmp_path / "missing.csv")


def test_data_revision_of_a_beir_folder_is_sha256sum_of_its_files(tmp_path, shared_data):
    folder = tmp_path / "cran"
    shutil.copytree(shared_data / "cranfield-beir", folder)
    (folder / "README.md").write_text("not data")  # not hashed
    names = ["corpus.jsonl", "qrels/test.tsv", "queries.jsonl"]  # `sha256sum` lines, sorted by path
    lines = "".join(f"{hashlib.sha256((folder / n).read_bytes()).hexdigest()}  {n}\n" for n in names)
    expected = hashlib.sha256(lines.encode()).hexdigest()
    assert data_revision(folder) == expected == data_revision(shared_data / "cranfield-beir")
    # every split is part of the data set: a new qrels file is a new revision
    (folder / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\n1\t1\t1\n")
    assert data_revision(folder) != expected
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match="holds none of corpus.jsonl"):
        data_revision(empty)


@pytest.mark.parametrize("bad", ["en", "eng", "EN-Latn", "eng-latn", "eng_Latn", "", ","])
def test_languages_must_be_code_and_script(bad):
    with pytest.raises(InputError, match="language|no language"):
        parse_languages(bad)
    with pytest.raises(InputError):
        sts_result(languages=(bad,))


def test_languages():
    assert parse_languages(None) == ("eng-Latn",)
    assert parse_languages(["deu-Latn", "eng-Latn", "deu-Latn"]) == ("deu-Latn", "eng-Latn")
    assert sts_result(languages="fra-Latn").languages == ("fra-Latn",)


# ---------------------------------------------------------------------------- what mteb reads


def test_to_dict_loads_with_mtebs_from_dict_and_scores_like_ours():
    ours = sts_result(dataset_revision="abc").to_dict()
    theirs = MtebTaskResult.from_dict(ours)
    assert theirs.get_score() == pytest.approx(0.8, abs=0) and theirs.main_score == 0.8
    assert theirs.task_name == "sts:stsb-small-test" and theirs.dataset_revision == "abc"
    assert theirs.mteb_version == MTEB_VERSION and theirs.languages == ["eng"]
    assert "repspace" not in theirs.to_dict()  # mteb's model drops unknown top-level fields
    assert MtebTaskResult.from_dict(sts_result().to_dict()).dataset_revision == "unknown"


def test_a_written_file_loads_with_from_disk_and_keeps_the_repspace_block(tmp_path):
    r = sts_result(dataset_revision="abc", languages="eng-Latn,deu-Latn")
    path, merged = write_task_result(tmp_path, r, date=1_700_000_000.0)
    assert (path.name, merged) == ("sts_stsb-small-test.json", False)
    theirs = MtebTaskResult.from_disk(path)
    assert math.isfinite(theirs.get_score()) and theirs.get_score() == r.main_score
    assert theirs.get_score(languages=["deu"]) == r.main_score
    assert theirs.task_name == "sts_stsb-small-test" and theirs.date.timestamp() == 1_700_000_000.0
    (entry,) = theirs.scores["test"]
    assert entry["repspace"]["task"] == "sts:stsb-small-test" and entry["repspace"]["main_metric"] == "spearman"
    assert entry["repspace"]["provenance"] == {"pooling": "mean", "nested": [1, {"a": None}]}
    # ... and survives mteb writing the file again
    again = tmp_path / "again.json"
    theirs.to_disk(again)
    assert MtebTaskResult.from_disk(again).scores["test"][0]["repspace"]["n_pairs"] == 120


def test_a_registered_task_name_and_its_main_score(tmp_path):
    r = sts_result(score=0.7, mteb_task="STSBenchmark", mteb_main_metric="cosine_spearman")
    path, _ = write_task_result(tmp_path, r)
    theirs = MtebTaskResult.from_disk(path)
    assert path.name == "STSBenchmark.json" and theirs.task_name == "STSBenchmark"
    assert theirs.get_score() == 0.7 and theirs.task.metadata.main_score == "cosine_spearman"
    assert r.to_dict()["task_name"] == "sts:stsb-small-test"  # --json and the store keep repspace's name
    with pytest.raises(InputError, match="MTEB's main score 'max_ap' is not among the scores"):
        sts_result(mteb_main_metric="max_ap")


def test_writing_again_merges_splits_of_the_same_data_like_mtebs_merge(tmp_path):
    test = sts_result("test", 0.8, dataset_revision="abc")
    dev = sts_result("dev", 0.6, dataset_revision="abc")
    write_task_result(tmp_path, test)
    path, merged = write_task_result(tmp_path, dev)
    assert merged
    theirs = MtebTaskResult.from_disk(path)
    assert sorted(theirs.scores) == ["dev", "test"] and theirs.get_score() == pytest.approx(0.7)
    expected = MtebTaskResult.from_dict(test.to_mteb()).merge(MtebTaskResult.from_dict(dev.to_mteb()))
    assert theirs.evaluation_time == expected.evaluation_time
    assert theirs.get_score(splits=["dev"]) == expected.get_score(splits=["dev"]) == 0.6
    # the same split again replaces its entry
    path, _ = write_task_result(tmp_path, sts_result("test", 0.9, dataset_revision="abc"))
    assert MtebTaskResult.from_disk(path).get_score(splits=["test"]) == 0.9
    # other data replaces the file
    path, merged = write_task_result(tmp_path, sts_result("test", 0.5, dataset_revision="other"))
    assert not merged and list(MtebTaskResult.from_disk(path).scores) == ["test"]


# ---------------------------------------------------------------------------- model_meta.json, experiments


@pytest.mark.parametrize("kwargs", [
    {"layer": 3},
    {"codec": "pca64,int8", "layer": 0, "transform": "center,whiten128"},
    {"index": "muvera(k_sim=4,d_proj=16,reps=10)>chamfer100", "lexical_weight": 0.5, "hubness": None},
    {"x": [1, 2.5, {"b": True, "a": "c:d"}]},
    {"transform": "abtt3," * 60},  # longer than 200 characters: a hash
    {"a/b": 1},  # a key a folder cannot hold: a hash
])
def test_experiment_names_are_mtebs(kwargs):
    from mteb.models.model_meta import _serialize_experiment_kwargs_to_name

    assert experiment_name(kwargs) == _serialize_experiment_kwargs_to_name(kwargs)
    meta = ModelMeta.model_validate_json_resolved(json.dumps(model_meta("repspace/x", "r", experiment_kwargs=kwargs)))
    assert meta.experiment_name == experiment_name(kwargs)


def test_model_meta_is_mtebs_model(tmp_path):
    meta = model_meta("repspace/minilm", "abc", embed_dim=384, max_tokens=256, framework=["Sentence Transformers"],
                      use_instructions=False, experiment_kwargs={"layer": 6})
    path = write_model_meta(tmp_path, meta)
    theirs = ModelMeta.model_validate_json_resolved(path.read_text())  # extra keys are forbidden there
    assert (theirs.name, theirs.revision, theirs.embed_dim, theirs.experiment_kwargs) == (
        "repspace/minilm", "abc", 384, {"layer": 6})
    assert set(theirs.to_dict()) == set(MODEL_META_KEYS)
    assert json.loads(path.read_text()) == json.loads(json.dumps(theirs.to_dict(), default=str))
    with pytest.raises(InputError, match="organisation/model"):
        model_meta("minilm", "abc")


def test_results_folder_is_where_mtebs_result_cache_looks(tmp_path):
    from mteb.cache import ResultCache

    meta = ModelMeta.model_validate_json_resolved(
        json.dumps(model_meta("repspace/static", "abc", experiment_kwargs={"codec": "binary"})))
    expected = ResultCache(tmp_path).get_task_result_path("sts_toy", meta).parent
    assert results_folder(tmp_path, "repspace/static", "abc", {"codec": "binary"}) == expected
    assert results_folder(tmp_path, "repspace/static", "abc") == ResultCache(tmp_path).get_task_result_path(
        "sts_toy", "repspace/static", "abc").parent
