"""Turn data into a space: encoders (static, sentence-transformers, e5, hidden layers) and ingestion.

:func:`get_encoder` makes an encoder from a spec (``"minilm"``,
``"static:..."``, ``"hf-layers:..."``); :func:`ingest_file` and
:func:`ingest_records` embed records into a stored space and keep the recipe
with it, so that :func:`from_provenance` can re-create the encoder later.
:func:`distill_static` distils a transformer into a static encoder.

Examples
--------
>>> from repspace.embed import list_encoders
>>> [e["name"] for e in list_encoders()][:3]
['minilm', 'st', 'static']
"""

from repspace.engines.encoders import (
    DEFAULT_ENCODER,
    PROVENANCE_KEYS,
    Encoder,
    EncoderFactory,
    LayeredEncoder,
    Progress,
    Tick,
    clear_cache,
    encode_tokens,
    from_provenance,
    get_encoder,
    list_encoders,
    model_fingerprint,
    register,
    set_threads,
    unregister,
)
from repspace.engines.encoders.distill import distill_static, read_distill_record
from repspace.workflows.ingest import (
    FORMATS,
    IngestReport,
    Records,
    add_items,
    detect_format,
    ingest_file,
    ingest_records,
    read_records,
    read_texts,
)
from repspace.workflows.stored_transforms import encoder_for_space

__all__ = [
    "DEFAULT_ENCODER",
    "FORMATS",
    "PROVENANCE_KEYS",
    "Encoder",
    "EncoderFactory",
    "IngestReport",
    "LayeredEncoder",
    "Progress",
    "Records",
    "Tick",
    "add_items",
    "clear_cache",
    "detect_format",
    "distill_static",
    "encode_tokens",
    "encoder_for_space",
    "from_provenance",
    "get_encoder",
    "ingest_file",
    "ingest_records",
    "list_encoders",
    "model_fingerprint",
    "read_distill_record",
    "read_records",
    "read_texts",
    "register",
    "set_threads",
    "unregister",
]
