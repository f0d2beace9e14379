"""The explorer page (web/ built into interfaces/server/static) in a real browser: Debian's chromium,
headless, driven by Playwright against ``repspace serve`` in a child process.

The store: 1,500 GloVe 6B 50d words as space ``words`` (metadata: first letter, length, long;
``diagnose --save``'s k_occurrence, hub and local_id), the same words rotated by a random orthogonal
matrix plus noise as ``words-rot`` (two-space mode), and 200 of them embedded with the bundled
``static`` encoder as ``phrases`` (a space that answers text queries).

The page's state is read from ``window.__repspace`` (see web/README.md). WebGL comes from
SwiftShader: headless chromium with ``--use-angle=swiftshader --enable-unsafe-swiftshader``.

``PYTHONPATH=tests python tests/interfaces/server/test_explorer_browser.py [OUT.png]`` writes the
screenshot docs/explorer.png (:func:`screenshot`; tests/ on the path, as pytest's ``pythonpath`` puts it).
"""

from __future__ import annotations

import io
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from _browser import chromium, require_chromium

N_WORDS = 1500
N_PHRASES = 200
VIEWPORT = {"width": 1280, "height": 800}
REPO = Path(__file__).resolve().parents[3]

if __name__ != "__main__":
    require_chromium()
    pytestmark = pytest.mark.slow


# ---------------------------------------------------------------------------------------------- the store
def build_store(path: Path) -> None:
    """The test store described in the module docstring."""
    from repspace import Store
    from repspace.workflows.demo import glove_records
    from repspace.workflows.diagnose import diagnose_space
    from repspace.workflows.ingest import ingest_records
    from repspace.workflows.ingest.readers import Records

    rec = glove_records()
    ids = rec.ids[100:100 + N_WORDS]  # skip the stop words at the very top
    x = np.asarray(rec.vectors[100:100 + N_WORDS], dtype=np.float32)
    meta = [{"first": w[0], "length": len(w), "long": len(w) > 6} for w in ids]
    store = Store(path)
    try:
        words = store.create_space("words", dim=x.shape[1], metric="cosine")
        words.add(ids, x, texts=ids, metadata=meta)
        diagnose_space(words, save=True)
        rng = np.random.default_rng(0)
        q, _ = np.linalg.qr(rng.standard_normal((x.shape[1], x.shape[1])))
        y = (x @ q + 0.25 * x.std() * rng.standard_normal(x.shape)).astype(np.float32)
        store.create_space("words-rot", dim=x.shape[1], metric="cosine").add(ids, y, texts=ids, metadata=meta)
        some = ids[:N_PHRASES]
        ingest_records(store, "phrases", Records("words", [f"p{i}" for i in range(len(some))], list(some), None,
                                                 [{"n": i} for i in range(len(some))]), encoder="static")
    finally:
        store.close()


# ---------------------------------------------------------------------------------------------- helpers
READY = "() => window.__repspace && window.__repspace.ready && window.__repspace.busy === 0"


