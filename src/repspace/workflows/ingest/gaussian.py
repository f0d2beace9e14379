"""Ingest Gaussian embeddings (a mean and a diagonal variance per item) as a space searched by KL divergence.

Each item ``N(μ, diag σ²)`` of dimension ``d`` is stored as one dense row of ``2d + 2`` numbers in
an ``l2`` space: its KL item vector (:func:`~repspace.engines.search.gaussian.kl_item_vectors`,
``[1/σ², μ/σ², Σ(μ²/σ² + ln σ²)]``) and one more coordinate ``sqrt(M² − ‖x‖²)`` that gives every
row the norm ``M`` (:func:`~repspace.engines.search.gaussian.mips_to_l2`): the Euclidean nearest
row to a query's KL vector (padded with 0) is then the item of smallest ``KL(query ‖ item)``, so
any index of the store (exact, ``hnsw32``, ...) serves KL search. The space's provenance records
the layout (``{"gaussian": {"dim": d, "direction": "query-item", "norm": M, "layout": ...}}``):
searches read it to turn a query Gaussian into its vector and distances back into divergences
(:mod:`repspace.workflows.search.gaussian_search`). An item's mean and variance are read back
from its row (``σ² = 1/x[:d]``, ``μ = x[d:2d]·σ²``), so nothing else is stored and no schema
change is needed: a Gaussian space is an ordinary dense space with a recipe.

The whole file is read and checked before anything is written: a variance that is zero,
negative, NaN or infinite, a mean that is not finite, a mean and a variance of different
lengths, or rows of different dimensions is one :class:`InputError` and the store is unchanged.
A Gaussian ingest creates its space (the norm ``M`` is fixed by the items it holds).

Examples
--------
>>> import os, tempfile, json
>>> from repspace.store import Store
>>> d = tempfile.mkdtemp()
>>> p = os.path.join(d, "g.jsonl")
>>> with open(p, "w") as f:
...     for i, (m, v) in enumerate([([0, 0], [1, 1]), ([1, 0], [0.5, 2]), ([3, 3], [1, 1])]):
...         _ = f.write(json.dumps({"id": f"g{i}", "mean": m, "var": v}) + "\\n")
>>> store = Store(os.path.join(d, "s.db"))
>>> ingest_gaussian_file(store, "words", p, mean_col="mean", variance_col="var").added
3
>>> sp = store.space("words")
>>> sp.dim, sp.provenance["gaussian"]["dim"]
(6, 2)
"""

from __future__ import annotations

import time
from pathlib import Path
import numpy as np

from repspace.core.errors import InputError
from repspace.core.printable import excerpt
from repspace.core.store import Store
from repspace.engines.search.gaussian import kl_item_vectors
from repspace.workflows.ingest._target import IngestReport, existing_space
from repspace.workflows.ingest.readers import Records, read_records

__all__ = ["ingest_gaussian_file", "gaussian_rows", "read_gaussians"]

#: The provenance key that marks a Gaussian space, and the layout of its rows.
KEY = "gaussian"
LAYOUT = "kl-item+norm"


def _column(records: Records, col: str, i: int) -> list[float]:
    import json

    value = records.extra[col][i]
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            value = None
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if not isinstance(value, (list, tuple)) or not value or not all(
            type(x) in (int, float) for x in value):
        raise InputError(f"{records.source}: row {i + 1}: {excerpt(col)} of item {excerpt(records.ids[i])} is not a "
                         "non-empty list of numbers")
    return [float(x) for x in value]


def read_gaussians(records: Records, mean_col: str, variance_col: str) -> tuple[np.ndarray, np.ndarray]:
    """Every item's mean and variance, (n, d) float64 each, checked (finite means, finite variances > 0)."""
    means, variances = [], []
    for i in range(len(records)):
        m, v = _column(records, mean_col, i), _column(records, variance_col, i)
        where = f"{records.source}: row {i + 1} (item {excerpt(records.ids[i])})"
        if len(m) != len(v):
            raise InputError(f"{where}: a mean of {len(m)} numbers and a variance of {len(v)}")
        if means and len(m) != len(means[0]):
            raise InputError(f"{where}: {len(m)} dimensions, the first item has {len(means[0])}")
        if not all(np.isfinite(m)):
            raise InputError(f"{where}: the mean holds NaN or inf")
        if not all(np.isfinite(v)) or min(v) <= 0:
            raise InputError(f"{where}: a variance must be a finite number > 0, not {min(v, key=lambda x: x > 0)!r}")
        means.append(m)
        variances.append(v)
    if not means:
        raise InputError(f"{records.source}: no items")
    return np.array(means), np.array(variances)


def gaussian_rows(mean: np.ndarray, var: np.ndarray) -> tuple[np.ndarray, float]:
    """The stored rows (n, 2d + 2) of the Gaussians and the norm ``M`` every row has."""
    x = kl_item_vectors(mean, var)
    norms2 = np.einsum("ij,ij->i", x, x)
    top = float(norms2.max())
    extra = np.sqrt(np.maximum(top - norms2, 0.0))
    return np.hstack([x, extra[:, None]]), float(np.sqrt(top))


def ingest_gaussian_file(store: Store, space: str, path: str | Path, *, mean_col: str, variance_col: str,
                         id_col: str | None = "id", text_col: str | None = "text", meta_cols: list[str] | None = None,
                         auto_id: bool = False) -> IngestReport:
    """Read a JSON lines, CSV or Parquet file of Gaussians and store them as a new space searched by KL.

    Nothing is written when an item is refused or the space exists.

    Examples
    --------
    >>> import os, tempfile, json
    >>> from repspace.store import Store
    >>> d = tempfile.mkdtemp(); p = os.path.join(d, "g.jsonl")
    >>> with open(p, "w") as f:
    ...     _ = f.write(json.dumps({"id": "a", "mu": [0, 1], "s2": [1, 4]}) + "\\n")
    >>> report = ingest_gaussian_file(Store(os.path.join(d, "s.db")), "g", p, mean_col="mu", variance_col="s2")
    >>> report.added, report.spaces
    (1, ['g'])
    """
    t0 = time.perf_counter()
    if existing_space(store, space) is not None:
        raise InputError(f"space {space!r} exists: a Gaussian ingest creates its space (the rows' common norm is "
                         "fixed by the items it holds); give a new name")
    records = read_records(path, text_col=text_col, id_col=id_col, meta_cols=meta_cols, auto_id=auto_id,
                           extra_cols=[mean_col, variance_col])
    mean, var = read_gaussians(records, mean_col, variance_col)
    rows, norm = gaussian_rows(mean, var)
    recipe = {KEY: {"dim": int(mean.shape[1]), "direction": "query-item", "norm": norm, "layout": LAYOUT,
                    "mean_col": mean_col, "variance_col": variance_col}}
    sp = store.create_space(space, dim=rows.shape[1], metric="l2", provenance=recipe)
    try:
        r = sp.add(records.ids, rows.astype(np.float32), records.texts, records.metadata, on_conflict="error")
    except BaseException:
        store.delete_space(space)  # the space was made for these items: nothing of a refused ingest stays
        raise
    return IngestReport(spaces=[space], read=len(records), encoded=0, reused=0, added=r.added, replaced=r.replaced,
                        updated=r.updated, unchanged=r.unchanged, duplicates_dropped=0,
                        seconds=time.perf_counter() - t0, encode_seconds=0.0)
