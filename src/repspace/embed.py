"""Turn data into a space: encoders (static, sentence-transformers, e5, hidden layers) and ingestion.

:func:`get_encoder` makes an encoder from a spec (``"minilm"``,
``"static:..."``, ``"hf-layers:..."``); :func:`ingest_file` and
:func:`ingest_records` embed records into a stored space and keep the recipe
with it, so that :func:`from_provenance` can re-create the encoder later;
:func:`ingest_sparse_file` stores precomputed sparse vectors (feature ids and weights, or
``{token: weight}`` maps) in a sparse space; :func:`ingest_multivector_file` stores token vectors
(precomputed, or MiniLM's token states of the texts) in a multi-vector space.
:func:`distill_static` distils a transformer into a static encoder.

Examples
--------
>>> from repspace.embed import list_encoders
>>> [e["name"] for e in list_encoders()][:3]
['minilm', 'st', 'static']
"""

from repspace.engines import encoders as _encoders
from repspace.engines.encoders import *  # noqa: F403 - every name of its __all__
from repspace.engines.encoders.distill import distill_static, read_distill_record
from repspace.engines.encoders.chunk_bounds import bounded_chunks
from repspace.engines.encoders.landmark import landmark_pool
from repspace.engines.encoders.late_chunking import ChunkedDocument, late_chunks
from repspace.workflows.ingest import (
    FORMATS,
    IngestReport,
    Records,
    add_items,
    detect_format,
    ingest_chunks,
    ingest_file,
    ingest_multivector,
    ingest_multivector_file,
    ingest_records,
    ingest_sparse,
    ingest_sparse_file,
    read_records,
    read_texts,
    read_vocab,
)
from repspace.workflows.ingest.gaussian import ingest_gaussian_file
from repspace.workflows.stored_transforms import encoder_for_space

__all__ = [
    *_encoders.__all__,
    "ChunkedDocument",
    "FORMATS",
    "IngestReport",
    "Records",
    "add_items",
    "bounded_chunks",
    "detect_format",
    "distill_static",
    "encoder_for_space",
    "ingest_chunks",
    "ingest_file",
    "ingest_gaussian_file",
    "ingest_multivector",
    "ingest_multivector_file",
    "ingest_records",
    "ingest_sparse",
    "ingest_sparse_file",
    "landmark_pool",
    "late_chunks",
    "read_distill_record",
    "read_records",
    "read_texts",
    "read_vocab",
]
