"""Compatibility over a chain of model updates ``m0 → m1 → … → m(T−1)`` (CoReS, S055; Shen et al.'s criteria).

For a retrieval data set embedded by every model of the chain, :func:`compat_chain` fills the lower triangle of a
``T × T`` matrix: cell ``(i, j)``, ``j < i``, is the retrieval metric (nDCG@10) of model ``i``'s queries against
model ``j``'s index (*cross-model retrieval*: the old index kept, the new queries carried to it), and the diagonal
``(i, i)`` model ``i``'s queries on its own index (the *re-indexed baseline*). How new queries reach an old index:

``procrustes`` / ``ridge``
    a map from model ``i``'s space into model ``j``'s (:class:`~repspace.engines.align.Procrustes`,
    :class:`~repspace.engines.align.RidgeMap`) fitted on the documents both embedded (the whole corpus), as
    ``repspace upgrade-check`` does;
``raw``
    none (the models must share a dimension: layers of one encoder);
``head``
    every model through its own d-simplex compatibility head (:class:`~repspace.engines.analyze.CompatibilityHead`,
    CoReS), all heads fitted against the same fixed prototypes on a share of the queries as classes (each query
    with its relevant documents), and every cell, the diagonal included, measured on the *other* queries.

For each pair ``j < i`` the criteria of :func:`~repspace.engines.analyze.compatibility`: compatible when cell
``(i, j)`` beats the old model's own ``(j, j)``, the update gain ``((i, j) − (j, j)) / ((i, i) − (j, j))``, and
the strict per-pair shares (:func:`~repspace.engines.analyze.pair_criterion`). CoReS's two summaries of a chain:
``ac``, the share of compatible pairs (its *average compatibility*), and ``am``, the mean of the lower triangle
with the diagonal (its *average multi-model accuracy*). *Transitivity*: for every triple ``j < k < i`` with
``i`` compatible with ``k`` and ``k`` with ``j``, whether ``i`` is compatible with ``j``.

Examples
--------
>>> from repspace.engines.eval import BeirData
>>> rng = np.random.default_rng(0)
>>> docs = rng.normal(size=(30, 6))
>>> data = BeirData(tuple(f"d{i}" for i in range(30)), ("",) * 30, ("q0", "q1", "q2"), ("",) * 3,
...                 {"q0": {"d1": 1}, "q1": {"d5": 1}, "q2": {"d9": 1}}, "test", "toy")
>>> q = docs[[1, 5, 9]] + 0.3 * rng.normal(size=(3, 6))
>>> R = np.linalg.qr(rng.normal(size=(6, 6)))[0]
>>> chain = compat_chain([q, q @ R, q @ R @ R], [docs, docs @ R, docs @ R @ R], data, method="procrustes")
>>> np.round(chain.matrix, 3).tolist()
[[0.81, nan, nan], [0.81, 0.81, nan], [0.81, 0.81, 0.81]]
>>> chain.ac, chain.transitive  # rotations of one model: every cell equal, none above the old one
(0.0, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.checks import check_choice, check_scalar
from repspace.core.errors import InputError
from repspace.core.progress import Progress, relabel

if TYPE_CHECKING:
    from pathlib import Path

    from repspace.engines.analyze import Compatibility
    from repspace.engines.eval import BeirData

__all__ = ["CHAIN_METHODS", "ChainPair", "ChainTriple", "CompatChain", "compat_chain", "compat_chain_encoders"]

#: How a new model's queries reach an old model's index.
CHAIN_METHODS = ("procrustes", "ridge", "raw", "head")


@dataclass(frozen=True)
class ChainPair:
    """The criteria of model ``new`` (queries) against model ``old`` (index), ``old < new`` in the chain.

    >>> from repspace.engines.analyze import PairCriterion, compatibility
    >>> p = ChainPair(1, 0, compatibility(0.3, 0.35, PairCriterion(1.0, 1.0, 1, 1, True), new=0.4))
    >>> d = p.to_dict()
    >>> d["new_model"], d["old_model"], d["compatible"], round(d["update_gain"], 2)
    (1, 0, True, 0.5)
    """

    new: int
    old: int
    compatibility: Compatibility

    def to_dict(self) -> dict[str, Any]:
        """``{"new_model", "old_model"}`` (chain positions) and
        :meth:`~repspace.engines.analyze.Compatibility.to_dict` (whose ``old``, ``cross``, ``new`` are the metric
        values of cells ``(old, old)``, ``(new, old)`` and ``(new, new)``)."""
        return {"new_model": self.new, "old_model": self.old, **self.compatibility.to_dict()}


@dataclass(frozen=True)
class ChainTriple:
    """Transitivity on ``old < middle < new``: given ``new ~ middle`` and ``middle ~ old``, is ``new ~ old``?

    ``holds`` is False only when both premises hold and the conclusion does not.

    >>> ChainTriple(2, 1, 0, True, True, False).holds, ChainTriple(2, 1, 0, False, True, False).holds
    (False, True)
    """

    new: int
    middle: int
    old: int
    new_middle: bool
    middle_old: bool
    new_old: bool

    @property
    def holds(self) -> bool:
        """Not (both premises and not the conclusion)."""
        return not (self.new_middle and self.middle_old) or self.new_old

    def to_dict(self) -> dict[str, Any]:
        """The fields by name and ``holds``."""
        return {"new": self.new, "middle": self.middle, "old": self.old, "new_middle": self.new_middle,
                "middle_old": self.middle_old, "new_old": self.new_old, "holds": self.holds}


@dataclass(frozen=True, eq=False)
class CompatChain:
    """Cross-model retrieval over a chain of models and the compatibility criteria along it.

    Attributes
    ----------
    models : list of str
        The models' names, oldest first.
    method : str
        Of :data:`CHAIN_METHODS`.
    metric : str
        ``ndcg_at_10``.
    matrix : ndarray of shape (T, T)
        ``matrix[i, j]``: model ``i``'s queries on model ``j``'s index (``j ≤ i``; NaN above the diagonal).
    pairs : list of ChainPair
        Every ``j < i``, by ``i`` then ``j``.
    triples : list of ChainTriple
        Every ``j < k < i``.
    n_queries, n_documents : int
        Queries the cells were measured on (for ``head`` the held-out ones) and documents.
    info : dict
        ``n_train_queries`` (``head``), ``l2``, ``test_fraction``, ``seed`` where they apply.

    Examples
    --------
    >>> from repspace.engines.eval import BeirData
    >>> docs = np.random.default_rng(0).normal(size=(12, 4))
    >>> data = BeirData(tuple(f"d{i}" for i in range(12)), ("",) * 12, ("q0",), ("",), {"q0": {"d3": 1}})
    >>> c = compat_chain([docs[[3]], docs[[3]]], [docs, docs], data, method="raw", names=["v1", "v2"])
    >>> d = c.to_dict()
    >>> d["matrix"], d["pairs"][0]["compatible"], d["am"]
    ([[1.0, None], [1.0, 1.0]], False, 1.0)
    """

    models: list[str]
    method: str
    metric: str
    matrix: np.ndarray = field(repr=False)
    pairs: list[ChainPair] = field(repr=False)
    triples: list[ChainTriple] = field(repr=False)
    n_queries: int
    n_documents: int
    info: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def ac(self) -> float:
        """CoReS's average compatibility: the share of pairs ``j < i`` that are compatible."""
        return float(np.mean([p.compatibility.compatible for p in self.pairs]))

    @property
    def am(self) -> float:
        """CoReS's average multi-model accuracy: the mean of the lower triangle with the diagonal."""
        return float(self.matrix[np.tril_indices(len(self.models))].mean())

    @property
    def transitive(self) -> bool:
        """Every triple :attr:`ChainTriple.holds` (True for a chain of two)."""
        return all(t.holds for t in self.triples)

    def to_dict(self) -> dict[str, Any]:
        """``{models, method, metric, matrix (None above the diagonal), pairs, triples, ac, am, transitive,
        n_queries, n_documents, info}``."""
        T = len(self.models)
        return {"models": list(self.models), "method": self.method, "metric": self.metric,
                "matrix": [[float(self.matrix[i, j]) if j <= i else None for j in range(T)] for i in range(T)],
                "pairs": [p.to_dict() for p in self.pairs], "triples": [t.to_dict() for t in self.triples],
                "ac": self.ac, "am": self.am, "transitive": self.transitive, "n_queries": self.n_queries,
                "n_documents": self.n_documents, "info": dict(self.info)}


