"""A local sentence-transformers ``SparseEncoder`` folder as the encoder of a sparse space (``sparse:<folder>``).

:class:`SparseSTEncoder` calls the model's own ``encode_document`` (what a space stores) and
``encode_query`` (what it is searched with), so the weights are exactly sentence-transformers'
own: SPLADE-style models, inference-free ones (a ``SparseStaticEmbedding`` weight per token,
the query side of a ``Router``), any ``SparseEncoder``. Its features are the model's output
dimensions, named by the tokenizer's vocabulary (:meth:`~SparseSTEncoder.feature_names`), so
a stored row reads as ``{token: weight}``.

:meth:`~SparseSTEncoder.encode_sparse` and :meth:`~SparseSTEncoder.encode_sparse_queries`
return :class:`~repspace.core.sparse.SparseRows`; the dense :meth:`~repspace.engines.encoders.base.
Encoder.encode` of the interface gives the same weights as a full ``(n, vocabulary)`` array (for
callers that only know dense encoders; a sparse space never stores that).

Examples
--------
>>> import tempfile
>>> from repspace.engines.encoders.sparse_st import SparseSTEncoder, tiny_sparse_folder
>>> folder = tiny_sparse_folder(tempfile.mkdtemp())
>>> enc = SparseSTEncoder(folder)
>>> rows = enc.encode_sparse(["a cat", "a dog"])
>>> len(rows), rows.n_features == enc.dim, enc.feature_names()[rows.row(0)[0][0]] in ("a", "cat")
(2, True, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from repspace.core.progress import Progress, Tally
from repspace.core.sparse import SparseRows
from repspace.engines.encoders._batches import check_batch_size, check_texts, chunks, encoding_errors
from repspace.engines.encoders._fingerprint import package_version
from repspace.engines.encoders._folder import FolderEncoder
from repspace.engines.encoders._models import quiet_hf_loading, shared_model
from repspace.engines.encoders._options import opt_int
from repspace.engines.encoders.base import Tick

__all__ = ["SparseSTEncoder", "tiny_sparse_folder"]


class SparseSTEncoder(FolderEncoder):
    """A local sentence-transformers ``SparseEncoder``, loaded lazily on CPU (``local_files_only``).

    Parameters
    ----------
    folder : a folder saved by ``SparseEncoder.save`` (with ``modules.json``).
    spec : the registry string; defaults to ``"sparse:<absolute folder>"``.
    max_length : tokens per text at most; None keeps the model's ``max_seq_length``.
    chunk_size : texts per call to the model between two progress reports (default 1024).

    Examples
    --------
    >>> import tempfile
    >>> from repspace.engines.encoders.sparse_st import tiny_sparse_folder
    >>> enc = SparseSTEncoder(tiny_sparse_folder(tempfile.mkdtemp()))
    >>> enc.spec.startswith("sparse:"), enc.sparse, enc.provenance()["pooling"]
    (True, True, 'sparse')
    """

    #: Tells ingest and search that this encoder's output is a sparse space's rows.
    sparse = True

    def __init__(self, folder: str | Path, *, spec: str | None = None, max_length: int | None = None,
                 chunk_size: int | None = None) -> None:
        super().__init__(folder, scheme="sparse", spec=spec, chunk_size=chunk_size)
        self.max_length = opt_int("max_length", max_length)

    @property
    def model(self) -> Any:
        """The loaded ``SparseEncoder`` (shared by encoders of the same folder and max_length)."""
        return shared_model(("sparse-encoder", str(self.folder), self.max_length), self._load)

    def _load(self) -> Any:
        with encoding_errors(self.spec, "loading the model"):
            from sentence_transformers import SparseEncoder

            with quiet_hf_loading():
                model = SparseEncoder(str(self.folder), device="cpu", local_files_only=True)
            model.eval()
            if self.max_length is not None:
                model.max_seq_length = self.max_length
        return model

    @property
    def dim(self) -> int:
        """The number of features (the model's output dimension: its vocabulary)."""
        model = self.model
        return int((getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension)())

    def feature_names(self) -> list[str]:
        """Feature ``j``'s name: the tokenizer's token of id ``j`` (``[unused3]`` style names included)."""
        tokenizer = self.model.tokenizer
        return [str(t) for t in tokenizer.convert_ids_to_tokens(list(range(self.dim)))]

    def encode_sparse(self, texts: Sequence[str], *, batch_size: int = 64,
                      progress: Progress | None = None) -> SparseRows:
        """The documents' rows: ``SparseEncoder.encode_document``, one row per text (phase ``encode``)."""
        return self._sparse(texts, batch_size, progress, "encode", query=False)

    def encode_sparse_queries(self, texts: Sequence[str], *, batch_size: int = 64,
                              progress: Progress | None = None) -> SparseRows:
        """The queries' rows: ``SparseEncoder.encode_query`` (phase ``encode queries``)."""
        return self._sparse(texts, batch_size, progress, "encode queries", query=True)

    def _sparse(self, texts: Sequence[str], batch_size: int, progress: Progress | None, phase: str,
                query: bool) -> SparseRows:
        import scipy.sparse as sps

        items = check_texts(texts)
        check_batch_size(batch_size)
        n = self.dim
        if not items:
            return SparseRows(np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.float32), n)
        model = self.model
        encode = model.encode_query if query else model.encode_document
        tick = None if progress is None else Tally(progress, phase, len(items))
        parts = []
        for chunk in chunks(items, self.chunk_size if tick is not None else len(items)):
            with encoding_errors(self.spec):
                out = encode(chunk, batch_size=batch_size, convert_to_sparse_tensor=True, show_progress_bar=False)
                coo = out.coalesce().cpu()
                ij = coo.indices().numpy()
                parts.append(sps.csr_array((coo.values().float().numpy(), (ij[0], ij[1])), shape=(len(chunk), n)))
            if tick is not None:
                tick(len(chunk))
        csr = sps.csr_array(sps.vstack(parts).tocsr())
        csr.eliminate_zeros()
        csr.sort_indices()
        return SparseRows.from_scipy(csr)

    def _encode(self, texts: list[str], *, batch_size: int, progress: Tick | None) -> np.ndarray:
        rows = self.encode_sparse(texts, batch_size=batch_size)
        if progress is not None:
            progress(len(texts))
        return np.ascontiguousarray(rows.to_scipy().toarray(), dtype=np.float32)

    def _encode_queries(self, texts: list[str], *, batch_size: int, progress: Tick | None) -> np.ndarray:
        rows = self.encode_sparse_queries(texts, batch_size=batch_size)
        if progress is not None:
            progress(len(texts))
        return np.ascontiguousarray(rows.to_scipy().toarray(), dtype=np.float32)

    def provenance(self) -> dict[str, Any]:
        """Say exactly what made the rows (``pooling`` is ``"sparse"``; the keys of ``Encoder.provenance``)."""
        model = self.model
        return {
            "encoder": self.spec,
            "encoder_version": package_version("sentence-transformers"),
            "model": str(self.folder),
            "model_fingerprint": self.folder_fingerprint(),
            "layer": None,
            "pooling": "sparse",
            "normalize": False,
            "prompt": None,
            "max_length": None if model.max_seq_length is None else int(model.max_seq_length),
        }