class Page:
    """A page of the explorer with the console errors and uncaught exceptions it produced."""

    def __init__(self, browser: Any, url: str) -> None:
        self.context = browser.new_context(viewport=VIEWPORT)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.goto(url)
        self.wait_ready()

    def wait_ready(self, timeout: float = 30_000) -> None:
        self.page.wait_for_function(READY, timeout=timeout)
        self.page.evaluate("() => window.__repspace.settled()")

    def wait(self, condition: str, timeout: float = 20_000) -> None:
        self.page.wait_for_function(f"() => {{ const s = window.__repspace; return {condition}; }}", timeout=timeout)
        self.wait_ready()

    def state(self) -> dict[str, Any]:
        return self.page.evaluate("() => { const { screenPosition, settled, ids, ...s } = window.__repspace;"
                                  " return JSON.parse(JSON.stringify(s)); }")

    def position(self, item: str, which: str = "a") -> tuple[float, float]:
        p = self.page.evaluate("([id, w]) => window.__repspace.screenPosition(id, w)", [item, which])
        assert p is not None, f"{item} is not drawn on map {which}"
        return p[0], p[1]

    def click_at(self, x: float, y: float) -> None:
        """Click like a hand does: the pointer arrives a frame before the button goes down (regl-scatterplot's
        camera pans by the distance the pointer jumped between two frames while the button is down)."""
        self.page.mouse.move(x, y)
        self.page.wait_for_timeout(50)
        self.page.mouse.click(x, y)

    def isolated_id(self, which: str = "a", among: int = 400) -> str:
        """An id among the first ``among`` whose point is farthest (on screen) from every other point."""
        return self.page.evaluate("""([which, among]) => {
            const s = window.__repspace; const ids = s.ids();
            const canvas = document.querySelector(`#map-${which} canvas`);
            const pos = ids.map((id) => s.screenPosition(id, which));
            let best = null, bestD = -1;
            for (let i = 0; i < Math.min(among, ids.length); i++) {
              const p = pos[i];  // on screen, and not under the legend or the title
              if (!p || document.elementFromPoint(p[0], p[1]) !== canvas) continue;
              let d = Infinity;
              for (let j = 0; j < ids.length; j++) {
                if (j === i || !pos[j]) continue;
                d = Math.min(d, Math.hypot(pos[j][0] - p[0], pos[j][1] - p[1]));
              }
              if (d > bestD) { bestD = d; best = ids[i]; }
            }
            return best; }""", [which, among])

    def canvas_pixels(self, map_id: str = "map-a") -> np.ndarray:
        """The map's canvas as an RGB array, from a screenshot of the element (what is on screen)."""
        from PIL import Image

        png = self.page.locator(f"#{map_id} canvas").first.screenshot()
        return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))

    def close(self) -> None:
        self.context.close()


def drawn(pixels: np.ndarray) -> tuple[int, float]:
    """Distinct colours and the share of pixels that are not the white background."""
    flat = pixels.reshape(-1, 3)
    colours = len(np.unique(flat, axis=0))
    ink = float(np.mean(np.any(flat < 245, axis=1)))
    return colours, ink


def api(server: Any, path: str, body: dict[str, Any] | None = None) -> Any:
    url = f"{server.url}/api/v1/{path}"
    r = httpx.post(url, json=body, timeout=60) if body is not None else httpx.get(url, timeout=60)
    r.raise_for_status()
    return r.json()


# ---------------------------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Any]:
    from _http_server import Server

    path = tmp_path_factory.mktemp("explorer") / "s.db"
    build_store(path)
    with Server(path) as s:
        yield s


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


@pytest.fixture
def open_page(server, browser) -> Iterator[Any]:
    pages: list[Page] = []

    def open_(query: str = "") -> Page:
        page = Page(browser, f"{server.url}/{query}")
        pages.append(page)
        return page

    yield open_
    for p in pages:
        p.close()


# ---------------------------------------------------------------------------------------------- tests
def test_page_draws_the_map_with_webgl_and_no_console_errors(open_page, server):
    page = open_page()
    state = page.state()
    first = api(server, "spaces")[0]
    assert state["renderer"] == "webgl"
    assert state["space"] == first["name"] and state["points"] == first["count"]
    page = open_page("?space=words")
    state = page.state()
    assert (state["space"], state["points"], state["errors"], state["twoSpace"]) == ("words", N_WORDS, [], False)
    assert page.page.evaluate("() => window.__repspace.ids().length") == N_WORDS
    colours, ink = drawn(page.canvas_pixels())
    assert colours > 5 and ink > 0.01, (colours, ink)
    assert "words: 1,500 points" in page.page.text_content("#status")
    assert page.errors == [] and page.dialogs == []


def test_canvas_fallback_draws_pans_zooms_and_picks(open_page, server):
    page = open_page("?space=words&renderer=canvas")
    assert page.state()["renderer"] == "canvas" and page.state()["points"] == N_WORDS
    before = page.canvas_pixels()
    colours, ink = drawn(before)
    assert colours > 5 and ink > 0.01, (colours, ink)
    item = page.isolated_id()
    x, y = page.position(item)
    page.click_at(x, y)
    page.wait(f"s.selected === {item!r}")
    exact = [n["id"] for n in api(server, f"spaces/words/items/{item}")["exact"]]
    assert page.page.locator("#tab-item .neighbours tbody tr td:nth-child(2)").all_text_contents() == exact
    page.page.mouse.move(x, y)
    page.page.mouse.wheel(0, -400)  # zoom in about the cursor: the point stays under it
    page.page.wait_for_timeout(100)
    assert np.allclose(page.position(item), (x, y), atol=1.5)
    page.page.mouse.move(x + 40, y + 40)
    page.page.mouse.down()
    page.page.mouse.move(x + 140, y + 90, steps=5)
    page.page.mouse.up()
    page.page.wait_for_timeout(100)
    assert np.allclose(page.position(item), (x + 100, y + 50), atol=1.5)
    assert not np.array_equal(before, page.canvas_pixels())
    assert page.errors == []


