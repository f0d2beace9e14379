"""``run(TASK, FILE, by=COLUMN)``: each part's score is the task run on a file holding only that part's rows
(written out and run apart, compared to 1e-12), the macro average is their mean, the texts are embedded once,
and the whole data's score is unchanged."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from _data_subsets import cranfield_head, sts_head
from _reranking_data import cranfield_reranking
from _summarization_data import write_hand_built

from repspace import InputError
from repspace.engines.eval import load_sts, read_parts
from repspace.workflows.evaluate import encoder_subjects, run, run_task

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


def _bucket(a: str, b: str) -> str:
    """The Jaccard overlap of the pair's lower-cased words, in three buckets (a real property of the pair)."""
    wa, wb = set(a.lower().split()), set(b.lower().split())
    j = len(wa & wb) / len(wa | wb)
    return "low" if j < 0.3 else "mid" if j < 0.6 else "high"


def _write_csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([header, *rows])
    return path


@pytest.fixture(scope="module")
def stsb(tmp_path_factory, shared_data) -> list[list[str]]:
    """STS-B test's first 240 pairs, each with its overlap bucket."""
    path = sts_head(shared_data, tmp_path_factory.mktemp("stsb") / "head.csv", 240)
    return [r + [_bucket(r[0], r[1])] for r in csv.reader(path.open(encoding="utf-8"))]


def _filtered(path: Path, by: str, part: str, out: Path) -> Path:
    """``path`` (CSV with a header) keeping only the rows whose ``by`` is ``part``: the independent reference."""
    header, *rows = list(csv.reader(path.open(encoding="utf-8")))
    return _write_csv(out, header, [r for r in rows if r and r[header.index(by)] == part])


def _check_parts(result, alone: dict[str, tuple[float, int]]) -> None:
    parts = result.parts
    assert [v.part for v in parts.values] == sorted(alone)
    for v in parts.values:
        score, n = alone[v.part]
        assert v.n == n and v.main_score == pytest.approx(score, abs=1e-12), v.part
    assert parts.macro == pytest.approx(np.mean([s for s, _ in alone.values()]), abs=1e-15)


def test_sts_parts_are_the_filtered_files_scores(tmp_path, stsb):
    path = _write_csv(tmp_path / "stsb-overlap-test.csv", ["sentence1", "sentence2", "score", "overlap"], stsb)
    report = run("sts", path, encoder="static", by="overlap", bootstrap=200, seed=4)
    plain = run("sts", path, encoder="static", bootstrap=200, seed=4)
    (r,) = report.results
    assert r.main_score == plain.results[0].main_score and r.interval == plain.results[0].interval
    alone = {}
    for part in ("high", "low", "mid"):
        (ref,) = run("sts", _filtered(path, "overlap", part, tmp_path / f"{part}-test.csv"), encoder="static",
                     bootstrap=200, seed=4).results
        alone[part] = (ref.main_score, ref.info["n_pairs"])
        value = next(v for v in r.parts.values if v.part == part)
        assert value.interval == ref.interval  # its own interval, over its own pairs
    _check_parts(r, alone)
    assert r.parts.macro_interval.low < r.parts.macro < r.parts.macro_interval.high
    # the figures, for the report: static model on STS-B test's first 240 pairs split by word overlap
    print({v.part: (v.n, round(v.main_score, 4)) for v in r.parts.values}, round(r.parts.macro, 4))


def test_the_parts_embed_nothing_again(tmp_path, stsb):
    path = _write_csv(tmp_path / "stsb-overlap-test.csv", ["sentence1", "sentence2", "score", "overlap"], stsb)
    pairs = load_sts(path)
    (whole_only,) = encoder_subjects("static")
    run_task("sts", whole_only, pairs, bootstrap=0)
    (split,) = encoder_subjects("static")
    run_task("sts", split, pairs, bootstrap=0, parts=read_parts(pairs, path, "overlap"))
    assert split.encode.n_encoded == whole_only.encode.n_encoded == len(set(pairs.texts()))


def test_a_transform_is_fitted_on_each_part_as_on_its_filtered_file(tmp_path, stsb):
    path = _write_csv(tmp_path / "stsb-overlap-test.csv", ["sentence1", "sentence2", "score", "overlap"], stsb)
    (r,) = run("sts", path, encoder="static", by="overlap", transform="center,whiten16", bootstrap=0).results
    alone = {}
    for part in ("high", "low", "mid"):
        (ref,) = run("sts", _filtered(path, "overlap", part, tmp_path / f"{part}-test.csv"), encoder="static",
                     transform="center,whiten16", bootstrap=0).results
        alone[part] = (ref.main_score, ref.info["n_pairs"])
    _check_parts(r, alone)
    assert r.parts.macro_interval is None and all(v.interval is None for v in r.parts.values)


