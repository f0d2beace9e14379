"""diagnosis_html / write_diagnosis_html: a self-contained, escaped, well-formed page with one SVG per plot."""

from __future__ import annotations

import dataclasses
import html
import os
import re
import subprocess
import sys
from html.parser import HTMLParser

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.geometry import (
    HubnessResult,
    IntrinsicDimension,
    RogueDimensions,
    SpectrumResult,
)
from repspace.engines.geometry.diagnose import diagnose
from repspace.interfaces.reports import (
    LAYER_METRICS,
    diagnosis_html,
    write_diagnosis_html,
)

HOSTILE = "<script>alert('x')</script> & \"quotes\""
PAGE_KWARGS = {"title": "space glove", "provenance": {"encoder": "glove-6B-50d", "layer": 0}}
#: Elements that have no end tag in HTML.
VOID = {"meta", "br", "hr", "img", "input", "link", "col", "area", "base", "wbr", "source", "track", "embed"}


class Page(HTMLParser):
    """Collects tags, attributes and text, and checks that every element is closed in order."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.errors: list[str] = []
        self.text: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)

    def count(self, tag: str) -> int:
        return sum(t == tag for t, _ in self.tags)


def parse(page: str) -> Page:
    p = Page(page)
    assert p.errors == [], p.errors[:5]
    assert p.stack == [], f"unclosed: {p.stack}"
    return p


@pytest.fixture(scope="module")
def glove(glove_vectors) -> np.ndarray:
    return np.ascontiguousarray(glove_vectors[:2000], dtype=np.float32)


@pytest.fixture(scope="module")
def report(glove):
    return diagnose(glove, k=10)


@pytest.fixture(scope="module")
def layers(glove):
    # Stand-ins for transformer layers: the same 1000 items seen through more and more dimensions.
    return [(f"layer {i}", diagnose(glove[:1000, :d], k=10)) for i, d in enumerate((5, 20, 50))]


@pytest.fixture(scope="module")
def page(report) -> str:
    return diagnosis_html(report, **PAGE_KWARGS)


def test_page_parses_with_one_svg_per_plot_and_the_readings_on_top(page, report):
    p = parse(page)
    assert p.count("html") == p.count("head") == p.count("body") == p.count("title") == 1
    assert p.count("svg") == page.count("<svg") == 4
    assert p.count("style") == 1 and p.count("script") == 0
    text = " ".join(p.text)
    assert "2,000 items × 50 dimensions" in text and "metric cosine" in text
    items = [t for t, _ in p.tags if t == "li"]
    assert len(items) == len(report.readings) >= 3
    for line in report.readings:
        assert html.escape(line) in page
    assert "try search --hubness csls" in text  # GloVe's first 2000 words are hubby
    # The readings come before the metrics table, which comes before the plots.
    assert page.index(html.escape(report.readings[0])) < page.index('id="metrics"') < page.index("<svg")
    assert "glove-6B-50d" in text


def test_metrics_table_shows_to_dict_values_and_estimate_intervals(page, report):
    d = report.to_dict()
    p = parse(page)
    cells = " | ".join(p.text)
    for key in ("hubness.k_skewness", "hubness.robin_hood", "isotropy.isoscore", "intrinsic_dimension.twonn",
                "rank.effective_rank", "spectrum.alpha"):
        assert key in cells
        assert f"{d[key]:.4g}" in cells
    mc = d["isotropy.mean_cosine"]
    assert mc["exact"] and f"{mc['value']:.4g} (exact, {mc['n_pairs']:,} pairs)" in cells
    lo, hi = d["spectrum.alpha_ranks"]
    assert "spectrum.alpha_ranks" in cells and f"{lo}–{hi}" in cells
    rogue = d["isotropy.rogue_dimensions"]
    assert rogue and f"{rogue[0]['dim']} (share {rogue[0]['share']:.4g}" in cells
    # Long per-dimension lists are plotted, not tabulated.
    assert "spectrum.eigenvalues" not in cells and "isotropy.dimension_variances" not in cells


def test_sampled_estimate_shows_its_interval(glove):
    r = diagnose(glove[:600], k=5)
    iso = dataclasses.replace(r.isotropy, mean_cosine=dataclasses.replace(
        r.isotropy.mean_cosine, low=r.isotropy.mean_cosine.value - 0.01, high=r.isotropy.mean_cosine.value + 0.02,
        exact=False, n_pairs=100_000))
    page = diagnosis_html(dataclasses.replace(r, isotropy=iso), title="t")
    mc = iso.mean_cosine
    assert f"{mc.value:.4g} (95% interval [{mc.low:.4g}, {mc.high:.4g}], sampled, 100,000 pairs)" in page


def test_captions_state_what_the_plots_mark(page, report):
    hub, spec = report.hubness, report.spectrum
    assert f"{int(hub.hub_flag.sum()):,} hubs (N<sub>k</sub> ≥ {hub.hub_size * hub.k:g})" in page
    assert f"α = {spec.alpha:.3g} on ranks {spec.alpha_ranks[0]}–{spec.alpha_ranks[1]}" in page
    n_rogue = len(report.isotropy.rogue_dimensions.dimensions)
    assert f"the {n_rogue} rogue dimension" in page
    assert f"TwoNN {report.intrinsic_dimension.twonn:.3g}" in page


def test_layers_add_one_panel_per_metric_and_a_table(report, layers):
    shown = layers[-1][1]
    page = diagnosis_html(shown, title="layers", layers=layers)
    p = parse(page)
    assert page.count("<svg") == p.count("svg") == 4 + len(LAYER_METRICS) == 12
    rows = re.findall(r"<tr(?: class=\"shown\")?><td>(layer \d)</td>", page)
    assert rows == ["layer 0", "layer 1", "layer 2"]
    assert re.findall(r'<tr class="shown"><td>([^<]*)</td>', page) == ["layer 2"]
    assert "are for layer 2 (highlighted)" in page
    for key, _, get in LAYER_METRICS:
        assert f"{key} by layer" in page
    # The table holds each layer's own values, in order.
    sk = [f"{g.hubness.k_skewness:.4g}" for _, g in layers]
    positions = [page.index(f'<td class="num">{s}</td>', page.index("<table")) for s in sk]
    assert positions == sorted(positions)
    # A detail diagnosis that is none of the layers is said to be so.
    other = diagnosis_html(report, title="layers", layers=layers)
    assert "not one of these layers" in other and 'class="shown"' not in other


def test_hostile_strings_are_escaped(report, layers):
    provenance = {HOSTILE: HOSTILE, "transforms": ["<b>centre</b>", {"k": "</dd><script>"}], "layer": 3}
    lay = [(f"<img src=x onerror=alert(1)> ${i}$ \\frac", g) for i, (_, g) in enumerate(layers)]
    page = diagnosis_html(layers[0][1], title=HOSTILE, layers=lay, provenance=provenance)
    p = parse(page)
    assert p.count("script") == 0 and p.count("img") == 0 and p.count("b") == 0
    assert "<script" not in page.lower() and "<img" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert html.escape(HOSTILE) in page
    assert f"<title>{html.escape(HOSTILE)}</title>" in page
    assert "&lt;b&gt;centre&lt;/b&gt;" in page and "&lt;/dd&gt;&lt;script&gt;" in page
    text = " ".join(p.text)
    assert HOSTILE in text  # shown as text, unchanged
    assert f"{lay[0][0]} (highlighted)" in text


def test_no_external_references(page, report, layers):
    for doc in (page, diagnosis_html(report, title="x", layers=layers)):
        p = parse(doc)
        assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", doc, re.IGNORECASE)
        assert not re.search(r"@import|<link|<script|<img|<iframe|<object", doc, re.IGNORECASE)
        refs = [v for _, attrs in p.tags for k, v in attrs.items() if k in ("href", "xlink:href", "src")]
        assert refs and all(v.startswith("#") for v in refs)
        assert all(u.startswith("#") for u in re.findall(r"url\(([^)]*)\)", doc))
        # Every internal reference resolves, and ids are unique across the plots.
        ids = [attrs["id"] for _, attrs in p.tags if "id" in attrs]
        assert len(ids) == len(set(ids))
        targets = {v[1:] for v in refs} | {u[1:] for u in re.findall(r"url\(([^)]*)\)", doc)}
        assert targets <= set(ids)
        assert "http" not in doc.replace('xmlns="http://www.w3.org/2000/svg"', "").replace(
            'xmlns:xlink="http://www.w3.org/1999/xlink"', "")


def test_output_is_deterministic(page, report):
    assert diagnosis_html(report, **PAGE_KWARGS) == page


def test_write_is_atomic_and_overwrites(tmp_path, page, report, monkeypatch):
    target = tmp_path / "out" / "report.html"
    target.parent.mkdir()
    target.write_text("old", encoding="utf-8")
    path = write_diagnosis_html(str(target), report, **PAGE_KWARGS)
    assert path == target and os.listdir(target.parent) == ["report.html"]
    assert target.read_text(encoding="utf-8") == page
    # From here the page itself is not what is tested: a stub stands in for the rendering.
    module = sys.modules[write_diagnosis_html.__module__]
    monkeypatch.setattr(module, "diagnosis_html", lambda g, **kw: f"<p>{kw['title']}</p>")
    write_diagnosis_html(target, report, title="new")
    assert target.read_text(encoding="utf-8") == "<p>new</p>" and os.listdir(target.parent) == ["report.html"]

    # A failure while replacing leaves the previous file whole and no temporary file.
    def fail(src, dst):
        assert os.path.dirname(src) == str(target.parent) and os.path.exists(src)  # the temp file: same folder
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        write_diagnosis_html(target, report, title="newer")
    assert target.read_text(encoding="utf-8") == "<p>new</p>" and os.listdir(target.parent) == ["report.html"]
    monkeypatch.undo()
    # A bad argument fails before anything is written.
    with pytest.raises(InputError):
        write_diagnosis_html(target, {"n": 3}, title="x")
    assert target.read_text(encoding="utf-8") == "<p>new</p>" and os.listdir(target.parent) == ["report.html"]
    # The parent folder is created when missing.
    monkeypatch.setattr(module, "diagnosis_html", lambda g, **kw: "<p>deep</p>")
    deep = write_diagnosis_html(tmp_path / "a" / "b" / "r.html", report, title="x")
    assert deep.read_text(encoding="utf-8") == "<p>deep</p>"


def _no_nan(page: str) -> None:
    found = re.search(r".{0,40}\b(nan|inf|infinity)\b.{0,40}", page, re.IGNORECASE)
    assert found is None, found.group(0)


def test_degenerate_diagnoses_render_without_nan(tmp_path):
    rng = np.random.default_rng(0)
    one_d = diagnose(rng.standard_normal((200, 1)), k=5)  # d = 1: one eigenvalue, no α, no rogue dims
    assert one_d.d == 1 and one_d.spectrum.alpha_ranks == (0, 0)
    base = diagnose(rng.standard_normal((300, 6)), k=5)
    n, d = base.n, base.d
    flat = dataclasses.replace(
        base,
        hubness=HubnessResult(k=5, k_occurrence=np.full(n, 5), hub_flag=np.zeros(n, bool), k_skewness=0.0,
                              robin_hood=0.0, antihub_rate=0.0, hub_occurrence=0.0, gini=0.0),
        spectrum=SpectrumResult(0.0, 0.0, 0.0, (0, 0), np.zeros(d)),
        isotropy=dataclasses.replace(base.isotropy, variances=np.zeros(d),
                                     rogue_dimensions=RogueDimensions((), 3 / d, np.zeros(d))),
        intrinsic_dimension=IntrinsicDimension(4.0, 4.0, np.full(n, 4.0), 0, 20, 0.1),
    )
    odd_local = dataclasses.replace(base, intrinsic_dimension=dataclasses.replace(
        base.intrinsic_dimension, local=np.r_[np.full(n - 1, np.inf), 3.0][:n]))
    pages = [diagnosis_html(g, title="degenerate") for g in (one_d, flat, odd_local)]
    pages.append(diagnosis_html(flat, title="degenerate", layers=[("d=1", one_d), ("flat", flat), ("odd", odd_local)]))
    for page, svgs in zip(pages, (4, 4, 4, 4 + len(LAYER_METRICS))):
        assert page.count("<svg") == svgs
        parse(page)
        _no_nan(page)
    assert "no decay fitted" in pages[1] and "no rogue dimension" in pages[1]
    assert "no rogue dimension" in pages[0] and "no decay fitted" in pages[0]
    assert f"{n - 1:,} items not drawn (above the axis, or not finite)" in pages[2]
    path = write_diagnosis_html(tmp_path / "flat.html", flat, title="degenerate")
    assert path.read_text(encoding="utf-8") == pages[1]


def test_rogue_dimensions_near_zero_mean_cosine_are_not_marked():
    x = np.random.default_rng(3).standard_normal((400, 30))  # mean cosine ~0: shares are noise
    g = diagnose(x, k=5)
    assert g.isotropy.rogue_dimensions.dimensions and abs(g.isotropy.mean_cosine.value) < 0.1
    page = diagnosis_html(g, title="iso")
    assert "above the rogue threshold not marked" in page


def test_bad_arguments_raise(report):
    with pytest.raises(InputError, match="Diagnosis"):
        diagnosis_html(report.to_dict(), title="x")
    with pytest.raises(InputError, match="layer 'a'"):
        diagnosis_html(report, title="x", layers=[("a", None)])


def test_renders_without_pyplot_or_global_rc_changes():
    code = (
        "import sys, numpy as np, matplotlib\n"
        "from repspace.engines.geometry.diagnose import diagnose\n"
        "from repspace.interfaces.reports import diagnosis_html\n"
        "def rc():  # reading rcParams['backend'] would itself import pyplot to resolve it\n"
        "    return {k: matplotlib.rcParams[k] for k in matplotlib.rcParams if k != 'backend'}\n"
        "before = rc()\n"
        "page = diagnosis_html(diagnose(np.random.default_rng(0).standard_normal((200, 4)), k=5), title='t')\n"
        "assert page.count('<svg') == 4\n"
        "assert 'matplotlib.pyplot' not in sys.modules, 'pyplot imported'\n"
        "assert rc() == before, 'rcParams changed'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
