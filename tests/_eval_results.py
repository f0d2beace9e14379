"""Real evaluation results for the report's tests, made by running ``repspace eval sts`` on STS-B's first pairs.

:func:`sts_results` writes, in one folder: the STS-B test file's first 150 lines, a store whose spaces
``noisy`` and ``fine`` are the bundled ``static`` model's vectors plus Gaussian noise (sd 0.12 and 0.03),
and what three runs of the command print or write:

* ``three.json``: ``--encoder static --space noisy --space fine --json --save``: ``{"results",
  "comparisons"}``, the results saved as ids 1, 2, 3;
* ``static.json``: ``--encoder static --json --output-dir mteb``: a list of one result, and the MTEB
  results folder ``mteb``;
* ``noisy.json``: ``--space noisy --json``: a list of one result.

Every run takes ``--bootstrap 300 --seed 1`` (:data:`RESAMPLES`, :data:`SEED`).
"""

from __future__ import annotations

import contextlib
import io
import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
from _data_subsets import sts_head

#: The resamples and seed of every run (and of a report computing the same comparisons).
RESAMPLES, SEED = 300, 1
#: A model name holding markup, a non-ASCII letter and a control character: user data the page must escape.
HOSTILE_NAME = "<b>x</b>ü\x1b"


def repspace(*args: str) -> str:
    """``repspace -q ARGS...`` in this process; its stdout (an error fails the caller)."""
    from repspace.interfaces.cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["-q", *args])
    assert code == 0, f"repspace {' '.join(args)} exited {code}"
    return buf.getvalue()


def sts_results(shared_data: Path, folder: Path) -> Path:
    """The files described in the module docstring, in ``folder`` (returned)."""
    from repspace.engines.encoders import get_encoder
    from repspace.engines.eval.sts import load_sts
    from repspace.store import Store

    data = sts_head(shared_data, folder / "sts150.csv", 150)
    texts = list(dict.fromkeys(load_sts(data).texts()))
    v = get_encoder("static").encode(texts)
    db = folder / "s.db"
    with Store(db) as store:
        for name, sd in (("noisy", 0.12), ("fine", 0.03)):
            noise = np.random.default_rng(0).normal(0, sd, v.shape)
            store.create_space(name, dim=v.shape[1]).add([f"t{i}" for i in range(len(texts))], v + noise, texts=texts)
    common = ["eval", "sts", str(data), "--bootstrap", str(RESAMPLES), "--seed", str(SEED), "--json"]
    (folder / "three.json").write_text(repspace("--store", str(db), *common, "--encoder", "static", "--space", "noisy",
                                                "--space", "fine", "--save"), encoding="utf-8")
    (folder / "static.json").write_text(repspace(*common, "--encoder", "static", "--output-dir", str(folder / "mteb")),
                                        encoding="utf-8")
    (folder / "noisy.json").write_text(repspace("--store", str(db), *common, "--space", "noisy"), encoding="utf-8")
    return folder


def read(path: Path) -> Any:
    """A JSON file."""
    return json.loads(path.read_text(encoding="utf-8"))


def entry(result: dict[str, Any]) -> dict[str, Any]:
    """The one score entry of a ``--json`` result."""
    (entries,) = result["scores"].values()
    return entries[0]


def with_parts(result: dict[str, Any], by: str = "genre") -> dict[str, Any]:
    """A copy of a ``--json`` result with a per-part breakdown in its ``repspace`` block, built by hand in the
    shape ``--by`` writes (the macro average and each part's score are the whole score shifted, so they differ)."""
    score = entry(result)["main_score"]
    values = [{"part": part, "n": n, "main_score": score + shift, "ci_low": score + shift - 0.1,
               "ci_high": score + shift + 0.1} for part, n, shift in (("news", 60, 0.05), ("forum", 50, -0.05),
                                                                       ("captions", 40, 0.02))]
    macro = {"main_score": sum(v["main_score"] for v in values) / 3, "ci_low": score - 0.08, "ci_high": score + 0.08}
    return {**result, "repspace": {**result["repspace"], "parts": {"by": by, "macro": macro, "values": values}}}


def hostile(three: dict[str, Any], name: str = HOSTILE_NAME) -> dict[str, Any]:
    """``three.json`` with the model ``space fine`` renamed ``name`` (in its result and in the comparisons)."""
    results = [{**r, "repspace": {**r["repspace"], "subject": name}} if r["repspace"]["subject"] == "space fine"
               else r for r in three["results"]]
    comparisons = [{**c, **{k: name for k in ("a", "b") if c[k] == "space fine"}} for c in three["comparisons"]]
    return {"results": results, "comparisons": comparisons}


#: Elements that have no end tag in HTML.
VOID = frozenset({"meta", "br", "hr", "img", "input", "link", "col", "area", "base", "wbr", "source", "track"})


class Tables(HTMLParser):
    """A page parsed: each ``<table>``'s class and rows of cells ``(text, attributes)``, the text of the SVG
    ``<text>`` elements, every tag, and the elements closed out of order (``errors``) or never (``stack``)."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[tuple[str, list[list[tuple[str, dict[str, str | None]]]]]] = []
        self.svg_text: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.stack: list[str] = []
        self.errors: list[str] = []
        self._cell: list[str] | None = None
        self._svg_text: list[str] | None = None
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag not in VOID:
            self.stack.append(tag)
        if tag == "table":
            self.tables.append((a.get("class") or "", []))
        elif tag == "tr":
            self.tables[-1][1].append([])
        elif tag in ("td", "th"):
            self._cell = []
            self.tables[-1][1][-1].append(("", a))
        elif tag == "text":
            self._svg_text = []

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()
        if tag in ("td", "th") and self._cell is not None:
            row = self.tables[-1][1][-1]
            row[-1] = ("".join(self._cell), row[-1][1])
            self._cell = None
        elif tag == "text" and self._svg_text is not None:
            self.svg_text.append("".join(self._svg_text))
            self._svg_text = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        if self._svg_text is not None:
            self._svg_text.append(data)

    def rows(self, cls: str) -> list[list[tuple[str, dict[str, str | None]]]]:
        """The body rows (not the header) of the tables of class ``cls``, all of them in page order."""
        return [row for c, rows in self.tables if c == cls for row in rows[1:]]

    def texts(self, cls: str) -> list[list[str]]:
        """The cells' text of :meth:`rows`."""
        return [[text for text, _ in row] for row in self.rows(cls)]


def parse(page: str) -> Tables:
    """The page parsed, every element closed in order."""
    p = Tables(page)
    assert p.errors == [] and p.stack == [], (p.errors[:5], p.stack)
    return p
