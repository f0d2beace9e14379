"""What the encoders that read one local model folder share: the spec, the chunk size and the folder's fingerprint."""

from __future__ import annotations

from pathlib import Path

from repspace.engines.encoders._fingerprint import check_folder, model_fingerprint
from repspace.engines.encoders._options import opt_int
from repspace.engines.encoders.base import Encoder

__all__ = ["FolderEncoder"]


class FolderEncoder(Encoder):
    """Base of the encoders whose model is a local folder (``st:``, ``model2vec:``).

    The spec defaults to ``"{scheme}:{folder}"``; a missing folder is refused
    at once; texts are encoded ``chunk_size`` at a time between progress
    reports; the folder's fingerprint is computed once, on first use.
    """

    #: Default texts per progress report.
    DEFAULT_CHUNK_SIZE = 1024

    def __init__(self, folder: str | Path, *, scheme: str, spec: str | None, chunk_size: int | None) -> None:
        self.folder = check_folder(folder, spec or f"{scheme}:{folder}")
        super().__init__(spec or f"{scheme}:{self.folder}")
        self.chunk_size = opt_int("chunk_size", chunk_size) or self.DEFAULT_CHUNK_SIZE
        self._fingerprint: str | None = None

    def folder_fingerprint(self) -> str:
        """The model folder's :func:`~repspace.engines.encoders._fingerprint.model_fingerprint`, computed once.

        Examples
        --------
        >>> from repspace.engines.encoders import get_encoder
        >>> enc = get_encoder("static")
        >>> len(enc.folder_fingerprint()), enc.folder_fingerprint() == enc.provenance()["model_fingerprint"]
        (64, True)
        """
        if self._fingerprint is None:
            self._fingerprint = model_fingerprint(self.folder)
        return self._fingerprint