def _arrays(queries: Sequence[Any], docs: Sequence[Any], data: BeirData) -> tuple[list[np.ndarray], list[np.ndarray]]:
    if isinstance(queries, np.ndarray) and queries.ndim == 3:
        queries = list(queries)
    if isinstance(docs, np.ndarray) and docs.ndim == 3:
        docs = list(docs)
    if len(queries) != len(docs):
        raise InputError(f"{len(queries)} query arrays for {len(docs)} document arrays: one of each per model")
    if len(queries) < 2:
        raise InputError("a chain of updates needs at least two models")
    qs = [np.asarray(q, dtype=np.float32) for q in queries]
    ds = [np.asarray(d, dtype=np.float32) for d in docs]
    for t, (q, d) in enumerate(zip(qs, ds, strict=True)):
        if q.ndim != 2 or d.ndim != 2 or q.shape[1] != d.shape[1]:
            raise InputError(f"model {t}: queries {q.shape} and documents {d.shape} must be 2-d of one dimension")
        if len(q) != data.n_queries or len(d) != data.n_documents:
            raise InputError(f"model {t}: {len(q)} query and {len(d)} document vectors for {data.n_queries} "
                             f"queries and {data.n_documents} documents")
        if not (np.isfinite(q).all() and np.isfinite(d).all()):
            raise InputError(f"model {t} has NaN or infinite vectors")
    return qs, ds


