"""fit_dictionary / load_dictionary on real GloVe words: metrics equal the engine's on the same split, the kept
model reloads and encodes identically, a write to the space's vectors makes it stale, --save-top metadata is the
codes' top latents, and bad input writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _data_subsets import glove_words

from repspace import Store
from repspace.core.errors import ConflictError, InputError, NotFoundError
from repspace.core.exact import normalize_rows
from repspace.engines.interpret import sae_metrics, top_items
from repspace.workflows.dictionary import (
    SAVE_TOP_LATENTS,
    default_epochs,
    fit_dictionary,
    holdout_split,
    list_dictionaries,
    load_dictionary,
)

N, LATENTS, K = 2000, 256, 8


@pytest.fixture(scope="module")
def words() -> tuple[list[str], np.ndarray]:
    return glove_words(N)


@pytest.fixture(scope="module")
def fitted(tmp_path_factory, words):
    ids, x = words
    store = Store(tmp_path_factory.mktemp("dict") / "s.db")
    sp = store.create_space("glove", dim=50)
    sp.add(ids, x)
    report = fit_dictionary(sp, LATENTS, K, epochs=4, seed=0, save_top="sae")
    yield store, sp, report
    store.close()


def test_metrics_equal_sae_metrics_on_the_same_split(fitted, words):
    _, sp, r = fitted
    _, x = words
    X = normalize_rows(x)  # a cosine space: rows as the space compares them
    train, held = holdout_split(N, 0.1, 0)
    assert (r.n_train, r.n_heldout, r.n, r.epochs, r.normalized) == (len(train), len(held), N, 4, True)
    want_train, want_held, want_all = sae_metrics(r.model, X[train]), sae_metrics(r.model, X[held]), \
        sae_metrics(r.model, X)
    d = r.to_dict()
    assert d["fvu_train"] == pytest.approx(want_train.fvu, rel=1e-6)
    assert d["fvu_heldout"] == pytest.approx(want_held.fvu, rel=1e-6)
    assert d["nmse_train"] == pytest.approx(want_train.nmse, rel=1e-6)
    assert d["nmse_heldout"] == pytest.approx(want_held.nmse, rel=1e-6)
    assert d["l0_heldout"] == want_held.l0 and d["l0"] == want_all.l0 <= K
    assert d["dead_fraction"] == want_all.dead_fraction and d["dead_fraction_heldout"] == want_held.dead_fraction
    assert d["density_histogram"] == want_all.to_dict()["density_histogram"]
    assert 0 < d["fvu_train"] < 1 and 0 < d["fvu_heldout"] < 1
    # the held-out items are kept with the model, as space rows
    snap = sp.snapshot()
    assert load_dictionary(sp, r.name).heldout_rows.tolist() == snap.rows[held].tolist()
    json.dumps(d, allow_nan=False)  # JSON-ready


def test_the_kept_model_reloads_and_transforms_identically(fitted, words):
    store, sp, r = fitted
    _, x = words
    assert r.name == "sae-256-k8-s0" and list_dictionaries(sp) == [r.name]
    assert r.path == store.index_dir / sp.uid / "dictionaries" / "sae-256-k8-s0.npz" and r.path.is_file()
    with np.load(r.path, allow_pickle=False) as z:  # plain arrays: nothing pickled
        stamp = json.loads(bytes(z["stamp"]).decode())
    assert stamp["uid"] == sp.uid and stamp["generation"] == r.generation
    assert stamp["params"]["n_latents"] == LATENTS and stamp["params"]["k"] == K and stamp["params"]["epochs"] == 4
    d = load_dictionary(sp, r.name)
    for attr in ("components_", "encoder_", "latent_bias_", "pre_bias_", "samples_since_fired_"):
        assert np.array_equal(getattr(d.model, attr), getattr(r.model, attr)), attr
    got = d.transform(x)  # raw vectors: the dictionary normalises them as it was fitted
    want = r.model.transform(normalize_rows(x))
    assert (got != want).nnz == 0 and got.nnz > 0
    assert np.array_equal(d.model.reconstruct(normalize_rows(x[:50])), r.model.reconstruct(normalize_rows(x[:50])))
    assert d.stamp["metrics"] == r.metrics()


def test_latents_are_the_most_frequent_with_their_top_items(fitted, words):
    _, _, r = fitted
    ids, x = words
    X = normalize_rows(x)
    codes = r.model.transform(X)
    density = np.bincount(codes.indices, minlength=LATENTS) / N
    assert len(r.latents) == 32
    got = [s.latent for s in r.latents]
    assert np.all(np.diff([s.density for s in r.latents]) <= 0)
    assert min(s.density for s in r.latents) >= np.sort(density)[::-1][31]
    engine = top_items(r.model, X, got, n=8)
    for s, t in zip(r.latents, engine):
        assert s.density == pytest.approx(density[s.latent])
        assert [i for i, _, _ in s.items] == [ids[j] for j in t.rows]
        assert [a for *_, a in s.items] == pytest.approx(t.activations.tolist(), abs=1e-6)
        col = codes[:, s.latent].data
        assert s.mean_activation == pytest.approx(float(col.mean()), rel=1e-5)
        assert all(text is None for _, text, _ in s.items)  # GloVe words carry no text


def test_save_top_writes_each_items_top_latents(fitted, words):
    _, sp, r = fitted
    ids, x = words
    assert r.saved == N and r.save_top == "sae"
    codes = r.model.transform(normalize_rows(x)).tocsr()
    for word in ("the", "paris", "1990"):
        i = ids.index(word)
        (item,) = sp.get([word])
        saved = item.metadata["sae"]
        row = codes[i]
        order = np.lexsort((row.indices, -row.data))[:SAVE_TOP_LATENTS]
        assert [j for j, _ in saved] == row.indices[order].tolist()
        assert [v for _, v in saved] == pytest.approx(row.data[order].tolist(), abs=1e-6)
        assert 1 <= len(saved) <= SAVE_TOP_LATENTS and all(a >= b for (_, a), (_, b) in zip(saved, saved[1:]))
    # the metadata write did not change the vectors: the dictionary is still current
    assert load_dictionary(sp, r.name).name == r.name


@pytest.fixture()
def small(tmp_path: Path, words):
    ids, x = words
    store = Store(tmp_path / "s.db")
    sp = store.create_space("glove", dim=50)
    sp.add(ids[:600], x[:600])
    yield store, sp
    store.close()


def test_a_write_to_the_vectors_makes_it_stale(small, words):
    store, sp = small
    ids, x = words
    r = fit_dictionary(sp, 64, 4, epochs=1, seed=3, holdout=0.2)
    assert r.name == "sae-64-k4-s3" and r.n_heldout == 120
    sp.update_metadata(["the"], [{"note": "a metadata write"}])  # vectors unchanged: still current
    assert load_dictionary(sp, r.name).model.n_latents == 64
    sp.add([ids[700]], x[700:701])
    with pytest.raises(ConflictError) as e:
        load_dictionary(sp, r.name)
    msg = str(e.value)
    assert "\n" not in msg and "stale" in msg and "--latents 64 -k 4 --seed 3" in msg
    r2 = fit_dictionary(sp, 64, 4, epochs=1, seed=3, holdout=0.2)  # fitted again: current again
    assert r2.n == 601 and load_dictionary(sp, r.name).stamp["n"] == 601
    sp.delete([ids[0]])
    with pytest.raises(ConflictError, match="stale"):
        load_dictionary(sp, r.name)


def test_save_top_is_refused_whole_if_the_space_changed_meanwhile(small, words):
    store, sp = small
    ids, x = words
    wrote = []

    def progress(phase, done, total):  # another writer, while the model trains
        if not wrote:
            wrote.append(sp.add([ids[900]], x[900:901]).generation)

    with pytest.raises(ConflictError, match="changed"):
        fit_dictionary(sp, 32, 2, epochs=1, save_top="sae", progress=progress)
    assert wrote and all("sae" not in it.metadata for it in sp.get(ids[:600]))


def test_bad_input_writes_nothing(small):
    store, sp = small
    generation = sp.info().generation
    cases = [((64, 65), {}, "k must be at most"), ((0, 1), {}, "n_latents"), ((16, 2), {"holdout": 1.0}, "holdout"),
             ((16, 2), {"epochs": 0}, "epochs"), ((16, 2), {"save_top": " "}, "metadata key"),
             ((16, 2), {"seed": -1}, "seed"), ((16, 4), {"multik": 2}, "multik"), ((16, 4), {"multik": 17}, "multik")]
    for args, kwargs, fragment in cases:
        with pytest.raises(InputError, match=fragment):
            fit_dictionary(sp, *args, **kwargs)
    assert sp.info().generation == generation and not (store.index_dir / sp.uid / "dictionaries").exists()
    with pytest.raises(NotFoundError, match="no dictionary 'sae-1-k1-s0'"):
        load_dictionary(sp, "sae-1-k1-s0")
    with pytest.raises(InputError, match="bad dictionary name"):
        load_dictionary(sp, "../../s.db")
    empty = store.create_space("empty", dim=3)
    with pytest.raises(InputError, match="at least 2"):
        fit_dictionary(empty, 4, 1)


def test_an_l2_space_is_fitted_on_its_raw_vectors(tmp_path, words):
    ids, x = words
    with Store(tmp_path / "l2.db") as store:
        sp = store.create_space("raw", dim=50, metric="l2")
        sp.add(ids[:500], x[:500])
        r = fit_dictionary(sp, 32, 4, epochs=1)
        d = load_dictionary(sp, r.name)
    assert not r.normalized and not d.normalized and r.metric == "l2"
    assert (d.transform(x[:500]) != r.model.transform(x[:500])).nnz == 0
    assert r.to_dict()["fvu_train"] == pytest.approx(sae_metrics(r.model, x[holdout_split(500, 0.1)[0]]).fvu,
                                                     rel=1e-6)


def test_a_damaged_file_is_refused(small):
    store, sp = small
    r = fit_dictionary(sp, 16, 2, epochs=1, holdout=0)
    assert r.n_heldout == 0 and r.heldout is None and r.to_dict()["fvu_heldout"] is None
    r.path.write_bytes(b"not a zip")
    with pytest.raises(InputError, match="damaged"):
        load_dictionary(sp, r.name)


def test_split_and_default_epochs():
    train, held = holdout_split(1000, 0.1, seed=5)
    assert len(held) == 100 and np.intersect1d(train, held).size == 0 and len(train) + len(held) == 1000
    assert np.array_equal(held, holdout_split(1000, 0.1, seed=5)[1])
    assert not np.array_equal(held, holdout_split(1000, 0.1, seed=6)[1])
    assert holdout_split(5, 0.0)[1].size == 0 and len(holdout_split(2, 0.9)[0]) == 1
    assert default_epochs(1_800) == 150 and default_epochs(400_000) == 8


def test_a_multik_dictionary_has_its_own_name_and_decodes_wider_codes(small, words):
    """CSR's Multi-TopK term: the top 4k latents reconstruct too, so 4k-latent codes decode better than without it."""
    store, sp = small
    plain = load_dictionary(sp, fit_dictionary(sp, 64, 4, epochs=4, seed=0).name)
    rep = fit_dictionary(sp, 64, 4, epochs=4, seed=0, multik=16)
    assert rep.name == "sae-64-k4-m16-s0" and list_dictionaries(sp) == ["sae-64-k4-m16-s0", "sae-64-k4-s0"]
    wide = load_dictionary(sp, rep.name)
    assert wide.model.multik == 16 and plain.model.multik == 0
    x = normalize_rows(words[1][:600]) if wide.normalized else words[1][:600]

    def fvu(d, k):
        rec = d.model.inverse_transform(d.transform(x, k=k)).astype(np.float64)
        return float(((x - rec) ** 2).sum() / ((x - x.mean(axis=0)) ** 2).sum())

    assert fvu(wide, 16) < fvu(plain, 16)
