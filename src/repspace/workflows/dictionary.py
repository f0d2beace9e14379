"""A sparse dictionary of a stored space: a top-k sparse autoencoder fitted on its vectors, measured on a
held-out share, kept beside the store, and read back while the space's vectors are unchanged.

:func:`fit_dictionary` brings a space's vectors to
:class:`~repspace.engines.interpret.SparseAutoencoder` (cosine spaces: rows normalised, as the space compares
them), holds out a seeded share of the items for :func:`~repspace.engines.interpret.sae_metrics`, lists the
most frequent latents with the items that activate them most, and writes the fitted model to
``STORE.indexes/<uid>/dictionaries/<name>.npz`` (plain arrays and a JSON stamp, nothing pickled; ``name`` is
``sae-<n_latents>-k<k>-s<seed>``). :func:`load_dictionary` reads it back and refuses it, with a
:class:`~repspace.core.errors.ConflictError`, once the space's vectors changed (an item added, replaced or
deleted); a metadata or text change leaves the vectors, and so the dictionary, as they were.

Examples
--------
>>> import numpy as np
>>> from repspace.store import example_space
>>> sp = example_space(400, 8)
>>> r = fit_dictionary(sp, 16, 4, epochs=2, save_top="sae")
>>> r.name, r.n_train, r.n_heldout, r.saved, r.to_dict()["l0"] <= 4
('sae-16-k4-s0', 360, 40, 400, True)
>>> d = load_dictionary(sp, "sae-16-k4-s0")
>>> d.transform(sp.vectors()[:2]).shape, d.normalized
((2, 16), True)
>>> _ = sp.add(["new"], np.ones((1, 8)))
>>> try:
...     load_dictionary(sp, "sae-16-k4-s0")
... except ConflictError as e:
...     print(str(e)[:60])
dictionary 'sae-16-k4-s0' of space 't' is stale: it was fitt
"""

from __future__ import annotations

import json
import math
import re
import time
import zipfile
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.atomic import read_npz, write_npz
from repspace.core.checks import check_scalar
from repspace.core.cache import LRUCache
from repspace.core.errors import ConflictError, InputError, NotFoundError
from repspace.core.exact import normalize_rows
from repspace.core.progress import Progress
from repspace.core.space import Metric

if TYPE_CHECKING:
    import scipy.sparse as sp

    from repspace.core.store import Space
    from repspace.engines.interpret import SaeMetrics, SparseAutoencoder

__all__ = ["Dictionary", "DictionaryReport", "LatentSummary", "default_epochs", "dictionary_name",
           "fit_dictionary", "holdout_split", "list_dictionaries", "load_dictionary"]

#: Version of the dictionary files; another version is refused on reading.
FORMAT = 1
#: Latents with their top items in a report, at most; items per latent.
REPORT_LATENTS, REPORT_ITEMS = 32, 8
#: Top latents per item written by ``save_top``, at most.
SAVE_TOP_LATENTS = 8
#: ``epochs=None``: the estimator's default, raised until training takes at least this many Adam steps
#: (a few thousand items make 3 steps of 1,024 rows an epoch; held-out FVU levels off near 300 steps).
MIN_STEPS = 300
#: The fitted float32 arrays kept in the file (beside ``samples_since_fired_``, ``heldout_rows`` and ``stamp``).
_ARRAYS = ("components_", "encoder_", "latent_bias_", "pre_bias_")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def dictionary_name(n_latents: int, k: int, seed: int = 0, multik: int = 0) -> str:
    """The file name (without ``.npz``) of a dictionary: ``sae-<n_latents>-k<k>-s<seed>``, with
    ``-m<multik>`` before the seed when it was fitted with the Multi-TopK term.

    >>> dictionary_name(4096, 32), dictionary_name(4096, 32, multik=128)
    ('sae-4096-k32-s0', 'sae-4096-k32-m128-s0')
    """
    return f"sae-{n_latents}-k{k}-m{multik}-s{seed}" if multik else f"sae-{n_latents}-k{k}-s{seed}"


