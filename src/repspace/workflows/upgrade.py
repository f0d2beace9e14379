"""The model-upgrade check: can new-model queries, mapped into the old space, search the old index?

:func:`upgrade_retrieval` runs it on arrays (queries and documents embedded by
both models); :func:`upgrade_check` embeds a BEIR data set with two encoders
first, as ``repspace upgrade-check`` does.

A team re-embedding a corpus with a new model can instead fit a map from the
new space into the old one on a few documents embedded by both, and send the
new model's query vectors through it into the old index. For a retrieval data
set embedded by both models this measures, with the trec_eval definitions of
:func:`~repspace.engines.eval.retrieval_from_vectors`:

``old``
    old queries against the old index (what the team has today);
``new``
    new queries against the corpus re-embedded by the new model (the cost
    the map would save);
``mapped``
    new queries mapped into the old space against the old index, for each
    map ``method`` and number of paired documents the map was fitted on.

Methods (:mod:`repspace.engines.align`): ``procrustes`` and ``ridge`` map the new
space into the old one; ``relative`` carries both into the space of cosines to
the paired documents, each profile centred (:class:`~repspace.engines.align.Relative`
with ``center=True``; the old index is re-expressed, not re-embedded);
``unsupervised`` is given the same documents from both sides *without* their
pairing (the old side shuffled).

Each ``mapped`` row also reports Shen et al. (2020)'s two compatibility criteria
(:mod:`repspace.engines.analyze.compat`) for its mapped queries against the old
index: ``compatible`` (the empirical criterion, nDCG@10 above the old model's),
``update_gain`` (``(mapped − old) / (new − old)``), and the strict per-pair one
(``relevant_closer``, ``irrelevant_farther``: the shares of judged-relevant pairs
the mapped query is at least as close to, and of the other pairs it is at least
as far from, as the old query; ``strict_compatible`` when both are 1 in every run).
Fits on fewer documents than the corpus are repeated on ``repeats`` seeded
samples and reported as mean and standard deviation.

Examples
--------
>>> from repspace.engines.eval import BeirData
>>> rng = np.random.default_rng(0)
>>> docs_old = rng.normal(size=(60, 8))
>>> Q, _ = np.linalg.qr(rng.normal(size=(8, 8)))
>>> data = BeirData(tuple(f"d{i}" for i in range(60)), ("",) * 60, ("q0", "q1"), ("", ""),
...                 {"q0": {"d3": 1}, "q1": {"d7": 1}}, "test", "toy")
>>> q_old = docs_old[[3, 7]] + 0.01
>>> r = upgrade_retrieval(q_old, docs_old, q_old @ Q, docs_old @ Q, data, pairs=[20, "all"],
...                       methods=["procrustes"], repeats=2)
>>> [(row.setting, row.n_pairs, round(row.ndcg_at_10, 3)) for row in r.rows]
[('old', None, 1.0), ('new', None, 1.0), ('mapped', 20, 1.0), ('mapped', 60, 1.0)]
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from repspace.core.checks import check_choice, check_scalar
from repspace.core.errors import InputError
from repspace.core.progress import Progress, relabel
from repspace.engines.eval.retrieval import BeirData, load_beir, retrieval_from_vectors

__all__ = ["UPGRADE_METHODS", "UpgradeCheck", "UpgradeRow", "parse_pairs", "qrels_matrix", "upgrade_check",
           "upgrade_retrieval"]

#: The map methods the check knows, in report order.
UPGRADE_METHODS = ("procrustes", "ridge", "relative", "unsupervised")


@dataclass(frozen=True)
class UpgradeRow:
    """One line of the check: a setting, and for ``mapped`` the method and the documents it was fitted on.

    ``ndcg_at_10`` and ``recall_at_100`` are means over ``runs`` fits (seeded
    samples of ``n_pairs`` documents); ``ndcg_at_10_sd`` their standard
    deviation (0 for a single run). ``trusted``: for ``unsupervised``, how
    many of the ``runs`` fits were reproduced by their own restarts and
    determined a rotation (:attr:`~repspace.engines.align.Unsupervised.trustworthy_`);
    ``None`` for the other methods. ``compatible``, ``update_gain``,
    ``relevant_closer``, ``irrelevant_farther`` and ``strict_compatible``: the
    compatibility criteria of a ``mapped`` row (module docstring; the shares are
    means over the runs), ``None`` for ``old`` and ``new``.

    Examples
    --------
    >>> from repspace.engines.eval import BeirData
    >>> docs = np.random.default_rng(0).normal(size=(12, 4))
    >>> data = BeirData(tuple(f"d{i}" for i in range(12)), ("",) * 12, ("q0",), ("",), {"q0": {"d3": 1}}, "test", "toy")
    >>> r = upgrade_retrieval(docs[[3]], docs, docs[[3]] * 2, docs * 2, data, pairs=[6], methods=["ridge"], repeats=2)
    >>> row = r.row("mapped", "ridge", 6)
    >>> row.runs, round(row.ndcg_at_10, 3), row.ndcg_at_10_sd, row.trusted
    (2, 1.0, 0.0, None)
    """

    setting: str
    method: str | None
    n_pairs: int | None
    ndcg_at_10: float
    ndcg_at_10_sd: float
    recall_at_100: float
    runs: int
    seconds: float
    trusted: int | None = None
    compatible: bool | None = None
    update_gain: float | None = None
    relevant_closer: float | None = None
    irrelevant_farther: float | None = None
    strict_compatible: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape (field names as keys)."""
        return asdict(self)


