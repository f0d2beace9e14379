"""A store holding Cranfield's 1,400 abstracts as a space (ids = corpus ``_id``), for the reranker's tests."""

from __future__ import annotations

import json
from pathlib import Path


def cranfield_store(shared_data: Path, folder: Path, *, encoder: str = "static", name: str = "cran") -> Path:
    """Ingest Cranfield's corpus (title and text, as the BEIR reader joins them) into ``folder/store.db``."""
    from repspace import Store
    from repspace.engines.eval.retrieval import load_beir
    from repspace.workflows.ingest.files import ingest_file

    data = load_beir(shared_data / "cranfield-beir")
    corpus = folder / "corpus.jsonl"
    with corpus.open("w", encoding="utf-8") as f:
        for i, text in zip(data.corpus_ids, data.corpus_texts):
            if text.strip():  # one abstract is empty: nothing to embed
                f.write(json.dumps({"id": i, "text": text}) + "\n")
    db = folder / "store.db"
    store = Store(db)
    try:
        ingest_file(store, name, corpus, encoder=encoder)
    finally:
        store.close()
    return db
