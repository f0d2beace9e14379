"""``repspace layers moments``: the moment probe (S237) beside the mean-pooled probe, per layer, same controls.

:func:`moment_probe` streams labelled texts through an ``hf-layers`` encoder twice, one forward pass per batch for
all layers each time: the first pass sums every layer's token states (for the fixed covariance basis,
:func:`repspace.engines.interpret.moments.covariance_basis`: no labels used), the second turns each batch's token
states into moment features (:func:`repspace.engines.interpret.moments.moment_features`) and drops the states.
On each layer the probe of ``interpret probe`` (:func:`repspace.engines.interpret.probe`: standardised features,
cross-validated logistic or ridge, with its control task and selectivity, same folds and seed) is run on three
feature sets: ``mean`` (the mean-pooled vector), ``mean+var`` and ``mean+var+lowrank``. Each score carries a
95% t-interval over the folds (``mean +- t(0.975, cv-1) std(ddof=1) / sqrt(cv)``; folds share training items, so it
is a rough interval, the usual one for cross-validation).

Examples
--------
>>> texts = [f"{'word ' * n}end" for n in range(1, 21)]
>>> r = moment_probe("hf-layers:minilm", texts, [str(n > 10) for n in range(1, 21)], layers=[1], rank=2, cv=2)
>>> [row["features"] for row in r.to_dict()["rows"]]
['mean', 'mean+var', 'mean+var+lowrank']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from repspace.core.errors import InputError
from repspace.core.progress import Progress, Tally
from repspace.engines.interpret import ProbeResult, probe
from repspace.engines.interpret.moments import TokenMoments, covariance_basis, moment_features
from repspace.workflows.decompose import _encoding_errors, _hf_layers

__all__ = ["FEATURE_SETS", "MomentProbe", "moment_features_per_layer", "moment_probe", "moment_probe_file"]

#: The feature sets compared, in order: the mean-pooled probe first.
FEATURE_SETS = ("mean", "mean+var", "mean+var+lowrank")
#: BLAS threads of the probes' fits. Their matrices are small (texts x at most 2 d + r (r + 1) / 2), so a second
#: thread only adds its wake-up and join to each of L-BFGS's many small products: on the shared 2-core machine
#: under load, the 60 fits of two layers of the SentEval tense sample took 3.7-7.6 s on one thread against
#: 54-69 s on two (9-15x), with the same scores.
PROBE_BLAS_THREADS = 1


@dataclass(frozen=True, eq=False)
class MomentProbe:
    """The probe's scores on each feature set at each layer, beside their controls.

    Attributes
    ----------
    encoder : str
    layers : tuple of int
    rank : int
        Directions of the covariance basis.
    results : tuple of dict
        Per layer, ``{feature set: ProbeResult}``.
    n : int
        Labelled texts.

    Examples
    --------
    >>> from repspace.engines.interpret import probe
    >>> x = np.random.default_rng(0).standard_normal((40, 3)); y = (x[:, 0] > 0).astype(int)
    >>> m = MomentProbe("hf-layers:m", (1,), 2, ({"mean": probe(x, y, cv=2)},), 40)
    >>> m.to_dict()["rows"][0]["features"], m.to_dict()["rows"][0]["ci_low"] <= m.to_dict()["rows"][0]["score"]
    ('mean', True)
    """

    encoder: str
    layers: tuple[int, ...]
    rank: int
    results: tuple[dict[str, ProbeResult], ...] = field(repr=False)
    n: int

    def to_dict(self) -> dict[str, Any]:
        """``{"encoder", "rank", "n", "rows": [{"layer", "features", "d", "metric", "score", "ci_low", "ci_high",
        "control_score", "selectivity"}], "probes": [per row: ProbeResult.to_dict()]}``."""
        from scipy import stats

        rows, probes = [], []
        for layer, per in zip(self.layers, self.results):
            for name, r in per.items():
                folds = np.asarray(r.fold_scores, dtype=np.float64)
                half = (float(stats.t.ppf(0.975, folds.size - 1) * folds.std(ddof=1) / np.sqrt(folds.size))
                        if folds.size > 1 else float("nan"))
                rows.append({"layer": layer, "features": name, "d": int(r.d), "metric": r.metric,
                             "score": float(r.score), "ci_low": float(r.score - half),
                             "ci_high": float(r.score + half), "control_score": float(r.control_score),
                             "selectivity": float(r.selectivity)})
                probes.append(r.to_dict())
        return {"encoder": self.encoder, "rank": self.rank, "n": self.n, "rows": rows, "probes": probes}


def moment_features_per_layer(enc: Any, texts: Sequence[str], layers: Sequence[int], rank: int, *,
                              batch_size: int = 32, progress: Progress | None = None) -> list[dict[str, np.ndarray]]:
    """Per chosen layer, every text's ``{"mean", "var", "lowrank"}`` features (rows in text order), from two
    streamed passes of ``enc`` (an ``HFLayersEncoder``): the basis sums, then the features.

    Examples
    --------
    >>> from repspace.engines.encoders import get_encoder
    >>> f = moment_features_per_layer(get_encoder("hf-layers:minilm"), ["a cat", "a big dog"], [0], 3)
    >>> f[0]["mean"].shape, f[0]["var"].shape, f[0]["lowrank"].shape
    ((2, 384), (2, 384), (2, 6))
    """
    import torch

    if isinstance(rank, bool) or not isinstance(rank, (int, np.integer)) or not 1 <= rank <= enc.dim:
        raise InputError(f"rank must be an integer from 1 to {enc.dim} (the model's width), not {rank!r}")
    sums = [TokenMoments(enc.dim) for _ in layers]
    tick = Tally(progress, "moments", 2 * len(texts))
    with torch.inference_mode(), _encoding_errors(enc.spec):
        for index, hidden, mask, _ in enc.hidden_batches(list(texts), batch_size):
            for s, layer in zip(sums, layers):
                s.add(hidden[layer].float().numpy(), mask.numpy())
            tick(len(index))
        bases = [covariance_basis(s, int(rank)) for s in sums]
        out = [{name: np.empty((len(texts), width)) for name, width in
                (("mean", enc.dim), ("var", enc.dim), ("lowrank", rank * (rank + 1) // 2))} for _ in layers]
        for index, hidden, mask, _ in enc.hidden_batches(list(texts), batch_size):
            for j, layer in enumerate(layers):
                f = moment_features(hidden[layer].float().numpy(), mask.numpy(), bases[j])
                out[j]["mean"][index], out[j]["var"][index], out[j]["lowrank"][index] = f.mean, f.var, f.lowrank
            tick(len(index))
    return out


def moment_probe(encoder: str, texts: Sequence[str], labels: Sequence[Any], *, layers: str | Sequence[int] = "all",
                 rank: int = 8, kind: str = "logistic", cv: int = 5, control: str = "permute", seed: int = 0,
                 batch_size: int = 32, options: dict[str, Any] | None = None,
                 progress: Progress | None = None) -> MomentProbe:
    """Probe ``labels`` from the mean, mean+variance and mean+variance+low-rank covariance of each text's token
    states at each layer, with the controls of ``interpret probe``.

    Parameters
    ----------
    encoder : str
        ``hf-layers:<folder>``.
    texts, labels : sequences of the same length
        Labels as :func:`repspace.engines.interpret.probe` takes them (classes for ``logistic``, numbers for
        ``ridge``).
    layers : ``"all"`` or list of int
    rank : int
        Directions of the covariance basis (``r (r + 1) / 2`` low-rank features).
    kind, cv, control, seed
        Those of :func:`repspace.engines.interpret.probe` (``sparse`` is not offered: its dimensions would mix
        feature kinds).
    batch_size : int
    options : dict, optional
        Other encoder options (``max_length``, ``prompt``...).
    progress : callable, optional

    Returns
    -------
    MomentProbe

    Examples
    --------
    >>> texts = [f"{'word ' * n}end" for n in range(1, 21)]
    >>> r = moment_probe("hf-layers:minilm", texts, [str(n > 10) for n in range(1, 21)], layers=[0], rank=2, cv=2)
    >>> [row["d"] for row in r.to_dict()["rows"]]
    [384, 768, 771]
    """
    if isinstance(texts, (str, bytes)) or not isinstance(texts, Sequence) or not texts:
        raise InputError("texts must be a non-empty sequence of strings")
    if len(labels) != len(texts):
        raise InputError(f"got {len(labels)} labels for {len(texts)} texts")
    if kind not in ("logistic", "ridge"):
        raise InputError(f"kind must be logistic or ridge, not {kind!r}")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise InputError(f"batch_size must be a positive integer, not {batch_size!r}")
    enc = _hf_layers(encoder, options)
    chosen = tuple(enc.resolve_layers(layers))
    feats = moment_features_per_layer(enc, list(texts), chosen, rank, batch_size=batch_size, progress=progress)
    from threadpoolctl import threadpool_limits

    y = np.asarray(labels)
    results = []
    with threadpool_limits(limits=PROBE_BLAS_THREADS, user_api="blas"):
        for f in feats:
            per = {}
            for name in FEATURE_SETS:
                X = np.hstack([f[part] for part in name.split("+")])
                per[name] = probe(X, y, kind=kind, cv=cv, control=control, seed=seed)
            results.append(per)
    return MomentProbe(enc.spec, chosen, int(rank), tuple(results), len(texts))


def moment_probe_file(encoder: str, path: Any, **options: Any) -> MomentProbe:
    """:func:`moment_probe` on a SentEval-format file (``split<TAB>label<TAB>sentence``; every split used, the
    folds are the probe's own).

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "len.txt")
    >>> _ = open(path, "w").write("".join(f"{('tr', 'va', 'te')[n % 3]}\\t{int(n > 5)}\\t{'a ' * n}b\\n"
    ...                              for n in range(1, 11)))
    >>> moment_probe_file("hf-layers:minilm", path, layers=[0], rank=1, cv=2).n
    10
    """
    from repspace.engines.eval.probing import SPLITS, load_probing

    data = load_probing(path)
    texts = [t for s in SPLITS for t in data.texts[s]]
    labels = [label for s in SPLITS for label in data.labels[s]]
    return moment_probe(encoder, texts, labels, **options)
