"""The ``repspace eval probing`` command: SentEval's probing tasks for an encoder, each of its layers, or a space.

Every task file is read (and checked) before a model loads; each subject (a
layer of ``hf-layers:minilm`` with ``layer="all"``: one forward pass for all
of them) is probed on each task (:func:`repspace.engines.eval.probing.probing`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from repspace.core.checks import check_scalar
from repspace.core.store import Store
from repspace.engines.eval.mteb_format import data_revision
from repspace.engines.eval.probing import load_probing_dir, probing
from repspace.engines.eval.uncertainty import DEFAULT_RESAMPLES
from repspace.workflows.evaluate._intrinsic import _subjects
from repspace.workflows.evaluate._run import EvalReport, save_results


def run_probing(source: str | Path, *, tasks: list[str] | None = None, store: Store | None = None,
                encoder: str | None = None, space: str | None = None, layer: int | str | None = None,
                encoder_options: dict[str, Any] | None = None, save: bool = False, batch_size: int = 64,
                progress: Any = None, bootstrap: int = DEFAULT_RESAMPLES, seed: int = 0) -> EvalReport:
    """Probe each subject on each task of a SentEval probing folder (or one task file).

    Parameters
    ----------
    source : str or Path
        SentEval's ``data/probing`` folder (``<task>.txt`` files) or one task file
        (:func:`repspace.engines.eval.probing.load_probing_dir`).
    tasks : list of str, optional
        Only these tasks (file stems such as ``sentence_length``), in this order.
    store, encoder, space, layer, encoder_options, batch_size, progress, save
        As for :func:`~repspace.workflows.evaluate.run`: the subjects (default
        encoder ``minilm``; ``layer="all"`` on an ``hf-layers`` encoder: every
        layer), and whether their results are recorded.
    bootstrap, seed : int
        Resamples of the test sentences behind each accuracy's interval (0: none), and their seed.

    Returns
    -------
    EvalReport
        One result per subject and task, subject by subject, tasks in order;
        each carries the SHA-256 of its task file as ``dataset_revision``.

    Examples
    --------
    >>> import numpy as np
    >>> from repspace.store import example_file, example_store
    >>> texts = ["a b", "a b c d e", "c d", "c d e f g", "e f", "e f g h i"]
    >>> store = example_store()
    >>> _ = store.create_space("toy", dim=1).add([str(i) for i in range(6)], [[len(t)] for t in texts], texts=texts)
    >>> lines = [f"{s}\\t{'long' if len(t) > 4 else 'short'}\\t{t}" for s, t in zip(["tr"] * 4 + ["va", "te"], texts)]
    >>> task = example_file("sentence_length.txt", "\\n".join(lines) + "\\n")
    >>> r = run_probing(task, store=store, space="toy", bootstrap=0).results[0]
    >>> r.task_name, r.main_score, r.info["probing_task"], r.info["subject"]
    ('probing:sentence_length', 1.0, 'SentLen', 'space toy')
    """
    check_scalar(bootstrap, "bootstrap", int, low=0)
    check_scalar(seed, "seed", int, low=0, high=2**32, include="left")
    data = load_probing_dir(source, tasks)
    path = Path(source)
    revisions = [data_revision(path / f"{d.name}.txt" if path.is_dir() else path) for d in data]
    subjects = _subjects(store, encoder, space, layer, encoder_options, save, batch_size, progress)
    results = []
    for subject in subjects:
        for d, revision in zip(data, revisions, strict=True):
            result = probing(subject.encode, d, bootstrap=bootstrap, seed=seed)
            results.append(result.with_info(subject=subject.label, **subject.info)
                           .with_mteb(dataset_revision=revision))
    saved = save_results(store, subjects, results) if save else []  # type: ignore[arg-type]
    return EvalReport(results, saved=saved)


__all__ = ["run_probing"]
