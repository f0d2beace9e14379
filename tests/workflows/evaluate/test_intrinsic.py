"""The EvalRank and WEAT workflows: subjects (encoder or space), the data's revision, files checked first."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from repspace import Store
from repspace.core.errors import InputError
from repspace.engines.encoders import get_encoder
from repspace.engines.eval import evalrank, load_word_pairs, weat
from repspace.workflows.evaluate import load_evalrank_data, run_evalrank, run_weat


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_run_weat_with_an_encoder_equals_the_task_and_records_the_files(tmp_path):
    words = {"x": "rose\ntulip\ndaisy\n", "y": "ant\nwasp\nmoth\n", "a": "love\npeace\n", "b": "filth\ndeath\n"}
    files = []
    for role, text in words.items():
        files.append(tmp_path / f"{role}set.txt")
        files[-1].write_text(text)
    report = run_weat(*files, encoder="static", permutations=50, bootstrap=0)
    (r,) = report.results
    expected = weat(get_encoder("static"), *(text.split() for text in words.values()), permutations=50, bootstrap=0)
    assert r.scores == expected.scores and r.info["subject"] == "static" and r.info["encoder"] == "static"
    assert r.info["sets"] == {"x": "xset", "y": "yset", "a": "aset", "b": "bset"}
    revision = hashlib.sha256("".join(_sha(p) for p in files).encode()).hexdigest()
    assert r.dataset_revision == revision and report.saved == []


def test_run_evalrank_on_a_space_of_words(tmp_path, shared_data):
    path = shared_data / "word-sim" / "EN-RG-65.txt"
    pairs = load_word_pairs(path)
    words = sorted({w.lower() for w in pairs.word1 + pairs.word2})
    vectors = np.random.default_rng(0).standard_normal((len(words), 16))
    with Store(tmp_path / "s.db") as store:
        store.create_space("rg", dim=16).add(words, vectors)
        report = run_evalrank(path, store=store, space="rg", save=True, seed=2)
        (r,) = report.results
        from repspace.engines.eval import WordVectors

        expected = evalrank(WordVectors(words, vectors), pairs, seed=2)
        assert r.scores == expected.scores and r.interval == expected.interval
        assert r.dataset_revision == _sha(path) and len(report.saved) == 1
        assert [s.task_name for s in store.results()] == ["evalrank:EN-RG-65"]


def test_files_and_options_are_checked_before_any_model_loads(tmp_path):
    ws = tmp_path / "ws.txt"
    ws.write_text("cat kitten 9\ncar truck 8\n")
    assert type(load_evalrank_data(ws)).__name__ == "WordPairs"
    # an encoder name that does not exist would fail later: these fail first
    with pytest.raises(InputError, match="--background takes words from a --space"):
        run_evalrank(ws, encoder="no-such-encoder", background=5)
    with pytest.raises(InputError, match="kind must be one of"):
        run_evalrank(ws, encoder="no-such-encoder", kind="tsv")
    with pytest.raises(InputError, match="does not exist"):
        run_weat(ws, ws, ws, tmp_path / "missing.txt", encoder="no-such-encoder")
    with pytest.raises(InputError, match="permutations"):
        run_weat(ws, ws, ws, ws, encoder="no-such-encoder", permutations=-2)
