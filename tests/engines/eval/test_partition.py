"""Parts of a task (``--by``): reading the column from each task's file, one part's data, the macro average's
stratified bootstrap interval against scipy and a plain loop, and the JSON form read back."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from _data_subsets import cranfield_head, sts_head
from _reranking_data import cranfield_reranking
from _summarization_data import write_hand_built
from scipy import stats

from repspace import InputError
from repspace.engines.encoders import get_encoder
from repspace.engines.eval import (
    PartLabels,
    Partition,
    PartScore,
    TaskResult,
    Units,
    WordPairs,
    load_beir,
    load_labelled,
    load_pairs,
    load_reranking,
    load_sts,
    load_summarization,
    macro_interval,
    read_parts,
    select_part,
)
from repspace.engines.eval.sts import paired_cosine
from repspace.engines.eval.uncertainty import Interval, bootstrap_interval, spearman_statistic

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


def overlap_bucket(a: str, b: str) -> str:
    """A real property of an STS pair: the Jaccard overlap of its two sentences' lower-cased words, in 3 buckets."""
    wa, wb = set(a.lower().split()), set(b.lower().split())
    j = len(wa & wb) / len(wa | wb)
    return "low" if j < 0.3 else "mid" if j < 0.6 else "high"


def sts_with_overlap(shared_data: Path, path: Path, n: int) -> Path:
    """STS-B test's first ``n`` pairs with a header and an ``overlap`` column (:func:`overlap_bucket`)."""
    rows = list(csv.reader(sts_head(shared_data, path, n).open(encoding="utf-8")))
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["sentence1", "sentence2", "score", "overlap"])
        w.writerows(r + [overlap_bucket(r[0], r[1])] for r in rows)
    return path


@pytest.fixture()
def sts_file(tmp_path: Path, shared_data: Path) -> Path:
    return sts_with_overlap(shared_data, tmp_path / "stsb-overlap-test.csv", 200)


def _units(pairs) -> Units:
    v = get_encoder("static").encode(pairs.texts())
    n = len(pairs)
    return Units("spearman", (pairs.scores, paired_cosine(v[:n], v[n:])), ("gold", "cosine"), ("gold",))


# ----------------------------------------------------------------------------- the macro interval


def test_one_part_is_scipys_bootstrap_interval(sts_file):
    u = _units(load_sts(sts_file))
    ours = macro_interval([u], n_resamples=500, seed=3)
    theirs = bootstrap_interval(spearman_statistic, *u.arrays, n_resamples=500, seed=3)
    assert ours.n_resamples == theirs.n_resamples == 500
    assert ours.low == pytest.approx(theirs.low, abs=1e-12) and ours.high == pytest.approx(theirs.high, abs=1e-12)


def test_several_parts_are_a_plain_stratified_loop(sts_file):
    pairs = load_sts(sts_file)
    groups = read_parts(pairs, sts_file, "overlap").groups()
    units = [_units(select_part(pairs, rows)) for rows in groups.values()]
    ours = macro_interval(units, n_resamples=300, seed=7)
    # the reference: the same draws (part by part, all resamples of a part at once), scipy's spearmanr per draw
    rng = np.random.default_rng(7)
    draws = [rng.integers(0, u.n_units, (300, u.n_units)) for u in units]
    macro = [np.mean([stats.spearmanr(u.arrays[0][d[b]], u.arrays[1][d[b]]).statistic
                      for u, d in zip(units, draws)]) for b in range(300)]
    low, high = np.percentile(macro, [2.5, 97.5])
    assert ours.low == pytest.approx(low, abs=1e-12) and ours.high == pytest.approx(high, abs=1e-12)
    point = np.mean([u.value() for u in units])
    assert ours.low < point < ours.high
    # the macro interval is narrower than the widest part's: averaging parts averages their noise
    widest = max(bootstrap_interval(spearman_statistic, *u.arrays, n_resamples=300, seed=7).high
                 - bootstrap_interval(spearman_statistic, *u.arrays, n_resamples=300, seed=7).low for u in units)
    assert ours.high - ours.low < widest