def test_pairclass_and_classification_parts(tmp_path, stsb):
    # pair classification: STS-B pairs scored 4 or more are paraphrases (label 1)
    rows = [[a, b, str(int(float(s) >= 4.0)), o] for a, b, s, o in stsb]
    path = _write_csv(tmp_path / "pc-test.csv", ["sentence1", "sentence2", "label", "overlap"], rows)
    (r,) = run("pairclass", path, encoder="static", by="overlap", bootstrap=100).results
    alone = {}
    for part in ("high", "low", "mid"):
        (ref,) = run("pairclass", _filtered(path, "overlap", part, tmp_path / f"pc-{part}-test.csv"),
                     encoder="static", bootstrap=100).results
        alone[part] = (ref.main_score, sum(1 for x in rows if x[3] == part))
    _check_parts(r, alone)
    # classification of the first sentences: is the pair similar (score >= 2.5)? split by overlap
    rows = [[a, "similar" if float(s) >= 2.5 else "dissimilar", o] for a, _, s, o in stsb]
    path = _write_csv(tmp_path / "cls.csv", ["text", "label", "overlap"], rows)
    (r,) = run("classification", path, encoder="static", by="overlap", bootstrap=100).results
    alone = {}
    for part in ("high", "low", "mid"):
        (ref,) = run("classification", _filtered(path, "overlap", part, tmp_path / f"cls-{part}.csv"),
                     encoder="static", bootstrap=100).results
        alone[part] = (ref.main_score, ref.info["n_items"])
    _check_parts(r, alone)
    assert r.parts.macro_interval is not None  # accuracy's units: each item right or wrong


def test_retrieval_parts_split_the_queries_over_the_whole_corpus(tmp_path, shared_data):
    folder = cranfield_head(shared_data, tmp_path / "cran", 400, judged_queries_only=True)
    queries = [json.loads(q) for q in (folder / "queries.jsonl").read_text().splitlines()]
    length = {q["_id"]: "long" if len(q["text"].split()) > 15 else "short" for q in queries}
    (folder / "queries.jsonl").write_text("".join(json.dumps({**q, "metadata": {"length": length[q["_id"]]}}) + "\n"
                                                  for q in queries))
    (r,) = run("retrieval", folder, encoder="static", by="metadata.length", bootstrap=100).results
    alone = {}
    for part in ("long", "short"):
        sub = tmp_path / part
        (sub / "qrels").mkdir(parents=True)
        (sub / "corpus.jsonl").write_text((folder / "corpus.jsonl").read_text())
        (sub / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries if length[q["_id"]] == part))
        header, *qrels = (folder / "qrels" / "test.tsv").read_text().splitlines()
        (sub / "qrels" / "test.tsv").write_text("\n".join([header, *(q for q in qrels
                                                                      if length[q.split("\t")[0]] == part)]) + "\n")
        (ref,) = run("retrieval", sub, encoder="static", bootstrap=100).results
        alone[part] = (ref.main_score, ref.info["n_queries"])
    _check_parts(r, alone)


def test_reranking_and_summarization_parts(tmp_path, shared_data):
    rr = cranfield_reranking(shared_data, tmp_path / "rr-test.jsonl", n_queries=30)
    rows = [json.loads(line) for line in rr.read_text().splitlines()]
    half = ["first" if i < 15 else "second" for i in range(len(rows))]
    rr.write_text("".join(json.dumps({**row, "half": h}) + "\n" for row, h in zip(rows, half)))
    (r,) = run("reranking", rr, encoder="static", by="half", bootstrap=100).results
    alone = {}
    for part in ("first", "second"):
        sub = tmp_path / f"rr-{part}-test.jsonl"
        sub.write_text("".join(json.dumps(row) + "\n" for row, h in zip(rows, half) if h == part))
        (ref,) = run("reranking", sub, encoder="static", bootstrap=100).results
        alone[part] = (ref.main_score, 15)
    _check_parts(r, alone)
    assert r.parts.macro_interval is None  # reranking keeps no per-unit data to resample the parts from
    summ = write_hand_built(tmp_path / "summ.jsonl")
    rows = [json.loads(line) for line in summ.read_text().splitlines()]
    summ.write_text("".join(json.dumps({**row, "desk": "all"}) + "\n" for row in rows))
    (r,) = run("summarization", summ, encoder="static", by="desk", bootstrap=0).results
    assert [(v.part, v.n) for v in r.parts.values] == [("all", len(rows))]
    assert r.parts.values[0].main_score == pytest.approx(r.main_score, abs=1e-12) == r.parts.macro


def test_what_cannot_be_split_is_refused_before_any_model_loads(tmp_path, stsb):
    path = _write_csv(tmp_path / "stsb-overlap-test.csv", ["sentence1", "sentence2", "score", "overlap"], stsb)
    with pytest.raises(InputError, match="wordsim's file has no column to split on"):
        run("wordsim", path, encoder="no-such-encoder", by="overlap")
    with pytest.raises(InputError, match="no column 'genre' for --by"):
        run("sts", path, encoder="no-such-encoder", by="genre")
    tiny = _write_csv(tmp_path / "tiny-test.csv", ["sentence1", "sentence2", "score", "overlap"],
                      [*stsb[:20], [*stsb[20][:3], "odd"]])
    with pytest.raises(InputError, match=r"part 'odd' of --by overlap \(1 unit\) cannot be scored: STS needs at "
                                         "least 2 pairs"):
        run("sts", tiny, encoder="static", by="overlap")
    with pytest.raises(InputError, match="does not combine with --label-field"):
        run("classification", None, encoder="static", by="overlap", label_field="kind")
