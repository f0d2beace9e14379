"""``repspace ingest --chunk N [--late-chunking]``: chunk items with their place, found by search; bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from tests._cli_process import one_error_line, run_quiet

pytestmark = pytest.mark.slow  # loads MiniLM


@pytest.fixture()
def long_docs(tmp_path: Path, shared_data: Path) -> tuple[Path, list[dict]]:
    """Three long documents of six real Cranfield abstracts each, with non-ASCII ids."""
    rows = [json.loads(line) for line in (shared_data / "cranfield-beir" / "corpus.jsonl").open(encoding="utf-8")]
    docs = [{"id": f"dokument-ä{k}-東", "text": " ".join(r["text"] for r in rows[6 * k:6 * k + 6]), "year": 1960 + k}
            for k in range(3)]
    path = tmp_path / "long.jsonl"
    path.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")
    return path, docs


@pytest.mark.parametrize("late", [True, False])
def test_chunks_are_items_with_their_document_and_offsets(capsys, tmp_path, long_docs, late):
    path, docs = long_docs
    db = str(tmp_path / "s.db")
    args = ["--store", db, "ingest", "c", str(path), "--encoder", "hf-layers:minilm", "--chunk", "48", "--json"]
    r = run_quiet(capsys, *args, *(["--late-chunking", "--window", "128", "--overlap", "32"] if late else []))
    assert r.code == 0, r.err
    report = json.loads(r.out)
    assert report["extra"]["documents"] == 3 and report["extra"]["late_chunking"] is late
    r = run_quiet(capsys, "--store", db, "export", "c", str(tmp_path / "c.parquet"), "--json")
    assert r.code == 0, r.err
    items = pq.read_table(tmp_path / "c.parquet").to_pylist()
    assert len(items) == report["added"] > 3 * 6
    by_id = {d["id"]: d for d in docs}
    for item in items:
        doc = by_id[item["document"]]  # the non-ASCII document id round-trips
        assert item["id"] == f"{doc['id']}#{item['chunk']}" and item["year"] == doc["year"]
        assert item["text"] == doc["text"][item["start"]:item["end"]]
    probe = docs[1]["text"][:200]  # the opening of the second document's first abstract
    r = run_quiet(capsys, "--store", db, "search", "c", probe, "-k", "3", "--json")
    assert r.code == 0, r.err
    assert json.loads(r.out)[0]["metadata"]["document"] == docs[1]["id"]


@pytest.mark.parametrize("extra, fragment", [
    (["--chunk", "0", "--late-chunking"], "chunk size"),
    (["--chunk", "300", "--late-chunking"], "above the window"),
    (["--late-chunking"], "needs a chunk size"),
    (["--chunk", "16", "--late-chunking", "--encoder", "static"], "hf-layers"),
])
def test_bad_input_is_one_error_line_and_stores_nothing(capsys, tmp_path, long_docs, extra, fragment):
    path, _ = long_docs
    db = tmp_path / "s.db"
    encoder = [] if "--encoder" in extra else ["--encoder", "hf-layers:minilm"]
    r = run_quiet(capsys, "--store", str(db), "ingest", "c", str(path), *encoder, *extra)
    one_error_line(r, 2, fragment)
    r = run_quiet(capsys, "--store", str(db), "spaces", "--json")
    assert r.code == 0 and json.loads(r.out) == [], r  # nothing stored


def test_landmark_pooling_stores_one_item_per_document_and_sentence_chunks_end_at_sentences(capsys, tmp_path,
                                                                                          long_docs):
    path, docs = long_docs
    db = str(tmp_path / "s.db")
    r = run_quiet(capsys, "--store", db, "ingest", "lmk", str(path), "--encoder", "hf-layers:minilm", "--chunk", "32",
                  "--chunk-by", "sentences", "--pooling", "landmark", "--json")
    assert r.code == 0, r.err
    report = json.loads(r.out)
    assert report["added"] == 3 and report["extra"]["pooling"] == "landmark"
    r = run_quiet(capsys, "--store", db, "search", "lmk", docs[2]["text"][:300], "-k", "1", "--json")
    assert r.code == 0, r.err
    hit = json.loads(r.out)[0]
    assert hit["id"] == docs[2]["id"] and hit["metadata"]["chunks"] > 6  # whole document, 32-token pieces
    r = run_quiet(capsys, "--store", db, "ingest", "sent", str(path), "--encoder", "hf-layers:minilm", "--chunk", "48",
                  "--chunk-by", "sentences", "--late-chunking", "--json")
    assert r.code == 0, r.err
    r = run_quiet(capsys, "--store", db, "export", "sent", str(tmp_path / "s.parquet"), "--json")
    items = pq.read_table(tmp_path / "s.parquet").to_pylist()
    by_id = {d["id"]: d for d in docs}
    assert all(i["text"] == by_id[i["document"]]["text"][i["start"]:i["end"]] for i in items)
    ends_at_stop = sum(i["text"].endswith(".") for i in items)
    assert ends_at_stop >= len(items) * 3 // 4  # Cranfield sentences are mostly under 48 tokens


@pytest.mark.parametrize("extra, fragment", [
    (["--pooling", "landmark"], "landmark pooling needs a chunk size"),
    (["--chunk-by", "sentences"], "--chunk-by needs a chunk size"),
    (["--chunk", "16", "--chunk-by", "pages"], "chunk-by"),
    (["--chunk", "16", "--pooling", "landmark", "--late-chunking"], "does not combine"),
    (["--chunk", "16", "--pooling", "landmark", "--encoder", "static"], "hf-layers"),
])
def test_bad_landmark_and_boundary_options_are_one_error_line(capsys, tmp_path, long_docs, extra, fragment):
    path, _ = long_docs
    db = tmp_path / "s.db"
    encoder = [] if "--encoder" in extra else ["--encoder", "hf-layers:minilm"]
    r = run_quiet(capsys, "--store", str(db), "ingest", "c", str(path), *encoder, *extra)
    one_error_line(r, 2, fragment)
    r = run_quiet(capsys, "--store", str(db), "spaces", "--json")
    assert r.code == 0 and json.loads(r.out) == [], r


def test_landmark_space_records_landmark_and_encodes_queries_with_last_token_pooling(capsys, tmp_path, long_docs):
    """The provenance says what was done (landmark documents) and how queries are encoded (last-token pooling)."""
    from repspace import Store
    from repspace.engines.encoders import from_provenance, get_encoder

    path, docs = long_docs
    db = str(tmp_path / "s.db")
    r = run_quiet(capsys, "--store", db, "ingest", "lmk", str(path), "--encoder", "hf-layers:minilm", "--chunk", "32",
                  "--pooling", "landmark", "--json")
    assert r.code == 0, r.err
    prov = Store(db).space("lmk").provenance
    assert prov["pooling"] == "landmark" and prov["query_pooling"] == "last"
    assert prov["chunking"]["pooling"] == "landmark" and prov["chunking"]["chunk_tokens"] == 32
    query = from_provenance(prov)
    assert query.provenance()["pooling"] == "last"
    text = docs[0]["text"][:200]
    want = get_encoder("hf-layers:minilm", pooling="last").encode([text])
    assert np.array_equal(query.encode([text]), want)  # queries encode as before: last-token pooling
