"""Every example of ``repspace search --help`` runs (the help once showed ``--hybrid --mmr 0.7``, which fails)."""

from __future__ import annotations

import shlex
from pathlib import Path

import numpy as np
import pytest

from repspace import Store
from repspace.core.sparse import SparseRows
from repspace.interfaces.cli import main
from repspace.interfaces.cli.search import search_cmd
from repspace.workflows.ingest import ingest_multivector, ingest_records
from repspace.workflows.ingest.readers import Records
from repspace.workflows.rerank import RerankTrainRequest, train_reranker

from _cranfield_space import cranfield_store

EXAMPLES = [line.strip() for line in (search_cmd.__doc__ or "").splitlines()
            if line.strip().startswith("repspace search ")]
MODULES = ["datetime", "functools", "heapq", "re"]


@pytest.fixture(scope="module")
def store_path(tmp_path_factory, shared_data) -> str:
    """``docs`` (texts embedded with the bundled ``static`` encoder, a ``module`` field), ``glove`` (vectors,
    ``king``, ``woman``, ``man`` among them) and ``splade`` (sparse, with feature names): the spaces the examples
    name; ``colbert`` (multi-vector: MiniLM token states of the first texts); ``cran`` (Cranfield, static) and the
    reranker ``cran-ranker.json`` trained on its hybrid candidates, beside the store (the examples run there)."""
    folder = tmp_path_factory.mktemp("help")
    path = str(cranfield_store(shared_data, folder))
    store = Store(path)
    train_reranker(store.space("cran"), RerankTrainRequest(qrels=str(shared_data / "cranfield-beir"),
                                                           out=str(folder / "cran-ranker.json"), seed=0, bootstrap=0,
                                                           first_stage="hybrid"))
    try:
        words = ["parse", "date", "string", "sort", "heap", "queue", "format", "time", "match", "split"]
        texts = [f"{words[i % 10]} {words[(3 * i + 1) % 10]} example {i}" for i in range(40)]
        ingest_records(store, "docs", Records("help", [f"d{i}" for i in range(40)], texts, None,
                                              [{"module": MODULES[i % 4]} for i in range(40)]), encoder="static")
        ids = ["king", "kingdom", "kings", "queen", "prince", "woman", "man"] + [f"w{i}" for i in range(33)]
        store.create_space("glove", dim=8).add(ids, np.random.default_rng(0).standard_normal((40, 8)))
        tokens = ["retrieval", "sparse", "dense", "index"]
        store.create_space("splade", dim=4, metric="ip", layout="sparse", features=tokens).add(
            ["s0", "s1"], SparseRows.from_pairs([([0, 1], [1.0, 0.5]), ([2, 3], [2.0, 1.0])], 4))
        ingest_multivector(store, "colbert", Records("help", [f"doc{i}" for i in range(8)], texts[:8], None,
                                                     [{}] * 8))
    finally:
        store.close()
    return path


def test_the_help_has_examples():
    assert len(EXAMPLES) >= 5


@pytest.mark.parametrize("example", EXAMPLES)
def test_every_example_of_the_help_runs(capsys, monkeypatch, store_path, example):
    monkeypatch.chdir(Path(store_path).parent)  # where the reranker file the example names lies
    args = shlex.split(example)[1:]
    code = main(["--store", store_path, *args])
    captured = capsys.readouterr()
    assert code == 0, (example, captured.err)
    assert captured.out.strip()
