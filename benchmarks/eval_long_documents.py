"""Late chunking against separate chunk embedding on long documents built from Cranfield: the EVALUATION.md block.

Usage: ``.venv/bin/python benchmarks/eval_long_documents.py [--json PATH] [--per-doc 8] [--chunk 64]``.

The set: the 1,400 Cranfield abstracts (``../shared/data/cranfield-beir``, title and text joined as BEIR does)
shuffled with seed 0 and concatenated, ``--per-doc`` at a time (blank line between), into long documents
(175 of about 1,900 MiniLM tokens for 8 per document); each of the 225 queries is judged against the long
documents that hold its relevant abstracts (a long document's gain: the highest of its abstracts'). Model:
``hf-layers:minilm`` (all-MiniLM-L6-v2, mean pooling). Three ways to embed a long document, each scored by
nDCG@10 over the queries (``repspace.engines.eval.retrieval`` scoring, 1,000 bootstrap resamples of the queries,
seed 0); a chunked document's score for a query is the highest cosine among its chunks (MaxP):

- ``whole``: one vector of the document truncated to the model's 256 tokens (what a plain ingest stores);
- ``naive``: chunks of ``--chunk`` tokens, each embedded alone (``repspace ingest --chunk N``);
- ``late``: the same chunks pooled from the document's token states, windows of 256 tokens overlapping by 64
  (``repspace ingest --chunk N --late-chunking``);
- ``landmark`` (S169): one vector per document, the mean of [SEP] landmarks placed after its chunks
  (``repspace ingest --chunk N --pooling landmark``; see :func:`add_landmark`). ``--only-landmark`` computes
  only these rows and reads the others back from the JSON.

Positional bias (the segment-reflection check of the long-document paper): for every (query, relevant abstract)
pair, the nDCG@10 of the one long document that holds the abstract, against the abstract's place in it
(first, second... quarter of the document). A method that reads only the start of a document scores well
only for abstracts in its first quarter.

Prints the markdown block and writes the figures as JSON (default ``benchmarks/results/long_documents.json``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path[:0] = [str(REPO / "src")]
DATA = REPO.parent / "shared" / "data" / "cranfield-beir"
ENCODER, WINDOW, OVERLAP, RESAMPLES, QUARTERS = "hf-layers:minilm", 256, 64, 1000, 4


def build_long_documents(folder: Path, per_doc: int, seed: int = 0) -> dict[str, Any]:
    """Long documents of ``per_doc`` shuffled abstracts, the qrels mapped to them, each abstract's place."""
    from repspace.engines.eval.retrieval import load_beir

    data = load_beir(folder)
    order = np.random.default_rng(seed).permutation(len(data.corpus_ids))
    docs, place = [], {}
    for d, start in enumerate(range(0, len(order), per_doc)):
        members = order[start:start + per_doc]
        texts = [data.corpus_texts[i] for i in members]
        docs.append("\n\n".join(texts))
        offset = 0
        for j, (i, text) in enumerate(zip(members, texts)):
            place[data.corpus_ids[i]] = (f"L{d}", j, offset / max(1, sum(len(t) + 2 for t in texts) - 2))
            offset += len(text) + 2
    qrels: dict[str, dict[str, int]] = {}
    for q, judged in data.qrels.items():
        for doc_id, gain in judged.items():
            if gain >= 1:
                long_id = place[doc_id][0]
                qrels.setdefault(q, {})[long_id] = max(gain, qrels.get(q, {}).get(long_id, 0))
    return {"ids": [f"L{d}" for d in range(len(docs))], "texts": docs, "qrels": qrels, "place": place,
            "data": data}


def _doc_scores(queries: np.ndarray, vectors: np.ndarray, owner: np.ndarray, n_docs: int) -> np.ndarray:
    """(queries, documents) scores: the best cosine among each document's vectors."""
    q = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    v = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    sims = q @ v.T
    starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
    assert len(starts) == n_docs and np.all(np.diff(owner) >= 0)
    return np.maximum.reduceat(sims, starts, axis=1)


