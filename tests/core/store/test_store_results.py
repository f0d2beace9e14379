"""Recorded evaluation results: linking to a space's generation, staleness, migration from schema 1."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from repspace import InputError, NotFoundError, Store
from repspace.core.store._db import _split_sql
from repspace.core.store._schema import MIGRATIONS


def _result(task: str = "sts:toy", score: float = 0.5) -> dict:
    return {"task_name": task, "scores": {"test": [{"main_score": score, "spearman": score}]},
            "evaluation_time": 0.1, "repspace": {"main_metric": "spearman"}}


def test_result_is_linked_to_the_generation_and_goes_stale(store):
    sp = store.create_space("v", dim=2)
    sp.add(["a"], np.ones((1, 2)))
    gen = sp.info().generation
    rid = store.save_result(_result(), space=sp)
    (saved,) = store.results()
    assert (saved.id, saved.space, saved.subject, saved.generation, saved.stale) == (rid, "v", "v", gen, False)
    assert (saved.task_name, saved.split, saved.main_metric, saved.main_score) == ("sts:toy", "test", "spearman", 0.5)
    assert saved.result == _result()
    sp.add(["b"], np.ones((1, 2)))
    assert store.results()[0].stale is True


def test_encoder_results_have_no_space_and_filters_work(store):
    sp = store.create_space("v", dim=2)
    store.save_result(_result("sts:a", 0.1), subject="minilm")
    store.save_result(_result("retrieval:cran", 0.2), space=sp)
    store.save_result(_result("sts_x", 0.3), subject="static")  # '_' is no LIKE wildcard
    assert [r.main_score for r in store.results(task="sts")] == [0.1]
    assert [r.main_score for r in store.results(space="v")] == [0.2]
    enc = store.results(task="sts:a")[0]
    assert (enc.space, enc.generation, enc.stale, enc.subject) == (None, None, False, "minilm")
    with pytest.raises(NotFoundError):
        store.results(space="nope")


def test_deleting_the_space_deletes_its_results(store):
    sp = store.create_space("v", dim=2)
    store.save_result(_result(), space=sp)
    store.save_result(_result(), subject="minilm")
    store.delete_space("v")
    assert [r.subject for r in store.results()] == ["minilm"]


@pytest.mark.parametrize("bad", [{}, {"task_name": "x"}, {"task_name": "x", "scores": {}},
                                 {"task_name": "x", "scores": {"a": [{}], "b": [{}]}},
                                 {"task_name": "x", "scores": {"t": [{"main_score": float("nan")}]}}])
def test_malformed_results_are_refused_and_nothing_is_stored(store, bad):
    with pytest.raises(InputError):
        store.save_result(bad, subject="minilm")
    with pytest.raises(InputError):
        store.save_result(_result())  # neither space nor subject
    assert store.results() == []


def test_a_schema_1_store_is_migrated_keeping_its_data(tmp_path):
    path = tmp_path / "old.db"
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA journal_mode = WAL")
    for statement in _split_sql(MIGRATIONS[0]):
        con.execute(statement)
    con.execute("PRAGMA user_version = 1")
    con.execute("INSERT INTO spaces (uid, name, dim, metric, dtype, created_at, updated_at) "
                "VALUES ('u1', 'old', 2, 'cosine', 'float32', 't', 't')")
    con.close()
    with Store(path) as s:
        assert [i.name for i in s.spaces()] == ["old"]
        s.save_result(_result(), space=s.space("old"))
        assert s.results()[0].space == "old"
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS) >= 2
    con.close()
