"""Multi-vector spaces on Cranfield: MiniLM token states searched by MaxSim (MUVERA + rescoring, exact) beside dense.

Usage: ``.venv/bin/python benchmarks/eval_multivector.py [--quick]`` (prints markdown), or
``benchmarks/evaluation.py --only multivector-space`` (into EVALUATION.md).

Both spaces go through the store as a user's would: ``repspace ingest cran corpus.jsonl --multivector``
(:func:`repspace.workflows.ingest.ingest_multivector`: last-layer token states of the non-special
tokens, L2-normalised) and ``repspace ingest dense corpus.jsonl --encoder minilm``
(:func:`repspace.workflows.ingest.ingest_records`); each test query is a text searched with
:meth:`repspace.Space.search` (``repspace search cran "..."``, ``--exact``), encoded by the space's
own recipe. The runs are scored with the retrieval evaluation's own nDCG@10 and recall@100
(:func:`repspace.engines.eval.retrieval.retrieval_scores`). ``--quick``: the first 300 documents.
"""

from __future__ import annotations

import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

import common as c

DATA = c.REPO.parent / "shared" / "data"
#: The width the section's paragraphs are wrapped at.
WIDTH = 112
#: Documents retrieved per query (recall@100 needs 100); MUVERA's shortlist (the search's default).
DEPTH, CANDIDATES = 100, 100


def _run(space: Any, queries: tuple[str, ...], ids: tuple[str, ...], **options: Any) -> tuple[dict, float]:
    t0 = time.perf_counter()
    run = {qid: [h.id for h in space.search(text, k=DEPTH, **options)] for qid, text in zip(ids, queries)}
    return run, (time.perf_counter() - t0) / len(queries)


def measure(quick: bool) -> dict[str, Any]:
    """nDCG@10 and recall@100 of the dense and multi-vector spaces; MUVERA's recall@10 of the exact MaxSim top 10."""
    from repspace import Store
    from repspace.engines.eval.retrieval import load_beir, retrieval_scores
    from repspace.workflows.ingest import ingest_multivector, ingest_records
    from repspace.workflows.ingest.readers import Records

    data = load_beir(DATA / "cranfield-beir")
    n = 300 if quick else len(data.corpus_ids)
    # a document with no text has no token (a multi-vector item needs one): left out of both spaces alike
    kept = [(i, t) for i, t in zip(data.corpus_ids[:n], data.corpus_texts[:n]) if t.strip()]
    ids, texts = [i for i, _ in kept], [t for _, t in kept]
    n_empty, n = n - len(kept), len(kept)
    out: dict[str, Any] = {"documents": n, "empty_documents_left_out": n_empty, "queries": len(data.query_ids), "candidates": CANDIDATES, "runs": {}}
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "s.db") as store:
        c.log("evaluation: multivector-space ingest (MiniLM token states, dense MiniLM)")
        t0 = time.perf_counter()
        ingest_multivector(store, "cran", Records("cranfield", ids, texts, None, [{}] * n))
        out["ingest_seconds_multivector"] = round(time.perf_counter() - t0, 1)
        t0 = time.perf_counter()
        ingest_records(store, "dense", Records("cranfield", ids, texts, None, [{}] * n), encoder="minilm")
        out["ingest_seconds_dense"] = round(time.perf_counter() - t0, 1)
        mv, dense = store.space("cran"), store.space("dense")
        from repspace.workflows.describe import describe_space

        out["multivector_info"] = describe_space(mv).to_dict()["multivector"]
        runs = {"dense": _run(dense, data.query_texts, data.query_ids, method="exact"),
                "muvera>maxsim": _run(mv, data.query_texts, data.query_ids, candidates=CANDIDATES),
                "maxsim-exact": _run(mv, data.query_texts, data.query_ids, method="exact")}
    for name, (run, seconds) in runs.items():
        s = retrieval_scores(run, data.qrels, DEPTH)
        out["runs"][name] = {"ndcg_at_10": s["ndcg_at_10"], "recall_at_100": s["recall_at_100"],
                             "ms_per_query": round(1000 * seconds, 1)}
    exact, muvera = runs["maxsim-exact"][0], runs["muvera>maxsim"][0]
    out["muvera_recall_at_10_vs_exact"] = sum(len(set(exact[q][:10]) & set(muvera[q][:10])) for q in exact) / (
        10 * len(exact))
    return out


INTRO = """\
## Multi-vector spaces: MiniLM token states searched by MaxSim, beside the dense MiniLM space (Cranfield)

A multi-vector space holds one vector per token (`repspace ingest SPACE FILE --multivector`: MiniLM's last-layer
token states of the non-special tokens, each L2-normalised: ColBERT's recipe without its learned projection) and
is searched by MaxSim, Σ over the query's tokens of the best inner product with a document token: by default
MUVERA's shortlist of 100 documents (fixed-dimensional encodings, k_sim 4, d_proj 16, 10 repetitions) rescored
by exact MaxSim, with `--exact` every document scored. Both spaces are made and searched through the store, each
test query a text encoded by the space's own recipe (`repspace search cran "..."`); scored with the retrieval
evaluation's nDCG@10 and recall@100. MiniLM is a mean-pooling sentence model, not a ColBERT model: its token states
were never trained for late interaction, so this is a baseline of the machinery, not ColBERT-quality retrieval.
Measured by `benchmarks/eval_multivector.py` (`benchmarks/evaluation.py --only multivector-space`)."""


def render(res: dict[str, Any]) -> list[str]:
    """The EVALUATION.md section: the three rankings, MUVERA's agreement with exact MaxSim, what the space holds."""
    lines = INTRO.splitlines()
    if not res.get("runs"):
        return lines
    names = {"dense": "dense MiniLM (exact cosine)", "muvera>maxsim": "multi-vector: MUVERA 100 + exact MaxSim",
             "maxsim-exact": "multi-vector: exact MaxSim (`--exact`)"}
    lines += ["", f"{res['documents']} documents ({res['empty_documents_left_out']} with no text left out of both "
              f"spaces: an item needs a token), {res['queries']} test queries:", "",
              "| ranking | nDCG@10 | recall@100 | ms per query |", "|---|---|---|---|"]
    for key, r in res["runs"].items():
        lines.append(f"| {names[key]} | {r['ndcg_at_10']:.4f} | {r['recall_at_100']:.4f} | {r['ms_per_query']:.1f} |")
    info, runs = res["multivector_info"], res["runs"]
    gain = runs["maxsim-exact"]["ndcg_at_10"] - runs["dense"]["ndcg_at_10"]
    text = (f"MUVERA's top 10 holds {res['muvera_recall_at_10_vs_exact']:.3f} of exact MaxSim's top 10. Late "
            f"interaction over these untrained token states scores {runs['maxsim-exact']['ndcg_at_10']:.4f} against "
            f"the dense space's {runs['dense']['ndcg_at_10']:.4f} ({gain:+.4f}). The "
            f"space holds {info['tokens']:,} token vectors ({info['tokens_mean']:.1f} per document on average, at "
            f"most {info['tokens_max']}), {info['bytes'] / 2**20:.1f} MiB, about {info['tokens_mean']:.0f}x the dense "
            f"space's vectors; ingest took {res['ingest_seconds_multivector']:.0f} s against "
            f"{res['ingest_seconds_dense']:.0f} s for the dense space.")
    return lines + ["", *textwrap.fill(text, width=WIDTH).splitlines()]


def main(argv: list[str] | None = None) -> int:
    return c.section_main(argv, __doc__, measure, render, "the first 300 documents")


if __name__ == "__main__":
    sys.exit(main())
