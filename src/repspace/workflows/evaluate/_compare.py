"""Several models on one task: resolve them, refuse what does not combine, compare saved results.

:func:`repspace.workflows.evaluate.run` evaluates every model given (encoders
and stored spaces) on the same data and compares them pair by pair
(:func:`repspace.engines.eval.comparisons.compare_results`); :func:`compare_saved`
does the same from results recorded in the store with ``save=True``, on the
per-unit scores they carry.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from repspace.core.errors import InputError
from repspace.core.store import Store
from repspace.engines.eval import TaskResult
from repspace.engines.eval.comparisons import compare_results, result_label
from repspace.engines.eval.uncertainty import DEFAULT_RESAMPLES
from repspace.workflows.evaluate._subjects import Subject, encoder_subjects, space_subject

if TYPE_CHECKING:
    from repspace.workflows.evaluate._run import EvalReport


def model_specs(encoder: str | Sequence[str] | None, space: str | Sequence[str] | None) -> tuple[list[str], list[str]]:
    """The encoder specs and space names asked for, as lists (a single string is one model).

    Examples
    --------
    >>> model_specs("static", None), model_specs(["static", "minilm"], "glove")
    ((['static'], []), (['static', 'minilm'], ['glove']))
    """
    def listed(value: str | Sequence[str] | None) -> list[str]:
        if value is None:
            return []
        return [value] if isinstance(value, str) else [str(v) for v in value]

    return listed(encoder), listed(space)


def check_models(task: str, encoders: Sequence[str], spaces: Sequence[str], *, layer: Any = None,
                 sweep: bool = False) -> None:
    """Refuse, in one line and before any model loads, several models where they do not combine.

    Several models are compared on one setting each: not with a dimension or
    precision sweep, not with several layers of one encoder, and not on
    clustering (which has no per-unit scores to test them on); a model named
    twice is refused too.

    Examples
    --------
    >>> check_models("sts", ["static", "minilm"], [])
    >>> check_models("sts", ["static"], ["glove"], sweep=True)
    Traceback (most recent call last):
    repspace.core.errors.InputError: comparing several models (static, space glove) scores each as it is: \
