"""Classification from a training split: the few-shot probe curve (FEET) and kNN classification (MINERS).

Both read a labelled test FILE and a labelled training file with the same
columns (:func:`~repspace.engines.eval.labels.load_labelled`), score each
subject (an encoder, each layer of one, or a stored space whose texts are
looked up and the others embedded with its encoder) and record the results
like the other tasks (:func:`~repspace.workflows.evaluate.save_results`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from repspace.core.checks import check_choice, check_scalar
from repspace.core.errors import InputError
from repspace.core.store import Store
from repspace.engines.eval.fewshot import DEFAULT_DRAWS, DEFAULT_SHOTS, few_shot, parse_counts
from repspace.engines.eval.knn_classify import DEFAULT_KS, KNN_METRICS, KNN_VOTES, knn_classification
from repspace.engines.eval.labels import LabelledTexts, load_labelled
from repspace.engines.eval.mteb_format import data_revision
from repspace.engines.eval.uncertainty import DEFAULT_RESAMPLES
from repspace.workflows.evaluate._intrinsic import _finish, _subjects
from repspace.workflows.evaluate._run import EvalReport


def _splits(source: str | Path, train: str | Path | None, text_col: str, label_col: str,
            command: str) -> tuple[LabelledTexts, LabelledTexts, str]:
    """The test and training splits (both read and checked before any model loads) and their joint revision."""
    if train is None:
        raise InputError(f"{command} needs a training split: --train FILE (same columns as the test FILE)")
    test, training = load_labelled(source, text_col, label_col), load_labelled(train, text_col, label_col)
    if len(set(training.labels)) < 2:
        raise InputError(f"the training split {Path(train).name} holds 1 class ({training.labels[0]!r}); "
                         "at least 2 are needed")
    revision = hashlib.sha256((data_revision(train) + data_revision(source)).encode("ascii")).hexdigest()
    return test, training, revision


def run_fewshot(source: str | Path, *, train: str | Path | None, store: Store | None = None,
                encoder: str | None = None, space: str | None = None, layer: int | str | None = None,
                encoder_options: dict[str, Any] | None = None, shots: str | Sequence[int] = DEFAULT_SHOTS,
                draws: int = DEFAULT_DRAWS, text_col: str = "text", label_col: str = "label", save: bool = False,
                batch_size: int = 64, progress: Any = None, bootstrap: int = DEFAULT_RESAMPLES,
                seed: int = 0) -> EvalReport:
    """The ``repspace eval fewshot`` command: the k-shot probes and the full probe of each subject.

    Parameters
    ----------
    source : str or Path
        The labelled test split (CSV, TSV or JSON lines).
    train : str or Path
        The labelled training split, same columns (required).
    store, encoder, space, layer, encoder_options, batch_size, progress, save
        As for :func:`~repspace.workflows.evaluate.run_evalrank`: the subjects
        (default encoder ``minilm``), and whether their results are recorded.
    shots : str or sequence of int
        Examples per class (``"1,4,16"``).
    draws : int
        Seeded draws of each k-shot setting.
    text_col, label_col : str
        The columns (keys) of the texts and the labels.
    bootstrap, seed : int
        Resamples of the test items behind each interval (0: none); the seed of the draws and the bootstrap.

    Returns
    -------
    EvalReport
        Per subject, the results of :func:`~repspace.engines.eval.fewshot.few_shot`
        (``fewshot-<k>:<data>`` ..., ``fewshot-all:<data>``), each with ``subject`` in its info.

    Examples
    --------
    >>> from repspace.store import example_file, example_store
    >>> store = example_store()
    >>> texts = ["good", "great", "fine", "bad", "awful", "poor"]
    >>> _ = store.create_space("mood", dim=2).add(texts, [[1.0, 0.1], [0.9, 0.2], [0.8, 0.0], [0.1, 1.0],
    ...                                                   [0.0, 0.9], [0.2, 0.8]], texts=texts)
    >>> rows = "text,label\\ngood,pos\\ngreat,pos\\nbad,neg\\nawful,neg\\n"
    >>> report = run_fewshot(example_file("test.csv", "text,label\\nfine,pos\\npoor,neg\\n"),
    ...                      train=example_file("train.csv", rows), store=store, space="mood", shots="1,2",
    ...                      draws=2, bootstrap=0)
    >>> [(r.task_name, r.main_score) for r in report.results]
    [('fewshot-1:test', 1.0), ('fewshot-2:test', 1.0), ('fewshot-all:test', 1.0)]
    """
    ks = parse_counts(shots)
    check_scalar(draws, "draws", int, low=1)
    check_scalar(bootstrap, "bootstrap", int, low=0)
    check_scalar(seed, "seed", int, low=0, high=2**32, include="left")
    test, training, revision = _splits(source, train, text_col, label_col, "few-shot classification")
    smallest = min((training.labels.count(c), c) for c in set(training.labels))
    if smallest[0] < ks[-1]:
        raise InputError(f"class {smallest[1]!r} has {smallest[0]} training item{'s' if smallest[0] != 1 else ''}, "
                         f"fewer than the {ks[-1]} shots per class: lower --shots")
    training_name = Path(train).name  # type: ignore[arg-type]  # _splits refused None
    subjects = _subjects(store, encoder, space, layer, encoder_options, save, batch_size, progress)
    results = []
    for subject in subjects:
        for result in few_shot(subject.encode, test, train=training, shots=ks, draws=draws, seed=seed,
                               bootstrap=bootstrap):
            results.append(result.with_info(subject=subject.label, train_file=training_name, **subject.info))
    return _finish(results, subjects, revision, store, save)


def run_knn(source: str | Path, *, train: str | Path | None, store: Store | None = None,
            encoder: str | None = None, space: str | None = None, layer: int | str | None = None,
            encoder_options: dict[str, Any] | None = None, ks: str | Sequence[int] = DEFAULT_KS,
            metric: str = "cosine", vote: str = "majority", text_col: str = "text", label_col: str = "label",
            save: bool = False, batch_size: int = 64, progress: Any = None, bootstrap: int = DEFAULT_RESAMPLES,
            seed: int = 0) -> EvalReport:
    """The ``repspace eval knn`` command: kNN classification of the test split by the training split (MINERS).

    Parameters
    ----------
    source, train, store, encoder, space, layer, encoder_options, text_col, label_col, save, batch_size, progress
        As for :func:`run_fewshot`.
    ks : str or sequence of int
        Neighbour counts (``"1,5,10"``).
    metric : {"cosine", "euclidean"}
        How neighbours are ranked (MINERS: ``euclidean``).
    vote : {"majority", "distance"}
        One vote per neighbour, a tie to the nearest (MINERS); or inverse-distance weights.
    bootstrap, seed : int
        Resamples of the test items behind each interval (0: none), and their seed.

    Returns
    -------
    EvalReport
        Per subject, the results of :func:`~repspace.engines.eval.knn_classify.knn_classification`
        (``knn-<k>:<data>``), each with ``subject`` in its info.

    Examples
    --------
    >>> from repspace.store import example_file
    >>> train = example_file("train.csv", "text,label\\na cat,pets\\na dog,pets\\nstocks fell,money\\n"
    ...                                   "bonds fell,money\\n")
    >>> report = run_knn(example_file("test.csv", "text,label\\na kitten,pets\\nshares fell,money\\n"),
    ...                  train=train, encoder="static", ks="1", bootstrap=0)
    >>> [(r.task_name, r.info["metric"], r.info["subject"]) for r in report.results]
    [('knn-1:test', 'cosine', 'static')]
    """
    most = parse_counts(ks, "k")[-1]
    check_choice(metric, "metric", KNN_METRICS)
    check_choice(vote, "vote", KNN_VOTES)
    check_scalar(bootstrap, "bootstrap", int, low=0)
    check_scalar(seed, "seed", int, low=0, high=2**32, include="left")
    test, training, revision = _splits(source, train, text_col, label_col, "kNN classification")
    if most > len(training):
        raise InputError(f"k={most} neighbours, but the training split holds {len(training)} items: lower --k")
    training_name = Path(train).name  # type: ignore[arg-type]  # _splits refused None
    subjects = _subjects(store, encoder, space, layer, encoder_options, save, batch_size, progress)
    results = []
    for subject in subjects:
        for result in knn_classification(subject.encode, test, train=training, ks=ks, metric=metric, vote=vote,
                                         seed=seed, bootstrap=bootstrap):
            results.append(result.with_info(subject=subject.label, train_file=training_name, **subject.info))
    return _finish(results, subjects, revision, store, save)