def test_the_macro_interval_refuses_what_it_cannot_resample():
    one = Units("mean", [[1.0]], ("correct",))
    with pytest.raises(InputError, match="at least 2 units in every part"):
        macro_interval([one])
    with pytest.raises(InputError, match="at least one part"):
        macro_interval([])
    assert macro_interval([Units("mean", [[1.0, 0.0]], ("correct",))], n_resamples=0) is None


# ----------------------------------------------------------------------------- the JSON form


def test_a_partition_round_trips_through_json_in_a_task_result():
    parts = Partition("genre", (PartScore("forum", 40, 0.61, Interval(0.5, 0.7, 0.95, 999)),
                                PartScore("news", 60, 0.8, Interval(0.72, 0.86, 0.95, 1000))),
                      Interval(0.64, 0.76, 0.95, 1000))
    r = TaskResult("sts:toy", "test", "spearman", {"spearman": 0.75}, 1.0, {"encoder": "static"},
                   interval=Interval(0.7, 0.8, 0.95, 1000), parts=parts)
    d = json.loads(json.dumps(r.to_dict()))
    block = d["repspace"]["parts"]
    assert block["by"] == "genre" and block["level"] == 0.95
    assert block["macro"] == {"main_score": pytest.approx((0.61 + 0.8) / 2, abs=1e-15), "n_parts": 2,
                              "ci_low": 0.64, "ci_high": 0.76, "n_resamples": 1000}
    assert block["values"][0] == {"part": "forum", "n": 40, "main_score": 0.61, "ci_low": 0.5, "ci_high": 0.7,
                                  "n_resamples": 999}
    back = TaskResult.from_dict(d)
    assert back.parts == parts and back.to_dict() == r.to_dict() and back.main_score == 0.75
    assert r.to_mteb()["scores"]["test"][0]["repspace"]["parts"] == block  # where mteb keeps our block
    bare = Partition("genre", (PartScore("a", 3, 0.5), PartScore("b", 4, 0.7)))
    assert bare.to_dict()["level"] is None and "ci_low" not in bare.to_dict()["macro"]
    assert Partition.from_dict(json.loads(json.dumps(bare.to_dict()))) == bare
    hand = {"by": "genre", "macro": {"main_score": 0.6, "ci_low": 0.5, "ci_high": 0.7},
            "values": [{"part": "a", "n": 3, "main_score": 0.5, "ci_low": 0.4, "ci_high": 0.6},
                       {"part": "b", "n": 4, "main_score": 0.7}]}
    read = Partition.from_dict(hand)
    assert read.macro_interval == Interval(0.5, 0.7, 0.95, 0) and read.values[1].interval is None
    with pytest.raises(InputError, match="must look like Partition.to_dict"):
        Partition.from_dict({"by": "genre"})
    with pytest.raises(InputError, match="must be distinct"):
        Partition("genre", (PartScore("a", 3, 0.5), PartScore("a", 4, 0.7)))


# ----------------------------------------------------------------------------- reading the column


