"""bench_search's compression part: OPQ against PQ at the same bytes per vector, and AdANNS' prefix IVF.

On the 384-d MiniLM set (or the first ``compression_base`` rows of its base when the run is
reduced, with ``nlist`` cut to a power of two near ``4·sqrt(rows)``), ``FunnelIndex`` is built
for each spec from the base vectors (trained on all of them, as ``build_index`` trains on up to
200,000 rows) and searched with the held-out queries at each
``nprobe``, with and without ``>rerank10`` (the shortlist rescored on the full vectors); recall@10
against exact search over the same base. Memory is the index's own accounting
(``FunnelIndex.memory_breakdown``: codes, labels, trained model, the OPQ rotation included).

Goal (issue 33): ``opq32,ivf1024,pq32`` reaches a higher recall@10 than ``ivf1024,pq32`` at the
same 32 bytes per vector, at every ``nprobe``, first stage alone.
"""

from __future__ import annotations

import math
import time
from typing import Any

import common as c
import numpy as np
from search_common import K, mib

#: (PQ family, OPQ family) compared at the same bytes per vector (``{nlist}`` filled in).
PAIRS = (("ivf{nlist},pq32", "opq32,ivf{nlist},pq32"),)
#: AdANNS: IVF over a Matryoshka prefix, shortlist reranked on all dimensions; beside it the flat prefix.
ADANNS = ("prefix64,ivf{nlist}", "prefix128,ivf{nlist}")
NPROBES = (16, 64)
REFINE = 10


def _recall(found: np.ndarray, truth: np.ndarray) -> float:
    return float(np.mean([len(set(f[f >= 0].tolist()) & set(t.tolist())) / len(t) for f, t in zip(found, truth)]))


def measure(data: dict[str, Any], p: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The compression rows and their sweep points (``details``)."""
    from repspace.core.exact import exact_search
    from repspace.engines.search.funnel import FunnelIndex

    n = p.get("compression_base") or len(data["base"])
    base, q = np.ascontiguousarray(data["base"][:n]), data["q"]
    nlist = p["nlist"] if n == len(data["base"]) else min(p["nlist"], 2 ** int(math.log2(4 * math.sqrt(n))))
    truth = exact_search(q, base, K, "cosine")[1]
    families = [f.format(nlist=nlist) for pair in PAIRS for f in pair] + [f.format(nlist=nlist) for f in ADANNS]
    builds: dict[str, dict[str, Any]] = {}
    points: list[dict[str, Any]] = []
    for family in families:
        c.log(f"search compression: {family} on {n:,} x {base.shape[1]}")
        t0 = time.perf_counter()
        ix = FunnelIndex(family, base.shape[1], "cosine").train(base)
        ix.add(base, np.arange(n))
        parts = ix.memory_breakdown()
        builds[family] = {"build_s": round(time.perf_counter() - t0, 1), "memory_bytes": sum(parts.values()),
                          "memory_breakdown": parts, "bytes_per_vector": parts["codes"] // n}
        for nprobe in NPROBES:
            for refine in (None, REFINE):
                spec = f"{family},nprobe{nprobe}" + (f">rerank{refine}" if refine else "")
                view = ix.with_search_params(spec)
                seconds, (_, rows) = c.timed(lambda view=view: view.search(q, K, fetch=lambda r: base[r]))
                points.append({"family": family, "spec": spec, "nprobe": nprobe, "rerank": refine,
                               "recall": round(_recall(rows, truth), 4), "qps": round(len(q) / seconds, 1)})
        c.log(f"  built in {builds[family]['build_s']} s, {mib(builds[family]['memory_bytes']):.2f} MiB")
    return rows_of(points, builds, nlist, n), {"base": n, "queries": len(q), "builds": builds, "points": points}


def rows_of(points: list[dict[str, Any]], builds: dict[str, dict[str, Any]], nlist: int,
            n: int) -> list[dict[str, Any]]:
    """Goal rows (OPQ vs PQ, first stage and reranked, per nprobe) and the AdANNS rows."""
    at = {pt["spec"]: pt for pt in points}
    rows = []
    for pq_f, opq_f in ((a.format(nlist=nlist), b.format(nlist=nlist)) for a, b in PAIRS):
        per_vector = builds[pq_f]["bytes_per_vector"]
        for nprobe in NPROBES:
            for refine in (None, REFINE):
                tail = f",nprobe{nprobe}" + (f">rerank{refine}" if refine else "")
                ours, theirs = at[opq_f + tail], at[pq_f + tail]
                stage = f"reranked x{refine}" if refine else "first stage"
                r = c.row(f"minilm {n:,}: {opq_f} recall@10 vs {pq_f} ({per_vector} bytes/vector), nprobe {nprobe}, "
                          f"{stage}", ours["recall"], "recall@10", f"{pq_f} (no rotation)", theirs["recall"],
                          ours["recall"] / theirs["recall"] if theirs["recall"] else None,
                          note=(f"memory {mib(builds[opq_f]['memory_bytes']):.2f} MiB vs "
                                f"{mib(builds[pq_f]['memory_bytes']):.2f} MiB (the rotation: 384 x 384 floats)"),
                          part="compression")
                if not refine:  # the goal is on the codes themselves: the rerank hides their error
                    r["goal"] = "> 1 (higher recall)"
                    r["status"] = "PASS" if ours["recall"] > theirs["recall"] else "MISS"
                rows.append(r)
    for family in (f.format(nlist=nlist) for f in ADANNS):
        for nprobe in NPROBES:
            pt, first = at[f"{family},nprobe{nprobe}>rerank{REFINE}"], at[f"{family},nprobe{nprobe}"]
            rows.append(c.row(f"minilm {n:,}: {family},nprobe{nprobe}>rerank{REFINE} recall@10 (AdANNS)",
                              pt["recall"], "recall@10", "its first stage alone (prefix scores)", first["recall"],
                              pt["recall"] / first["recall"] if first["recall"] else None,
                              note=(f"{pt['qps']:,.0f} q/s; memory {mib(builds[family]['memory_bytes']):.2f} MiB "
                                    "(float prefixes in the lists)"), part="compression"))
    return rows