@dataclass(frozen=True)
class UpgradeCheck:
    """The upgrade check's rows (``old``, ``new``, then ``mapped`` by method and pairs).

    Examples
    --------
    >>> from repspace.engines.eval import BeirData
    >>> docs = np.random.default_rng(0).normal(size=(12, 4))
    >>> data = BeirData(tuple(f"d{i}" for i in range(12)), ("",) * 12, ("q0",), ("",), {"q0": {"d3": 1}}, "test", "toy")
    >>> r = upgrade_retrieval(docs[[3]], docs, docs[[3]] * 2, docs * 2, data, pairs=[6, 50, "all"],
    ...                       methods=["procrustes", "ridge"], repeats=2)
    >>> r.n_documents, r.methods, r.pair_counts, r.skipped_pairs
    (12, ['procrustes', 'ridge'], [6, 12], [50])
    """

    n_documents: int
    n_queries: int
    rows: list[UpgradeRow]
    skipped_pairs: list[int] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)

    def row(self, setting: str, method: str | None = None, n_pairs: int | None = None) -> UpgradeRow:
        """The row of a setting (and method and pair count for ``mapped``)."""
        for r in self.rows:
            if (r.setting, r.method, r.n_pairs) == (setting, method, n_pairs):
                return r
        raise KeyError((setting, method, n_pairs))

    @property
    def pair_counts(self) -> list[int]:
        """The numbers of paired documents the maps were fitted on, ascending."""
        return sorted({r.n_pairs for r in self.rows if r.n_pairs is not None})

    @property
    def methods(self) -> list[str]:
        """The map methods, in report order."""
        seen = {r.method for r in self.rows if r.method is not None}
        return [m for m in UPGRADE_METHODS if m in seen]

    def to_dict(self) -> dict[str, Any]:
        """``{"n_documents", "n_queries", "rows": [...], "skipped_pairs", "info"}``."""
        return {"n_documents": self.n_documents, "n_queries": self.n_queries,
                "rows": [r.to_dict() for r in self.rows], "skipped_pairs": list(self.skipped_pairs),
                "info": dict(self.info)}