def default_epochs(n_train: int, batch_size: int = 1024, *, base: int = 8) -> int:
    """Epochs when none are given: ``base`` (the estimator's default), or enough for :data:`MIN_STEPS` steps.

    >>> default_epochs(90_000), default_epochs(2_700)
    (8, 100)
    """
    steps = max(1, math.ceil(n_train / max(1, batch_size)))
    return max(base, math.ceil(MIN_STEPS / steps))


def holdout_split(n: int, holdout: float, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Positions ``(train, heldout)`` of ``n`` items, both ascending: a seeded ``holdout`` share held out.

    ``round(holdout · n)`` items are held out, at least one when ``holdout > 0`` and at least one is
    left to train on.

    >>> train, held = holdout_split(10, 0.2, seed=0)
    >>> len(train), len(held), sorted([*train, *held]) == list(range(10))
    (8, 2, True)
    """
    holdout = _holdout(holdout)
    if n < 1 or (holdout > 0 and n < 2):
        raise InputError(f"{n} item(s) cannot be split into training and held-out items")
    n_held = 0 if holdout == 0 else min(n - 1, max(1, round(holdout * n)))
    order = np.random.default_rng(seed).permutation(n)
    return np.sort(order[n_held:]).astype(np.int64), np.sort(order[:n_held]).astype(np.int64)


def _holdout(value: Any) -> float:
    return check_scalar(value, "holdout", float, low=0, high=1, include="left")


def _check_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise InputError(f"bad dictionary name {name!r}: letters, digits, '.', '_' and '-' only")
    return name


def _folder(space: Space) -> Path:
    return space.store.index_dir / space.uid / "dictionaries"


def _num(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


# ----------------------------------------------------------------------------- the report


@dataclass(frozen=True)
class LatentSummary:
    """One latent over every item of the space: how often it fires, how strongly, and its top items.

    ``items`` are ``(id, text, activation)``, highest activation first (the earlier row first on ties).

    Examples
    --------
    >>> from repspace.store import example_space
    >>> space = example_space(200, 8, texts=[f"text {j}" for j in range(200)])
    >>> report = fit_dictionary(space, 16, 4, epochs=1)
    >>> latent = report.latents[0]  # the most frequent latent
    >>> 0 < latent.density <= 1, len(latent.items), latent.items[0][1].startswith("text")
    (True, 8, True)
    >>> sorted(latent.to_dict())
    ['density', 'latent', 'mean_activation', 'top_items']
    """

    latent: int
    density: float
    mean_activation: float
    items: list[tuple[str, str | None, float]]

    def to_dict(self) -> dict[str, Any]:
        """``{latent, density, mean_activation, top_items: [{id, text, activation}, ...]}``."""
        return {"latent": self.latent, "density": self.density, "mean_activation": self.mean_activation,
                "top_items": [{"id": i, "text": t, "activation": a} for i, t, a in self.items]}


@dataclass(frozen=True, eq=False)
class DictionaryReport:
    """A fitted dictionary of a space: where it is kept, its metrics on the training and held-out items and on
    all items, and its most frequent latents.

    Attributes
    ----------
    space, name, path : the space, the dictionary's name and its file.
    metric, normalized : the space's metric; whether rows were normalised first (cosine spaces).
    generation, n, dim : the space's generation and items when read, and the dimension.
    n_train, n_heldout : items trained on and held out.
    n_latents, k, epochs, seed, holdout : the fit's parameters (``epochs`` as resolved).
    train, heldout, overall : :class:`~repspace.engines.interpret.SaeMetrics` on the training items, the
        held-out ones (None without a hold-out) and all items.
    latents : the most frequent latents (:class:`LatentSummary`), most frequent first.
    history : the estimator's per-epoch records.
    save_top, saved : the metadata key written (or None) and how many items it changed.
    seconds, fit_seconds : the whole call, and training alone.
    model : the fitted :class:`~repspace.engines.interpret.SparseAutoencoder`.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> space = example_space(200, 8, texts=[f"text {j}" for j in range(200)])
    >>> report = fit_dictionary(space, 16, 4, epochs=1)
    >>> report.name, report.path.name, report.n_train, report.n_heldout, report.n_latents, report.k
    ('sae-16-k4-s0', 'sae-16-k4-s0.npz', 180, 20, 16, 4)
    >>> report.normalized, report.metrics()["l0_train"] <= 4, "fvu_heldout" in report.metrics()
    (True, True, True)
    """

    space: str
    name: str
    path: Path
    metric: str
    normalized: bool
    generation: int
    n: int
    dim: int
    n_train: int
    n_heldout: int
    n_latents: int
    k: int
    epochs: int
    seed: int
    holdout: float
    train: SaeMetrics = field(repr=False)
    heldout: SaeMetrics | None = field(repr=False)
    overall: SaeMetrics = field(repr=False)
    latents: list[LatentSummary] = field(repr=False)
    history: list[dict[str, Any]] = field(repr=False)
    save_top: str | None
    saved: int
    seconds: float
    fit_seconds: float
    model: SparseAutoencoder = field(repr=False)

    def metrics(self) -> dict[str, Any]:
        """The headline figures (what the file's stamp keeps too); NaN becomes None.

        ``fvu_*``, ``nmse_*``, ``l0_*`` and ``dead_fraction_*`` on the training and held-out items (``None``
        without a hold-out); ``l0`` and ``dead_fraction`` (never fired) over all items;
        ``dead_fraction_window``: dead in the estimator's training window.
        """
        held = self.heldout
        return {
            "fvu_train": _num(self.train.fvu), "fvu_heldout": None if held is None else _num(held.fvu),
            "nmse_train": _num(self.train.nmse), "nmse_heldout": None if held is None else _num(held.nmse),
            "l0_train": float(self.train.l0), "l0_heldout": None if held is None else float(held.l0),
            "l0": float(self.overall.l0),
            "dead_fraction_train": float(self.train.dead_fraction),
            "dead_fraction_heldout": None if held is None else float(held.dead_fraction),
            "dead_fraction": float(self.overall.dead_fraction),
            "dead_fraction_window": float(self.overall.dead_fraction_train),
        }

    def to_dict(self) -> dict[str, Any]:
        """Everything as JSON-ready snake_case keys: the parameters, :meth:`metrics`, ``density_histogram``
        (over all items), ``history``, ``latents`` (each :meth:`LatentSummary.to_dict`), ``saved``,
        ``seconds``."""
        return {
            "space": self.space, "name": self.name, "path": str(self.path), "metric": self.metric,
            "normalized": self.normalized, "generation": self.generation, "n": self.n, "dim": self.dim,
            "n_train": self.n_train, "n_heldout": self.n_heldout, "n_latents": self.n_latents, "k": self.k,
            "epochs": self.epochs, "seed": self.seed, "holdout": self.holdout,
            **self.metrics(),
            "density_histogram": self.overall.to_dict()["density_histogram"],
            "history": [dict(h) for h in self.history],
            "latents": [s.to_dict() for s in self.latents],
            "save_top": self.save_top, "saved": self.saved,
            "seconds": self.seconds, "fit_seconds": self.fit_seconds,
        }


# ----------------------------------------------------------------------------- fitting


def fit_dictionary(space: Space, n_latents: int, k: int, *, epochs: int | None = None, seed: int = 0,
                   holdout: float = 0.1, progress: Progress | None = None, save_top: str | None = None,
                   n_report: int = REPORT_LATENTS, n_items: int = REPORT_ITEMS, multik: int = 0) -> DictionaryReport:
    """Fit a top-k sparse autoencoder on a space's vectors, measure it, keep it beside the store.

    Parameters
    ----------
    space : Space
    n_latents, k : int
        Dictionary size and active latents per item (``1 ≤ k ≤ n_latents``).
    epochs : int, optional
        Passes over the training items; default :func:`default_epochs`.
    seed : int
        Seeds the hold-out, the initial dictionary and the batch order.
    holdout : float, default 0.1
        Share of the items held out of training and measured apart (:func:`holdout_split`); 0 for none.
    progress : callable, optional
        ``progress("sae", rows_done, total)`` while training.
    save_top : str, optional
        A metadata key: each item gets its top active latents there, ``[[latent, activation], ...]``
        (at most :data:`SAVE_TOP_LATENTS`, largest first). Refused whole
        (:class:`~repspace.core.errors.ConflictError`) if the space changed since it was read; the
        dictionary file is written first and stays valid while the vectors are unchanged.
    n_report, n_items : int
        Latents listed in the report (the most frequent over all items) and top items per latent.
    multik : int, default 0
        The Multi-TopK term of CSR (Wen et al. 2025): the top ``multik`` latents (``k ≤ multik ≤ n_latents``,
        CSR: ``4·k``) reconstruct each item too, weighted 1/8, so that a query coded with more than ``k``
        latents (``repspace derive sae-codes --query-k``) still decodes to its vector; 0: off. The name gets
        ``-m<multik>`` (:func:`dictionary_name`).

    Returns
    -------
    DictionaryReport

    Raises
    ------
    InputError
        A bad parameter (``k > n_latents``, ``n_latents < 1``, a hold-out outside ``[0, 1)``, an empty
        ``save_top`` key) or fewer than 2 items; nothing is written.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> space = example_space(200, 8)
    >>> r = fit_dictionary(space, 16, 4, epochs=1, holdout=0.25, save_top="sae")
    >>> r.name, r.n_train, r.n_heldout, r.epochs, r.saved, r.path.exists()
    ('sae-16-k4-s0', 150, 50, 1, 200, True)
    >>> len(space.get(["i0"])[0].metadata["sae"]) <= 4  # [[latent, activation], ...] of its active latents
    True
    """
    from repspace.engines.interpret import SparseAutoencoder, sae_metrics

    started = time.perf_counter()
    holdout = _holdout(holdout)
    if save_top is not None and not str(save_top).strip():
        raise InputError("save_top (--save-top) needs a metadata key")
    for value, what in ((seed, "seed"), (n_report, "n_report"), (n_items, "n_items")):
        check_scalar(value, what, int, low=0)
    model = SparseAutoencoder(n_latents, k, seed=seed, progress=progress, multik=multik)
    if epochs is not None:
        model.set_params(epochs=epochs)
    space.metric.require_vector_space("a sparse dictionary (a linear decomposition of vectors)")
    snap = space.snapshot()
    n = len(snap.ids)
    if n < 2:
        raise InputError(f"space {space.name!r} has {n} item(s); a dictionary needs at least 2")
    normalized = space.metric is Metric.COSINE
    X = normalize_rows(snap.vectors) if normalized else np.array(snap.vectors, dtype=np.float32)  # writable
    train, held = holdout_split(n, holdout, seed)
    if epochs is None:
        model.set_params(epochs=default_epochs(len(train), model.batch_size, base=model.epochs))
    model.fit(X[train])  # checks the parameters first
    name = _check_name(dictionary_name(int(model.n_latents), int(model.k), int(seed), int(model.multik)))
    m_train = sae_metrics(model, X[train])
    m_held = sae_metrics(model, X[held]) if len(held) else None
    m_all = sae_metrics(model, X)
    codes = model.transform(X)
    latents = _latents(space, snap.rows, snap.ids, codes, m_all.density, int(n_report), int(n_items))

    report = DictionaryReport(
        space=space.name, name=name, path=_folder(space) / f"{name}.npz", metric=space.metric.value,
        normalized=normalized, generation=snap.generation, n=n, dim=int(X.shape[1]), n_train=len(train),
        n_heldout=len(held), n_latents=int(model.n_latents), k=int(model.k), epochs=int(model.epochs),
        seed=int(seed), holdout=holdout, train=m_train, heldout=m_held, overall=m_all, latents=latents,
        history=list(model.history_), save_top=save_top, saved=0, seconds=0.0,
        fit_seconds=float(model.fit_seconds_), model=model,
    )
    _save(report, space.uid, snap.next_row, snap.rows[held])
    saved = 0
    if save_top is not None:
        saved = space.patch_rows_metadata(snap.rows, _top_per_item(codes, save_top), generation=snap.generation)
    return replace(report, saved=saved, seconds=time.perf_counter() - started)


def _latents(space: Space, rows: np.ndarray, ids: list[str], codes: sp.csr_matrix, density: np.ndarray,
             n_report: int, n_items: int) -> list[LatentSummary]:
    """The ``n_report`` most frequent latents (that fired at all) with their ``n_items`` top items."""
    order = np.argsort(-density, kind="stable")[:n_report]
    order = order[density[order] > 0]
    cols = codes.tocsc()
    picked: list[tuple[int, float, float, np.ndarray, np.ndarray]] = []
    for j in order.tolist():
        lo, hi = cols.indptr[j], cols.indptr[j + 1]
        pos, vals = cols.indices[lo:hi].astype(np.int64), cols.data[lo:hi]
        top = np.lexsort((pos, -vals.astype(np.float64)))[:n_items]
        picked.append((j, float(density[j]), float(vals.mean()), pos[top], vals[top]))
    wanted = np.unique(np.concatenate([p[3] for p in picked])) if picked else np.empty(0, np.int64)
    records = space.records(rows[wanted]) if len(wanted) else {}
    out = []
    for j, dens, mean, pos, vals in picked:
        items = []
        for p, v in zip(pos.tolist(), vals.tolist(), strict=True):
            rec = records.get(int(rows[p]))
            items.append((ids[p], None if rec is None else rec[1], round(float(v), 6)))
        out.append(LatentSummary(latent=int(j), density=dens, mean_activation=mean, items=items))
    return out


def _top_per_item(codes: sp.csr_matrix, key: str) -> list[dict[str, Any]]:
    """Each row's active latents as ``[[latent, activation], ...]``, largest first, at most SAVE_TOP_LATENTS."""
    n = codes.shape[0]
    counts = np.diff(codes.indptr)
    row_of = np.repeat(np.arange(n), counts)
    order = np.lexsort((codes.indices, -codes.data.astype(np.float64), row_of))  # by row, then value down
    rank = np.arange(len(order)) - np.repeat(codes.indptr[:-1], counts)
    keep = order[rank < SAVE_TOP_LATENTS]
    latents, values = codes.indices[keep].tolist(), np.round(codes.data[keep].astype(np.float64), 6).tolist()
    bounds = np.concatenate([[0], np.cumsum(np.minimum(counts, SAVE_TOP_LATENTS))]).tolist()
    return [{key: [[latents[i], values[i]] for i in range(bounds[r], bounds[r + 1])]} for r in range(n)]


# ----------------------------------------------------------------------------- the file beside the store


@dataclass(frozen=True, eq=False)
class Dictionary:
    """A dictionary read back by :func:`load_dictionary`: the fitted model and what it was fitted on.

    Attributes
    ----------
    name, path : its name and file.
    model : the fitted :class:`~repspace.engines.interpret.SparseAutoencoder`.
    normalized : it was fitted on normalised rows (a cosine space): :meth:`prepare` normalises too.
    heldout_rows : int64 array, the space rows held out of training.
    stamp : the file's description: the space (``uid``, ``generation``, ``next_row``, ``dead_rows``,
        ``n``), ``params`` (the estimator's), ``holdout``, ``metrics`` (:meth:`DictionaryReport.metrics`),
        ``history``, ``created_at``.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> space = example_space(200, 8, texts=[f"text {j}" for j in range(200)])
    >>> report = fit_dictionary(space, 16, 4, epochs=1)
    >>> d = load_dictionary(space, "sae-16-k4-s0")
    >>> d.name, d.normalized, d.heldout_rows.shape, d.stamp["n_heldout"]
    ('sae-16-k4-s0', True, (20,), 20)
    >>> codes = d.transform(space.vectors()[:3])  # sparse: k = 4 active latents per item
    >>> codes.shape, codes.getnnz(axis=1).tolist()
    ((3, 16), [4, 4, 4])
    """

    name: str
    path: Path
    model: SparseAutoencoder = field(repr=False)
    normalized: bool
    heldout_rows: np.ndarray = field(repr=False)
    stamp: dict[str, Any] = field(repr=False)

    def prepare(self, X: Any) -> np.ndarray:
        """``X`` as the model saw the space's vectors: float32, rows normalised for a cosine space."""
        arr = np.asarray(X, dtype=np.float32)
        return normalize_rows(arr) if self.normalized and arr.ndim == 2 else arr

    def transform(self, X: Any, *, dense: bool = False, k: int | None = None) -> sp.csr_matrix | np.ndarray:
        """Sparse codes of vectors of the space (``model.transform(prepare(X), k=k)``): ``k`` latents per row
        instead of the dictionary's own (``n_latents``: every positive one), e.g. for a search query.

        >>> from repspace.store import example_space
        >>> space = example_space(200, 8)
        >>> d = load_dictionary(space, fit_dictionary(space, 16, 4, epochs=1).name)
        >>> d.transform(space.vectors()[:2]).getnnz(axis=1).tolist(), d.transform(space.vectors()[:2], k=16).shape
        ([4, 4], (2, 16))
        """
        return self.model.transform(self.prepare(X), dense=dense, k=k)

    def atom_scores(self, X: Any, *, k: int | None = None) -> sp.csr_matrix:
        """``model.atom_scores(prepare(X), k=k)``: the top ``k`` positive inner products with the atoms.

        >>> from repspace.store import example_space
        >>> space = example_space(200, 8)
        >>> d = load_dictionary(space, fit_dictionary(space, 16, 4, epochs=1).name)
        >>> int(d.atom_scores(space.vectors()[:2], k=5).getnnz(axis=1).max()) <= 5
        True
        """
        return self.model.atom_scores(self.prepare(X), k=k)


def _clean(value: Any) -> Any:
    """JSON-ready, with non-finite floats as None (a stamp is compared as JSON: NaN never equals itself)."""
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    return value


def _save(report: DictionaryReport, uid: str, next_row: int, heldout_rows: np.ndarray) -> None:
    model = report.model
    params = {key: v for key, v in model.get_params().items() if key != "progress"}
    stamp = _clean({
        "format": FORMAT, "kind": "top-k sparse autoencoder", "name": report.name, "space": report.space,
        "uid": uid, "generation": report.generation, "next_row": int(next_row),
        "dead_rows": int(next_row) - report.n, "n": report.n, "dim": report.dim, "metric": report.metric,
        "normalized": report.normalized, "holdout": report.holdout, "n_heldout": report.n_heldout,
        "params": params, "metrics": report.metrics(), "history": report.history,
        "n_steps": int(model.n_steps_), "fit_seconds": report.fit_seconds,
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    })
    arrays = {a: np.asarray(getattr(model, a), dtype=np.float32) for a in _ARRAYS}
    arrays["samples_since_fired_"] = np.asarray(model.samples_since_fired_, dtype=np.int64)
    arrays["heldout_rows"] = np.asarray(heldout_rows, dtype=np.int64)
    arrays["stamp"] = np.frombuffer(json.dumps(stamp).encode(), dtype=np.uint8)
    write_npz(report.path, stamp, arrays)


def list_dictionaries(space: Space) -> list[str]:
    """Names of the dictionary files kept for ``space`` (current or stale), sorted.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> space = example_space(200, 8, texts=[f"text {j}" for j in range(200)])
    >>> list_dictionaries(space)
    []
    >>> _ = fit_dictionary(space, 16, 4, epochs=1)
    >>> _ = fit_dictionary(space, 8, 2, epochs=1, seed=1)
    >>> list_dictionaries(space)
    ['sae-16-k4-s0', 'sae-8-k2-s1']
    """
    folder = _folder(space)
    if not folder.is_dir():
        return []
    return sorted(p.stem for p in folder.glob("*.npz") if _NAME.fullmatch(p.stem))


def load_dictionary(space: Space, name: str) -> Dictionary:
    """The dictionary ``name`` of ``space``, if the space's vectors are those it was fitted on.

    Raises
    ------
    NotFoundError
        No such dictionary (the message lists those there are).
    ConflictError
        It is stale: items were added, replaced or deleted since it was fitted (metadata and text
        changes do not count: they leave the vectors as they were).
    InputError
        A bad name, or a damaged file or one of another version.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> space = example_space(200, 8)
    >>> _ = fit_dictionary(space, 16, 4, epochs=1)
    >>> load_dictionary(space, "sae-16-k4-s0").model.k
    4
    >>> _ = space.update_metadata(["i0"], [{"seen": True}])  # metadata only: still current
    >>> load_dictionary(space, "sae-16-k4-s0").name
    'sae-16-k4-s0'
    >>> _ = space.delete(["i0"])
    >>> load_dictionary(space, "sae-16-k4-s0")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    repspace.core.errors.ConflictError: dictionary 'sae-16-k4-s0' of space 't' is stale: ...
    """
    name = _check_name(name)
    path = _folder(space) / f"{name}.npz"
    if not path.is_file():
        have = list_dictionaries(space)
        there = f"; it has {', '.join(repr(h) for h in have)}" if have else ""
        raise NotFoundError(f"no dictionary {name!r} of space {space.name!r}{there}")
    stamp = _read_stamp(path)
    if stamp.get("uid") != space.uid:
        raise ConflictError(f"dictionary file {path} belongs to another space than {space.name!r}")
    info = space.info()
    if [stamp.get("next_row"), stamp.get("dead_rows")] != [info.next_row, info.dead_rows]:
        p = stamp.get("params", {})
        raise ConflictError(
            f"dictionary {name!r} of space {space.name!r} is stale: it was fitted at generation "
            f"{stamp.get('generation')} ({stamp.get('n')} items) and the space's vectors changed since (now "
            f"generation {info.generation}, {info.count} items); fit it again: repspace interpret sae "
            f"{space.name} --latents {p.get('n_latents')} -k {p.get('k')} --seed {p.get('seed')}"
            + (f" --multik {p['multik']}" if p.get("multik") else ""))
    st = path.stat()
    key = (str(path), st.st_mtime_ns, st.st_size, json.dumps(stamp, sort_keys=True))
    held = _LOADED.get(key)
    if held is not None:  # the same file, unchanged: a text query per call does not read it again
        return held
    arrays = read_npz(path, stamp)
    if arrays is None:
        raise InputError(f"dictionary file {path} is damaged")
    model = _restore(stamp, arrays, path)
    loaded = Dictionary(name=name, path=path, model=model, normalized=bool(stamp.get("normalized")),
                        heldout_rows=np.asarray(arrays["heldout_rows"], dtype=np.int64), stamp=stamp)
    _LOADED.put(key, loaded)
    return loaded


#: Dictionaries a process keeps loaded (by file, its size, mtime and stamp: a refit writes a new file).
DICTIONARIES_KEPT = 4
_LOADED: LRUCache[Dictionary] = LRUCache(DICTIONARIES_KEPT)


def _read_stamp(path: Path) -> dict[str, Any]:
    try:
        with np.load(path, allow_pickle=False) as z:
            stamp = json.loads(bytes(z["stamp"]).decode())
    except (OSError, EOFError, ValueError, KeyError, zipfile.BadZipFile, UnicodeDecodeError):
        raise InputError(f"dictionary file {path} is damaged or not a repspace dictionary") from None
    if not isinstance(stamp, dict) or stamp.get("format") != FORMAT:
        got = stamp.get("format") if isinstance(stamp, dict) else None
        raise InputError(f"dictionary file {path} has format {got!r}; this repspace reads format {FORMAT}")
    return stamp


def _restore(stamp: dict[str, Any], arrays: dict[str, np.ndarray], path: Path) -> SparseAutoencoder:
    from repspace.engines.interpret import SparseAutoencoder

    bad = InputError(f"dictionary file {path} is damaged: its arrays do not make a model")
    try:
        model = SparseAutoencoder(**stamp["params"])
        m, d = int(model.n_latents), int(stamp["dim"])
    except (KeyError, TypeError, ValueError):
        raise bad from None
    shapes = {"components_": (m, d), "encoder_": (m, d), "latent_bias_": (m,), "pre_bias_": (d,)}
    for attr, shape in shapes.items():
        arr = arrays.get(attr)
        if arr is None or arr.shape != shape or arr.dtype != np.float32 or not np.isfinite(arr).all():
            raise bad
        setattr(model, attr, np.ascontiguousarray(arr))
    since = arrays.get("samples_since_fired_")
    if since is None or since.shape != (m,) or since.dtype.kind not in "iu" or "heldout_rows" not in arrays:
        raise bad
    model.samples_since_fired_ = since.astype(np.int64)
    model.dead_latents_ = model.samples_since_fired_ >= int(model.dead_window)
    model.n_features_in_ = d
    model.history_ = list(stamp.get("history") or [])
    model.n_steps_ = int(stamp.get("n_steps") or 0)
    model.fit_seconds_ = float(stamp.get("fit_seconds") or 0.0)
    return model