def embed(texts: list[str], chunk: int) -> dict[str, tuple[np.ndarray, np.ndarray, float]]:
    """Each method's vectors, which document each belongs to, and the seconds it took."""
    from repspace.engines.encoders import get_encoder
    from repspace.engines.encoders.late_chunking import chunk_spans, late_chunks

    enc = get_encoder(ENCODER, max_length=WINDOW)
    out = {}
    t0 = time.perf_counter()
    out["whole"] = (enc.encode(texts, batch_size=16), np.arange(len(texts)), time.perf_counter() - t0)
    t0 = time.perf_counter()
    spans = [chunk_spans(enc, t, chunk) for t in texts]
    pieces = [t[s:e] for t, sp in zip(texts, spans) for s, e in sp]
    owner = np.repeat(np.arange(len(texts)), [len(sp) for sp in spans])
    out["naive"] = (enc.encode(pieces, batch_size=64), owner, time.perf_counter() - t0)
    t0 = time.perf_counter()
    docs = late_chunks(enc, texts, chunk_tokens=chunk, window=WINDOW, overlap=OVERLAP, batch_size=16)
    assert [list(d.char_spans) for d in docs] == spans  # the very chunks naive embeds
    out["late"] = (np.concatenate([d.vectors for d in docs]), owner, time.perf_counter() - t0)
    return out


def evaluate(per_doc: int, chunk: int) -> dict[str, Any]:
    from repspace.engines.encoders import get_encoder
    from repspace.engines.eval.uncertainty import mean_statistic, paired_comparison

    built = build_long_documents(DATA, per_doc)
    ids, data = built["ids"], built["data"]
    queries = get_encoder(ENCODER, max_length=WINDOW).encode(list(data.query_texts))
    vectors = embed(built["texts"], chunk)
    result: dict[str, Any] = {"n_docs": len(ids), "n_queries": len(data.query_ids), "per_doc": per_doc,
                              "chunk": chunk, "window": WINDOW, "overlap": OVERLAP, "methods": {}}
    per_query = {}
    for name, (vecs, owner, seconds) in vectors.items():
        result["methods"][name], per_query[name] = score_method(built, queries, vecs, owner, seconds)
    cmp = paired_comparison(mean_statistic, per_query["late"], per_query["naive"], a="late", b="naive",
                            n_resamples=RESAMPLES, seed=0)
    result["late_minus_naive"] = cmp.to_dict()
    return result


def score_method(built: dict[str, Any], queries: np.ndarray, vecs: np.ndarray, owner: np.ndarray,
                 seconds: float) -> tuple[dict[str, Any], np.ndarray]:
    """One method's row (nDCG@10 with its interval, by quarter) and its per-query nDCG@10."""
    from repspace.engines.eval.ranking import ndcg_at_k
    from repspace.engines.eval.retrieval import _run_scores
    from repspace.engines.eval.uncertainty import bootstrap_interval, mean_statistic

    ids, qrels, data = built["ids"], built["qrels"], built["data"]
    scores = _doc_scores(queries, vecs, owner, len(ids))
    ranked = np.argsort(-scores, axis=1, kind="stable")
    run = {q: [ids[j] for j in ranked[i, :100]] for i, q in enumerate(data.query_ids)}
    main, interval, _ = _run_scores(run, qrels, 100, bootstrap=RESAMPLES, seed=0)
    per_query = np.array([ndcg_at_k(run[q], qrels[q], 10) for q in data.query_ids])
    rank_of = {q: {ids[j]: r for r, j in enumerate(ranked[i])} for i, q in enumerate(data.query_ids)}
    buckets: list[list[float]] = [[] for _ in range(QUARTERS)]
    for q in data.query_ids:
        for doc_id, gain in data.qrels[q].items():
            if gain >= 1:
                long_id, _, where = built["place"][doc_id]
                rank = rank_of[q][long_id]
                buckets[min(QUARTERS - 1, int(where * QUARTERS))].append(1.0 / np.log2(rank + 2) if rank < 10 else 0.0)
    by_quarter = []
    for b in buckets:
        ci = bootstrap_interval(mean_statistic, np.array(b), n_resamples=RESAMPLES, seed=0)
        by_quarter.append({"n": len(b), "ndcg_at_10": float(np.mean(b)), "ci": [ci.low, ci.high]})
    return ({"ndcg_at_10": main["ndcg_at_10"], "ci": [interval.low, interval.high], "vectors": int(len(vecs)),
             "seconds": round(seconds, 1), "by_quarter": by_quarter}, per_query)