def tiny_sparse_folder(out: str | Path, corpus: Sequence[str] = ("a cat sat on the mat", "a dog barks")) -> Path:
    """Save an inference-free ``SparseEncoder`` at ``out``: one IDF weight per token of the bundled MiniLM
    tokenizer, ``log(1 + N / df)`` over ``corpus`` (0 for tokens it never holds). For examples and tests:
    no model with a masked-language head ships here.

    Examples
    --------
    >>> import tempfile
    >>> (tiny_sparse_folder(tempfile.mkdtemp()) / "modules.json").is_file()
    True
    """
    import torch
    from sentence_transformers import SparseEncoder
    from sentence_transformers.sparse_encoder.modules import SparseStaticEmbedding
    from transformers import AutoTokenizer

    from repspace.engines.encoders.bundled import minilm_folder

    with quiet_hf_loading():
        tokenizer = AutoTokenizer.from_pretrained(str(minilm_folder()), local_files_only=True)
    df = np.zeros(tokenizer.vocab_size)
    for ids in tokenizer(list(corpus), add_special_tokens=False)["input_ids"]:
        df[np.unique(ids)] += 1
    idf = np.where(df > 0, np.log1p(len(corpus) / np.maximum(df, 1)), 0.0).astype(np.float32)
    model = SparseEncoder(modules=[SparseStaticEmbedding(tokenizer=tokenizer, weight=torch.tensor(idf))],
                          device="cpu")
    model.save(str(out))
    return Path(out).resolve()
