"""The align workflow: a map from one stored space into another, fitted on shared items and scored on held-out ones.

Two spaces are joined on item id (:func:`repspace.workflows.compare.joined`); the
shared items are shuffled (seeded) and split into ``pairs`` to fit on and
``test`` held-out pairs to score on: ``top1``, ``mean_cosine`` and
``mean_rank``, with and without CSLS (:func:`repspace.engines.align.score_map`).
The ``unsupervised`` method is given the fitting items of the two spaces
*unpaired* (the target's rows shuffled independently) and must find the
pairing itself; since the true pairing is known here, the share of the pairs it
found that are right is reported (``params["matching_precision"]``).
With ``out``, the source space mapped into the target's coordinates is stored
as a derived space (the map is an :class:`~repspace.engines.transforms.Affine` step
of its chain, so text queries embedded by the source's encoder are mapped too).

Examples
--------
>>> from repspace.store import example_pair
>>> a, b = example_pair(400, 400)  # b: a rotated
>>> r = align_spaces(a.store, "a", "b", method="procrustes", pairs=200, test=100)
>>> r.scores.top1, r.n_train, r.n_test
(1.0, 200, 100)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.checks import check_choice, positive_int
from repspace.core.errors import InputError
from repspace.engines.align import (
    MapScores,
    Procrustes,
    Relative,
    RidgeMap,
    Unsupervised,
    score_map,
)
from repspace.workflows.compare import joined

if TYPE_CHECKING:
    from repspace.core.store import Space, Store

__all__ = ["METHODS", "Alignment", "align_spaces"]

#: The methods :func:`align_spaces` fits.
METHODS = ("procrustes", "ridge", "relative", "unsupervised")



def held_out_size(n: int) -> int:
    """The held-out items of ``n`` shared ones when none is asked for: a fifth, at least 1, at most 1,000."""
    return min(1000, max(1, n // 5))


def split_pairs(n: int, source: str, target: str, *, pairs: int | None, test: int | None, seed: int,
                min_train: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ``n`` shared items split at random (``seed``) into ``pairs`` to fit on (default: all but the
    held-out ones) and ``test`` held out (default :func:`held_out_size`); one error line when they do not fit.

    Examples
    --------
    >>> train, held = split_pairs(10, "a", "b", pairs=None, test=None, seed=0, min_train=2)
    >>> len(train), len(held), sorted([*train, *held]) == list(range(10))
    (8, 2, True)
    """
    n_test = held_out_size(n) if test is None else positive_int(test, "test")
    n_train = n - n_test if pairs is None else positive_int(pairs, "pairs")
    if n_train + n_test > n or n_train < min_train:
        raise InputError(f"{source!r} and {target!r} share {n} item(s): not enough for {n_train} pairs to fit on "
                         f"and {n_test} to test on")
    order = np.random.default_rng(seed).permutation(n)
    return order[:n_train], order[n_train:n_train + n_test]