def add_landmark(result: dict[str, Any], per_doc: int, chunk: int) -> dict[str, Any]:
    """The landmark rows (S169), added to ``result`` (the other rows, e.g. read back from the JSON).

    ``landmark``: each long document one vector, the mean of the [SEP] landmarks placed after its chunks of
    ``chunk`` tokens (``repspace ingest --chunk N --pooling landmark``, windows of 256 holding whole chunks);
    queries last-token pooled, as a landmark space encodes them (a query of one chunk has one landmark, its
    closing [SEP]). ``landmark, mean queries``: the same document vectors against the mean-pooled queries the
    other rows use.
    """
    from repspace.engines.encoders import get_encoder
    from repspace.engines.encoders.landmark import landmark_pool

    built = build_long_documents(DATA, per_doc)
    texts, data = built["texts"], built["data"]
    enc = get_encoder(ENCODER, max_length=WINDOW)
    t0 = time.perf_counter()
    vecs = landmark_pool(enc, texts, chunk_tokens=chunk, window=WINDOW, batch_size=16)
    seconds = time.perf_counter() - t0
    owner = np.arange(len(texts))
    last_q = get_encoder(ENCODER, max_length=WINDOW, pooling="last").encode(list(data.query_texts))
    mean_q = enc.encode(list(data.query_texts))
    result["methods"]["landmark"] = score_method(built, last_q, vecs, owner, seconds)[0]
    result["methods"]["landmark, mean queries"] = score_method(built, mean_q, vecs, owner, seconds)[0]
    return result


def markdown(r: dict[str, Any]) -> str:
    lines = [f"### Late chunking on long Cranfield documents ({r['n_docs']} documents of {r['per_doc']} abstracts, "
             f"{r['n_queries']} queries, hf-layers:minilm)", "",
             f"Generated by `benchmarks/eval_long_documents.py` (chunks of {r['chunk']} tokens, windows of "
             f"{r['window']} overlapping by {r['overlap']}; a chunked document scores its best chunk). "
             "nDCG@10 with 95% bootstrap intervals over queries; by quarter: nDCG@10 of the one long document "
             "holding each relevant abstract, by where the abstract sits in it.", "",
             "| method | vectors | nDCG@10 [95% CI] | " + " | ".join(f"Q{i + 1}" for i in range(QUARTERS)) + " |",
             "|---|---|---|" + "---|" * QUARTERS]
    for name, m in r["methods"].items():
        quarters = " | ".join(f"{b['ndcg_at_10']:.3f} (n={b['n']})" for b in m["by_quarter"])
        lines.append(f"| {name} | {m['vectors']} | {m['ndcg_at_10']:.4f} [{m['ci'][0]:.4f}, {m['ci'][1]:.4f}] | "
                     f"{quarters} |")
    c = r["late_minus_naive"]
    lines += ["", f"late − naive: {c['difference']:+.4f} [{c['ci_low']:+.4f}, {c['ci_high']:+.4f}] "
              f"(paired bootstrap), p = {c['p_value']:.4f} (randomization test)."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=BENCH_DIR / "results" / "long_documents.json")
    parser.add_argument("--per-doc", type=int, default=8)
    parser.add_argument("--chunk", type=int, default=64)
    parser.add_argument("--only-landmark", action="store_true",
                        help="Read the other rows back from --json and compute only the landmark rows.")
    args = parser.parse_args()
    if args.only_landmark:
        result = json.loads(args.json.read_text())
        if (result["per_doc"], result["chunk"]) != (args.per_doc, args.chunk):
            raise SystemExit(f"{args.json} holds another set (per-doc {result['per_doc']}, chunk {result['chunk']})")
    else:
        result = evaluate(args.per_doc, args.chunk)
    result = add_landmark(result, args.per_doc, args.chunk)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2))
    print(markdown(result))


if __name__ == "__main__":
    main()
