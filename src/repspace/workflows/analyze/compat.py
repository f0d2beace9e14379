"""The compatibility head evaluated: Shen et al.'s criteria before and after fitting d-simplex heads on two models.

:func:`compat_head_spaces` takes two stored spaces of the same items (an old and a new model) and a metadata field
of classes: it holds out a share of each class's items as queries, fits a
:class:`~repspace.engines.analyze.CompatibilityHead` on each model's vectors of the other items (the gallery, over
the same classes and so the same fixed prototypes), and measures same-label retrieval (mAP) of new queries against
the old gallery before (the raw spaces, when they have one dimension) and after (both through their heads).

:func:`compat_head_retrieval` does the same on a retrieval data set (arrays of both models' query and document
vectors, BEIR judgements): the classes are a share of the queries (each class: the query and its relevant
documents), and the criteria are measured on the *other* queries, unseen by the heads, with nDCG@10 over the whole
corpus (the open-set protocol of BCT and CoReS, whose test identities are not training classes).

Examples
--------
>>> from repspace.store import example_space
>>> rng = np.random.default_rng(0)
>>> y = np.repeat(np.arange(4), 10)
>>> base = 3 * rng.normal(size=(4, 6))[y] + rng.normal(size=(40, 6))
>>> meta = [{"c": int(v)} for v in y]
>>> old = example_space(vectors=base, name="old", metadata=meta)
>>> new = example_space(vectors=base @ rng.normal(size=(6, 6)), name="new", metadata=meta)
>>> r = compat_head_spaces(old, new, "c")
>>> r.n_classes, r.after.metric, r.after.cross > r.before.cross
(4, 'map', True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.engines.analyze import (
    Compatibility,
    CompatibilityHead,
    compatibility,
    label_retrieval,
    pair_criterion,
)
from repspace.engines.analyze.compat_head import DEFAULT_L2

if TYPE_CHECKING:
    from repspace.core.store import Space
    from repspace.engines.eval import BeirData

__all__ = ["CompatHeadCheck", "compat_head_retrieval", "compat_head_spaces"]

#: Share of each class's items (or of the queries) held out to measure the criteria on.
DEFAULT_TEST_FRACTION = 0.3


@dataclass(frozen=True)
class CompatHeadCheck:
    """Both criteria before and after the heads, for one old and one new model.

    ``before``: the raw spaces (None when their dimensions differ: new vectors cannot search the old index at
    all); ``after``: both through their heads. ``n_train``: rows the heads were fitted on; ``n_test``: queries
    the criteria were measured on.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> meta = [{"c": i % 3} for i in range(30)]
    >>> s = example_space(30, 4, metadata=meta)
    >>> sorted(compat_head_spaces(s, s, "c").to_dict())[:4]
    ['after', 'before', 'l2', 'label_field']
    """

    old: str
    new: str
    label_field: str
    n_classes: int
    n_train: int
    n_test: int
    l2: float
    before: Compatibility | None
    after: Compatibility

    def to_dict(self) -> dict[str, Any]:
        """``{"old", "new", "label_field", "n_classes", "n_train", "n_test", "l2", "before", "after"}``, the last
        two as :meth:`Compatibility.to_dict` (``before`` may be None)."""
        return {"old": self.old, "new": self.new, "label_field": self.label_field, "n_classes": self.n_classes,
                "n_train": self.n_train, "n_test": self.n_test, "l2": self.l2,
                "before": None if self.before is None else self.before.to_dict(), "after": self.after.to_dict()}


def _heads(Xo: np.ndarray, Xn: np.ndarray, y: np.ndarray, l2: float) -> tuple[CompatibilityHead, CompatibilityHead]:
    old = CompatibilityHead(l2=l2).fit(Xo, y)
    return old, CompatibilityHead(l2=l2, classes=old.classes_).fit(Xn, y)


def _vectors_by_id(space: Space, ids: list[str]) -> np.ndarray:
    snap = space.snapshot()
    row = {i: r for r, i in enumerate(snap.ids)}
    return np.asarray(snap.vectors[[row[i] for i in ids]], dtype=np.float64)


def compat_head_spaces(old: Space, new: Space, label_field: str, *, test_fraction: float = DEFAULT_TEST_FRACTION,
                       l2: float = DEFAULT_L2, seed: int = 0) -> CompatHeadCheck:
    """Fit compatibility heads on two stored spaces of the same labelled items and measure the criteria
    (same-label mAP) on held-out items, before and after.

    Parameters
    ----------
    old, new : Space
        The old model's space (the index) and the new one's; the items they share and that carry
        ``label_field`` in the old space are used.
    label_field : str
        A metadata field of classes (text, integers or booleans).
    test_fraction : float
        Share of each class's items held out as queries (at least one per class of two items or more).
    l2 : float
        The heads' L2 penalty.
    seed : int
        Seed of the held-out sample.

    Returns
    -------
    CompatHeadCheck

    Examples
    --------
    >>> from repspace.store import example_space
    >>> s = example_space(30, 4, metadata=[{"c": i % 3} for i in range(30)])
    >>> r = compat_head_spaces(s, s, "c", test_fraction=0.2)
    >>> r.n_train, r.n_test, r.before.compatible
    (24, 6, False)
    """
    from repspace.workflows.interpret import labelled

    check_scalar(test_fraction, "test_fraction", float, low=0.0, high=1.0, include="neither")
    ids, _, labels = labelled(old, label_field)
    shared = set(new.snapshot().ids)
    keep = [k for k, i in enumerate(ids) if i in shared]
    if not keep:
        raise InputError(f"spaces {old.name!r} and {new.name!r} share no item with field {label_field!r}")
    ids = [ids[k] for k in keep]
    y = labels[keep]
    Xo, Xn = _vectors_by_id(old, ids), _vectors_by_id(new, ids)
    rng = np.random.default_rng(seed)
    test = np.zeros(len(ids), dtype=bool)
    for c in sorted(set(y.tolist()), key=str):
        rows = np.flatnonzero(y == c)
        if len(rows) >= 2:
            take = max(1, int(round(test_fraction * len(rows))))
            test[rng.choice(rows, min(take, len(rows) - 1), replace=False)] = True
    train = ~test
    if len(set(y[train].tolist())) < 2 or not test.any():
        raise InputError(f"field {label_field!r} needs at least two classes with two items or more each")
    ho, hn = _heads(Xo[train], Xn[train], y[train], l2)
    yq, yg = y[test], y[train]

    def crit(qo: np.ndarray, qn: np.ndarray, go: np.ndarray, gn: np.ndarray) -> Compatibility:
        rel = yq[:, None] == yg[None, :]
        m_old, m_cross, m_new = (label_retrieval(q, g, yq, yg).map for q, g in ((qo, go), (qn, go), (qn, gn)))
        return compatibility(m_old, m_cross, pair_criterion(qo, qn, go, rel), new=m_new, metric="map")

    before = (crit(Xo[test], Xn[test], Xo[train], Xn[train]) if Xo.shape[1] == Xn.shape[1] else None)
    after = crit(ho.transform(Xo[test]), hn.transform(Xn[test]), ho.transform(Xo[train]), hn.transform(Xn[train]))
    return CompatHeadCheck(old.name, new.name, label_field, len(ho.classes_), int(train.sum()), int(test.sum()),
                           float(l2), before, after)


def compat_head_retrieval(queries_old: Any, docs_old: Any, queries_new: Any, docs_new: Any, data: BeirData, *,
                          test_fraction: float = DEFAULT_TEST_FRACTION, l2: float = DEFAULT_L2,
                          seed: int = 0) -> CompatHeadCheck:
    """Fit compatibility heads with a share of a retrieval set's queries as classes and measure the criteria
    (nDCG@10 over the whole corpus) on the other queries, before and after.

    Each training class is one query: its own vector and those of its relevant documents (a document relevant
    to several training queries is a row of each). The held-out queries and the corpus then go through the heads.

    Examples
    --------
    >>> from repspace.engines.eval import BeirData
    >>> rng = np.random.default_rng(0)
    >>> docs = rng.normal(size=(40, 8))
    >>> data = BeirData(tuple(f"d{i}" for i in range(40)), ("",) * 40, tuple(f"q{i}" for i in range(10)),
    ...                 ("",) * 10, {f"q{i}": {f"d{4 * i}": 1, f"d{4 * i + 1}": 1} for i in range(10)})
    >>> q = docs[::4] + docs[1::4]
    >>> r = compat_head_retrieval(q, docs, q @ np.eye(8)[::-1], docs @ np.eye(8)[::-1], data)
    >>> r.n_classes, r.n_test, r.after.metric
    (7, 3, 'ndcg_at_10')
    """
    from dataclasses import replace

    from repspace.engines.eval import retrieval_from_vectors
    from repspace.workflows.upgrade import qrels_matrix

    check_scalar(test_fraction, "test_fraction", float, low=0.0, high=1.0, include="neither")
    qo, do, qn, dn = (np.asarray(a, dtype=np.float64) for a in (queries_old, docs_old, queries_new, docs_new))
    if len(qo) != data.n_queries or len(qn) != data.n_queries or len(do) != data.n_documents \
            or len(dn) != data.n_documents:
        raise InputError(f"{len(qo)}/{len(qn)} query and {len(do)}/{len(dn)} document vectors for "
                         f"{data.n_queries} queries and {data.n_documents} documents")
    n_test = int(round(test_fraction * data.n_queries))
    if n_test < 1 or data.n_queries - n_test < 2:
        raise InputError(f"{data.n_queries} queries cannot be split into two training classes and a test query")
    order = np.random.default_rng(seed).permutation(data.n_queries)
    test, train = np.sort(order[:n_test]), np.sort(order[n_test:])
    rel = qrels_matrix(data)
    rows_o, rows_n, y = [qo[train]], [qn[train]], [np.asarray(train)]
    for i in train.tolist():
        docs = np.flatnonzero(rel[i])
        rows_o.append(do[docs])
        rows_n.append(dn[docs])
        y.append(np.full(len(docs), i))
    ho, hn = _heads(np.vstack(rows_o), np.vstack(rows_n), np.concatenate(y), l2)
    ids = [data.query_ids[i] for i in test.tolist()]
    held = replace(data, query_ids=tuple(ids), query_texts=tuple(data.query_texts[i] for i in test.tolist()),
                   qrels={q: data.qrels[q] for q in ids if q in data.qrels})

    def crit(q_o: np.ndarray, q_n: np.ndarray, d_o: np.ndarray, d_n: np.ndarray) -> Compatibility:
        m = [retrieval_from_vectors(q, d, held)["ndcg_at_10"] for q, d in ((q_o, d_o), (q_n, d_o), (q_n, d_n))]
        return compatibility(m[0], m[1], pair_criterion(q_o, q_n, d_o, rel[test]), new=m[2])

    before = crit(qo[test], qn[test], do, dn) if qo.shape[1] == qn.shape[1] else None
    after = crit(ho.transform(qo[test]), hn.transform(qn[test]), ho.transform(do), hn.transform(dn))
    return CompatHeadCheck("old", "new", "query", len(ho.classes_), int(sum(len(a) for a in y)), len(test),
                           float(l2), before, after)