def _head_split(data: BeirData, test_fraction: float, seed: int
                ) -> tuple[np.ndarray, np.ndarray]:
    """Held-out query positions and the training ones (the classes), both ascending."""
    n_test = int(round(test_fraction * data.n_queries))
    if n_test < 1 or data.n_queries - n_test < 2:
        raise InputError(f"{data.n_queries} queries cannot be split into two training classes and a test query")
    order = np.random.default_rng(seed).permutation(data.n_queries)
    return np.sort(order[:n_test]), np.sort(order[n_test:])


def _through_heads(qs: list[np.ndarray], ds: list[np.ndarray], rel: np.ndarray, train: np.ndarray, l2: float
                   ) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Every model's queries and documents through its own head, all heads on the same classes and prototypes."""
    from repspace.engines.analyze import CompatibilityHead

    docs_of = [np.flatnonzero(rel[i]) for i in train.tolist()]
    y = np.concatenate([train] + [np.full(len(d), i) for i, d in zip(train.tolist(), docs_of, strict=True)])
    heads: list[Any] = []
    for q, d in zip(qs, ds, strict=True):
        X = np.vstack([q[train]] + [d[rows] for rows in docs_of]).astype(np.float64)
        head = CompatibilityHead(l2=l2, classes=None if not heads else heads[0].classes_).fit(X, y)
        heads.append(head)
    return ([np.asarray(h.transform(q), np.float32) for h, q in zip(heads, qs, strict=True)],
            [np.asarray(h.transform(d), np.float32) for h, d in zip(heads, ds, strict=True)])


