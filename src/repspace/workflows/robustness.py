"""The robustness check: a task scored again on meaning-preserving perturbations of its texts, as
``repspace eval robustness`` runs it.

:func:`robustness` resolves what is scored (an encoder, one layer of one, or a
stored space), loads the task's data, checks every argument before a model
loads, and calls :func:`~repspace.engines.eval.robustness.sts_robustness` or
:func:`~repspace.engines.eval.robustness.retrieval_robustness` with the
subject's caching ``encode`` (each distinct text embedded once).

Examples
--------
>>> from repspace.store import example_file
>>> path = example_file("toy-test.csv", "A man is playing a guitar.,A man plays the guitar.,4.8\\n"
...                     "A woman is slicing an onion.,A woman is cutting an onion.,4.2\\n"
...                     "Stocks fell sharply.,The cat is sleeping.,0.0\\n")
>>> r = robustness("sts", path, encoder="static", perturbations="casing,punctuation", bootstrap=0)
>>> r.task_name, r.info["subject"], [p.perturbation for p in r.perturbed]
('sts:toy-test', 'static', ['casing', 'punctuation'])
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from repspace.core.checks import check_choice, check_scalar
from repspace.core.errors import InputError
from repspace.core.store import Store
from repspace.engines.eval.perturb import DEFAULT_RATE, PERTURBATIONS, parse_perturbations
from repspace.engines.eval.retrieval import load_beir
from repspace.engines.eval.robustness import RobustnessResult, retrieval_robustness, sts_robustness
from repspace.engines.eval.sts import load_sts
from repspace.engines.eval.uncertainty import DEFAULT_RESAMPLES
from repspace.workflows.evaluate import encoder_subjects, space_subject

__all__ = ["ROBUSTNESS_TASKS", "robustness"]

#: The tasks a robustness check runs on.
ROBUSTNESS_TASKS = ("sts", "retrieval")


def robustness(task: str, source: str | Path, *, perturbations: str | Sequence[str] = PERTURBATIONS,
               rate: float = DEFAULT_RATE, seed: int = 0, bootstrap: int = DEFAULT_RESAMPLES,
               store: Store | None = None, encoder: str | None = None, space: str | None = None,
               layer: int | None = None, encoder_options: dict[str, Any] | None = None, batch_size: int = 64,
               progress: Any = None, split: str = "test") -> RobustnessResult:
    """Score a task on its texts and on each perturbation of them; report each drop with its interval.

    Parameters
    ----------
    task : ``"sts"`` or ``"retrieval"``
        STS perturbs both sentences of every pair; retrieval perturbs the
        queries only (the documents as they are, as PTEB does).
    source : str or Path
        An STS CSV file, or a BEIR folder.
    perturbations : str or sequence of str
        Names of :data:`~repspace.engines.eval.perturb.PERTURBATIONS` (``"typos,casing"``,
        ``"all"``); default every one.
    rate : float
        Share of each text's eligible sites each perturbation changes, rounded up (in (0, 1]).
    seed : int
        Seeds the perturbations, the bootstrap and the randomization test.
    bootstrap : int
        Resamples behind the 95% intervals and the tests (0: the scores and drops alone).
    store : Store, optional
        Needed for ``space``.
    encoder : str, optional
        Registry spec; the default when neither ``encoder`` nor ``space`` is given is ``minilm``.
    space : str, optional
        A stored space instead: the texts it holds keep their stored vectors,
        perturbed ones are embedded with the space's encoder.
    layer : int, optional
        One layer of a layered encoder (``hf-layers:minilm``).
    encoder_options : dict, optional
        ``pooling``, ``prompt``...
    batch_size : int
        Texts per encoder batch.
    progress : callable, optional
        ``(phase, done, total)``.
    split : str
        Retrieval: the qrels split.

    Returns
    -------
    RobustnessResult
        With ``subject`` and the subject's description (encoder or space) in its info.

    Raises
    ------
    InputError
        A bad task, perturbation, rate, seed or bootstrap count, ``synonyms``
        without WordNet, both an encoder and a space, a space without a store,
        or several layers: before any model loads.

    Examples
    --------
    >>> from repspace.store import example_file
    >>> path = example_file("toy-test.csv", "A man is playing a guitar.,A man plays the guitar.,4.8\\n"
    ...                     "A woman is slicing an onion.,A woman is cutting an onion.,4.2\\n"
    ...                     "Stocks fell sharply.,The cat is sleeping.,0.0\\n")
    >>> r = robustness("sts", path, encoder="static", perturbations="typos", rate=1.0, bootstrap=0)
    >>> r.main_metric, round(r.original, 3), r.perturbed[0].changed, r.perturbed[0].texts
    ('spearman', 1.0, 6, 6)
    """
    check_choice(task, "task", ROBUSTNESS_TASKS)
    names = parse_perturbations(perturbations)
    check_scalar(rate, "rate", float, low=0, high=1, include="right")
    check_scalar(seed, "seed", int, low=0, high=2**32, include="left")
    check_scalar(bootstrap, "bootstrap", int, low=0)
    if encoder is not None and space is not None:
        raise InputError("give --encoder or --space, not both")
    if space is not None and store is None:
        raise InputError("a store is needed for --space")
    if layer == "all" or (isinstance(layer, Sequence) and not isinstance(layer, str)):
        raise InputError("a robustness check scores one layer: pick one with --layer N")
    data = load_sts(source) if task == "sts" else load_beir(source, split=split)
    if space is not None:
        if layer is not None or encoder_options:
            raise InputError("--layer and encoder options apply to --encoder, not to a stored space")
        subject = space_subject(store, space, batch_size=batch_size, progress=progress)
    else:
        (subject,) = encoder_subjects(encoder or "minilm", layer=layer, options=encoder_options,
                                      batch_size=batch_size, progress=progress)
    options = {"rate": rate, "seed": seed, "bootstrap": bootstrap}
    if task == "sts":
        result = sts_robustness(subject.encode, data, names, **options)
    else:
        result = retrieval_robustness(subject.encode, data, names, **options)
    return result.with_info(subject=subject.label, **subject.info)
