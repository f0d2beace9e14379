"""``repspace index`` and the search options beyond HNSW, end to end through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _cli_process import run

from repspace import Store


@pytest.fixture()
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "s.db")
    rng = np.random.default_rng(0)
    texts = ["solar panels on the roof", "wind turbines at sea", "a cat on a mat", "dogs in the park",
             "the stock market fell", "bond yields rose"] * 50
    with Store(path) as store:
        sp = store.create_space("docs", dim=16)
        sp.add([f"d{i}" for i in range(len(texts))], rng.standard_normal((len(texts), 16)), texts=texts,
               metadata=[{"n": i} for i in range(len(texts))])
    return path


def test_build_list_search_drop(capsys, db):
    code, out, err = run(capsys, "--store", db, "index", "build", "docs", "int8>rescore4", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert (report["spec"], report["action"], report["ntotal"]) == ("int8>rescore4", "built", 300)
    code, out, _ = run(capsys, "--store", db, "index", "list", "docs", "--json")
    assert [(r["spec"], r["action"]) for r in json.loads(out)] == [("int8", "current"), ("vectors", "current")]
    code, out, err = run(capsys, "--store", db, "search", "docs", "--id", "d0", "--index", "int8>rescore4",
                         "--explain", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["plan"]["method"] == "int8>rescore4" and data["plan"]["index_action"] == "loaded"
    exact = json.loads(run(capsys, "--store", db, "search", "docs", "--id", "d0", "--exact", "--json")[1])
    assert [h["id"] for h in data["hits"]] == [h["id"] for h in exact]
    assert run(capsys, "--store", db, "index", "drop", "docs", "int8>rescore4")[0] == 0
    assert run(capsys, "--store", db, "index", "drop", "docs", "vectors")[0] == 0
    assert json.loads(run(capsys, "--store", db, "index", "list", "docs", "--json")[1]) == []


def test_drop_json_describes_what_was_dropped(capsys, db):
    assert run(capsys, "--store", db, "index", "build", "docs", "binary>rescore8")[0] == 0
    listed = {r["spec"]: r for r in json.loads(run(capsys, "--store", db, "index", "list", "docs", "--json")[1])}
    code, out, err = run(capsys, "--store", db, "index", "drop", "docs", "binary>rescore8", "--json")
    assert code == 0, err
    dropped = json.loads(out)
    # the same fields as `index list --json`, with action "dropped"
    assert dropped == {**listed["binary"], "action": "dropped"}
    assert dropped["ntotal"] == 300 and dropped["memory_bytes"] > 0
    code, out, err = run(capsys, "--store", db, "index", "drop", "docs", "vectors", "--json")
    assert code == 0, err
    assert json.loads(out) == {**listed["vectors"], "action": "dropped"}
    assert json.loads(run(capsys, "--store", db, "index", "list", "docs", "--json")[1]) == []
    # without --json: one note on stderr, nothing on stdout
    assert run(capsys, "--store", db, "index", "build", "docs", "hnsw16")[0] == 0
    code, out, err = run(capsys, "--store", db, "index", "drop", "docs", "hnsw16")
    assert code == 0 and out == "" and "hnsw16: dropped, 300 vectors" in err


def test_every_command_has_json(capsys):
    """The README promises --json on every command: each leaf command's --help lists it."""
    import typer.main

    from repspace.interfaces.cli import build_app

    group = typer.main.get_command(build_app())

    def leaves(cmd, path):
        subs = getattr(cmd, "commands", None)
        if not subs:
            yield path
            return
        for name, sub in subs.items():
            yield from leaves(sub, [*path, name])

    commands = list(leaves(group, []))
    assert ["index", "drop"] in commands and ["spaces"] in commands and len(commands) > 20
    for path in commands:
        code, out, _ = run(capsys, *path, "--help")
        assert code == 0 and "--json" in out, " ".join(path)


def test_tldr_index_built_and_searched(capsys, db):
    code, out, err = run(capsys, "--store", db, "index", "build", "docs", "tldr4>rerank", "--json")
    assert code == 0, err
    code, out, err = run(capsys, "--store", db, "search", "docs", "--id", "d7", "--index", "tldr4>rerank10", "-k", "3",
                         "--json")
    assert code == 0, err
    hits = json.loads(out)
    x = np.random.default_rng(0).standard_normal((300, 16))  # the db fixture's vectors
    unit = x / np.linalg.norm(x, axis=1, keepdims=True)
    exact = [float(unit[7] @ unit[int(h["id"][1:])]) for h in hits]  # reranked on the full vectors
    assert len(hits) == 3 and np.allclose([h["score"] for h in hits], exact, atol=1e-5)
    assert exact == sorted(exact, reverse=True)


def test_bm25_search_from_the_cli(capsys, db):
    code, out, err = run(capsys, "--store", db, "search", "docs", "wind turbines", "--bm25", "-k", "3", "--json")
    assert code == 0, err
    assert {h["text"] for h in json.loads(out)} == {"wind turbines at sea"}


@pytest.mark.parametrize("args, message", [
    (["index", "build", "docs", "pca0>rerank"], "pca"),
    (["index", "build", "docs", "tldr0>rerank"], "dimensions must be between 1"),
    (["index", "build", "docs", "tldr32>rerank"], "tldr32 keeps more dimensions than the vectors have (16)"),
    (["index", "build", "nope", "hnsw32"], "no space"),
    (["index", "drop", "docs", "binary>rescore8"], "no binary"),
    (["search", "docs", "--id", "d0", "--index", "hnsw32", "--exact"], "not both"),
    (["search", "docs", "--id", "d0", "--index", "int8>rescore4", "--hnsw"], "not both"),
    (["search", "docs", "wind", "--index", "hnsw32", "--exact"], "not both"),
    (["index", "drop", "docs", "hnsw32", "--json"], "no hnsw32"),
    (["search", "docs", "--id", "d0", "--hybrid"], "query text"),
    (["search", "docs", "--id", "d0", "--mmr", "2"], "lambda"),
    (["search", "docs", "wind", "--bm25", "--fusion", "sum"], "hybrid search only"),
    (["search", "docs", "wind", "--lexical-weight", "2"], "hybrid search only"),
])
def test_bad_input_is_one_error_line(capsys, db, args, message):
    code, out, err = run(capsys, "--store", db, *args)
    assert code != 0 and out == ""
    assert err.startswith("error: ") and message in err.lower() and len(err.strip().splitlines()) == 1