def compat_chain(queries: Sequence[Any], docs: Sequence[Any], data: BeirData, *, method: str = "procrustes",
                 names: Sequence[str] | None = None, test_fraction: float = 1 / 3, l2: float | None = None,
                 seed: int = 0, index: str | None = None, progress: Progress | None = None) -> CompatChain:
    """Cross-model retrieval of every newer model's queries against every older model's index, beside each
    model re-indexed, with the compatibility criteria along the chain.

    Parameters
    ----------
    queries, docs : sequences of arrays
        Per model, oldest first: its query vectors (one row per ``data.query_ids``) and document vectors (one
        row per ``data.corpus_ids``); dimensions may differ between models except for ``raw``.
    data : BeirData
        Ids and judgements.
    method : str
        Of :data:`CHAIN_METHODS` (module docstring).
    names : sequence of str, optional
        The models' names (default ``m0``, ``m1`` …).
    test_fraction, l2, seed
        ``head`` only: the share of queries held out (the rest are the heads' classes), the heads' L2 penalty
        (default :data:`~repspace.engines.analyze.compat_head.DEFAULT_L2`) and the split's seed.
    index : str, optional
        Search index spec of :func:`~repspace.engines.eval.retrieval_from_vectors` (default exact).
    progress : Progress, optional
        ``progress("cells", done, total)`` after each cell.

    Returns
    -------
    CompatChain

    Raises
    ------
    InputError
        Fewer than two models, arrays of the wrong shape, names of another length, ``raw`` with different
        dimensions, a bad method or split.

    Examples
    --------
    >>> from repspace.engines.eval import BeirData
    >>> docs = np.random.default_rng(0).normal(size=(12, 4))
    >>> data = BeirData(tuple(f"d{i}" for i in range(12)), ("",) * 12, ("q0",), ("",), {"q0": {"d3": 1}})
    >>> compat_chain([docs[[3]], docs[[3]] * 2], [docs, docs * 2], data, method="ridge").matrix.shape
    (2, 2)
    """
    from repspace.engines.align import Procrustes, RidgeMap
    from repspace.engines.analyze import compatibility, pair_criterion
    from repspace.engines.analyze.compat_head import DEFAULT_L2
    from repspace.engines.eval import retrieval_from_vectors
    from repspace.workflows.upgrade import qrels_matrix

    check_choice(method, "the chain method", CHAIN_METHODS)
    qs, ds = _arrays(queries, docs, data)
    T = len(qs)
    labels = [f"m{t}" for t in range(T)] if names is None else [str(x) for x in names]
    if len(labels) != T:
        raise InputError(f"{len(labels)} names for {T} models")
    if method == "raw" and len({q.shape[1] for q in qs}) > 1:
        raise InputError(f"the raw chain needs one dimension for every model, got {[q.shape[1] for q in qs]}: "
                         "use a map (procrustes, ridge) or heads")
    rel = qrels_matrix(data)
    info: dict[str, Any] = {"index": index or "exact"}
    held = data
    if method == "head":
        from dataclasses import replace

        test_fraction = check_scalar(test_fraction, "test_fraction", float, low=0.0, high=1.0, include="neither")
        l2 = DEFAULT_L2 if l2 is None else check_scalar(l2, "l2", float, low=0.0, include="neither")
        seed = check_scalar(seed, "seed", int, low=0)
        test, train = _head_split(data, test_fraction, seed)
        qs, ds = _through_heads(qs, ds, rel, train, l2)
        qs = [q[test] for q in qs]
        rel = rel[test]
        ids = [data.query_ids[i] for i in test.tolist()]
        held = replace(data, query_ids=tuple(ids), query_texts=tuple(data.query_texts[i] for i in test.tolist()),
                       qrels={q: data.qrels[q] for q in ids if q in data.qrels})
        info.update(n_train_queries=len(train), test_fraction=test_fraction, l2=l2, seed=seed)

    def score(q: np.ndarray, d: np.ndarray) -> float:
        return float(retrieval_from_vectors(q, d, held, index=index)["ndcg_at_10"])

    total, done = T * (T + 1) // 2, 0
    M = np.full((T, T), np.nan)
    carried: dict[tuple[int, int], np.ndarray] = {}
    for i in range(T):
        for j in range(i + 1):
            if j == i or method in ("raw", "head"):
                q = qs[i]
            else:
                model = (Procrustes() if method == "procrustes" else RidgeMap()).fit(ds[i], ds[j])
                q = np.asarray(model.transform(qs[i]), np.float32)
            carried[(i, j)] = q
            M[i, j] = score(q, ds[j])
            done += 1
            if progress is not None:
                progress("cells", done, total)
    pairs: list[ChainPair] = []
    for i in range(T):
        for j in range(i):
            crit: Compatibility = compatibility(M[j, j], M[i, j], pair_criterion(qs[j], carried[(i, j)], ds[j], rel),
                                                new=M[i, i])
            pairs.append(ChainPair(i, j, crit))
    ok = {(p.new, p.old): p.compatibility.compatible for p in pairs}
    triples = [ChainTriple(i, k, j, ok[(i, k)], ok[(k, j)], ok[(i, j)])
               for i in range(T) for k in range(i) for j in range(k)]
    return CompatChain(labels, method, "ndcg_at_10", M, pairs, triples, held.n_queries, data.n_documents, info)


