"""Kept sparse dictionaries of several spaces compared feature by feature over the items the spaces share.

* :func:`universality_dictionaries`: two dictionaries (of two models' or two layers' spaces of the same items)
  matched by the correlation of their activations, then SVCCA on the matched features' decoder directions and
  activations beside random pairings (:func:`repspace.engines.compare.feature_universality`; Lan et al. 2024).
* :func:`flow_dictionaries`: one dictionary per layer (spaces of consecutive layers of one encoder, e.g. ingested
  with ``--encoder hf-layers:minilm --layer L``), their features linked into a flow graph
  (:func:`repspace.engines.compare.feature_flow`).

Both code every shared item with each space's dictionary (:meth:`~repspace.workflows.dictionary.Dictionary.transform`:
the vectors as the dictionary was fitted on them) and join the spaces on item ids, in the first space's order.

Examples
--------
>>> from repspace.store import example_store
>>> from repspace.workflows.dictionary import fit_dictionary
>>> rng = np.random.default_rng(0)
>>> X = rng.standard_normal((300, 8))
>>> store = example_store()
>>> a = store.create_space("a", dim=8); _ = a.add([f"t{i}" for i in range(300)], X)
>>> b = store.create_space("b", dim=6); _ = b.add([f"t{i}" for i in range(300)], X @ rng.standard_normal((8, 6)))
>>> da, db = fit_dictionary(a, 16, 4, epochs=2).name, fit_dictionary(b, 16, 4, epochs=2).name
>>> u = universality_dictionaries(a, da, b, db, n_random=3)
>>> u.n_inputs, u.result.match.n_a, {"svcca_decoder", "decoder_random_mean"} <= set(u.to_dict())
(300, 16, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.errors import InputError
from repspace.workflows.dictionary import Dictionary, load_dictionary

if TYPE_CHECKING:
    import scipy.sparse as sp

    from repspace.core.store import Space
    from repspace.engines.compare import FeatureFlow, FeatureUniversality

__all__ = ["DictionaryFlow", "DictionaryUniversality", "flow_dictionaries", "shared_codes",
           "universality_dictionaries"]


def shared_codes(pairs: Sequence[tuple[Space, str]]) -> tuple[list[str], list[sp.csr_matrix], list[Dictionary]]:
    """The ids every space holds (in the first space's order), each space's codes of them by its dictionary, and
    the dictionaries.

    Raises
    ------
    InputError
        Fewer than 2 shared items (the message names the spaces).

    Examples
    --------
    >>> from repspace.store import example_space
    >>> from repspace.workflows.dictionary import fit_dictionary
    >>> s = example_space(100, 4)
    >>> name = fit_dictionary(s, 8, 2, epochs=1).name
    >>> ids, codes, dicts = shared_codes([(s, name), (s, name)])
    >>> len(ids), codes[0].shape, dicts[1].name
    (100, (100, 8), 'sae-8-k2-s0')
    """
    dicts = [load_dictionary(space, name) for space, name in pairs]
    snaps = [space.snapshot() for space, _ in pairs]
    common = set(snaps[0].ids)
    for s in snaps[1:]:
        common &= set(s.ids)
    ids = [i for i in snaps[0].ids if i in common]
    if len(ids) < 2:
        names = ", ".join(repr(space.name) for space, _ in pairs)
        raise InputError(f"spaces {names} share {len(ids)} item(s) by id; matching features needs the same "
                         "inputs in every space (at least 2)")
    codes = []
    for s, d in zip(snaps, dicts, strict=True):
        where = {item: r for r, item in enumerate(s.ids)}
        rows = np.fromiter((where[i] for i in ids), np.int64, len(ids))
        codes.append(d.transform(s.vectors[rows]))
    return ids, codes, dicts


@dataclass(frozen=True)
class DictionaryUniversality:
    """Two kept dictionaries' features matched over the items their spaces share, and SVCCA of the matched ones.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> from repspace.workflows.dictionary import fit_dictionary
    >>> s = example_space(200, 6)
    >>> name = fit_dictionary(s, 12, 3, epochs=2).name
    >>> u = universality_dictionaries(s, name, s, name, n_random=2)
    >>> d = u.to_dict()
    >>> d["a"], round(d["match"]["mean_correlation"], 6), round(d["svcca_decoder"], 6)
    ({'space': 't', 'dictionary': 'sae-12-k3-s0'}, 1.0, 1.0)
    """

    space_a: str
    dictionary_a: str
    space_b: str
    dictionary_b: str
    n_inputs: int
    result: FeatureUniversality

    def to_dict(self, per_feature: bool = False) -> dict[str, Any]:
        """``{"a", "b", "n_inputs"}`` and :meth:`~repspace.engines.compare.FeatureUniversality.to_dict`."""
        return {"a": {"space": self.space_a, "dictionary": self.dictionary_a},
                "b": {"space": self.space_b, "dictionary": self.dictionary_b}, "n_inputs": self.n_inputs,
                **self.result.to_dict(per_feature=per_feature)}


def universality_dictionaries(space_a: Space, name_a: str, space_b: Space, name_b: str, *,
                              method: str = "hungarian", min_correlation: float | None = None,
                              variance: float = 0.99, n_random: int = 20, seed: int = 0) -> DictionaryUniversality:
    """Match the features of dictionary ``name_a`` of ``space_a`` with those of ``name_b`` of ``space_b`` by the
    Pearson correlation of their activations over the items both spaces hold, then compare the matched features
    by SVCCA (decoder directions and activations) beside ``n_random`` random pairings.

    The spaces may have different dimensions (two models). ``method``, ``min_correlation``, ``variance``,
    ``n_random`` and ``seed`` are those of :func:`repspace.engines.compare.feature_universality`.

    Raises
    ------
    NotFoundError, ConflictError
        A dictionary missing, or stale (:func:`~repspace.workflows.dictionary.load_dictionary`).
    InputError
        Fewer than 2 shared items; a bad method or threshold; fewer than 2 kept pairs.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> from repspace.workflows.dictionary import fit_dictionary
    >>> s = example_space(200, 6)
    >>> name = fit_dictionary(s, 12, 3, epochs=2).name
    >>> universality_dictionaries(s, name, s, name, method="max", n_random=0).result.match.share_unique
    1.0
    """
    from repspace.engines.compare import feature_universality

    ids, (ca, cb), (da, db) = shared_codes([(space_a, name_a), (space_b, name_b)])
    r = feature_universality(ca, cb, da.model.components_, db.model.components_, method=method,
                             min_correlation=min_correlation, variance=variance, n_random=n_random, seed=seed)
    return DictionaryUniversality(space_a.name, da.name, space_b.name, db.name, len(ids), r)


@dataclass(frozen=True)
class DictionaryFlow:
    """A feature flow graph over kept dictionaries of consecutive layers' spaces.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> from repspace.workflows.dictionary import fit_dictionary
    >>> s = example_space(200, 6)
    >>> name = fit_dictionary(s, 12, 3, epochs=2).name
    >>> f = flow_dictionaries([(s, name), (s, name)], threshold=0.99)
    >>> d = f.to_dict()
    >>> d["layers"][0], d["steps"][0]["dies"], d["n_inputs"]
    ({'space': 't', 'dictionary': 'sae-12-k3-s0'}, 0, 200)
    """

    layers: list[tuple[str, str]]
    n_inputs: int
    flow: FeatureFlow

    def to_dict(self, nodes: bool = True) -> dict[str, Any]:
        """``{"layers": [{"space", "dictionary"}, ...], "n_inputs"}`` and
        :meth:`~repspace.engines.compare.FeatureFlow.to_dict`."""
        return {"layers": [{"space": s, "dictionary": d} for s, d in self.layers], "n_inputs": self.n_inputs,
                **self.flow.to_dict(nodes=nodes)}


def flow_dictionaries(layers: Sequence[tuple[Space, str]], *, threshold: float = 0.5, mode: str = "threshold"
                      ) -> DictionaryFlow:
    """Link the features of kept dictionaries of consecutive layers (one ``(space, dictionary)`` per layer, in
    order) by activation correlation over the items every space holds: the flow graph and, per step, how many
    features persist, die and are born (:func:`repspace.engines.compare.feature_flow`).

    Examples
    --------
    >>> from repspace.store import example_space
    >>> from repspace.workflows.dictionary import fit_dictionary
    >>> s = example_space(200, 6)
    >>> name = fit_dictionary(s, 12, 3, epochs=2).name
    >>> flow_dictionaries([(s, name), (s, name), (s, name)], mode="top1").flow.labels
    ['t/sae-12-k3-s0', 't/sae-12-k3-s0', 't/sae-12-k3-s0']
    """
    from repspace.engines.compare import feature_flow

    if len(layers) < 2:
        raise InputError("a feature flow needs the dictionaries of at least two layers")
    ids, codes, dicts = shared_codes(layers)
    labels = [f"{space.name}/{d.name}" for (space, _), d in zip(layers, dicts, strict=True)]
    f = feature_flow(codes, threshold=threshold, mode=mode, labels=labels)
    return DictionaryFlow([(space.name, d.name) for (space, _), d in zip(layers, dicts, strict=True)], len(ids), f)
