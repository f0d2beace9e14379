"""bench_search's reduction part: TLDR against PCA as the first stage of a funnel, at the same widths.

For GloVe 50-d (8, 16 and 32 dimensions) and MiniLM 384-d (32, 64 and 128), ``FunnelIndex`` is
built for ``pcaD`` and ``tldrD`` from the same base vectors (PCA: FAISS' ``PCAMatrix`` trained on
all of them; TLDR: :func:`repspace.core.tldr.fit_tldr` on a seeded sample of
``TLDR_MAX_ROWS``, 10 epochs, 5 neighbours, seed 0) and searched with the held-out queries,
the first stage alone and with ``>rerank10`` (the shortlist of 100 rescored on the full
vectors); recall@10 against exact cosine search over the same base, and the training time of
each map. One row per dataset, width and stage: TLDR's recall with PCA's as the anchor.

No goal: the issue asks for TLDR beside PCA, and the paper's gain (+4% mAP on ROxford with
2048-d image descriptors reduced to 128, 100 epochs of training, against PCA *whitening*)
is in another setting; these rows say whether it carries over to neighbour recall here.
"""

from __future__ import annotations

import time
from typing import Any

import common as c
import numpy as np
from search_common import K, recall

#: Reduced widths per dataset (label -> dimensions).
WIDTHS = {"glove": (8, 16, 32), "minilm": (32, 64, 128)}
REFINE = 10


def measure(datasets: list[dict[str, Any]], p: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The reduction rows and their points (``details``)."""
    from repspace.core.exact import exact_search
    from repspace.core.limits import TLDR_MAX_ROWS
    from repspace.engines.search.funnel import FunnelIndex

    points: list[dict[str, Any]] = []
    sizes: dict[str, Any] = {}
    for data in datasets:
        label = data["label"]
        n = min(p.get("reduction_base") or len(data["base"]), len(data["base"]))
        base, q = np.ascontiguousarray(data["base"][:n]), data["q"][: p.get("reduction_queries") or len(data["q"])]
        truth = exact_search(q, base, K, "cosine")[1]
        sizes[label] = {"base": n, "queries": len(q), "dim": int(base.shape[1]), "tldr_rows": min(n, TLDR_MAX_ROWS)}
        for dims in WIDTHS[label]:
            for kind in ("pca", "tldr"):
                c.log(f"search reduction: {label} {kind}{dims} on {n:,} x {base.shape[1]}")
                t0 = time.perf_counter()
                ix = FunnelIndex(f"{kind}{dims}", base.shape[1], "cosine").train(base)
                train_s = time.perf_counter() - t0
                ix.add(base, np.arange(n))
                for refine in (None, REFINE):
                    spec = f"{kind}{dims}" + (f">rerank{refine}" if refine else "")
                    _, rows = ix.with_search_params(spec).search(q, K, fetch=lambda r: base[r])
                    points.append({"dataset": label, "kind": kind, "dims": dims, "rerank": refine, "spec": spec,
                                   "recall": round(recall(rows, truth), 4), "train_s": round(train_s, 1)})
                c.log(f"  {kind}{dims}: trained in {train_s:.1f} s, recall@10 "
                      f"{points[-2]['recall']} / {points[-1]['recall']} (reranked)")
    return rows_of(points, sizes), {"sizes": sizes, "points": points}


def rows_of(points: list[dict[str, Any]], sizes: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per dataset, width and stage: TLDR's recall@10 with PCA's as the anchor."""
    at = {(pt["dataset"], pt["kind"], pt["dims"], pt["rerank"]): pt for pt in points}
    rows = []
    for label, widths in WIDTHS.items():
        if label not in sizes:
            continue
        s = sizes[label]
        for dims in widths:
            for refine in (None, REFINE):
                ours, pca = at[(label, "tldr", dims, refine)], at[(label, "pca", dims, refine)]
                stage = f">rerank{refine}" if refine else " first stage"
                rows.append(c.row(
                    f"{label} {s['base']:,} x {s['dim']}: tldr{dims}{stage} recall@10 (TLDR, S066)", ours["recall"],
                    "recall@10", f"pca{dims}{stage.strip() if refine else ''}", pca["recall"],
                    ours["recall"] / pca["recall"] if pca["recall"] else None,
                    note=(f"training: tldr {ours['train_s']} s on {s['tldr_rows']:,} rows (10 epochs), "
                          f"pca {pca['train_s']} s on {s['base']:,}; {s['queries']:,} held-out queries"),
                    part="reduction"))
    return rows
