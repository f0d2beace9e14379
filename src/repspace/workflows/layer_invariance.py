"""The layer profile's InfoNCE, LiDAR and DiME: pair figures over groups of inputs read in stream order.

The three augmentation-invariance figures of *Layer by Layer* (S059,
:mod:`repspace.engines.geometry.invariance`) are figures of a *set* of
(input, augmented input) pairs, not of one input. The profile streams, so it
scores them over consecutive groups of ``group`` inputs in the order the texts
are read (not the length-sorted batch order: the same seed and group size give
the same groups whatever the batch size) and reports their mean over the groups,
the interval resampling the groups. Each group's pairs are kept only until the
group is scored: ``group × layers × 2`` vectors of width ``d``.

Each view is the input's pooled state (the encoder's ``pooling``, mean by
default), as ``augmentation_invariance`` uses it. The reference code
(``OFSkean/information_flow``) averages each input's token states after centring
them and scaling each to unit length, and feeds InfoNCE raw dot products: on
MiniLM that leaves InfoNCE at chance at every layer (6.18–6.21 against
``log 499 = 6.21``, 500 STS-B test sentences, groups of 250), so the pooled
states, on cosines, are used instead.

Every group has the same size, as InfoNCE's scale depends on it (``log(2N − 1)``
at chance): the inputs after the last full group are left out of the three
figures (the profile's ``skipped``), unless there are fewer than ``group`` inputs
in all, then they form the one group. DiME's permutations are drawn from
``numpy.random.default_rng([seed, first input of the group])``, the same for
every layer.

Examples
--------
>>> rng = np.random.default_rng(0)
>>> g = PairGroups(("infonce",), n_layers=1, group=4, seed=0)
>>> a = rng.standard_normal((1, 10, 3))
>>> g.add(a, a + 0.01)  # 10 inputs: two groups of 4 are scored, 2 inputs wait
>>> g.finish()
>>> len(g.values["infonce"][0]), g.left_out
(2, 2)
"""

from __future__ import annotations

import numpy as np

from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.engines.geometry.invariance import dime, infonce, lidar

__all__ = ["DEFAULT_GROUP", "PAIR_FIGURES", "PairGroups", "parse_pair_figures"]

#: The pair figures, in the order tables show them.
PAIR_FIGURES = ("infonce", "lidar", "dime")
#: Inputs per group behind each pair figure (1,000 inputs: 4 groups).
DEFAULT_GROUP = 250


def parse_pair_figures(names: str | tuple[str, ...] | list[str] | None) -> tuple[str, ...]:
    """``"infonce,lidar,dime"`` (or a sequence, or ``"all"``) -> the figures in :data:`PAIR_FIGURES` order.

    Examples
    --------
    >>> parse_pair_figures("dime,infonce"), parse_pair_figures("all"), parse_pair_figures(None)
    (('infonce', 'dime'), ('infonce', 'lidar', 'dime'), ())
    """
    if not names:
        return ()
    items = [n.strip() for n in names.split(",")] if isinstance(names, str) else [str(n).strip() for n in names]
    if items == ["all"]:
        return PAIR_FIGURES
    unknown = [n for n in items if n not in PAIR_FIGURES]
    if unknown:
        raise InputError(f"unknown invariance figure {unknown[0]!r}: choose from {', '.join(PAIR_FIGURES)} or all")
    return tuple(n for n in PAIR_FIGURES if n in items)


class PairGroups:
    """Buffers each layer's paired views in stream order and scores every full group (see the module notes).

    ``values[name][j]`` holds one float per scored group at the ``j``-th layer.
    """

    def __init__(self, names: tuple[str, ...], *, n_layers: int, group: int, seed: int) -> None:
        check_scalar(group, "group", int, low=2)
        self.names, self.group, self.seed = names, int(group), int(seed)
        self.values: dict[str, list[list[float]]] = {name: [[] for _ in range(n_layers)] for name in names}
        self._a: list[np.ndarray] = []
        self._b: list[np.ndarray] = []
        self._start = 0  # stream index of the first buffered input
        self.left_out = 0

    def add(self, a: np.ndarray, b: np.ndarray) -> None:
        """Append the views of the next inputs, ``(layers, n, d)`` each, in stream order; score full groups."""
        self._a.append(np.asarray(a, dtype=np.float64))
        self._b.append(np.asarray(b, dtype=np.float64))
        while self._buffered() >= 2 * self.group:  # keep a full group back: the stream may end below two
            self._score(self.group)

    def finish(self) -> None:
        """Score what is left: one group when the stream held fewer than ``group`` inputs, else the full groups."""
        if self._start == 0 and 2 <= self._buffered() < self.group:
            self._score(self._buffered())
        while self._buffered() >= self.group:
            self._score(self.group)
        self.left_out = self._buffered()

    def _buffered(self) -> int:
        return sum(x.shape[1] for x in self._a)

    def _score(self, size: int) -> None:
        a, b = np.concatenate(self._a, axis=1), np.concatenate(self._b, axis=1)
        self._a, self._b = [a[:, size:]], [b[:, size:]]
        for j in range(a.shape[0]):
            x, y = a[j, :size], b[j, :size]
            for name in self.names:
                if name == "infonce":
                    value = infonce(x, y)
                elif name == "lidar":
                    value = lidar(x, y)
                else:
                    value = dime(x, y, rng=np.random.default_rng([self.seed, self._start]))
                self.values[name][j].append(value)
        self._start += size
