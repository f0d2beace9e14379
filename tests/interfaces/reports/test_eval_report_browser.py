"""The evaluation report in a real browser: Debian's chromium, headless, driven by Playwright, opening the page
``repspace eval report`` wrote from real ``eval sts`` results (three models, one named with markup and a control
character, one with a per-part breakdown).

The tables and the forest plot render with a size, the page fits the window's width, the browser logs no error,
and the hostile name shows as the text it is.

``PYTHONPATH=tests python tests/interfaces/reports/test_eval_report_browser.py [OUT.png]`` writes the
screenshot docs/eval-report.png (:func:`screenshot`).
"""

from __future__ import annotations

import contextlib
import json
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _browser import chromium, require_chromium
from _eval_results import HOSTILE_NAME, hostile, read, repspace, sts_results, with_parts

VIEWPORT = {"width": 1100, "height": 900}
REPO = Path(__file__).resolve().parents[3]
SHARED_DATA = REPO.parent / "shared" / "data"

if __name__ != "__main__":
    require_chromium()
    pytestmark = pytest.mark.slow


def write_report(results: Path, folder: Path) -> Path:
    """The page of the module docstring, written by ``repspace eval report`` into ``folder`` from the results of
    :func:`_eval_results.sts_results` in ``results``."""
    three = hostile(read(results / "three.json"))
    three["results"][0] = with_parts(three["results"][0])
    (folder / "hostile.json").write_text(json.dumps(three), encoding="utf-8")
    with contextlib.chdir(folder):  # the page names its source as given: hostile.json
        repspace("eval", "report", "hostile.json", "-o", "report.html", "--title", "STS-B, first 150 pairs")
    return folder / "report.html"


@pytest.fixture(scope="module")
def page_file(tmp_path_factory, sts_eval_results: Path) -> Path:
    return write_report(sts_eval_results, tmp_path_factory.mktemp("eval-report-browser"))


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


@pytest.fixture
def opened(browser, page_file) -> Iterator[tuple[Any, list[str]]]:
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: m.type in ("error", "warning") and errors.append(m.text))
    page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
    page.on("request", lambda r: r.url.startswith("file:") or errors.append(f"fetched {r.url}"))
    page.goto(page_file.as_uri())
    page.wait_for_load_state("load")
    yield page, errors
    context.close()


def test_the_tables_and_the_plot_render_without_console_errors(opened):
    page, errors = opened
    sizes = page.evaluate("""() => [...document.querySelectorAll('table, svg')].map(e => {
        const r = e.getBoundingClientRect(); return [e.tagName.toLowerCase() + '.' + (e.getAttribute('class') || ''),
        r.width, r.height, e.querySelectorAll('tbody tr').length]; })""")
    kinds = [s[0] for s in sizes]
    assert kinds == ["table.models", "svg.", "table.comparisons", "table.parts"], kinds
    assert all(width > 100 and height > 40 for _, width, height, _ in sizes), sizes
    assert [rows for kind, _, _, rows in sizes if kind.startswith("table")] == [3, 3, 4]
    assert page.evaluate("() => document.documentElement.scrollWidth") <= VIEWPORT["width"]
    assert errors == []


def test_the_hostile_name_shows_as_text(opened):
    page, _ = opened
    shown = HOSTILE_NAME.replace("\x1b", "\\u001b")
    cells = page.locator("table.models td.name").all_inner_texts()
    assert cells[2] == shown
    assert page.locator("b").count() == 0  # the markup in the name made no element
    labels = page.locator("svg text").all_text_contents()
    assert shown in labels


def test_a_screenshot_is_drawn(opened, tmp_path):
    import numpy as np
    from PIL import Image

    page, errors = opened
    path = tmp_path / "shot.png"
    page.screenshot(path=str(path), full_page=True)
    pixels = np.asarray(Image.open(path).convert("L"), dtype=np.float64)
    assert pixels.shape[1] == VIEWPORT["width"] and pixels.shape[0] > 600
    assert (pixels < 128).mean() > 0.01 and pixels.std() > 20  # text, lines and dots on white
    assert errors == []


def screenshot(out: Path = REPO / "docs" / "eval-report.png") -> Path:
    """Write the page's full-height screenshot (1100 px wide) to ``out``; builds the results in a temporary folder."""
    with tempfile.TemporaryDirectory() as tmp:
        page_file = write_report(sts_results(SHARED_DATA, Path(tmp)), Path(tmp))
        with chromium() as b:
            page = b.new_page(viewport=VIEWPORT)
            page.goto(page_file.as_uri())
            out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out), full_page=True)
    return out


if __name__ == "__main__":
    print(screenshot(Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "docs" / "eval-report.png"))
