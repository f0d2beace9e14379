"""word2vec checkpoints: the vectors after each epoch stored as spaces, a real series for ``analyze track``.

Checked on gensim's Lee corpus (300 news stories): keeping the checkpoints changes nothing in training; the last
checkpoint is the final space; CBOW's per-epoch training loss falls at every epoch (the learning rate decays
linearly on a fixed corpus); skip-gram's word-similarity score on MEN (the pairs in the vocabulary) rises from
epoch 1 to epoch 10; ``analyze track`` reads the series in order.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from repspace.analyze import track_spaces
from repspace.core.errors import ConflictError, InputError
from repspace.engines.eval.words import WordVectors, load_word_pairs, wordsim
from repspace.engines.learn import read_text_corpus, train_word2vec
from repspace.workflows.learn import learn_space

LEE = dict(vector_size=50, min_count=2, epochs=10, seed=1)


@pytest.fixture(scope="module")
def lee(lee_path: Path):
    return read_text_corpus(lee_path)


def test_checkpoints_change_nothing_in_training_and_the_cbow_loss_falls_every_epoch(lee):
    with_ = train_word2vec(lee, checkpoints=True, **LEE)
    without = train_word2vec(lee, **LEE)
    assert np.array_equal(with_.vectors, without.vectors) and without.checkpoints == ()
    assert len(with_.checkpoints) == 10 and np.array_equal(with_.checkpoints[-1], with_.vectors)
    assert not np.array_equal(with_.checkpoints[0], with_.checkpoints[1])
    loss = np.array(with_.epoch_loss)
    assert len(loss) == 10 and (loss > 0).all()
    assert (np.diff(loss) < 0).all(), loss  # measured: 172,247 falling to 118,392


def test_skipgram_word_similarity_rises_from_the_first_epoch_to_the_last(lee, shared_data):
    men = shared_data / "word-sim" / "EN-MEN-TR-3k.txt"
    if not men.is_file():
        pytest.skip(f"{men} is absent")
    r = train_word2vec(lee, sg=True, checkpoints=True, **LEE)
    pairs = load_word_pairs(men)
    scores = [wordsim(WordVectors(list(r.keys), v), pairs, bootstrap=0).scores["spearman"] for v in r.checkpoints]
    # measured: -0.113 at epoch 1, 0.125 at epoch 10 (329 pairs in the vocabulary)
    assert scores[-1] - scores[0] > 0.15, scores
    assert max(scores[:3]) < min(scores[-3:]), scores


def test_learn_space_stores_each_epoch_and_track_reads_the_series(tmp_path, lee_path):
    from repspace import Store

    with Store(str(tmp_path / "s.db")) as store:
        small = {**LEE, "epochs": 3, "min_count": 10}
        r = learn_space(store, "lee", "word2vec", lee_path, sg=True, checkpoints=True, **small)
        assert r.checkpoints == ("lee@epoch1", "lee@epoch2", "lee@epoch3")
        assert r.to_dict()["epoch_loss"] == list(r.epoch_loss) and len(r.epoch_loss) == 3
        last = store.space("lee@epoch3")
        assert np.array_equal(last.vectors(), store.space("lee").vectors())
        assert last.ids() == store.space("lee").ids()
        assert last.provenance["epoch"] == 3 and last.provenance["checkpoint_of"] == "lee"
        t = track_spaces([store.space(n) for n in r.checkpoints], k=10)
        assert t.spaces == r.checkpoints and all(q.n == r.n for q in t.qualities)
        named = learn_space(store, "lee2", "word2vec", lee_path, checkpoints=True, checkpoint_name="ck-{epoch}",
                            **{**small, "epochs": 2})
        assert named.checkpoints == ("ck-1", "ck-2")
        assert "checkpoints" not in learn_space(store, "plain", "word2vec", lee_path, **small).to_dict()


def test_bad_checkpoint_requests_store_nothing(tmp_path, lee_path):
    from repspace import Store

    with Store(str(tmp_path / "s.db")) as store:
        store.create_space("lee@epoch2", dim=2)
        before = [s.name for s in store.spaces()]
        with pytest.raises(ConflictError, match="lee@epoch2"):
            learn_space(store, "lee", "word2vec", lee_path, checkpoints=True, **{**LEE, "epochs": 3})
        with pytest.raises(InputError, match="each epoch differently"):
            learn_space(store, "lee", "word2vec", lee_path, checkpoints=True, checkpoint_name="same", **LEE)
        with pytest.raises(InputError, match="takes {space} and {epoch}"):
            learn_space(store, "lee", "word2vec", lee_path, checkpoints=True, checkpoint_name="{step}", **LEE)
        with pytest.raises(InputError, match="fasttext has no hyper-parameter checkpoints"):
            learn_space(store, "lee", "fasttext", lee_path, checkpoints=True, **LEE)
        assert [s.name for s in store.spaces()] == before
