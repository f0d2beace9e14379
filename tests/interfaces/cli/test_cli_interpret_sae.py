"""``repspace interpret sae`` end to end on real GloVe words: the JSON equals the engine's metrics on the kept
model's held-out items, --save-top writes metadata, --html writes one self-contained, escaped page, and bad input
is one error line that changes nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from _cli_process import run_quiet
from _data_subsets import glove_words

from repspace import Store
from repspace.core.exact import normalize_rows
from repspace.engines.interpret import sae_metrics
from repspace.workflows.dictionary import load_dictionary

N = 1500

KEYS = {"space", "name", "path", "metric", "normalized", "generation", "n", "dim", "n_train", "n_heldout",
        "n_latents", "k", "epochs", "seed", "holdout", "fvu_train", "fvu_heldout", "nmse_train", "nmse_heldout",
        "l0_train", "l0_heldout", "l0", "dead_fraction_train", "dead_fraction_heldout", "dead_fraction",
        "dead_fraction_window", "density_histogram", "history", "latents", "save_top", "saved", "seconds",
        "fit_seconds"}


@pytest.fixture(scope="module")
def words() -> tuple[list[str], np.ndarray]:
    return glove_words(N)


@pytest.fixture()
def db(tmp_path: Path, words) -> str:
    ids, x = words
    path = str(tmp_path / "s.db")
    texts = [f"<b>{w}</b> & <script>x</script>" for w in ids]
    with Store(path) as store:
        store.create_space("glove", dim=50).add(ids, x, texts=texts)
    return path


def test_json_metrics_save_top_and_html(capsys, db, words, tmp_path):
    ids, x = words
    page = tmp_path / "out" / "sae.html"
    code, out, err = run_quiet(capsys, "--store", db, "interpret", "sae", "glove", "--latents", "128", "-k", "8",
                               "--epochs", "3", "--seed", "1", "--save-top", "sae", "--html", str(page), "--json")
    assert code == 0, err
    got = json.loads(out)
    assert set(got) == KEYS
    assert (got["name"], got["n_latents"], got["k"], got["epochs"], got["seed"]) == ("sae-128-k8-s1", 128, 8, 3, 1)
    assert got["n_train"] + got["n_heldout"] == N and got["n_heldout"] == 150 and got["saved"] == N
    assert set(got["latents"][0]) == {"latent", "density", "mean_activation", "top_items"}
    assert set(got["latents"][0]["top_items"][0]) == {"id", "text", "activation"}
    assert len(got["latents"]) == 32 and got["l0"] <= 8
    with Store(db) as store:
        sp = store.space("glove")
        d = load_dictionary(sp, got["name"])
        snap = sp.snapshot()
        held = np.isin(snap.rows, d.heldout_rows)
        want = sae_metrics(d.model, normalize_rows(x)[held])
        (item,) = sp.get(["the"])
    assert got["fvu_heldout"] == pytest.approx(want.fvu, rel=1e-6)
    assert got["nmse_heldout"] == pytest.approx(want.nmse, rel=1e-6) and got["l0_heldout"] == want.l0
    assert Path(got["path"]) == d.path and d.path.is_file()
    top = item.metadata["sae"]
    assert 1 <= len(top) <= 8 and all(isinstance(j, int) and v > 0 for j, v in top)

    doc = page.read_text(encoding="utf-8")
    assert doc.startswith("<!DOCTYPE html>") and doc.count("<svg") == 2
    assert '<table class="latents">' in doc and "feature density" in doc.lower()
    for latent in got["latents"]:  # every listed latent is a row of the table
        assert f'<td class="num">{latent["latent"]}</td>' in doc
    # self-contained: no link out (an SVG's xmlns names its namespace, it loads nothing)
    bare = doc.replace('xmlns="http://www.w3.org/2000/svg"', "").replace(
        'xmlns:xlink="http://www.w3.org/1999/xlink"', "")
    assert "http" not in bare and not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", doc)
    # texts from the store are escaped
    assert "<script" not in doc and "<b>" not in doc
    first = got["latents"][0]["top_items"][0]
    assert first["text"] == f"<b>{first['id']}</b> & <script>x</script>"
    assert "&lt;b&gt;" in doc and "&amp; &lt;script&gt;x&lt;/script&gt;" in doc


def test_table_output(capsys, db):
    code, out, err = run_quiet(capsys, "--store", db, "interpret", "sae", "glove", "--latents", "64", "-k", "4",
                               "--epochs", "2")
    assert code == 0, err
    assert "FVU" in out and "held out" in out and "most frequent latents" in out and "sae-64-k4-s0" in out


@pytest.mark.parametrize("args, fragment", [
    (("glove", "--latents", "16", "-k", "17"), "k must be at most n_latents (16)"),
    (("glove", "--latents", "0", "-k", "1"), "n_latents must be a positive integer"),
    (("nope", "--latents", "16", "-k", "2"), "no space 'nope'"),
    (("glove", "--latents", "16", "-k", "2", "--holdout", "1.5"), "holdout"),
    (("glove", "--latents", "16", "-k", "2", "--save-top", ""), "metadata key"),
    (("glove", "--latents", "16"), "-k"),
])
def test_bad_input_is_one_line_and_changes_nothing(capsys, db, args, fragment):
    with Store(db) as store:
        sp = store.space("glove")
        before = (sp.info().generation, sp.get(["the"])[0].metadata)
        folder = store.index_dir / sp.uid / "dictionaries"
    code, out, err = run_quiet(capsys, "--store", db, "interpret", "sae", *args)
    assert code != 0 and out == ""
    assert err.count("\n") == 1 and fragment in err, err
    with Store(db) as store:
        sp = store.space("glove")
        assert (sp.info().generation, sp.get(["the"])[0].metadata) == before
    assert not folder.exists()
