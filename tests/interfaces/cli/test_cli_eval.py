"""``repspace eval`` end to end: real files, real encoders, JSON in MTEB's shape, recorded results, errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from repspace import Store
from repspace.interfaces.cli import main


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture()
def sts_file(tmp_path: Path, shared_data: Path) -> Path:
    lines = (shared_data / "stsb" / "stsb-en-test.csv").read_text(encoding="utf-8").splitlines()[:120]
    path = tmp_path / "stsb-small-test.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_sts_json_is_a_list_of_mteb_task_results(capsys, sts_file):
    code, out, err = run(capsys, "eval", "sts", str(sts_file), "--encoder", "static", "--json")
    assert code == 0, err
    (result,) = json.loads(out)
    assert result["task_name"] == "sts:stsb-small-test"
    (entry,) = result["scores"]["test"]
    assert entry["main_score"] == entry["spearman"] and 0.2 < entry["spearman"] < 1.0
    assert result["evaluation_time"] > 0
    assert result["repspace"]["encoder"] == "static" and result["repspace"]["n_pairs"] == 120


def test_sweep_prints_the_tradeoff_and_writes_the_plot(capsys, sts_file, tmp_path):
    png = tmp_path / "sweep.png"
    code, out, err = run(capsys, "eval", "sts", str(sts_file), "--encoder", "static", "--dims", "16,full",
                         "--precision", "float32,binary", "--plot", str(png))
    assert code == 0, err
    assert "pca16,binary" in out and "full" in out and "bytes/vector" in out
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_save_then_list_results_on_a_stored_space(capsys, tmp_path, shared_data):
    db = str(tmp_path / "s.db")
    words = ["king", "queen", "man", "woman", "cat", "dog"]
    rng = np.random.default_rng(0)
    with Store(db) as store:
        store.create_space("w", dim=8).add(words, rng.standard_normal((6, 8)))
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("king\tqueen\t8\nman\twoman\t8\ncat\tdog\t7\nking\tcat\t1\nqueen\tdog\t0.5\nmoon\tsun\t5\n")
    code, out, err = run(capsys, "--store", db, "eval", "wordsim", str(pairs), "--space", "w", "--save", "--json")
    assert code == 0, err
    (result,) = json.loads(out)
    assert result["repspace"]["oov_pairs"] == 1 and result["repspace"]["space"] == "w"
    code, out, _ = run(capsys, "--store", db, "eval", "results", "w", "--json")
    (saved,) = json.loads(out)
    assert (saved["space"], saved["generation"], saved["stale"], saved["task_name"]) == ("w", 1, False, "wordsim:pairs")
    assert saved["result"] == result


@pytest.mark.parametrize("args, message", [
    (["eval", "sts", "/no/such.csv", "--encoder", "static"], "does not exist"),
    (["eval", "sts", "{sts}", "--encoder", "static", "--space", "x"], "not both"),
    (["eval", "sts", "{sts}", "--encoder", "static", "--precision", "float8"], "float8"),
    (["eval", "sts", "{sts}", "--encoder", "nope:zzz"], "nope"),
    (["eval", "clustering", "--encoder", "static"], "labelled FILE"),
    (["eval", "results", "nospace"], "no space"),
])
def test_bad_input_is_one_error_line_and_a_nonzero_exit(capsys, tmp_path, sts_file, args, message):
    args = [a.replace("{sts}", str(sts_file)) for a in args]
    code, out, err = run(capsys, "--store", str(tmp_path / "s.db"), *args)
    assert code != 0 and out == ""
    assert err.startswith("error: ") and message in err and len(err.strip().splitlines()) == 1


def test_help_of_every_eval_command_has_an_example(capsys):
    for command in ("sts", "retrieval", "wordsim", "analogy", "clustering", "classification", "pairclass",
                    "results"):
        code, out, _ = run(capsys, "eval", command, "--help")
        assert code == 0 and "repspace eval " + command in out


@pytest.mark.slow  # loads MiniLM (hf-layers) and embeds Cranfield token by token
def test_multivector_retrieval_reports_recall_against_exact_chamfer(capsys, tmp_path, shared_data):
    src = shared_data / "cranfield-beir"
    folder = tmp_path / "cran40"
    (folder / "qrels").mkdir(parents=True)
    corpus = (src / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:40]
    ids = {json.loads(line)["_id"] for line in corpus}
    qrels = (src / "qrels" / "test.tsv").read_text().splitlines()
    kept = [q for q in qrels[1:] if q.split("\t")[1] in ids]
    qids = {q.split("\t")[0] for q in kept}
    queries = [q for q in (src / "queries.jsonl").read_text(encoding="utf-8").splitlines()
               if json.loads(q)["_id"] in qids]
    (folder / "corpus.jsonl").write_text("\n".join(corpus) + "\n", encoding="utf-8")
    (folder / "queries.jsonl").write_text("\n".join(queries) + "\n", encoding="utf-8")
    (folder / "qrels" / "test.tsv").write_text("\n".join([qrels[0], *kept]) + "\n")
    code, out, err = run(capsys, "eval", "retrieval", str(folder), "--encoder", "hf-layers:minilm",
                         "--multivector", "--candidates", "40", "--json")
    assert code == 0, err
    (r,) = json.loads(out)
    info = r["repspace"]
    # Every document is a candidate: MUVERA + Chamfer rerank is exact Chamfer search.
    assert info["recall_vs_exact_chamfer"] == 1.0
    assert r["scores"]["test"][0]["ndcg_at_10"] == pytest.approx(info["exact_chamfer_ndcg_at_10"])
    assert info["index"].startswith("muvera(") and r["scores"]["test"][0]["ndcg_at_10"] > 0.3
    code, _, err = run(capsys, "eval", "retrieval", str(folder), "--encoder", "static", "--multivector")
    assert code == 2 and "hf-layers" in err
