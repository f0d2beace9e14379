"""The layer profile: which layer of a model to use, from how each layer treats the tokens of real inputs.

:func:`profile_layers` streams a texts file through an ``hf-layers`` encoder
(one forward pass per batch for every hidden state, see
:mod:`repspace.workflows.layer_profile_pass`) and reports, per layer, each
figure averaged over the inputs with a seeded percentile bootstrap interval
(:func:`repspace.engines.eval.uncertainty.bootstrap_interval`, inputs resampled).
With a task (``task="sts"``), each layer's pooled vectors are also scored on it,
so the profile answers "which layer should I use".

JSON names of each layer (definitions in :mod:`repspace.engines.geometry.token_clouds`)
--------------------------------------------------------------------------------------
===================================== ===============================================================
``prompt_entropy``                    ``−Σ p log p / log T``, ``p`` the eigenvalues of ``Z Zᵀ`` over their sum
                                      (Skean et al. 2025, S059); ``Z`` every token's state, specials included
``prompt_entropy_alpha_<α>``          the α-entropy ``log(Σ p^α) / ((1 − α) log T)``, one per ``alphas``
``curvature``                         the mean angle (radians) between consecutive steps ``z_{k+1} − z_k``
``augmentation_invariance``           cosine of the pooled state of an input and of its seeded perturbation
``infonce``                           InfoNCE (NT-Xent, τ 0.1) loss of each group of (input, perturbation)
                                      pooled pairs, on cosines; lower: more invariant (S059)
``lidar``                             entropy of the pairs' LDA matrix (each input a class of its two views)
                                      over ``min(log N, log d)`` (S059, Thilak et al. 2024)
``dime``                              DiME: permuted minus paired joint entropy of the two views' Grams, over
                                      ``min(log N, log d)`` (S059, Skean et al. 2023); the three only with
                                      ``invariance``, definitions in :mod:`repspace.engines.geometry.invariance`,
                                      groups in :mod:`repspace.workflows.layer_invariance` (``n``: the groups)
``intrinsic_dimension``               TwoNN of the input's token cloud (Facco et al. 2017)
``neighbourhood_overlap``             share of each token's k nearest tokens also nearest a layer before
``mean_cosine``                       mean cosine over the distinct pairs of the input's tokens
``*_shuffled``                        the same figure for the input with its tokens shuffled (S105's baseline)
``task``                              the layer's main score on the task (STS: Spearman), with its interval
===================================== ===============================================================

Each figure is ``{"mean", "low", "high", "n"}``: the mean over the ``n``
inputs on which it is defined, and its 95% interval (``low``/``high`` null
without resampling). A figure defined on no input (the overlap at layer 0) is
``null``. ``skipped`` counts the inputs left out of each figure (``curvature``:
fewer than 3 tokens).

Examples
--------
>>> texts = ["A man is playing a flute.", "Stocks fell sharply on Monday.", "A cat sleeps on the mat."]
>>> p = profile_layers("hf-layers:minilm", texts, layers=[0, -1], bootstrap=0)
>>> p.layers, p.n_inputs, sorted(p.to_dict()["layers"][1])[:3]
((0, 6), 3, ['augmentation_invariance', 'curvature', 'intrinsic_dimension'])
>>> 0 < p.figure("prompt_entropy", 6).mean < 1
True
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from repspace.core.checks import check_choice, check_scalar
from repspace.core.errors import InputError
from repspace.core.progress import Progress
from repspace.engines.eval.perturb import DEFAULT_RATE, parse_perturbations
from repspace.engines.eval.uncertainty import DEFAULT_RESAMPLES, bootstrap_interval, mean_statistic
from repspace.engines.geometry.token_clouds import DEFAULT_OVERLAP_K
from repspace.workflows.decompose import _encoding_errors, _hf_layers
from repspace.workflows.layer_invariance import DEFAULT_GROUP, PAIR_FIGURES, PairGroups, parse_pair_figures
from repspace.workflows.layer_profile_pass import profile_pass

__all__ = ["LayerFigure", "LayerProfile", "LayerProfiles", "PROFILE_FIGURES", "profile_encoders", "profile_layers"]

#: The figures of every profile, in the order tables show them (α-entropies come after ``prompt_entropy``).
PROFILE_FIGURES = ("prompt_entropy", "curvature", "augmentation_invariance", *PAIR_FIGURES, "intrinsic_dimension",
                   "intrinsic_dimension_shuffled", "neighbourhood_overlap", "neighbourhood_overlap_shuffled",
                   "mean_cosine", "mean_cosine_shuffled")
#: Tasks a profile can score each layer on.
PROFILE_TASKS = ("sts",)
#: Texts per forward pass (each brings its perturbation and its shuffled copy into the same pass).
DEFAULT_BATCH = 32
#: The perturbation behind the augmentation invariance when none is named.
DEFAULT_AUGMENT = "typos"


@dataclass(frozen=True)
class LayerFigure:
    """One figure at one layer: the mean over the inputs it is defined on, with its bootstrap interval.

    Examples
    --------
    >>> LayerFigure(0.8, 0.78, 0.82, 1000).to_dict()
    {'mean': 0.8, 'low': 0.78, 'high': 0.82, 'n': 1000}
    """

    mean: float
    low: float | None
    high: float | None
    n: int

    def to_dict(self) -> dict[str, Any]:
        """``{"mean", "low", "high", "n"}`` (``low``/``high`` ``None`` without an interval)."""
        return {"mean": float(self.mean), "low": None if self.low is None else float(self.low),
                "high": None if self.high is None else float(self.high), "n": int(self.n)}


@dataclass(frozen=True)
class LayerProfile:
    """The profile of one encoder's layers on one set of texts (JSON names: the module docstring).

    Attributes
    ----------
    encoder : str
    layers : tuple of int
        Layer indexes (0 = the embedding output).
    figures : dict
        ``name -> (LayerFigure or None per layer)``; names from :data:`PROFILE_FIGURES`
        (those measured) and ``prompt_entropy_alpha_<α>``.
    n_inputs : int
    skipped : dict
        Per figure, the inputs on which it is undefined at the last layer (``curvature``: ``T < 3``; the pair
        figures: the inputs after the last full group).
    task : str or None
        The task's name (``sts:<data>``) when one was scored.
    task_scores : tuple of LayerFigure or None
        Each layer's main score on the task (``n``: its units, e.g. pairs).
    settings : dict
        ``k``, ``alphas``, ``augment``, ``rate``, ``shuffle``, ``seed``, ``bootstrap``, ``batch_size``,
        ``invariance_group`` (inputs per group of the pair figures),
        ``unchanged_by_augment`` and ``unshuffled`` (inputs their perturbation or shuffle left as they were).
    provenance : dict
        The encoder's provenance (without the layer).

    Examples
    --------
    >>> f = LayerFigure(0.5, None, None, 3)
    >>> p = LayerProfile("hf-layers:tiny", (0, 1), {"curvature": (f, f)}, 3, {"curvature": 0},
    ...                  "sts:toy", (LayerFigure(0.2, None, None, 9), LayerFigure(0.7, None, None, 9)), {}, {})
    >>> p.best_layer, p.to_dict()["layers"][1]["task"]["mean"]
    (1, 0.7)
    """

    encoder: str
    layers: tuple[int, ...]
    figures: dict[str, tuple[LayerFigure | None, ...]]
    n_inputs: int
    skipped: dict[str, int]
    task: str | None = None
    task_scores: tuple[LayerFigure, ...] | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)

    def figure(self, name: str, layer: int) -> LayerFigure | None:
        """The figure ``name`` at layer index ``layer`` (one of :attr:`layers`)."""
        if layer not in self.layers:
            raise InputError(f"layer {layer} is not in this profile (layers {', '.join(map(str, self.layers))})")
        return self.figures[check_choice(name, "figure", tuple(self.figures))][self.layers.index(layer)]

    @property
    def best_layer(self) -> int | None:
        """The layer with the highest task score (the first on a tie); ``None`` without a task."""
        if not self.task_scores:
            return None
        return self.layers[int(np.argmax([s.mean for s in self.task_scores]))]

    def to_dict(self) -> dict[str, Any]:
        """``{"encoder", "n_inputs", "task", "best_layer", "skipped", "settings", "provenance", "layers": [...]}``."""
        rows = []
        for j, layer in enumerate(self.layers):
            row: dict[str, Any] = {"layer": int(layer)}
            for name, per_layer in self.figures.items():
                row[name] = None if per_layer[j] is None else per_layer[j].to_dict()
            if self.task_scores is not None:
                row["task"] = self.task_scores[j].to_dict()
            rows.append(row)
        return {"encoder": self.encoder, "n_inputs": int(self.n_inputs), "task": self.task,
                "best_layer": self.best_layer, "skipped": dict(self.skipped), "settings": dict(self.settings),
                "provenance": dict(self.provenance), "layers": rows}


@dataclass(frozen=True)
class LayerProfiles:
    """The profiles of several encoders on the same texts (``repspace layers profile`` with several ``--encoder``).

    Examples
    --------
    >>> f = LayerFigure(0.5, None, None, 3)
    >>> one = LayerProfile("hf-layers:tiny", (0,), {"curvature": (f,)}, 3, {})
    >>> LayerProfiles((one,)).to_dict()["profiles"][0]["layers"]
    [{'layer': 0, 'curvature': {'mean': 0.5, 'low': None, 'high': None, 'n': 3}}]
    """

    profiles: tuple[LayerProfile, ...]

    def to_dict(self) -> dict[str, Any]:
        """``{"profiles": [LayerProfile.to_dict(), ...]}``."""
        return {"profiles": [p.to_dict() for p in self.profiles]}


def _summary(values: np.ndarray, bootstrap: int, seed: int) -> LayerFigure | None:
    ok = values[np.isfinite(values)]
    if ok.size == 0:
        return None
    mean = float(ok.mean())
    interval = bootstrap_interval(mean_statistic, ok, n_resamples=bootstrap, seed=seed) if ok.size >= 2 else None
    if interval is None:
        return LayerFigure(mean, None, None, int(ok.size))
    return LayerFigure(mean, min(interval.low, mean), max(interval.high, mean), int(ok.size))


def _check_alphas(alphas: Sequence[float]) -> tuple[float, ...]:
    out = []
    for a in alphas:
        a = check_scalar(a, "alpha", float, low=0, include="right")
        if not math.isfinite(a):
            raise InputError(f"alpha must be finite, got {a}")
        if a != 1.0 and a not in out:  # alpha = 1 is prompt_entropy itself
            out.append(a)
    return tuple(out)


def profile_layers(encoder: str, texts: Iterable[str], *, layers: str | Sequence[int] = "all",
                   alphas: Sequence[float] = (), k: int = DEFAULT_OVERLAP_K, augment: str | None = DEFAULT_AUGMENT,
                   rate: float = DEFAULT_RATE, invariance: str | Sequence[str] | None = None,
                   group: int = DEFAULT_GROUP, shuffle: bool = True, task: str | None = None,
                   task_data: str | Path | None = None, bootstrap: int = DEFAULT_RESAMPLES, seed: int = 0,
                   batch_size: int = DEFAULT_BATCH, options: dict[str, Any] | None = None,
                   progress: Progress | None = None) -> LayerProfile:
    """Profile every chosen layer of an ``hf-layers`` encoder on a stream of texts.

    Parameters
    ----------
    encoder : str
        ``hf-layers:<folder>`` (``hf-layers:minilm`` is bundled): an encoder with hidden states.
    texts : iterable of str
        Read once, a chunk at a time (a generator over a large file is fine); at least one.
    layers : ``"all"`` or list of int
        Which hidden states (negative from the end).
    alphas : sequence of float
        Orders α > 0 of extra α-entropies (``prompt_entropy_alpha_<α>``; 1 is ``prompt_entropy``).
    k : int
        Neighbours of the neighbourhood overlap.
    augment : str or None
        The perturbations behind the augmentation invariance
        (:data:`repspace.engines.eval.perturb.PERTURBATIONS`, e.g. ``"typos,punctuation"``); ``None``: not measured.
    rate : float
        Share of each text's eligible sites a perturbation changes.
    invariance : str or sequence of str, optional
        Also score *Layer by Layer*'s pair figures over the (input, perturbation) pairs: ``"infonce"``,
        ``"lidar"``, ``"dime"`` (comma-separated) or ``"all"``; needs ``augment``. They cost eigendecompositions
        of ``group``-sized matrices per group and layer, so they are asked for, not on by default.
    group : int
        Inputs per group behind the pair figures (see :mod:`repspace.workflows.layer_invariance`).
    shuffle : bool
        Measure the shuffled-token baseline of the geometry figures.
    task, task_data : str, path
        ``"sts"`` and an STS CSV (``sentence1,sentence2,score``): each layer's pooled vectors scored on it.
    bootstrap : int
        Resamples of the inputs behind each interval (0: none).
    seed : int
        Seeds the perturbations, the shuffles and the bootstrap.
    batch_size : int
        Texts per forward pass.
    options : dict, optional
        Other encoder options (``pooling`` of the augmentation invariance and the task, ``max_length``, ``prompt``).
    progress : Progress, optional
        ``progress("profile", done, total)`` as texts finish (total 0 when ``texts`` has no length).

    Returns
    -------
    LayerProfile

    Raises
    ------
    InputError
        Not an ``hf-layers`` encoder, no texts, a layer out of range, a bad option, a task file that cannot be read.
    EncoderError
        The model fails.

    Examples
    --------
    >>> p = profile_layers("hf-layers:minilm", ["a cat", "a very small dog barked"], layers=[-1], alphas=[2],
    ...                    augment=None, shuffle=False, bootstrap=0)
    >>> list(p.figures)[:3], len(p.figures)
    (['prompt_entropy', 'prompt_entropy_alpha_2', 'curvature'], 6)
    """
    if isinstance(texts, (str, bytes)):
        raise InputError("texts must be a sequence of strings, not a single string: wrap it in a list")
    if hasattr(texts, "__len__") and len(texts) == 0:  # type: ignore[arg-type]
        raise InputError("no texts: a layer profile needs at least one")
    check_scalar(batch_size, "batch_size", int, low=1)
    check_scalar(k, "k", int, low=1)
    check_scalar(bootstrap, "bootstrap", int, low=0)
    check_scalar(seed, "seed", int, low=0, high=2**32, include="left")
    check_scalar(rate, "rate", float, low=0, high=1, include="right")
    alphas = _check_alphas(alphas)
    kinds = parse_perturbations(augment) if augment else ()
    pair_names = parse_pair_figures(invariance)
    if pair_names and not kinds:
        raise InputError("the invariance figures (InfoNCE, LiDAR, DiME) compare inputs with their perturbations: "
                         "name an augmentation too")
    check_scalar(group, "group", int, low=2)
    pairs = _task_pairs(task, task_data)
    enc = _hf_layers(encoder, options)
    chosen = tuple(enc.resolve_layers(layers))
    names = ["prompt_entropy", *(f"prompt_entropy_alpha_{a:g}" for a in alphas), "curvature"]
    names += ["augmentation_invariance"] if kinds else []
    names += list(pair_names)
    for base in ("intrinsic_dimension", "neighbourhood_overlap", "mean_cosine"):
        names += [base, f"{base}_shuffled"] if shuffle else [base]
    total = len(texts) if hasattr(texts, "__len__") else 0  # type: ignore[arg-type]
    groups = PairGroups(pair_names, n_layers=len(chosen), group=group, seed=seed) if pair_names else None
    values = profile_pass(enc, texts, layers=chosen, names=names, alphas=alphas, k=k, augment=kinds, rate=rate,
                          shuffle=shuffle, seed=seed, batch_size=batch_size, total=total, progress=progress,
                          errors=_encoding_errors, pairs=groups)
    for name in pair_names:
        for j in range(len(chosen)):
            values.add(name, j, np.array(groups.values[name][j]))  # type: ignore[union-attr]
    if values.n_inputs == 0:
        raise InputError("no texts: a layer profile needs at least one")
    ordered = [n for n in PROFILE_FIGURES if n in names]
    ordered[1:1] = [n for n in names if n.startswith("prompt_entropy_alpha_")]
    figures = {name: tuple(_summary(values.column(name, j), bootstrap, seed) for j in range(len(chosen)))
               for name in ordered}
    last = len(chosen) - 1
    skipped = {name: int(np.count_nonzero(~np.isfinite(values.column(name, last)))) for name in ordered}
    skipped.update({name: groups.left_out for name in pair_names})  # type: ignore[union-attr]
    task_name, scores = _task_scores(enc, chosen, pairs, bootstrap, seed, batch_size) if pairs else (None, None)
    settings = {"k": int(k), "alphas": list(alphas), "augment": ",".join(kinds) or None, "rate": float(rate),
                "shuffle": bool(shuffle), "seed": int(seed), "bootstrap": int(bootstrap), "batch_size": int(batch_size),
                "invariance_group": int(group) if pair_names else None,
                "unchanged_by_augment": int(values.n_unchanged) if kinds else None,
                "unshuffled": int(values.n_unshuffled) if shuffle else None}
    prov = {key: val for key, val in enc.provenance().items() if key != "layer"}
    return LayerProfile(encoder, chosen, figures, values.n_inputs, skipped, task_name, scores, settings, prov)


def _task_pairs(task: str | None, data: str | Path | None) -> Any:
    if task is None and data is None:
        return None
    if task is None or data is None:
        raise InputError("a task needs both its name and its data file (--task sts FILE)")
    check_choice(task, "task", PROFILE_TASKS)
    from repspace.engines.eval.sts import load_sts

    return load_sts(data)


def _task_scores(enc: Any, layers: tuple[int, ...], pairs: Any, bootstrap: int, seed: int,
                 batch_size: int) -> tuple[str, tuple[LayerFigure, ...]]:
    """Each layer's STS score, every layer from one forward pass per batch of the task's sentences."""
    from repspace.engines.eval.sts import sts

    stacked = enc.encode_layers(pairs.texts(), layers=list(layers), batch_size=batch_size)  # (L, 2n, d)
    scores = []
    name = f"sts:{pairs.name}"
    for j in range(len(layers)):
        r = sts(lambda texts, j=j: stacked[j], pairs, name=name, bootstrap=bootstrap, seed=seed)
        ci = r.interval
        scores.append(LayerFigure(float(r.main_score), None if ci is None else ci.low,
                                  None if ci is None else ci.high, len(pairs)))
    return name, tuple(scores)


def profile_encoders(encoders: str | Sequence[str], texts: Sequence[str], **kwargs: Any) -> LayerProfiles:
    """:func:`profile_layers` of each encoder on the same texts (a sequence: it is read once per encoder).

    Examples
    --------
    >>> r = profile_encoders(["hf-layers:minilm"], ["a cat sat", "two dogs ran"], layers=[0], bootstrap=0)
    >>> [p.encoder for p in r.profiles]
    ['hf-layers:minilm']
    """
    specs = [encoders] if isinstance(encoders, str) else list(encoders)
    if not specs:
        raise InputError("no encoder: name at least one hf-layers:<folder>")
    if len(set(specs)) != len(specs):
        raise InputError(f"an encoder is named twice: {', '.join(specs)}")
    if isinstance(texts, (str, bytes)) or not isinstance(texts, Sequence):
        raise InputError("texts must be a list of strings (each encoder reads them)")
    for spec in specs:  # every spec checked before the first long pass
        _hf_layers(spec, kwargs.get("options"))
    return LayerProfiles(tuple(profile_layers(spec, texts, **kwargs) for spec in specs))
