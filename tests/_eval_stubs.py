"""A stand-in codec shared by the task tests (a helper module, not collected)."""

from __future__ import annotations

import numpy as np


class TruncateCodec:
    """Keeps the first ``k`` dimensions and remembers what it was fitted on."""

    name = "truncate"

    def __init__(self, k: int) -> None:
        self.k = k
        self.fitted_shape: tuple[int, ...] | None = None

    @property
    def bytes_per_vector(self) -> int:
        return 4 * self.k

    def fit(self, x):
        self.fitted_shape = np.asarray(x).shape
        return self

    def transform(self, x):
        return np.asarray(x, dtype=np.float32)[:, : self.k]

    def to_dict(self):
        return {"name": self.name, "k": self.k}
