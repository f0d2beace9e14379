"""``repspace eval TASK FILE --by COLUMN``: a table of the parts and their macro average under the result, the
parts in --json, in the store (--save) and in MTEB's files (--output-dir, read back by mteb 2.26.24); what
cannot be split is one error line and exit 2, with nothing stored."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from _cli_process import one_error_line, run, store_dump
from _data_subsets import sts_head

from repspace.engines.encoders import get_encoder
from repspace.engines.eval import TaskResult, load_sts
from repspace.store import Store

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)

HEADER = ["sentence1", "sentence2", "score", "overlap"]


def _bucket(a: str, b: str) -> str:
    """The Jaccard overlap of the pair's lower-cased words, in three buckets (a real property of the pair)."""
    wa, wb = set(a.lower().split()), set(b.lower().split())
    j = len(wa & wb) / len(wa | wb)
    return "low" if j < 0.3 else "mid" if j < 0.6 else "high"


@pytest.fixture()
def sts_file(tmp_path: Path, shared_data: Path) -> Path:
    """STS-B test's first 150 pairs with an ``overlap`` column."""
    rows = list(csv.reader(sts_head(shared_data, tmp_path / "head.csv", 150).open(encoding="utf-8")))
    path = tmp_path / "stsb-overlap-test.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([HEADER, *(r + [_bucket(r[0], r[1])] for r in rows)])
    return path


def test_the_table_shows_each_part_and_the_macro_average(capsys, sts_file):
    code, out, err = run(capsys, "-q", "eval", "sts", str(sts_file), "--encoder", "static", "--by", "overlap",
                         "--json")
    assert code == 0, err
    (result,) = json.loads(out)
    parts = result["repspace"]["parts"]
    assert parts["by"] == "overlap" and [v["part"] for v in parts["values"]] == ["high", "low", "mid"]
    assert sum(v["n"] for v in parts["values"]) == 150 == result["repspace"]["n_pairs"]
    assert parts["macro"]["main_score"] == pytest.approx(np.mean([v["main_score"] for v in parts["values"]]),
                                                         abs=1e-15)
    code, out, err = run(capsys, "-q", "eval", "sts", str(sts_file), "--encoder", "static", "--by", "overlap")
    assert code == 0, err
    assert "by overlap" in out
    for v in parts["values"]:
        (row,) = [line for line in out.splitlines() if f" {v['part']} " in line]
        assert (f" {v['n']} " in row and f"{v['main_score']:.4f}" in row
                and f"[{v['ci_low']:.4f}, {v['ci_high']:.4f}]" in row)
    (macro,) = [line for line in out.splitlines() if "macro average" in line]
    m = parts["macro"]
    assert "3 parts" in macro and f"{m['main_score']:.4f}" in macro
    assert f"[{m['ci_low']:.4f}, {m['ci_high']:.4f}]" in macro


def test_saved_results_keep_their_parts(capsys, sts_file, tmp_path):
    db = tmp_path / "s.db"
    code, out, err = run(capsys, "-q", "--store", str(db), "eval", "sts", str(sts_file), "--encoder", "static",
                         "--by", "overlap", "--bootstrap", "200", "--save", "--json")
    assert code == 0, err
    (printed,) = json.loads(out)
    with Store(db) as store:
        (saved,) = store.results()
    back = TaskResult.from_dict(saved.result)
    assert back.parts.to_dict() == printed["repspace"]["parts"] and back.parts.values[0].interval.n_resamples == 200


@pytest.mark.filterwarnings("ignore:is_cross_encoder is deprecated:DeprecationWarning")
def test_mteb_reads_the_files_written_with_parts(capsys, sts_file, tmp_path):
    pytest.importorskip("mteb")
    from mteb.cache import ResultCache
    from mteb.results import TaskResult as MtebTaskResult

    out_dir = tmp_path / "mteb"
    code, out, err = run(capsys, "-q", "eval", "sts", str(sts_file), "--encoder", "static", "--by", "overlap",
                         "--mteb-task", "STSBenchmark", "--output-dir", str(out_dir), "--json")
    assert code == 0, err
    (ours,) = json.loads(out)
    (task_file,) = out_dir.glob("results/repspace__static/*/STSBenchmark.json")
    loaded = MtebTaskResult.from_disk(task_file)
    (entry,) = loaded.scores["test"]  # one 'default' subset: the whole data, as STSBenchmark's metadata has it
    assert entry["hf_subset"] == "default" and loaded.get_score() == ours["scores"]["test"][0]["cosine_spearman"]
    assert entry["repspace"]["parts"] == ours["repspace"]["parts"]  # kept where mteb keeps our block
    (model,) = ResultCache(out_dir).load_results(include_remote=False, tasks=["STSBenchmark"])
    (task,) = model.task_results
    assert task.get_score() == loaded.get_score()


def test_several_models_each_get_their_parts(capsys, sts_file, tmp_path):
    texts = list(dict.fromkeys(load_sts(sts_file).texts()))
    v = get_encoder("static").encode(texts)
    db = tmp_path / "s.db"
    with Store(db) as store:
        store.create_space("noisy", dim=v.shape[1]).add(
            [f"t{i}" for i in range(len(texts))], v + np.random.default_rng(0).normal(0, 0.12, v.shape), texts=texts)
    args = ["-q", "--store", str(db), "eval", "sts", str(sts_file), "--encoder", "static", "--space", "noisy",
            "--by", "overlap", "--bootstrap", "100"]
    code, out, err = run(capsys, *args, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert [r["repspace"]["parts"]["by"] for r in data["results"]] == ["overlap", "overlap"]
    assert len(data["comparisons"]) == 1
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert "by overlap: static" in out and "by overlap: space noisy" in out and out.count("macro average") == 2


def test_what_cannot_be_split_is_one_error_line(capsys, sts_file, tmp_path, shared_data):
    db = tmp_path / "s.db"
    with Store(db) as store:
        store.create_space("kept", dim=2).add(["a"], [[1.0, 0.0]])
    before = store_dump(db)
    base = ["-q", "--store", str(db), "eval"]
    one_error_line(run(capsys, *base, "sts", str(sts_file), "--encoder", "static", "--by", "genre", "--save"), 2,
                   "no column 'genre' for --by", "columns: sentence1, sentence2, score, overlap")
    words = shared_data / "word-sim" / "EN-RG-65.txt"
    one_error_line(run(capsys, *base, "wordsim", str(words), "--encoder", "static", "--by", "x"), 2,
                   "wordsim's file has no column to split on")
    bare = sts_head(shared_data, tmp_path / "bare-test.csv", 20)
    one_error_line(run(capsys, *base, "sts", str(bare), "--encoder", "static", "--by", "genre"), 2,
                   "reads a column named in the header", "bare-test.csv has none")
    rows = list(csv.reader(sts_file.open(encoding="utf-8")))
    tiny = tmp_path / "tiny-test.csv"
    with tiny.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([*rows[:30], [*rows[30][:3], "odd"], [*rows[31][:3], ""]])
    one_error_line(run(capsys, *base, "sts", str(tiny), "--encoder", "static", "--by", "overlap"), 2,
                   "tiny-test.csv:32: no value for 'overlap'")
    with tiny.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([*rows[:30], [*rows[30][:3], "odd"]])
    one_error_line(run(capsys, *base, "sts", str(tiny), "--encoder", "static", "--by", "overlap", "--save"), 2,
                   "part 'odd' of --by overlap (1 unit) cannot be scored: STS needs at least 2 pairs")
    assert store_dump(db) == before
