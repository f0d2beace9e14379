"""``repspace search SPACE --all-of ID --none-of ID``: the library's set query, printed; bad input is one error
line, exit 2 (3 for an id not in the space), and changes nothing stored."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _cli_process import one_error_line, run_quiet, store_dump
from _data_subsets import glove_words

from repspace import Store
from repspace.workflows.search.set_search import set_search


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> str:
    """GloVe's 5,000 most frequent words in a cosine space ``glove``."""
    ids, x = glove_words(5000)
    path = str(tmp_path_factory.mktemp("sets") / "s.db")
    store = Store(path)
    store.create_space("glove", dim=x.shape[1]).add(ids, x, metadata=[{"len": len(w)} for w in ids])
    store.close()
    return path


def test_json_is_the_library_answer(capsys, db) -> None:
    r = run_quiet(capsys, "--store", db, "search", "glove", "--all-of", "king", "--all-of", "woman",
                  "--none-of", "man", "-k", "5", "--json")
    assert r.code == 0, r
    got = json.loads(r.out)
    want = set_search(Store(db, readonly=True).space("glove"), all_of=["king", "woman"], none_of=["man"], k=5)
    assert [h["id"] for h in got] == [h.id for h in want] and got[0]["id"] == "queen"
    np.testing.assert_allclose([h["score"] for h in got], [h.score for h in want], rtol=1e-12)
    r = run_quiet(capsys, "--store", db, "search", "glove", "--none-of", "the", "-k", "3", "--where", "len > 4",
                  "--json", "--explain")
    plan = json.loads(r.out)["plan"]
    assert r.code == 0 and plan["reason"].startswith("SetCSE") and len(json.loads(r.out)["hits"]) == 3


def test_the_table(capsys, db) -> None:
    r = run_quiet(capsys, "--store", db, "search", "glove", "--all-of", "paris", "--all-of", "germany",
                  "--none-of", "france", "-k", "3")
    assert r.code == 0 and "berlin" in r.out.splitlines()[3], r.out


@pytest.mark.parametrize("args, code, fragments", [
    (["--all-of", "king", "--none-of", "king"], 2, ["in both all_of and none_of"]),
    (["--all-of", "king", "--all-of", "king"], 2, ["twice in all_of"]),
    (["--all-of", "king", "--all-of", "no-such-word-xyz"], 3, ["no-such-word-xyz", "not in space"]),
    (["--all-of", "king", "--id", "queen"], 2, ["does not combine with --id"]),
    (["queen", "--all-of", "king"], 2, ["does not combine with a query text"]),
    (["--all-of", "king", "--hybrid"], 2, ["--hybrid"]),
    (["--all-of", "king", "--exact", "--index", "hnsw32"], 2, ["not both"]),
    (["--all-of", "king", "-k", "0"], 2, ["-k"]),
    ([], 2, ["exactly one of", "--all-of"]),
])
def test_bad_input_is_one_line_and_changes_nothing(capsys, db, args, code, fragments) -> None:
    before = store_dump(db)
    one_error_line(run_quiet(capsys, "--store", db, "search", "glove", *args), code, *fragments)
    assert store_dump(db) == before