def parse_pairs(spec: str | Sequence[int | str]) -> list[int | str]:
    """``"100,300,1000,all"`` (or a list) as positive integers and ``"all"``, in the order given.

    Examples
    --------
    >>> parse_pairs("100, 300,all")
    [100, 300, 'all']
    >>> parse_pairs("0")
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: pairs must be positive integers or 'all', not '0'
    """
    items = spec.split(",") if isinstance(spec, str) else list(spec)
    out: list[int | str] = []
    for item in items:
        text = str(item).strip()
        if text == "all":
            out.append("all")
            continue
        if isinstance(item, bool) or not text.isdecimal() or int(text) < 1:
            raise InputError(f"pairs must be positive integers or 'all', not {text!r}")
        out.append(int(text))
    if not out:
        raise InputError("pairs must name at least one count")
    return out


def upgrade_retrieval(
    queries_old: Any,
    docs_old: Any,
    queries_new: Any,
    docs_new: Any,
    data: BeirData,
    *,
    pairs: str | Sequence[int | str] = (100, 300, 1000, "all"),
    methods: Sequence[str] = ("procrustes", "ridge", "unsupervised"),
    repeats: int = 3,
    seed: int = 0,
    index: str | None = None,
    restarts: int = 3,
    progress: Progress | None = None,
) -> UpgradeCheck:
    """Retrieval quality of the old model, the new one re-indexed, and new queries mapped into the old index.

    Parameters
    ----------
    queries_old, docs_old : arrays
        The old model's query vectors (one row per ``data.query_ids``) and
        document vectors (one row per ``data.corpus_ids``).
    queries_new, docs_new : arrays
        The same from the new model (its dimension may differ).
    data : BeirData
        Ids and judgements.
    pairs : str or sequence
        Documents to fit each map on: counts and ``"all"``; counts not below
        the corpus size are skipped (``skipped_pairs``), ``all`` is the corpus.
    methods : sequence of str
        Of :data:`UPGRADE_METHODS`.
    repeats : int
        Seeded samples per count below the corpus size.
    seed : int
    index : str, optional
        Search index spec of :func:`~repspace.engines.eval.retrieval_from_vectors`.
    restarts : int
        Starts of each ``unsupervised`` fit (``Unsupervised(n_restarts=...)``:
        the best objective is kept, and the fit is trusted only when another
        start reached the same pairing).
    progress : Progress, optional
        ``progress("maps", done, total)`` after each fit.

    Returns
    -------
    UpgradeCheck

    Examples
    --------
    The new model here is the old one scaled by 2, so every map recovers the old index's ranking:

    >>> from repspace.engines.eval import BeirData
    >>> docs = np.random.default_rng(0).normal(size=(12, 4))
    >>> data = BeirData(tuple(f"d{i}" for i in range(12)), ("",) * 12, ("q0",), ("",), {"q0": {"d3": 1}}, "test", "toy")
    >>> r = upgrade_retrieval(docs[[3]], docs, docs[[3]] * 2, docs * 2, data, pairs=[6, "all"],
    ...                       methods=["procrustes"], repeats=2)
    >>> [(row.setting, row.n_pairs, round(row.ndcg_at_10, 3)) for row in r.rows]
    [('old', None, 1.0), ('new', None, 1.0), ('mapped', 6, 1.0), ('mapped', 12, 1.0)]
    """
    from repspace.engines.align import Procrustes, Relative, RidgeMap, Unsupervised
    from repspace.engines.analyze import pair_criterion

    t_start = time.perf_counter()
    qo, do, qn, dn = (np.asarray(a, dtype=np.float32) for a in (queries_old, docs_old, queries_new, docs_new))
    for name, arr in (("queries_old", qo), ("docs_old", do), ("queries_new", qn), ("docs_new", dn)):
        if arr.ndim != 2:
            raise InputError(f"{name} must be a 2-D array, not shape {arr.shape}")
    if len(do) != len(dn) or len(do) != data.n_documents:
        raise InputError(f"{len(do)} old and {len(dn)} new document vectors for {data.n_documents} documents")
    if qo.shape[1] != do.shape[1] or qn.shape[1] != dn.shape[1]:
        raise InputError("each model's queries and documents must have the same dimension")
    if not methods:
        raise InputError(f"name at least one method of: {', '.join(UPGRADE_METHODS)}")
    for m in methods:
        check_choice(m, "an upgrade method", UPGRADE_METHODS)
    check_scalar(repeats, "repeats", int, low=1)
    n = data.n_documents
    counts: list[int] = []
    skipped: list[int] = []
    for p in parse_pairs(pairs):
        c = n if p == "all" else int(p)
        if p != "all" and c >= n:
            skipped.append(c)
        elif c not in counts:
            counts.append(c)
    if any(c < 10 for c in counts) and "unsupervised" in methods:
        raise InputError("the unsupervised map needs at least 10 documents from each side")

    def score(q: np.ndarray, d: np.ndarray) -> dict[str, float]:
        return retrieval_from_vectors(q, d, data, index=index)

    relevant = qrels_matrix(data)
    total = len(methods) * sum(1 if c == n else repeats for c in counts)
    done = 0
    rows: list[UpgradeRow] = []
    for setting, q, d in (("old", qo, do), ("new", qn, dn)):
        t0 = time.perf_counter()
        s = score(q, d)
        rows.append(UpgradeRow(setting, None, None, s["ndcg_at_10"], 0.0, s["recall_at_100"], 1,
                               time.perf_counter() - t0))
    for method in methods:
        for c in counts:
            runs = 1 if c == n else repeats
            t0 = time.perf_counter()
            ndcg, recall, trusted, pairs = [], [], 0, []
            for r in range(runs):
                rng = np.random.default_rng([seed, c, r])
                take = np.arange(n) if c == n else np.sort(rng.choice(n, c, replace=False))
                if method == "relative":
                    rel = Relative(center=True).fit(dn[take], do[take])
                    q, d = rel.transform_source(qn), rel.transform_target(do)
                else:
                    if method == "unsupervised":  # the same documents, their pairing withheld
                        model: Any = Unsupervised(n_restarts=restarts, random_state=seed + r)
                        model.fit(dn[take], do[rng.permutation(take)])
                        trusted += bool(model.trustworthy_)
                    else:
                        model = (Procrustes() if method == "procrustes" else RidgeMap()).fit(dn[take], do[take])
                    q, d = model.transform(qn), do
                s = score(q, d)
                pairs.append(pair_criterion(qo if method != "relative" else rel.transform_target(qo), q, d,
                                            relevant))
                ndcg.append(s["ndcg_at_10"])
                recall.append(s["recall_at_100"])
                done += 1
                if progress is not None:
                    progress("maps", done, total)
            rows.append(UpgradeRow("mapped", method, c, float(np.mean(ndcg)),
                                   float(np.std(ndcg, ddof=1)) if runs > 1 else 0.0, float(np.mean(recall)), runs,
                                   time.perf_counter() - t0,
                                   trusted if method == "unsupervised" and restarts > 1 else None,
                                   **_criteria(rows[0].ndcg_at_10, rows[1].ndcg_at_10, float(np.mean(ndcg)), pairs)))
    info = {"repeats": repeats, "restarts": restarts, "seed": seed, "index": index or "exact",
            "methods": list(methods),
            "seconds": time.perf_counter() - t_start}
    return UpgradeCheck(n, data.n_queries, rows, skipped, info)


