"""Reading a kept sparse dictionary (:mod:`repspace.workflows.dictionary`): matching pursuit over its atoms,
the latents behind one pair's similarity, and the matching of two dictionaries' latents.

* :func:`pursue_dictionary` encodes the space's items by greedy matching pursuit over the dictionary's
  decoder atoms (:func:`repspace.engines.interpret.matching_pursuit`) and sets its reconstruction error
  beside the autoencoder's own: the difference is the encoder's amortisation gap.
* :func:`attribute_items` splits the cosine of two items' reconstructions exactly over the latents and the
  bias (:func:`repspace.engines.interpret.attribute_pair`): which latents make two items similar.
* :func:`match_dictionaries` gives each latent of one dictionary its closest latent of another (of another
  space, layer or seed, in the same dimension) by decoder cosine
  (:func:`repspace.engines.interpret.match_latents`), with the one-to-one matching's summary
  (:func:`repspace.engines.interpret.stability`).

Examples
--------
>>> from repspace.store import example_space
>>> from repspace.workflows.dictionary import fit_dictionary
>>> sp = example_space(300, 8)
>>> _ = fit_dictionary(sp, 16, 4, epochs=2)
>>> p = pursue_dictionary(sp, "sae-16-k4-s0", k=4)
>>> p.n, len(p.residual_shares), p.residual_shares[0]
(300, 5, 1.0)
>>> a = attribute_items(sp, "sae-16-k4-s0", "i0", "i1")
>>> bool(abs(a.attribution.contributions.sum() + a.attribution.bias - a.attribution.cosine) < 1e-9)
True
>>> m = match_dictionaries(sp, "sae-16-k4-s0", sp, "sae-16-k4-s0")
>>> m.match.mutual.all(), round(m.stability.mean_cosine, 6)
(np.True_, 1.0)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.errors import InputError
from repspace.workflows.dictionary import load_dictionary

if TYPE_CHECKING:
    from repspace.core.store import Space
    from repspace.engines.interpret import LatentMatch, PairAttribution, Stability

__all__ = ["DictionaryMatch", "ItemPairAttribution", "PursuitReport", "attribute_items", "match_dictionaries",
           "pursue_dictionary"]


@dataclass(frozen=True)
class PursuitReport:
    """Matching pursuit over a dictionary's atoms beside the autoencoder's own reconstruction.

    Examples
    --------
    The autoencoder's reconstruction error beside the pursuit's: their difference is the amortisation gap.

    >>> p = PursuitReport("t", "sae-16-k4-s0", n=200, k=2, positive=False, residual_shares=(1.0, 0.7, 0.5),
    ...                   fvu_pursuit=0.5, fvu_sae=0.75, l0_pursuit=2.0)
    >>> p.to_dict()["amortisation_gap"], p.to_dict()["residual_shares"]
    (0.25, [1.0, 0.7, 0.5])
    """

    space: str
    dictionary: str
    n: int
    k: int
    positive: bool
    residual_shares: tuple[float, ...]
    fvu_pursuit: float
    fvu_sae: float
    l0_pursuit: float

    def to_dict(self) -> dict[str, Any]:
        """The fields by name; ``amortisation_gap`` = ``fvu_sae − fvu_pursuit``."""
        return {"space": self.space, "dictionary": self.dictionary, "n": self.n, "k": self.k,
                "positive": self.positive, "residual_shares": list(self.residual_shares),
                "fvu_pursuit": self.fvu_pursuit, "fvu_sae": self.fvu_sae, "l0_pursuit": self.l0_pursuit,
                "amortisation_gap": self.fvu_sae - self.fvu_pursuit}


def pursue_dictionary(space: Space, name: str, *, k: int | None = None, positive: bool = False) -> PursuitReport:
    """Encode every item of ``space`` by ``k`` steps of matching pursuit over the atoms of its dictionary
    ``name`` (default ``k``: the dictionary's own).

    ``residual_shares[s]`` is ``Σ‖r_s‖² / Σ‖r_0‖²`` after ``s`` steps (``r_0`` = the item minus the
    dictionary's bias); ``fvu_pursuit`` and ``fvu_sae`` are the two reconstructions' squared errors over the
    items' total variance (the autoencoder's FVU).

    Examples
    --------
    >>> from repspace import interpret, store
    >>> space = store.example_space(200, 8)
    >>> report = interpret.fit_dictionary(space, 16, 4, epochs=1)
    >>> p = pursue_dictionary(space, "sae-16-k4-s0", k=2)
    >>> p.residual_shares[0], p.residual_shares[2] < p.residual_shares[0]  # each step removes residual
    (1.0, True)
    """
    from repspace.engines.interpret import matching_pursuit, sae_metrics

    d = load_dictionary(space, name)
    steps = int(d.model.k) if k is None else k
    X = d.prepare(space.snapshot().vectors)
    mp = matching_pursuit(X, d.model, steps, positive=positive)
    sq = mp.residual_norms ** 2
    sums = sq.sum(axis=0)
    shares = tuple(float(v) / float(sums[0]) if sums[0] > 0 else float("nan") for v in sums)
    X64 = X.astype(np.float64)
    total = float(((X64 - X64.mean(axis=0)) ** 2).sum())
    fvu = float(sq[:, -1].sum()) / total if total > 0 else float("nan")
    l0 = float(mp.codes.getnnz(axis=1).mean()) if len(X) else 0.0
    return PursuitReport(space.name, d.name, int(len(X)), int(steps), bool(positive), shares, fvu,
                         float(sae_metrics(d.model, X).fvu), l0)


@dataclass(frozen=True)
class ItemPairAttribution:
    """The latents behind the similarity of two items of a stored space (the engine's attribution).

    Examples
    --------
    >>> from repspace import interpret, store
    >>> space = store.example_space(200, 8)
    >>> report = interpret.fit_dictionary(space, 16, 4, epochs=1)
    >>> a = attribute_items(space, "sae-16-k4-s0", "i0", "i1")
    >>> a.a, a.b, a.dictionary, len(a.to_dict(top=2)["latents"])
    ('i0', 'i1', 'sae-16-k4-s0', 2)
    """

    space: str
    dictionary: str
    a: str
    b: str
    attribution: PairAttribution

    def to_dict(self, top: int | None = None) -> dict[str, Any]:
        """``{"space", "dictionary", "a", "b", "cosine", "bias", "latents": [...]}`` (the ``top`` largest
        contributions when given)."""
        out = {"space": self.space, "dictionary": self.dictionary, "a": self.a, "b": self.b,
               **self.attribution.to_dict()}
        if top is not None:
            out["latents"] = out["latents"][:max(int(top), 0)]
        return out


def attribute_items(space: Space, name: str, a: str, b: str) -> ItemPairAttribution:
    """Split the cosine of the reconstructions of items ``a`` and ``b`` over the latents of the dictionary
    ``name`` and its bias (contributions sum to the cosine).

    Examples
    --------
    >>> from repspace import interpret, store
    >>> space = store.example_space(200, 8)
    >>> report = interpret.fit_dictionary(space, 16, 4, epochs=1)
    >>> r = attribute_items(space, "sae-16-k4-s0", "i0", "i1").attribution
    >>> bool(abs(r.contributions.sum() + r.bias - r.cosine) < 1e-9)
    True
    >>> attribute_items(space, "sae-16-k4-s0", "i0", "nope")
    Traceback (most recent call last):
    repspace.core.errors.InputError: 'nope' is not an id of space 't'
    """
    from repspace.engines.interpret import attribute_pair

    d = load_dictionary(space, name)
    missing = [i for i in (a, b) if i not in space.existing_ids([a, b])]
    if missing:
        raise InputError(f"{missing[0]!r} is not an id of space {space.name!r}")
    x, y = d.prepare(space.vectors_of([a, b]))
    return ItemPairAttribution(space.name, d.name, a, b, attribute_pair(d.model, x, y))


@dataclass(frozen=True)
class DictionaryMatch:
    """Each latent of dictionary A with its closest latent of dictionary B, and the one-to-one matching.

    Examples
    --------
    Two seeds of one space's dictionary:

    >>> from repspace import interpret, store
    >>> space = store.example_space(200, 8)
    >>> a, b = (interpret.fit_dictionary(space, 16, 4, epochs=1, seed=seed).name for seed in (0, 1))
    >>> m = match_dictionaries(space, a, space, b)
    >>> m.to_dict()["a"], m.to_dict()["b"]["dictionary"], sorted(m.to_dict())
    ({'space': 't', 'dictionary': 'sae-16-k4-s0'}, 'sae-16-k4-s1', ['a', 'b', 'match', 'one_to_one'])
    """

    space_a: str
    dictionary_a: str
    space_b: str
    dictionary_b: str
    match: LatentMatch
    stability: Stability

    def to_dict(self, per_latent: bool = False) -> dict[str, Any]:
        """``{"a", "b", "match": {...}, "one_to_one": {...}}``; with ``per_latent`` each latent's match."""
        return {"a": {"space": self.space_a, "dictionary": self.dictionary_a},
                "b": {"space": self.space_b, "dictionary": self.dictionary_b},
                "match": self.match.to_dict(per_latent=per_latent), "one_to_one": self.stability.to_dict()}


def match_dictionaries(space_a: Space, name_a: str, space_b: Space, name_b: str, *,
                       threshold: float = 0.9) -> DictionaryMatch:
    """Match the latents of dictionary ``name_a`` of ``space_a`` with those of ``name_b`` of ``space_b``
    (the spaces' dimensions must agree) by the cosine of their decoder atoms; ``threshold`` is the cosine
    above which a one-to-one pair counts as shared.

    Examples
    --------
    A dictionary matched with itself: every latent is its own match.

    >>> from repspace import interpret, store
    >>> space = store.example_space(200, 8)
    >>> report = interpret.fit_dictionary(space, 16, 4, epochs=1)
    >>> m = match_dictionaries(space, "sae-16-k4-s0", space, "sae-16-k4-s0", threshold=0.9)
    >>> bool(m.match.mutual.all()), round(m.stability.mean_cosine, 6), m.stability.share_matched
    (True, 1.0, 1.0)
    """
    from repspace.engines.interpret import match_latents, stability

    da, db = load_dictionary(space_a, name_a), load_dictionary(space_b, name_b)
    return DictionaryMatch(space_a.name, da.name, space_b.name, db.name, match_latents(da.model, db.model),
                           stability(da.model, db.model, threshold=threshold))

