"""Readers: every format, every malformed input gives one clear error line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from repspace.core.errors import InputError, NotFoundError
from repspace.workflows.ingest import read_records, read_texts


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def one_line(e: pytest.ExceptionInfo) -> str:
    msg = str(e.value)
    assert "\n" not in msg, msg
    return msg


def test_jsonl_texts_ids_and_nested_metadata(tmp_path):
    p = write_jsonl(tmp_path / "a.jsonl", [
        {"id": "x1", "text": "first", "year": 2020, "tags": ["a", "b"], "src": {"name": "n"}},
        {"id": "x2", "text": "second", "year": 2021},
    ])
    r = read_records(p)
    assert r.ids == ["x1", "x2"]
    assert r.texts == ["first", "second"]
    assert r.vectors is None
    assert r.metadata == [{"year": 2020, "tags": ["a", "b"], "src": {"name": "n"}}, {"year": 2021}]


def test_jsonl_vectors_and_custom_columns(tmp_path):
    p = write_jsonl(tmp_path / "v.jsonl", [{"key": 7, "emb": [1, 2, 3]}, {"key": 8, "emb": [4.5, 5, 6]}])
    r = read_records(p, id_col="key", vector_col="emb")
    assert r.ids == ["7", "8"]
    assert r.texts is None
    np.testing.assert_array_equal(r.vectors, np.array([[1, 2, 3], [4.5, 5, 6]], dtype=np.float32))


def test_csv_keeps_ids_as_strings_and_reads_vector_cells(tmp_path):
    p = tmp_path / "a.csv"
    p.write_text('id,text,score,vec\n007,"hello, world",1.5,"[1, 2]"\n010,bye,2,"[3, 4]"\n', encoding="utf-8")
    r = read_records(p, vector_col="vec")
    assert r.ids == ["007", "010"]  # not 7 and 10
    assert r.texts == ["hello, world", "bye"]
    assert r.metadata == [{"score": 1.5}, {"score": 2.0}]
    np.testing.assert_array_equal(r.vectors, [[1, 2], [3, 4]])


def test_parquet_with_list_vectors(tmp_path):
    p = tmp_path / "a.parquet"
    table = pa.table({"id": ["a", "b"], "text": ["t1", None], "v": [[0.5, 1.0], [2.0, 3.0]], "lang": ["en", "de"]})
    pq.write_table(table, p)
    r = read_records(p, vector_col="v")
    assert r.ids == ["a", "b"] and r.texts == ["t1", None]
    assert r.metadata == [{"lang": "en"}, {"lang": "de"}]
    assert r.vectors.shape == (2, 2)


def test_npy_with_ids_file_and_auto_id(tmp_path):
    np.save(tmp_path / "v.npy", np.arange(6, dtype=np.float32).reshape(3, 2))
    (tmp_path / "ids.txt").write_text("a\nb\nc\n")
    r = read_records(tmp_path / "v.npy", ids_path=tmp_path / "ids.txt")
    assert r.ids == ["a", "b", "c"] and r.vectors.shape == (3, 2)
    assert read_records(tmp_path / "v.npy", auto_id=True).ids == ["0", "1", "2"]
    with pytest.raises(InputError) as e:
        read_records(tmp_path / "v.npy")
    assert "--ids" in one_line(e)
    (tmp_path / "short.txt").write_text("a\nb\n")
    with pytest.raises(InputError) as e:
        read_records(tmp_path / "v.npy", ids_path=tmp_path / "short.txt")
    assert "2 ids for 3 vectors" in one_line(e)


def test_auto_id_uses_content_hashes(tmp_path):
    p = write_jsonl(tmp_path / "a.jsonl", [{"text": "same"}, {"text": "other"}])
    r = read_records(p, auto_id=True)
    from repspace.core.store.validate import text_hash

    assert r.ids == [text_hash("same"), text_hash("other")]


@pytest.mark.parametrize(
    "content, kwargs, expected",
    [
        (b'{"id": "a", "text": "x"}\n{"id": "b", "text": \n', {}, ":2: invalid JSON"),
        (b'{"id": "a", "text": "\xff\xfe"}\n', {}, ":1: invalid UTF-8"),
        (b'["not", "an", "object"]\n', {}, ":1: expected a JSON object, got list"),
        (b'{"id": "a", "body": "x"}\n', {}, "no text column 'text'; columns: id, body"),
        (b'{"ident": "a", "text": "x"}\n', {}, "no id column 'id'"),
        (b'{"id": "a", "text": 5}\n', {}, "not a string"),
        (b'{"id": "", "text": "x"}\n', {}, "empty id"),
        (b'{"id": "a", "text": "x"}\n', {"vector_col": "v"}, "no column 'v'"),
        (b'{"id": "a", "v": [1, 2]}\n{"id": "b", "v": [1]}\n', {"vector_col": "v"}, "row 2: vector has 1 numbers"),
        (b'{"id": "a", "v": [1, "x"]}\n', {"vector_col": "v"}, "not a number"),
        (b'{"id": "a", "text": "x"}\n', {"meta_cols": ["nope"]}, "no metadata column 'nope'"),
    ],
)
def test_malformed_jsonl(tmp_path, content, kwargs, expected):
    p = tmp_path / "bad.jsonl"
    p.write_bytes(content)
    with pytest.raises(InputError) as e:
        read_records(p, **kwargs)
    assert expected in one_line(e)


def test_invalid_utf8_csv(tmp_path):
    p = tmp_path / "bad.csv"
    p.write_bytes(b"id,text\na,caf\xe9\n")
    with pytest.raises(InputError) as e:
        read_records(p)
    assert "UTF-8" in one_line(e) or "utf" in one_line(e).lower()


def test_missing_file_and_unknown_suffix(tmp_path):
    with pytest.raises(NotFoundError):
        read_records(tmp_path / "nope.jsonl")
    (tmp_path / "a.txt").write_text("x")
    with pytest.raises(InputError) as e:
        read_records(tmp_path / "a.txt")
    assert "unknown file type" in one_line(e)


def test_cranfield_corpus_reads_whole(shared_data):
    r = read_records(shared_data / "cranfield-beir" / "corpus.jsonl", id_col="_id")
    assert len(r) == 1400 and len(set(r.ids)) == 1400
    assert all(isinstance(t, str) for t in r.texts)
    assert all("title" in m for m in r.metadata)


def test_read_texts_formats_and_errors(tmp_path):
    (tmp_path / "a.txt").write_text("one\n\n  two \nthree\n", encoding="utf-8")
    assert read_texts(tmp_path / "a.txt") == ["one", "two", "three"]
    (tmp_path / "b.jsonl").write_text('{"text": "x"}\n{"text": "y"}\n', encoding="utf-8")
    assert read_texts(tmp_path / "b.jsonl") == ["x", "y"]
    (tmp_path / "empty.txt").write_text("\n\n", encoding="utf-8")
    with pytest.raises(InputError, match="no texts"):
        read_texts(tmp_path / "empty.txt")
    (tmp_path / "bad.txt").write_bytes(b"ok\n\xff\xfe\n")
    with pytest.raises(InputError, match="UTF-8"):
        read_texts(tmp_path / "bad.txt")
    with pytest.raises(NotFoundError):
        read_texts(tmp_path / "missing.txt")