def test_colour_by_k_occurrence_shows_a_legend(open_page, server):
    page = open_page("?space=words")
    options = page.page.eval_on_selector_all("#colour option", "os => os.map(o => o.value)")
    assert {"", "k_occurrence", "first", "hub", "@map_agreement", "@recall"} <= set(options)
    plain_colours, _ = drawn(page.canvas_pixels())
    page.page.select_option("#colour", "k_occurrence")
    page.wait("s.colourBy === 'k_occurrence'")
    values = api(server, "spaces/words/column?name=k_occurrence")["values"]
    legend = page.page.locator("#map-a .legend")
    assert legend.is_visible()
    assert legend.locator(".legend-min").text_content() == str(int(min(values)))
    assert legend.locator(".legend-max").text_content() == str(int(max(values)))
    assert page.state()["legend"]["kind"] == "continuous"
    colours, _ = drawn(page.canvas_pixels())
    assert colours > plain_colours
    page.page.select_option("#colour", "first")  # categories: swatches
    page.wait("s.colourBy === 'first'")
    assert legend.locator(".legend-row").count() >= 10
    page.page.check("#size-by")
    page.wait("s.sizeBy === true")
    page.page.select_option("#colour", "")
    page.wait("s.colourBy === null")
    assert not legend.is_visible()
    assert page.errors == []


def test_id_search_with_a_filter_highlights_the_hits(open_page, server):
    page = open_page("?space=words")
    page.page.select_option("#mode", "id")
    page.page.fill("#query", "king")
    page.page.fill("#where", "k_occurrence > 5")
    page.page.fill("#k", "15")
    page.page.click("#search button[type=submit]")
    page.wait("s.highlighted.length > 0")
    hits = [h["id"] for h in api(server, "spaces/words/search", {"id": "king", "k": 15, "where": "k_occurrence > 5"})["hits"]]
    assert page.state()["highlighted"] == hits
    assert page.page.locator("#tab-results .hit .id").all_text_contents() == hits
    page.page.locator("#tab-results .hit").first.click()  # a hit opens its item
    page.wait(f"s.selected === {hits[0]!r}")
    assert page.page.locator("#tab-item h2").text_content() == hits[0]
    assert page.errors == []


def test_text_search_highlights_the_hits(open_page, server):
    page = open_page("?space=phrases")
    page.page.fill("#query", "royal family")
    page.page.press("#query", "Enter")
    page.wait("s.highlighted.length > 0")
    hits = [h["id"] for h in api(server, "spaces/phrases/search", {"text": "royal family", "k": 10})["hits"]]
    assert page.state()["highlighted"] == hits
    assert page.errors == []


def test_an_api_error_is_one_line_in_the_status_line(open_page):
    page = open_page("?space=words")
    page.page.fill("#query", "king")  # text mode: GloVe vectors have no encoder
    page.page.press("#query", "Enter")
    page.wait("s.errors.length > 0")
    status = page.page.locator("#status")
    assert "error" in status.get_attribute("class")
    assert "no encoder is recorded" in status.text_content() and "\n" not in status.text_content()
    assert page.dialogs == []
    # the browser itself logs the 400 of the fetch; nothing else
    assert all("400" in e for e in page.errors), page.errors


