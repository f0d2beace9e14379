"""A reranking data set built from the real Cranfield collection (../shared/data/cranfield-beir).

There is no public reranking set on disk here, so one is made from Cranfield's judgements, in MTEB's
reranking layout (JSON lines ``{"query", "positive": [...], "negative": [...]}``):

- each judged query (a query with at least one document judged relevant, score >= 1, in ``qrels/test.tsv``)
  is one line, its text as ``query``;
- ``positive``: its relevant documents, in the order of the qrels file;
- ``negative``: ``n_negatives`` documents drawn without replacement from those not judged relevant to it
  (unjudged ones included), by ``numpy.random.default_rng(seed)``, in the order drawn;
- a document's text is its title and its text joined by a space, as :func:`repspace.engines.eval.load_beir` reads it.

The same ``seed`` gives the same file, on every machine.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from repspace.engines.eval import load_beir


def cranfield_reranking(shared_data: Path, path: Path, *, n_negatives: int = 20, seed: int = 0,
                        n_queries: int | None = None) -> Path:
    """Write the Cranfield reranking file (see the module) to ``path``; the first ``n_queries`` judged queries only."""
    data = load_beir(shared_data / "cranfield-beir")
    text = dict(zip(data.corpus_ids, data.corpus_texts))
    rng = np.random.default_rng(seed)
    lines = []
    for qid, query in list(zip(data.query_ids, data.query_texts))[:n_queries]:
        positives = [doc for doc, score in data.qrels[qid].items() if score >= 1]
        judged = set(positives)
        others = [doc for doc in data.corpus_ids if doc not in judged]
        negatives = rng.choice(len(others), size=n_negatives, replace=False)
        lines.append(json.dumps({"query": query, "positive": [text[d] for d in positives],
                                 "negative": [text[others[i]] for i in negatives]}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
