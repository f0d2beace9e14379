"""``repspace interpret polar|rank-axis|concepts|decompose|transport`` end to end on real GloVe words: each
equal to the engine computed here on the same vectors, bad input one error line that writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from repspace import Store
from repspace.engines.interpret import (
    GaussianTransport,
    axis,
    compare_group_maps,
    concept_basis,
    mean_decomposition,
    polar,
    rank_axis,
    rank_correlation,
)
from repspace.interfaces.cli import main
from repspace.workflows.demo import glove_records

N = 10000
SENTENCES = ["the cat sat on the floor", "a dog ran in the park", "she said that he would come back later",
             "stocks fell as the market closed", "he had a very good day", "they were not at home"]


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["-q", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def words() -> tuple[list[str], np.ndarray]:
    rec = glove_records()
    return rec.ids[:N], np.asarray(rec.vectors[:N], dtype=np.float32)


@pytest.fixture()
def db(tmp_path: Path, words) -> str:
    ids, x = words
    where = {w: i for i, w in enumerate(ids)}
    path = str(tmp_path / "s.db")
    meta = [{"kind": "number" if w.isdigit() else "word", "length": len(w)} for w in ids]
    tokens = [(f"s{c}/{p}", w, c, p) for c, s in enumerate(SENTENCES) for p, w in enumerate(s.split())]
    with Store(path) as store:
        store.create_space("glove", dim=50).add(ids, x, metadata=meta)
        store.create_space("tokens", dim=50, metric="l2").add(
            [t[0] for t in tokens], x[[where[t[1]] for t in tokens]],
            metadata=[{"doc": f"s{c}", "pos": p} for _, _, c, p in tokens])
    return path


def _rows(words, names: list[str]) -> np.ndarray:
    ids, x = words
    where = {w: i for i, w in enumerate(ids)}
    return x[[where[n] for n in names]]


def test_polar_coordinates_equal_the_engine(capsys, db, words):
    code, out, err = run(capsys, "--store", db, "interpret", "polar", "glove", "--axis", "size=big,large:small,little",
                         "--axis", "mood=good,great:bad,poor", "--json", "--per-item")
    assert code == 0, err
    got = json.loads(out)
    ids, x = words
    want = polar(x, {"size": axis(_rows(words, ["big", "large"]), _rows(words, ["small", "little"])),
                     "mood": axis(_rows(words, ["good", "great"]), _rows(words, ["bad", "poor"]))})
    coords = np.array([row["coordinates"] for row in got["coordinates"]])
    assert [row["id"] for row in got["coordinates"]] == ids and got["names"] == ["size", "mood"]
    np.testing.assert_allclose(coords, want.coordinates, rtol=1e-6, atol=1e-6)
    assert got["condition"] == pytest.approx(want.condition)
    assert got["axes"][1]["top"][0]["id"] == ids[int(np.argmax(want.coordinates[:, 1]))]
    code, out, err = run(capsys, "--store", db, "interpret", "polar", "glove", "--axis", "mood=good:bad")
    assert code == 0 and "POLAR axis mood" in out, err


def test_rank_axis_scores_saves_and_tests_against_a_field(capsys, db, words):
    ranked = ["one", "two", "three", "four", "five"]
    code, out, err = run(capsys, "--store", db, "interpret", "rank-axis", "glove", "--ranked", ",".join(ranked),
                         "--against", "length", "--save", "rank", "--json")
    assert code == 0, err
    got = json.loads(out)
    ids, x = words
    ax = rank_axis(_rows(words, ranked), [1, 2, 3, 4, 5])
    scores = ax.score(x)
    assert got["top"][0]["id"] == ids[int(np.argmax(scores))] and got["saved"] == N
    assert got["rho_ranked"] == pytest.approx(rank_correlation(ax, _rows(words, ranked), [1, 2, 3, 4, 5]))
    assert set(got["significance"]) >= {"rho", "p_value"}
    with Store(db) as store:
        (it,) = store.space("glove").get(["three"])
    assert it.metadata["rank"] == pytest.approx(scores[ids.index("three")], abs=1e-6)


def test_concepts_equal_the_engine(capsys, db, words):
    concepts = ["animal", "color", "food", "money"]
    items = ["cat", "red", "bread", "bank"]
    code, out, err = run(capsys, "--store", db, "interpret", "concepts", "glove", "--concepts", ",".join(concepts),
                         "--items", ",".join(items), "--top", "1", "--json")
    assert code == 0, err
    got = json.loads(out)
    want = concept_basis(_rows(words, items), _rows(words, concepts), concepts)
    assert [it["id"] for it in got["items"]] == items
    np.testing.assert_allclose([it["scores"] for it in got["items"]], want.scores, atol=1e-6)
    assert [tuple(it["top"]) for it in got["items"]] == want.top(1)
    assert [it["top"][0] for it in got["items"]] == ["animal", "color", "food", "money"]
    code, out, err = run(capsys, "--store", db, "interpret", "concepts", "glove", "--concepts", ",".join(concepts),
                         "--granularity", "2", "--json")
    assert code == 0, err
    merged = json.loads(out)
    want2 = concept_basis(words[1], _rows(words, concepts), concepts, granularity=2)
    assert merged["names"] == list(want2.names) and merged["n"] == N
    assert merged["r2_mean"] == pytest.approx(want2.r2_mean)


@pytest.mark.parametrize("method", ["means", "ols"])
def test_decompose_equals_the_engine_on_the_token_states(capsys, db, words, method):
    code, out, err = run(capsys, "--store", db, "interpret", "decompose", "tokens", "--position-field", "pos",
                         "--context-field", "doc", "--method", method, "--json")
    assert code == 0, err
    got = json.loads(out)
    toks = [(w, c, p) for c, s in enumerate(SENTENCES) for p, w in enumerate(s.split())]
    want = mean_decomposition(_rows(words, [t[0] for t in toks]), [t[2] for t in toks], [t[1] for t in toks],
                              method=method).to_dict()
    for key, value in want.items():
        assert got[key] == (pytest.approx(value, abs=1e-9) if isinstance(value, float) else value), key


def test_transport_moves_one_group_and_compares_the_maps(capsys, db, words):
    code, out, err = run(capsys, "--store", db, "interpret", "transport", "glove", "--field", "kind",
                         "--from", "number", "--to", "word", "--out", "glove-ot", "--dims", "8", "--json")
    assert code == 0, err
    got = json.loads(out)
    ids, x = words
    num = np.array([w.isdigit() for w in ids])
    Xa, Xb = x[num].astype(np.float64), x[~num].astype(np.float64)
    want = compare_group_maps(x[num], x[~num], dims=8).to_dict()
    assert {k: v for k, v in got["comparison"].items() if k != "scores"} == pytest.approx(
        {k: v for k, v in want.items() if k != "scores"})
    for g, w in zip(got["comparison"]["scores"], want["scores"], strict=True):
        assert g == pytest.approx(w)
    ot, none = got["comparison"]["scores"][3], got["comparison"]["scores"][0]
    assert ot["method"] == "gaussian_ot" and ot["quadratic_accuracy"] < none["quadratic_accuracy"]
    assert (got["n_a"], got["n_b"], got["count"]) == (int(num.sum()), int((~num).sum()), N)
    moved = GaussianTransport(dims=8).fit(x[num], x[~num]).transform(x[num])
    with Store(db) as store:
        sp = store.space("glove-ot")
        out_x = sp.vectors_of(ids)
        assert sp.provenance["derived_from"]["spec"] == "gaussian-ot:kind:number->word"
    np.testing.assert_allclose(out_x[num], moved, atol=1e-5)
    np.testing.assert_array_equal(out_x[~num], x[~num])
    assert got["displacement"] == pytest.approx(float(np.mean(np.sum((moved - Xa) ** 2, axis=1))), rel=1e-5)
    assert Xb.shape[0] == got["n_b"]


@pytest.mark.parametrize("args, code, message", [
    (["polar", "glove", "--axis", "size"], 2, "NAME=POS1"),
    (["polar", "glove", "--axis", "a=good:bad", "--axis", "a=big:small"], 2, "twice"),
    (["rank-axis", "glove", "--ranked", "one"], 2, "at least 2"),
    (["rank-axis", "glove", "--ranked", "one,two", "--save", " "], 2, "metadata key"),
    (["concepts", "glove", "--concepts", "cat,dog", "--items", "cat,zzzqqq"], 2, "zzzqqq"),
    (["concepts", "glove", "--concepts", "cat,dog", "--granularity", "5"], 2, "granularity"),
    (["decompose", "tokens", "--position-field", "pos", "--context-field", "pos"], 2, "two fields"),
    (["decompose", "tokens", "--position-field", "pos", "--context-field", "doc", "--method", "x"], 2, "method"),
    (["transport", "glove", "--field", "kind", "--from", "nope", "--to", "word", "--out", "o"], 2, "nope"),
    (["transport", "glove", "--field", "kind", "--from", "word", "--to", "word", "--out", "o"], 2, "two groups"),
    (["transport", "glove", "--field", "kind", "--from", "number", "--to", "word", "--out", "o", "--dims", "0"], 2,
     "dims"),
    (["transport", "glove", "--field", "kind", "--from", "number", "--to", "word", "--out", "tokens"], 4,
     "already exists"),
])
def test_bad_input_is_one_line_and_writes_nothing(capsys, db, args, code, message):
    got, out, err = run(capsys, "--store", db, "interpret", *args)
    assert got == code and out == ""
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and message in lines[0], err
    with Store(db) as store:
        assert sorted(s.name for s in store.spaces()) == ["glove", "tokens"]
        (it,) = store.space("glove").get(["two"])
        assert "rank" not in it.metadata


def test_tables_show_the_json_values(capsys, db):
    def both(*args: str) -> tuple[dict, str]:
        code, out, err = run(capsys, "--store", db, "interpret", *args, "--json")
        assert code == 0, err
        got = json.loads(out)
        code, out, err = run(capsys, "--store", db, "interpret", *args)
        assert code == 0, err
        return got, out

    got, table = both("rank-axis", "glove", "--ranked", "one,two,three")
    assert got["top"][0]["id"] in table and f"{got['top'][0]['score']:.3f}" in table
    got, table = both("concepts", "glove", "--concepts", "animal,food", "--items", "dog,bread")
    assert "dog" in table and f"{got['items'][0]['r2']:.3f}" in table and "animal" in table
    got, table = both("decompose", "tokens", "--position-field", "pos", "--context-field", "doc")
    assert f"{got['positional_share']:.4f}" in table and f"{got['context_share']:.4f}" in table
    code, out, err = run(capsys, "--store", db, "interpret", "transport", "glove", "--field", "kind", "--from",
                         "number", "--to", "word", "--out", "moved", "--dims", "4")
    assert code == 0 and "gaussian_ot" in out and "leace" in out, err