def test_clicking_a_point_opens_its_exact_and_approximate_neighbours(open_page, server):
    page = open_page("?space=words")
    item = page.isolated_id()
    page.click_at(*page.position(item))
    page.wait(f"s.selected === {item!r}")
    got = api(server, f"spaces/words/items/{item}")
    tab = page.page.locator("#tab-item")
    assert tab.is_visible() and tab.locator("h2").text_content() == item
    rows = tab.locator(".neighbours tbody tr")
    assert rows.locator("td:nth-child(2)").all_text_contents() == [n["id"] for n in got["exact"]]
    if got["approximate"] is not None:
        assert rows.locator("td:nth-child(4)").all_text_contents() == [n["id"] for n in got["approximate"]]
    assert "k_occurrence" in tab.locator(".meta-table").text_content()
    # shift + drag: a lasso highlights the points inside it; Esc clears
    box = page.page.locator("#map-a canvas").bounding_box()
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.page.mouse.move(cx - 120, cy - 120)
    page.page.wait_for_timeout(50)
    page.page.keyboard.down("Shift")
    page.page.mouse.down()
    for dx, dy in ((120, -120), (120, 120), (-120, 120), (-120, -100)):
        page.page.mouse.move(cx + dx, cy + dy, steps=8)
        page.page.wait_for_timeout(20)
    page.page.mouse.up()
    page.page.keyboard.up("Shift")
    page.wait("s.highlighted.length > 10")
    assert page.page.locator("#tab-results h2").text_content().startswith("Lasso:")
    page.page.keyboard.press("Escape")
    page.wait("s.highlighted.length === 0 && s.selected === null")
    assert page.errors == []


def test_two_space_mode_shows_the_moved_items(open_page, server):
    page = open_page("?space=words")
    page.page.select_option("#space-b", "words-rot")
    page.wait("s.twoSpace && s.movedRows > 0")
    state = page.state()
    assert (state["spaceB"], state["colourBy"], state["movedRows"]) == ("words-rot", "compare:jaccard", 50)
    assert state["legend"]["kind"] == "continuous" and state["errors"] == []
    moved = api(server, "compare/words/words-rot?changed=50&k=10")["changed"]
    page.page.click(".tabs [data-tab=moved]")
    rows = page.page.locator("#tab-moved table.moved tbody tr")
    assert rows.count() == 50
    assert rows.locator("td.id").all_text_contents() == [m["id"] for m in sorted(moved, key=lambda m: m["jaccard"])]
    colours, ink = drawn(page.canvas_pixels("map-b"))  # B side by side, coloured by Jaccard
    assert colours > 5 and ink > 0.01
    first = rows.locator("td.id").first.text_content()
    rows.first.click()
    page.wait(f"s.selected === {first!r}")
    pair = api(server, f"compare/words/words-rot/items/{first}?k=10")
    tab = page.page.locator("#tab-item")
    for part in ("kept", "lost", "gained"):
        assert tab.locator(f".col.{part} li").all_text_contents() == pair[part]
    # a point of map B opens the same comparison
    other = page.isolated_id("b")
    page.click_at(*page.position(other, "b"))
    page.wait(f"s.selected === {other!r}")
    assert tab.locator("h2").text_content() == other
    # a search shows the top k in both spaces
    page.page.select_option("#mode", "id")
    page.page.fill("#query", "king")
    page.page.press("#query", "Enter")
    page.wait("s.highlighted.length > 0")
    both = api(server, "compare/words/words-rot/search", {"id": "king", "k": 10})
    cols = page.page.locator("#tab-results .cols .col")
    assert cols.count() == 2 + (both["mapped"] is not None)
    assert cols.nth(0).locator(".id").all_text_contents() == [h["id"] for h in both["a"]]
    assert cols.nth(1).locator(".id").all_text_contents() == [h["id"] for h in both["b"]]
    assert page.state()["highlighted"] == [h["id"] for h in both["a"]]
    # the morph: one map, moved from A's layout to B's
    start = page.position("king")
    page.page.select_option("#view-b", "morph")
    page.wait("s.view === 'morph'")
    assert page.page.locator("#map-b").is_hidden() and page.page.locator("#morph").is_visible()
    page.page.eval_on_selector("#morph-t", "el => { el.value = '1000'; el.dispatchEvent(new Event('change')); }")
    page.wait_ready()
    assert page.position("king") != start
    assert page.errors == []


#: Ids the explorer must open as they are: path syntax, dot segments, percent and query marks, spaces at the ends,
#: a line separator, a bidirectional override, emoji, markup.
HOSTILE_IDS = ["a/b", "..", ".", "100%", "q?x=1#f", " sp ace ", "line\u2028sep", "\u202ertl", "emoji \U0001f600",
               "<b>x</b>"]


