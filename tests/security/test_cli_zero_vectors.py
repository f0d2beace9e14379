"""An empty text, and any vector of no direction, is refused in a cosine space (issue 29, part 2).

A cosine compares directions; the zero vector has none (every cosine with it is 0/0, answered as 0). The static
model2vec encoder embeds an empty or whitespace-only text, and a text of only U+FEFF, to exactly that vector
(MiniLM gives its special tokens' vector, which says nothing of the text either). So:

* a text to embed that is empty or only whitespace is a user error at ingest (one line naming the item);
* a text that still embeds to the zero vector, a stored or given zero vector, or one float32 cannot normalise
  (its squares overflow or underflow) is refused in a cosine space, at ingest, in ``Space.add`` and as a query;
* other metrics (ip, l2) keep zero vectors: there they have a meaning.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _cli_process import cli, one_error_line, run_quiet, store_dump

from repspace import Store
from repspace.core.errors import InputError
from repspace.workflows.ingest import add_items


def _jsonl(path: Path, rows: list[dict]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def static_db(tmp_path_factory) -> Path:
    """A store with a space ``st`` of two texts embedded by the static encoder."""
    folder = tmp_path_factory.mktemp("static")
    db = folder / "s.db"
    rows = [{"id": "a", "text": "hello world"}, {"id": "b", "text": "parse a date string"}]
    r = cli("--store", str(db), "ingest", "st", _jsonl(folder / "ok.jsonl", rows), "--encoder", "static")
    assert r.code == 0, r
    return db


def test_an_empty_text_is_refused_at_ingest_by_the_real_cli(static_db, tmp_path):
    before = store_dump(static_db)
    rows = [{"id": "c", "text": "fine"}, {"id": "d", "text": ""}]
    r = cli("--store", str(static_db), "ingest", "st", _jsonl(tmp_path / "e.jsonl", rows))
    one_error_line(r, 2, "item 'd' (position 1) has an empty text: there is nothing to embed")
    assert store_dump(static_db) == before


@pytest.mark.parametrize("text, fragment", [(" \t\u3000 ", "has an empty text (only whitespace)"),
                                            ("\ufeff", "embeds to the zero vector with encoder static")],
                         ids=["whitespace", "zero-width"])
def test_texts_of_no_content_are_refused_and_nothing_is_written(capsys, static_db, tmp_path, text, fragment):
    before = store_dump(static_db)
    rows = [{"id": "c", "text": "fine"}, {"id": "d", "text": text}]
    for space in ("st", "new"):
        r = run_quiet(capsys, "--store", str(static_db), "ingest", space, _jsonl(tmp_path / "e.jsonl", rows),
                      "--encoder", "static", "--commit-every", "1")
        one_error_line(r, 2, "'d' (position 1)", fragment)
    assert store_dump(static_db) == before


def test_a_query_of_no_direction_is_refused(capsys, static_db):
    for query, fragment in (("\ufeff", "the query text, embedded, is all zeros"), ("", "the query text is empty"),
                            ("   ", "the query text is empty")):
        r = run_quiet(capsys, "--store", str(static_db), "search", "st", query)
        one_error_line(r, 2, fragment)
    r = cli("--store", str(static_db), "search", "st", "--vector", json.dumps([0.0] * 64))
    one_error_line(r, 2, "the query vector is all zeros: a cosine space compares directions")
    r = run_quiet(capsys, "--store", str(static_db), "search", "st", "--vector", json.dumps([1e30] * 64))
    one_error_line(r, 2, "the query vector has a length float32 cannot normalise")
    r = run_quiet(capsys, "--store", str(static_db), "search", "st", "hello", "--json", "-k", "1")
    assert r.code == 0 and json.loads(r.out)[0]["id"] == "a"


@pytest.mark.parametrize("row, fragment", [([0.0, 0.0, 0.0], "is all zeros"),
                                           ([1e-30, 0.0, 0.0], "float32 cannot normalise"),
                                           ([3e19, 3e19, 0.0], "float32 cannot normalise")], ids=str)
def test_vectors_of_no_direction_are_refused_in_a_cosine_space(capsys, tmp_path, row, fragment):
    db = tmp_path / "v.db"
    store = Store(db)
    sp = store.create_space("c", dim=3)
    sp.add(["keep"], [[1.0, 2.0, 3.0]])
    with pytest.raises(InputError, match=rf"vector of id 'z' \(position 1\) .*{fragment}"):
        sp.add(["y", "z"], [[1.0, 0.0, 0.0], row])
    with pytest.raises(InputError, match=fragment):  # the service's write route
        add_items(store, "c", [{"id": "y", "vector": [1.0, 0.0, 0.0]}, {"id": "z", "vector": row}])
    assert sp.ids() == ["keep"]
    for metric in ("ip", "l2"):  # a zero vector has a meaning there
        store.create_space(metric, dim=3, metric=metric).add(["z"], [[0.0, 0.0, 0.0]])
    store.close()
    before = store_dump(db)
    rows = [{"id": "y", "vec": [1.0, 0.0, 0.0]}, {"id": "z", "vec": row}]
    r = run_quiet(capsys, "--store", str(db), "ingest", "c", _jsonl(tmp_path / "z.jsonl", rows), "--vector-col", "vec",
                  "--commit-every", "1")
    one_error_line(r, 2, "vector of id 'z' (position 1)", fragment)
    assert store_dump(db) == before  # the first batch was not written either


def test_float16_rounding_to_zero_is_caught_as_stored(tmp_path):
    store = Store(tmp_path / "h.db")
    sp = store.create_space("h", dim=2, dtype="float16")
    with pytest.raises(InputError, match="is all zeros"):
        sp.add(["tiny"], [[1e-8, 0.0]])  # float16 holds nothing below 6e-8
    store.close()