def qrels_matrix(data: BeirData) -> np.ndarray:
    """The judgements as a queries × documents boolean matrix (a gain above 0 is relevant), rows and columns in
    ``data.query_ids`` and ``data.corpus_ids`` order.

    Examples
    --------
    >>> from repspace.engines.eval import BeirData
    >>> data = BeirData(("d0", "d1"), ("", ""), ("q0",), ("",), {"q0": {"d1": 2, "d0": 0}}, "test", "toy")
    >>> qrels_matrix(data).tolist()
    [[False, True]]
    """
    col = {d: j for j, d in enumerate(data.corpus_ids)}
    out = np.zeros((data.n_queries, data.n_documents), dtype=bool)
    for i, q in enumerate(data.query_ids):
        for doc, gain in data.qrels.get(q, {}).items():
            if gain > 0 and doc in col:
                out[i, col[doc]] = True
    return out


def _criteria(old: float, new: float, mapped: float, pairs: list[Any]) -> dict[str, Any]:
    """A mapped row's compatibility fields: the empirical criterion on the mean nDCG@10, the pair shares' means."""
    from repspace.engines.analyze import compatibility

    c = compatibility(old, mapped, pairs[0], new=new)
    return {"compatible": c.compatible, "update_gain": c.update_gain,
            "relevant_closer": float(np.mean([p.relevant_closer for p in pairs])),
            "irrelevant_farther": float(np.mean([p.irrelevant_farther for p in pairs])),
            "strict_compatible": all(p.strict for p in pairs)}


