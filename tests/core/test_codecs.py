"""Codec names: one grammar for compression sweeps and the first stages of search indexes."""

from __future__ import annotations

import numpy as np
import pytest

from repspace.core.codecs import (
    PRECISIONS,
    CodecSpec,
    code_bytes,
    parse_codec,
    sign_bits,
    signs,
    split_items,
)
from repspace.core.errors import InputError
from repspace.engines.eval.compression import Codec
from repspace.engines.search.specs import parse_spec

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


@pytest.mark.parametrize("text, canonical", [
    ("full", "full"), ("", None), ("float32", "full"), ("FP16", "fp16"), ("float16", "fp16"),
    ("pca64,int8", "pca64,int8"), ("int8, PCA64", "pca64,int8"), ("prefix128", "prefix128"),
    ("prefix128,float32", "prefix128"), ("full,binary", "binary"),
])
def test_every_spelling_reads_to_one_canonical_string(text, canonical):
    if canonical is None:
        with pytest.raises(InputError, match="empty codec"):
            parse_codec(text)
        return
    spec = parse_codec(text)
    assert str(spec) == canonical and parse_codec(str(spec)) == spec


@pytest.mark.parametrize("text, message", [
    ("pca64,int8,binary", "two precisions"), ("pca64,prefix32", "two reductions"), ("full,pca8", "two reductions"),
    ("pca", "unknown codec item 'pca'"), ("hnsw32", "unknown codec item 'hnsw32'"), ("pca-4", "does not parse"),
    ("pca0", "positive integer"), ("int4", "unknown codec item 'int4'"),
])
def test_bad_codecs_are_one_clear_error(text, message):
    with pytest.raises(InputError, match=message):
        parse_codec(text)


@pytest.mark.parametrize("index, codec", [
    ("pca64,int8>rerank", "pca64,int8"), ("prefix32,hnsw16,fp16", "prefix32,fp16"), ("int8>rescore4", "int8"),
    ("binary>rescore8", "binary"), ("hnsw32,int8", "int8"), ("hnsw32", "full"), ("exact", "full"),
    ("prefix64,hnsw32,float16", "prefix64,fp16"),
])
def test_an_index_first_stage_and_a_sweep_codec_share_names(index, codec):
    """What `--index` and a compression sweep call the same codes is the same string."""
    spec = parse_spec(index)
    assert str(spec.codec) == codec
    c = Codec.parse(codec)
    assert (c.method, c.dims, c.precision) == (spec.codec.method, spec.codec.dims, spec.codec.precision)
    assert parse_spec("ivf64,pq8").codec is None


def test_tokenizer_keeps_precision_words_whole():
    assert split_items("int8,fp16,float32,hnsw32") == [("int8", ""), ("fp16", ""), ("float32", ""), ("hnsw", "32")]
    assert split_items("int9") == [("int", "9")]  # not a precision: left for the caller to refuse
    with pytest.raises(InputError):
        split_items("pca-64")


def test_bytes_and_sign_codes_agree_with_hamming_distances():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((40, 13)).astype(np.float32)
    x[0, :3] = 0.0  # zero is not positive: bit 0, sign -1
    bits = sign_bits(x)
    assert bits.shape == (40, code_bytes(13, "binary")) == (40, 2)
    s = signs(x)
    hamming = np.unpackbits(bits[:, None, :] ^ bits[None, :, :], axis=2).sum(axis=2)
    np.testing.assert_allclose((s @ s.T) / 13, 1 - 2 * hamming / 13, atol=1e-6)
    assert [code_bytes(384, p) for p in PRECISIONS] == [1536, 768, 384, 48]
    assert CodecSpec("pca", 64, "binary").bytes_per_vector(384) == 8 == Codec(64, "pca", "binary").bytes_per_vector
