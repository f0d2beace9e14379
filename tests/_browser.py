"""Debian's chromium, driven through Playwright, for the browser tests (never a `playwright install` download).

:func:`require_chromium` fails a test module in CI when chromium is missing (CI's ``make test`` installs it) and
skips it elsewhere; :func:`chromium` launches it headless with nothing fetched from outside and WebGL in software
(SwiftShader through ANGLE: the explorer draws with WebGL, the reports need none).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--use-angle=swiftshader", "--enable-unsafe-swiftshader"]


def require_chromium() -> None:
    """At a browser test module's import: fail in CI without chromium, skip the module elsewhere."""
    if not Path(CHROMIUM).exists() and os.environ.get("CI"):
        pytest.fail(f"{CHROMIUM} is missing in CI (`make browser` should have installed it)", pytrace=False)
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing (Debian's chromium package; `make browser` installs it)",
                    allow_module_level=True)


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless chromium browser, closed on exit."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()