def upgrade_check(
    old: str,
    new: str,
    data: str | Path | BeirData,
    *,
    pairs: str | Sequence[int | str] = (100, 300, 1000, "all"),
    methods: Sequence[str] = ("procrustes", "ridge", "unsupervised"),
    repeats: int = 3,
    seed: int = 0,
    split: str = "test",
    index: str | None = None,
    batch_size: int = 64,
    restarts: int = 3,
    progress: Progress | None = None,
) -> UpgradeCheck:
    """Embed ``data`` with the ``old`` and ``new`` encoders and measure whether mapped new queries can search the old index.

    Parameters
    ----------
    old, new : str
        Encoder specs (:func:`repspace.engines.encoders.get_encoder`), e.g. ``minilm``
        and ``e5`` or ``model2vec:<folder>``.
    data : str, Path or BeirData
        A BEIR folder (corpus, queries, qrels) or loaded data.
    pairs, methods, repeats, seed, index, restarts
        As :func:`repspace.workflows.upgrade.upgrade_retrieval`.
    split : str
        The qrels split of a folder.
    batch_size : int
        Texts per forward pass.
    progress : callable, optional
        ``progress(phase, done, total)`` while embedding and fitting.

    Returns
    -------
    UpgradeCheck
        Its ``info`` holds both encoders' provenance and the data set's name.

    Examples
    --------
    Two encoders giving the same space: the ``relative`` map carries new queries into the old index losslessly.

    >>> from repspace.engines.eval import BeirData
    >>> data = BeirData(("d0", "d1", "d2"), ("a cat sleeps on the mat", "stocks fell sharply", "the team won"),
    ...                 ("q0", "q1"), ("where does the cat sleep", "stock market news"),
    ...                 {"q0": {"d0": 1}, "q1": {"d1": 1}}, "test", "toy")
    >>> r = upgrade_check("static", "static", data, pairs=["all"], methods=["relative"])
    >>> r.row("mapped", "relative", 3).ndcg_at_10 == r.row("old").ndcg_at_10, r.info["data"]
    (True, 'toy')
    """
    from repspace.engines.encoders import get_encoder

    if not isinstance(data, BeirData):
        data = load_beir(data, split)
    encoders = {"old": get_encoder(old), "new": get_encoder(new)}
    docs, queries = list(data.corpus_texts), list(data.query_texts)
    vectors: dict[str, Any] = {}
    for side, enc in encoders.items():
        for what, texts, fn in (("documents", docs, enc.encode), ("queries", queries, enc.encode_queries)):
            vectors[f"{what}_{side}"] = fn(texts, batch_size=batch_size,
                                           progress=relabel(progress, f"{side} {what}"))
    r = upgrade_retrieval(vectors["queries_old"], vectors["documents_old"], vectors["queries_new"],
                          vectors["documents_new"], data, pairs=pairs, methods=methods, repeats=repeats, seed=seed,
                          index=index, restarts=restarts, progress=progress)
    r.info.update(data=data.name, split=data.split, old=encoders["old"].provenance(),
                  new=encoders["new"].provenance())
    return r