def compat_chain_encoders(data: str | Path | BeirData, *, encoders: Sequence[str] | None = None,
                          layered: str | None = None, layers: Sequence[int] | None = None, split: str = "test",
                          batch_size: int = 64, progress: Progress | None = None, **options: Any) -> CompatChain:
    """Embed a BEIR data set with every model of a chain, then :func:`compat_chain`.

    The chain is either ``encoders`` (specs of :func:`~repspace.engines.encoders.get_encoder`, oldest first,
    e.g. ``static``, ``minilm``) or ``layers`` of one ``layered`` encoder (``hf-layers:minilm``: one forward pass
    gives every layer, mean-pooled) as successive versions. ``options`` go to :func:`compat_chain`.

    Examples
    --------
    >>> from repspace.engines.eval import BeirData
    >>> data = BeirData(("d0", "d1", "d2"), ("a cat sleeps on the mat", "stocks fell sharply", "the team won"),
    ...                 ("q0", "q1"), ("where does the cat sleep", "stock market news"),
    ...                 {"q0": {"d0": 1}, "q1": {"d1": 1}}, "test", "toy")
    >>> c = compat_chain_encoders(data, encoders=["static", "static"], method="raw")
    >>> c.models, c.matrix[1, 0] == c.matrix[0, 0]
    (['static', 'static'], np.True_)
    """
    from repspace.engines.encoders import get_encoder
    from repspace.engines.eval import BeirData, load_beir

    if (encoders is None) == (layers is None):
        raise InputError("name the chain either by encoders or by layers of one layered encoder")
    if not isinstance(data, BeirData):
        data = load_beir(data, split)
    docs, queries = list(data.corpus_texts), list(data.query_texts)
    if layers is not None:
        enc = get_encoder(layered or "hf-layers:minilm")
        chosen = [int(x) for x in layers]
        q = enc.encode_layers(queries, layers=chosen, batch_size=batch_size, progress=relabel(progress, "queries"))
        d = enc.encode_layers(docs, layers=chosen, batch_size=batch_size, progress=relabel(progress, "documents"))
        names = [f"{enc.spec}@{layer}" for layer in chosen]
        r = compat_chain(list(q), list(d), data, names=names, progress=progress, **options)
        r.info.update(encoder=enc.provenance(), layers=chosen)
    else:
        assert encoders is not None
        qs, ds = [], []
        for spec in encoders:
            enc = get_encoder(spec)
            qs.append(enc.encode_queries(queries, batch_size=batch_size, progress=relabel(progress, f"{spec} queries")))
            ds.append(enc.encode(docs, batch_size=batch_size, progress=relabel(progress, f"{spec} documents")))
        r = compat_chain(qs, ds, data, names=list(encoders), progress=progress, **options)
    r.info.update(data=data.name, split=data.split)
    return r