@pytest.fixture(scope="module")
def hostile_server(tmp_path_factory) -> Iterator[Any]:
    """Spaces ``h`` and ``h2`` over the same 30 ids, the hostile ones among them."""
    from _http_server import Server

    from repspace import Store

    path = tmp_path_factory.mktemp("hostile") / "s.db"
    ids = [f"n{i}" for i in range(30 - len(HOSTILE_IDS))] + HOSTILE_IDS
    rng = np.random.default_rng(5)
    x = rng.standard_normal((len(ids), 8)).astype(np.float32)
    store = Store(path)
    store.create_space("h", dim=8).add(ids, x, metadata=[{"id": i} for i in ids])
    store.create_space("h2", dim=8).add(ids, x + 0.3 * rng.standard_normal(x.shape).astype(np.float32))
    store.close()
    s = Server(path)
    yield s
    s.stop()


def test_items_with_hostile_ids_open_in_one_space_and_in_two(hostile_server, browser):
    import json

    page = Page(browser, f"{hostile_server.url}/?space=h")
    try:
        page.page.select_option("#mode", "id")
        page.page.fill("#query", "n0")
        page.page.fill("#k", "30")
        page.page.press("#query", "Enter")
        page.wait("s.highlighted.length > 0")
        shown = page.page.locator("#tab-results .hit .id").all_text_contents()
        assert set(HOSTILE_IDS) <= set(shown), shown
        for two in (False, True):
            for item in HOSTILE_IDS:
                page.page.click(".tabs [data-tab=results]")
                page.page.locator("#tab-results .hit").nth(shown.index(item)).click()
                page.wait(f"s.selected === {json.dumps(item)}")
                tab = page.page.locator("#tab-item")
                assert tab.locator("h2").text_content() == item
                params = {"id": item, "k": 10}
                if two:
                    pair = httpx.get(f"{hostile_server.url}/api/v1/compare/h/h2/items", params=params).json()
                    for part in ("kept", "lost", "gained"):
                        assert tab.locator(f".col.{part} li").all_text_contents() == pair[part], (item, part)
                else:
                    got = httpx.get(f"{hostile_server.url}/api/v1/spaces/h/items", params={"id": item}).json()
                    cells = tab.locator(".neighbours tbody tr td:nth-child(2)").all_text_contents()
                    assert cells == [n["id"] for n in got["exact"]], item
                    assert item in tab.locator(".meta-table").text_content(), item
            if not two:  # the same items, compared with a second space
                page.page.select_option("#space-b", "h2")
                page.wait("s.twoSpace")
                page.page.fill("#query", "n0")
                page.page.press("#query", "Enter")
                page.wait("s.highlighted.length > 0")
                shown = page.page.locator("#tab-results .cols .col").nth(0).locator(".id").all_text_contents()
                assert set(HOSTILE_IDS) <= set(shown), shown
        page.page.fill("#query", " sp ace ")  # an id searched as typed: its spaces are part of it
        page.page.press("#query", "Enter")
        page.wait("s.highlighted.length > 0")
        assert page.state()["errors"] == [] and page.errors == [] and page.dialogs == []
    finally:
        page.close()


# ---------------------------------------------------------------------------------------------- screenshot
def screenshot(out: Path = REPO / "docs" / "explorer.png") -> Path:
    """Write a 1280x800 screenshot of the explorer: two spaces side by side, coloured by neighbourhood
    Jaccard, a search highlighted and the moved-items table open. Builds its own store in a temporary folder."""
    from _http_server import Server

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.db"
        build_store(path)
        server = Server(path)
        try:
            with chromium() as b:
                page = Page(b, f"{server.url}/?space=words&b=words-rot&colour=compare:jaccard")
                page.wait("s.movedRows > 0")
                page.page.select_option("#mode", "id")
                page.page.fill("#query", "king")
                page.page.press("#query", "Enter")
                page.wait("s.highlighted.length > 0")
                page.page.click(".tabs [data-tab=moved]")
                page.page.wait_for_timeout(300)
                out.parent.mkdir(parents=True, exist_ok=True)
                page.page.screenshot(path=str(out))
        finally:
            server.stop()
    return out


if __name__ == "__main__":
    print(screenshot(Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "docs" / "explorer.png"))
