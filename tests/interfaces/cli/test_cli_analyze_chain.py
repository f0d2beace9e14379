"""``repspace analyze compat-chain`` end to end: JSON equal to the library on a small BEIR folder cut from
Cranfield, one error line on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli_process import one_error_line, run

from repspace.workflows.analyze import compat_chain_encoders

CRANFIELD = Path(__file__).resolve().parents[4] / "shared" / "data" / "cranfield-beir"


@pytest.fixture(scope="module")
def beir(tmp_path_factory) -> Path:
    """The first 30 Cranfield queries with judgements and the documents they judge, plus 100 others."""
    if not CRANFIELD.is_dir():
        pytest.skip(f"{CRANFIELD} is absent (the shared data sets)")
    folder = tmp_path_factory.mktemp("beir")
    lines = (CRANFIELD / "qrels" / "test.tsv").read_text().splitlines()
    qrels = [ln.split("\t") for ln in lines[1:]]
    queries = list(dict.fromkeys(q for q, _, s in qrels if int(s) > 0))[:30]
    judged = {d for q, d, _ in qrels if q in queries}
    corpus = [json.loads(x) for x in (CRANFIELD / "corpus.jsonl").read_text().splitlines()]
    keep = [c for c in corpus if c["_id"] in judged] + [c for c in corpus if c["_id"] not in judged][:100]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(c) + "\n" for c in keep))
    qs = [json.loads(x) for x in (CRANFIELD / "queries.jsonl").read_text().splitlines()]
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in qs if q["_id"] in queries))
    (folder / "qrels").mkdir()
    (folder / "qrels" / "test.tsv").write_text(
        lines[0] + "\n" + "".join("\t".join(r) + "\n" for r in qrels if r[0] in queries))
    return folder


def test_compat_chain_json_equals_the_library(capsys, beir):
    args = ["analyze", "compat-chain", "--data", str(beir), "--encoder", "static", "--encoder", "static",
            "--encoder", "static", "--method", "procrustes"]
    code, out, err = run(capsys, "-q", *args, "--json")
    assert code == 0, err
    d = json.loads(out)
    direct = compat_chain_encoders(beir, encoders=["static"] * 3, method="procrustes")
    assert d == json.loads(json.dumps(direct.to_dict()))
    assert d["models"] == ["static"] * 3 and d["n_queries"] == 30 and len(d["triples"]) == 1
    # one model three times: every diagonal cell is the same run
    assert d["matrix"][0][0] == d["matrix"][1][1] == d["matrix"][2][2]
    code, out, err = run(capsys, "-q", *args)
    assert code == 0 and "AC (share of compatible pairs)" in out and "transitivity" in out, err


@pytest.mark.parametrize("args, fragment", [
    ([], "--encoder (repeated) or with --layers"),
    (["--encoder", "static", "--layers", "2,4"], "one of the two"),
    (["--encoder", "static"], "at least two models"),
    (["--layers", "2,x"], "comma-separated layer numbers"),
    (["--encoder", "static", "--encoder", "static", "--method", "lsq"], "procrustes, ridge, raw, head"),
])
def test_bad_input_is_one_error_line(capsys, beir, args, fragment):
    one_error_line(run(capsys, "-q", "analyze", "compat-chain", "--data", str(beir), *args), 2, fragment)


@pytest.mark.slow  # loads MiniLM: one forward pass over 287 documents and 30 queries
def test_layers_of_one_encoder_are_the_versions(capsys, beir):
    from repspace.engines.encoders import get_encoder
    from repspace.engines.eval import load_beir, retrieval_from_vectors

    code, out, err = run(capsys, "-q", "analyze", "compat-chain", "--data", str(beir), "--layers", "2,6",
                         "--method", "raw", "--json")
    assert code == 0, err
    d = json.loads(out)
    data = load_beir(beir)
    enc = get_encoder("hf-layers:minilm")
    q = enc.encode_layers(list(data.query_texts), layers=[2, 6])
    docs = enc.encode_layers(list(data.corpus_texts), layers=[2, 6])
    assert d["models"] == ["hf-layers:minilm@2", "hf-layers:minilm@6"] and d["info"]["layers"] == [2, 6]
    for i, j in ((0, 0), (1, 0), (1, 1)):  # raw: layer i's queries on layer j's index, as the evaluator scores it
        assert d["matrix"][i][j] == pytest.approx(retrieval_from_vectors(q[i], docs[j], data)["ndcg_at_10"], abs=1e-9)