def test_sts_and_pair_files_take_further_header_columns(sts_file, tmp_path):
    pairs = load_sts(sts_file)
    labels = read_parts(pairs, sts_file, "overlap").labels
    assert len(pairs) == len(labels) == 200 and set(labels) == {"low", "mid", "high"}
    first = next(csv.reader(sts_file.open(encoding="utf-8")))
    assert first == ["sentence1", "sentence2", "score", "overlap"]
    assert labels[0] == overlap_bucket(pairs.sentences1[0], pairs.sentences2[0])
    pc = tmp_path / "pc-test.csv"
    pc.write_text("sentence1,sentence2,label,source\na cat,a kitten,1,web\na cat,stocks fell,0,news\n"
                  "\na dog,a puppy,1,web\n", encoding="utf-8")
    assert read_parts(load_pairs(pc), pc, "source").labels == ("web", "news", "web")
    bad = tmp_path / "short-test.csv"
    bad.write_text("sentence1,sentence2,score,genre\na,b,1,news\nc,d,2\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"short-test.csv:3: expected 4 fields \(sentence1,sentence2,score,genre\)"):
        load_sts(bad)


def test_json_lines_files_take_top_level_and_nested_keys(tmp_path, shared_data):
    labelled = tmp_path / "docs.jsonl"
    labelled.write_text('{"text": "a cat", "label": "pets", "meta": {"lang": "en"}, "year": 2020}\n\n'
                        '{"text": "stocks fell", "label": "money", "meta": {"lang": "de"}, "year": 2021}\n')
    data = load_labelled(labelled)
    assert read_parts(data, labelled, "meta.lang").labels == ("en", "de")
    assert read_parts(data, labelled, "year").labels == ("2020", "2021")  # numbers as JSON writes them
    with pytest.raises(InputError, match=r"docs.jsonl:1: no value for 'meta.size'"):
        read_parts(data, labelled, "meta.size")
    # retrieval: a key of queries.jsonl, for the judged queries only, by id
    folder = cranfield_head(shared_data, tmp_path / "cran", 300, judged_queries_only=False)
    queries = [json.loads(q) for q in (folder / "queries.jsonl").read_text().splitlines()]
    for q in queries:
        q["metadata"] = {"length": "long" if len(q["text"].split()) > 15 else "short"}
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    beir = load_beir(folder)
    labels = read_parts(beir, folder, "metadata.length").labels
    length = {q["_id"]: q["metadata"]["length"] for q in queries}
    assert beir.dropped_queries > 0 and labels == tuple(length[q] for q in beir.query_ids)
    # reranking: the queries the loader leaves out (no negative) are left out of the parts too
    rr = cranfield_reranking(shared_data, tmp_path / "rr-test.jsonl", n_queries=12)
    rows = [json.loads(line) for line in rr.read_text().splitlines()]
    rows[3]["negative"] = []
    for i, row in enumerate(rows):
        row["half"] = "first" if i < 6 else "second"
    rr.write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = load_reranking(rr)
    assert data.dropped_queries == 1 and read_parts(data, rr, "half").labels == ("first",) * 5 + ("second",) * 6
    summ = write_hand_built(tmp_path / "summ.jsonl")
    rows = [json.loads(line) for line in summ.read_text().splitlines()]
    summ.write_text("".join(json.dumps({**r, "desk": "a" if i % 2 else "b"}) + "\n" for i, r in enumerate(rows)))
    assert len(read_parts(load_summarization(summ), summ, "desk")) == len(rows)


def test_a_bad_column_is_one_clear_error(sts_file, tmp_path, shared_data):
    pairs = load_sts(sts_file)
    with pytest.raises(InputError, match=r"has no column 'genre' for --by \(columns: sentence1, sentence2, score, "
                                         r"overlap\)"):
        read_parts(pairs, sts_file, "genre")
    bare = sts_head(shared_data, tmp_path / "bare-test.csv", 5)
    with pytest.raises(InputError, match="reads a column named in the header, and .*bare-test.csv has none"):
        read_parts(load_sts(bare), bare, "genre")
    empty = tmp_path / "empty-test.csv"
    empty.write_text("sentence1,sentence2,score,genre\na,b,1,news\nc,d,2,\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"empty-test.csv:3: no value for 'genre'"):
        read_parts(load_sts(empty), empty, "genre")
    with pytest.raises(InputError, match="named columns; WordPairs has none"):
        read_parts(WordPairs(["a"], ["b"], np.array([1.0])), sts_file, "x")


def test_a_part_is_the_data_of_its_units_alone(sts_file, shared_data, tmp_path):
    pairs = load_sts(sts_file)
    groups = PartLabels("overlap", read_parts(pairs, sts_file, "overlap").labels).groups()
    assert list(groups) == ["high", "low", "mid"] and sum(len(g) for g in groups.values()) == len(pairs)
    low = select_part(pairs, groups["low"])
    assert low.sentences1 == [pairs.sentences1[i] for i in groups["low"]] and low.name == pairs.name
    beir = load_beir(cranfield_head(shared_data, tmp_path / "cran", 300, judged_queries_only=True))
    part = select_part(beir, [0, 2])
    assert part.query_ids == (beir.query_ids[0], beir.query_ids[2]) and set(part.qrels) == set(part.query_ids)
    assert part.corpus_ids == beir.corpus_ids  # the corpus stays whole
    with pytest.raises(InputError, match="at least one unit"):
        select_part(pairs, [])
