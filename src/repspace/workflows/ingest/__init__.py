"""Ingest: read files, embed texts at most once, write spaces atomically.

Examples
--------
>>> from repspace.workflows.ingest import FORMATS
>>> FORMATS
('jsonl', 'csv', 'parquet', 'npy')
"""

from repspace.workflows.ingest._ingest import (
           DEFAULT_ENCODER,
           IngestReport,
           add_items,
           ingest_records,
)
from repspace.workflows.ingest.chunks import chunk_records, ingest_chunks
from repspace.workflows.ingest.files import ingest_file
from repspace.workflows.ingest.multivector import ingest_multivector, ingest_multivector_file
from repspace.workflows.ingest.sparse import ingest_sparse, ingest_sparse_file, read_vocab
from repspace.workflows.ingest.readers import (
           FORMATS,
           Records,
           detect_format,
           read_records,
           read_texts,
)

__all__ = ["add_items", "chunk_records", "ingest_chunks", "ingest_file", "ingest_records", "IngestReport",
           "read_records", "Records", "detect_format", "FORMATS", "DEFAULT_ENCODER", "read_texts",
           "ingest_sparse", "ingest_sparse_file", "read_vocab", "ingest_multivector", "ingest_multivector_file"]