@dataclass(frozen=True)
class Alignment:
    """A map between two spaces and how well it does on held-out pairs.

    Examples
    --------
    >>> from repspace.store import example_space, example_vectors
    >>> a = example_space(60, 4, name="a")
    >>> b = example_space(store=a.store, name="b", vectors=3 * example_vectors(60, 4) + 1)
    >>> r = align_spaces(a.store, "a", "b", method="ridge", test=20)
    >>> r.method, r.n_shared, r.n_train, r.n_test, r.scores.top1, r.params
    ('ridge', 60, 40, 20, 1.0, {'alpha': 0.001})
    >>> sorted(r.to_dict())[:4]
    ['csls', 'method', 'n_shared', 'n_test']
    """

    source: str
    target: str
    method: str
    n_shared: int
    n_train: int
    n_test: int
    scores: MapScores
    scores_csls: MapScores
    params: dict[str, Any] = field(default_factory=dict)
    out: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{"source", "target", "method", "n_shared", "n_train", "n_test", "plain", "csls", "params", "out"}``."""
        return {"source": self.source, "target": self.target, "method": self.method, "n_shared": self.n_shared,
                "n_train": self.n_train, "n_test": self.n_test, "plain": self.scores.to_dict(),
                "csls": self.scores_csls.to_dict(), "params": self.params, "out": self.out}


def align_spaces(store: Store, source: str, target: str, *, method: str = "procrustes", pairs: int | None = None,
                 test: int | None = None, seed: int = 0, out: str | None = None,
                 init: str = "profiles") -> Alignment:
    """Fit a map from ``source`` to ``target`` on shared items, score it on held-out ones, optionally store it.

    Parameters
    ----------
    store : Store
    source, target : str
        Space names; items are paired by id.
    method : ``procrustes``, ``ridge``, ``relative`` or ``unsupervised``
    pairs : int, optional
        Pairs to fit on (default: every shared item not held out); for
        ``unsupervised``, the items of each side it is given, unpaired.
    test : int, optional
        Held-out pairs (default: a fifth of the shared items, at most 1,000).
    seed : int
        Of the split.
    out : str, optional
        Store ``source`` mapped into ``target``'s coordinates as this new space
        (not ``relative``: relative representations live in a third space).
    init : ``profiles`` or ``gw``
        The initial matching of ``unsupervised`` (:class:`~repspace.engines.align.Unsupervised`).

    Examples
    --------
    ``b`` is ``a`` rotated: a rotation fitted on 40 shared items finds the other 20, and the
    mapped copy of ``a`` is stored in ``b``'s coordinates:

    >>> from repspace.store import example_pair
    >>> a, b = example_pair(60, 60, 4)
    >>> r = align_spaces(a.store, "a", "b", pairs=40, test=20, out="a-in-b")
    >>> r.scores.top1, r.scores_csls.top1, r.out
    (1.0, 1.0, 'a-in-b')
    >>> bool(np.allclose(a.store.space("a-in-b").vectors_of(["i3"]), b.vectors_of(["i3"]), atol=1e-5))
    True
    """
    check_choice(method, "method", METHODS)
    if out is not None and method == "relative":
        raise InputError("relative representations put both spaces in a third space; --out needs procrustes, "
                         "ridge or unsupervised")
    src, tgt = store.space(source), store.space(target)
    for sp in (src, tgt):
        sp.metric.require_vector_space(f"aligning {sp.name!r} ({method})")
    j = joined(src, tgt)
    n = len(j.ids)
    train, held = split_pairs(n, source, target, pairs=pairs, test=test, seed=seed, min_train=2)
    n_train, n_test = len(train), len(held)
    x, y = j.x.astype(np.float64), j.y.astype(np.float64)
    if method == "relative":
        rel = Relative().fit(x[train], y[train])
        a, b = rel.transform_source(x[held]), rel.transform_target(y[held])
        params: dict[str, Any] = {"anchors": int(n_train)}
        model: Any = rel
    elif method == "unsupervised":
        shuffle = np.random.default_rng(seed + 1).permutation(n_train)  # the pairing is withheld
        model = Unsupervised(init=init, random_state=seed).fit(x[train], y[train][shuffle])
        a, b = model.transform(x[held]), y[held]
        found = model.pairs_
        params = {"init": init, "n_pairs_found": len(found), "n_iter": int(model.n_iter_),
                  "objective": float(model.objective_),
                  "matching_precision": float(np.mean(shuffle[found[:, 1]] == found[:, 0])),
                  "n_restarts": int(model.n_restarts), "n_agree": int(model.n_agree_),
                  "mutual_rate": float(model.mutual_rate_), "trustworthy": model.trustworthy_,
                  "warnings": list(model.warnings_)}
    else:
        model = (Procrustes() if method == "procrustes" else RidgeMap()).fit(x[train], y[train])
        a, b = model.transform(x[held]), y[held]
        params = {"alpha": float(model.alpha_)} if method == "ridge" else {}
    plain, csls = score_map(a, b), score_map(a, b, csls=True)
    if out is not None:
        _store_mapped(store, src, tgt, out, model, method, n_train, seed)
    return Alignment(source, target, method, n, n_train, n_test, plain, csls, params, out)


def _store_mapped(store: Store, src: Space, tgt: Space, out: str, model: Any, method: str, n_train: int,
                  seed: int) -> Space:
    from repspace.engines.transforms import Affine
    from repspace.workflows.transform import write_derived

    # (x − μx)·W + μy = x·W + (μy − μx·W): one affine step
    step = Affine.from_map(model.W_, model.mean_y_ - model.mean_x_ @ model.W_)
    info = tgt.info()
    derived_from = {"space": src.name, "uid": src.uid, "generation": src.info().generation,
                    "aligned_to": {"space": tgt.name, "uid": info.uid, "generation": info.generation},
                    "spec": f"align:{method}", "fit_pairs": int(n_train), "seed": seed}
    return write_derived(store, src, out, [step], derived_from, metric=tgt.metric.value)
