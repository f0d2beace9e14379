"""Compare results recorded in the store (``save=True``) on the per-unit scores they carry.

The saved results are read back (:meth:`TaskResult.from_dict`) and compared as
a live run of several models compares them
(:func:`repspace.engines.eval.comparisons.compare_results`).
"""

from __future__ import annotations

from collections.abc import Sequence

from repspace.core.errors import InputError
from repspace.core.store import Store
from repspace.engines.eval import TaskResult
from repspace.engines.eval.comparisons import compare_results, result_label
from repspace.engines.eval.uncertainty import DEFAULT_RESAMPLES
from repspace.workflows.evaluate._run import EvalReport


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