drop --dims/--precision, or sweep one model at a time
    """
    models = [*encoders, *(f"space {s}" for s in spaces)]
    if len(models) < 2:
        return
    repeated = sorted({m for m in models if models.count(m) > 1})
    if repeated:
        raise InputError(f"{', '.join(repeated)} is given twice: name each model once")
    what = f"comparing several models ({', '.join(models)})"
    if sweep:
        raise InputError(f"{what} scores each as it is: drop --dims/--precision, or sweep one model at a time")
    if layer == "all" or (isinstance(layer, Sequence) and not isinstance(layer, str)):
        raise InputError(f"{what} takes one layer of each: --layer N, or all layers of one model at a time")
    if task == "clustering":
        raise InputError(f"{what} needs per-unit scores, and clustering has none: evaluate one model at a time")


def model_subjects(store: Store | None, encoders: Sequence[str], spaces: Sequence[str], *, layer: Any = None,
                   encoder_options: dict[str, Any] | None = None, batch_size: int = 64,
                   progress: Any = None) -> list[Subject]:
    """The subjects of the models: each encoder (``minilm`` when no model is named), then each stored space.

    ``layer`` and ``encoder_options`` apply to the encoders; with spaces alone they are refused.

    Examples
    --------
    >>> [s.label for s in model_subjects(None, ["static", "hf-layers:minilm"], [], layer=None)]
    ['static', 'hf-layers:minilm']
    """
    if spaces and not encoders and (layer is not None or encoder_options):
        raise InputError("--layer and encoder options apply to --encoder, not to a stored space")
    if spaces and store is None:
        raise InputError("a store is needed for --space and --save")
    subjects = [s for spec in (encoders or ([] if spaces else ["minilm"]))
                for s in encoder_subjects(spec, layer=layer, options=encoder_options, batch_size=batch_size,
                                          progress=progress)]
    return subjects + [space_subject(store, name, batch_size=batch_size, progress=progress) for name in spaces]


def compare_saved(store: Store, ids: Sequence[int] | None = None, *, task: str | None = None,
                  n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0, level: float = 0.95) -> EvalReport:
    """Compare results recorded in the store, on the per-unit scores they carry.

    Parameters
    ----------
    store : Store
    ids : sequence of int, optional
        The results to compare, exactly these; default: every recorded result
        of one task (the store's only task, or the one ``task`` names).
    task : str, optional
        Without ``ids``: only results of this task (``sts:stsb-en-test``) or family (``sts``).
    n_resamples, seed, level
        As in :func:`repspace.engines.eval.comparisons.compare_results`.

    Returns
    -------
    EvalReport
        The results (as :meth:`TaskResult.from_dict` reads them back) and their
        comparisons, Holm-corrected; named as in a live run (their subjects),
        with ``(#id)`` added where two share a name.

    Raises
    ------
    InputError
        An unknown or repeated id; no results; results of several tasks
        without ``ids`` or ``task`` narrowing them to one; results saved
        without per-unit scores (named by id); and whatever
        :func:`~repspace.engines.eval.comparisons.compare_results` refuses.

    Examples
    --------
    >>> import numpy as np
    >>> from repspace.engines.eval import TaskResult, Units
    >>> from repspace.store import Store
    >>> import os, tempfile
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
    >>> gold = np.arange(8.0)
    >>> for name, noise in (("a", 0.5), ("b", 3.0)):
    ...     cos = gold + np.random.default_rng(1).normal(0, noise, 8)
    ...     units = Units("spearman", (gold, cos), ("gold", "cosine"), shared=("gold",))
    ...     r = TaskResult("sts:toy", "test", "spearman", {"spearman": units.value()}, 0.0, {"subject": name},
    ...                    units=units)
    ...     _ = store.save_result(r.to_dict(), subject=name)
    >>> report = compare_saved(store, n_resamples=100)
    >>> [(c.a, c.b, round(c.difference, 3)) for c in report.comparisons]
    [('a', 'b', 0.262)]
    """
    from repspace.workflows.evaluate._run import EvalReport  # noqa: F811 - _run imports this module

    if ids is not None:
        ids = [int(i) for i in ids]
        if len(set(ids)) != len(ids):
            raise InputError(f"result ids are repeated: {', '.join(map(str, ids))}")
        by_id = {s.id: s for s in store.results()}
        unknown = [str(i) for i in ids if i not in by_id]
        if unknown:
            raise InputError(f"no saved result with id {', '.join(unknown)} (repspace eval results lists them)")
        saved = [by_id[i] for i in ids]
    else:
        saved = store.results(task=task)
        groups = list(dict.fromkeys(f"{s.task_name} ({s.split})" for s in saved))
        if not saved:
            raise InputError("no saved results to compare" + (f" of task {task}" if task else "")
                             + " (record them with repspace eval ... --save)")
        if len(groups) > 1:
            raise InputError(f"saved results of {len(groups)} tasks ({', '.join(groups)}): name one with --task, "
                             f"or give the ids to compare")
    if len(saved) < 2:
        raise InputError(f"comparing needs at least 2 models, got {len(saved)}")
    results = []
    for s in saved:
        try:
            results.append(TaskResult.from_dict(s.result))
        except InputError as e:
            raise InputError(f"saved result #{s.id}: {e}") from None
    bare = [f"#{s.id}" for s, r in zip(saved, results) if r.units is None and len(results) > 1]
    if bare and len({(r.task_name, r.split) for r in results}) == 1:
        raise InputError(f"saved result{'s' if len(bare) > 1 else ''} {', '.join(bare)} carr"
                         f"{'y' if len(bare) > 1 else 'ies'} no per-unit scores to compare on (clustering records "
                         f"none, nor did repspace before it recorded units: evaluate again with --save)")
    names = [result_label(r) for r in results]
    if len(set(names)) < len(names):
        names = [f"{name} (#{s.id})" for name, s in zip(names, saved)]
    comparisons = compare_results(results, n_resamples=n_resamples, seed=seed, level=level, names=names)
    return EvalReport(results, comparisons=comparisons)
