"""Real labelled sentences: the Pang & Lee sentence-polarity sample gensim's wheel ships, split in two files.

``pang_lee_polarity.cor`` holds 200 movie-review sentences (Pang & Lee 2005), 100 labelled ``__label__neg`` then
100 ``__label__pos``, one per line, encoded in cp1252. :func:`pang_lee_split` writes them as labelled JSON-lines
files: the even lines (0, 2, ...) are the training split, the odd ones the test split, 50 of each class in each.
"""

from __future__ import annotations

import json
from pathlib import Path

from _gensim_data import gensim_data


def pang_lee_rows() -> list[tuple[str, str]]:
    """The 200 ``(text, label)`` rows, labels ``neg`` and ``pos``, in the file's order."""
    rows = []
    for line in gensim_data("pang_lee_polarity.cor").read_bytes().decode("cp1252").splitlines():
        label, text = line.split(" ", 1)
        rows.append((text.strip(), label.removeprefix("__label__")))
    return rows


def pang_lee_split(folder: Path) -> tuple[Path, Path]:
    """``(train, test)``: ``pang-lee-train.jsonl`` and ``pang-lee-test.jsonl`` written in ``folder``."""
    rows = pang_lee_rows()
    paths = folder / "pang-lee-train.jsonl", folder / "pang-lee-test.jsonl"
    for path, part in zip(paths, (rows[0::2], rows[1::2]), strict=True):
        path.write_text("".join(json.dumps({"text": t, "label": y}) + "\n" for t, y in part), encoding="utf-8")
    return paths
