"""Intrinsic evaluations of a subject (an encoder, each layer of one, or a stored space): EvalRank and WEAT.

Both read their words or sentences from files, score every subject, and
record the results like the other tasks (:func:`~repspace.workflows.evaluate.save_results`).
A stored space answers word lookups through its item ids (as ``wordsim`` and
``analogy`` read it: GloVe ingested with its words as ids) and sentence pairs
through the texts it holds, embedding the others with its own encoder.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from repspace.core.checks import check_choice, check_scalar
from repspace.core.errors import InputError
from repspace.core.store import Store
from repspace.engines.eval.bias import DEFAULT_PERMUTATIONS, load_word_set, weat
from repspace.engines.eval.evalrank import evalrank
from repspace.engines.eval.mteb_format import data_revision
from repspace.engines.eval.sts import StsPairs, load_sts
from repspace.engines.eval.uncertainty import DEFAULT_RESAMPLES
from repspace.engines.eval.words import WordPairs, WordVectors, load_word_pairs
from repspace.workflows.evaluate._run import EvalReport, save_results
from repspace.workflows.evaluate._subjects import Subject, encoder_subjects, space_subject

#: What an EvalRank file holds: sentence pairs (an STS CSV) or word pairs (a word-similarity file).
EVALRANK_KINDS = ("sts", "wordsim")


def load_evalrank_data(source: str | Path, kind: str | None = None) -> StsPairs | WordPairs:
    """Read the pairs EvalRank ranks: an STS CSV (``.csv``) or a word-similarity file (any other suffix).

    Parameters
    ----------
    source : str or Path
        The file.
    kind : {"sts", "wordsim"}, optional
        Overrides the guess from the suffix.

    Examples
    --------
    >>> from repspace.store import example_file
    >>> type(load_evalrank_data(example_file("ws.txt", "cat kitten 9.5\\ncat car 1.0\\n"))).__name__
    'WordPairs'
    >>> type(load_evalrank_data(example_file("ws.txt", "a cat,a kitten,4.5\\n"), kind="sts")).__name__
    'StsPairs'
    """
    path = Path(source)
    kind = check_choice(kind, "kind", EVALRANK_KINDS) if kind is not None else (
        "sts" if path.suffix.lower() == ".csv" else "wordsim")
    return load_sts(path) if kind == "sts" else load_word_pairs(path)


def _subjects(store: Store | None, encoder: str | None, space: str | None, layer: Any,
              encoder_options: dict[str, Any] | None, save: bool, batch_size: int, progress: Any) -> list[Subject]:
    if encoder is not None and space is not None:
        raise InputError("give --encoder or --space, not both")
    if (space is not None or save) and store is None:
        raise InputError("a store is needed for --space and --save")
    if space is not None:
        if layer is not None or encoder_options:
            raise InputError("--layer and encoder options apply to --encoder, not to a stored space")
        return [space_subject(store, space, batch_size=batch_size, progress=progress)]  # type: ignore[arg-type]
    return encoder_subjects(encoder or "minilm", layer=layer, options=encoder_options, batch_size=batch_size,
                            progress=progress)


def _words(subject: Subject) -> Any:
    """A space's items as a vocabulary (ids are the words); an encoder's cache otherwise."""
    if subject.space is not None and subject.vectors is not None:
        return WordVectors(subject.ids, subject.vectors)
    return subject.encode


def _finish(results: list[Any], subjects: list[Subject], revision: str, store: Store | None,
            save: bool) -> EvalReport:
    results = [r.with_mteb(dataset_revision=revision) for r in results]
    saved = save_results(store, subjects, results) if save else []  # type: ignore[arg-type]
    return EvalReport(results, saved=saved)


def run_evalrank(source: str | Path, *, kind: str | None = None, store: Store | None = None,
                 encoder: str | None = None, space: str | None = None, layer: int | str | None = None,
                 encoder_options: dict[str, Any] | None = None, min_score: float | None = None,
                 top_share: float | None = None, background: int = 0, save: bool = False, batch_size: int = 64,
                 progress: Any = None, bootstrap: int = DEFAULT_RESAMPLES, seed: int = 0) -> EvalReport:
    """The ``repspace eval evalrank`` command: EvalRank of each subject on one file of pairs.

    Parameters
    ----------
    source : str or Path
        An STS CSV or a word-similarity file (:func:`load_evalrank_data`).
    kind : {"sts", "wordsim"}, optional
        What the file holds, when its suffix does not say.
    store, encoder, space, layer, encoder_options, batch_size, progress, save
        As for :func:`~repspace.workflows.evaluate.run`: the subjects (default
        encoder ``minilm``), and whether their results are recorded.
    min_score, top_share : float, optional
        The cut of the positive pairs (:func:`repspace.engines.eval.evalrank.evalrank`):
        default ``gold >= 4.0`` for STS, the top quarter for word pairs.
    background : int
        Word pairs on a space: its first N items join the pool.
    bootstrap, seed : int
        Resamples of the positive pairs behind the MRR's interval (0: none), and their seed.

    Examples
    --------
    >>> from repspace.store import example_file, example_store
    >>> store = example_store()
    >>> _ = store.create_space("words", dim=2).add(["cat", "kitten", "car", "truck", "dog"],
    ...                                            [[1.0, 0.1], [0.9, 0.2], [0.1, 1.0], [0.3, 0.9], [0.8, 0.5]])
    >>> pairs = example_file("ws.txt", "cat kitten 9.5\\ncar truck 9.0\\ncat car 1.0\\ndog kitten 6.0\\n")
    >>> r = run_evalrank(pairs, store=store, space="words", min_score=9.0).results[0]
    >>> r.task_name, r.main_score, r.info["n_pairs"], r.info["subject"]
    ('evalrank:ws', 1.0, 2, 'space words')
    """
    check_scalar(bootstrap, "bootstrap", int, low=0)
    check_scalar(seed, "seed", int, low=0, high=2**32, include="left")
    check_scalar(background, "background", int, low=0)
    data = load_evalrank_data(source, kind)
    if background and not isinstance(data, WordPairs):
        raise InputError("--background applies to word pairs (distractor words), not to sentence pairs")
    if background and space is None:
        raise InputError("--background takes words from a --space's vocabulary; an encoder has none")
    subjects = _subjects(store, encoder, space, layer, encoder_options, save, batch_size, progress)
    results = []
    for subject in subjects:
        source_vectors = _words(subject) if isinstance(data, WordPairs) else subject.encode
        result = evalrank(source_vectors, data, min_score=min_score, top_share=top_share, background=background,
                          bootstrap=bootstrap, seed=seed)
        results.append(result.with_info(subject=subject.label, **subject.info))
    return _finish(results, subjects, data_revision(source), store, save)


def run_weat(x: str | Path, y: str | Path, a: str | Path, b: str | Path, *, store: Store | None = None,
             encoder: str | None = None, space: str | None = None, layer: int | str | None = None,
             encoder_options: dict[str, Any] | None = None, permutations: int = DEFAULT_PERMUTATIONS,
             save: bool = False, batch_size: int = 64, progress: Any = None, bootstrap: int = DEFAULT_RESAMPLES,
             seed: int = 0) -> EvalReport:
    """The ``repspace eval weat`` command: WEAT of each subject on four word-set files.

    Parameters
    ----------
    x, y, a, b : str or Path
        Target sets X, Y and attribute sets A, B, one word or phrase per line
        (:func:`repspace.engines.eval.bias.load_word_set`); named after their files.
    store, encoder, space, layer, encoder_options, batch_size, progress, save
        As for :func:`run_evalrank`.
    permutations : int
        Partitions behind the p-value (exact when there are at most this many); 0: no test.
    bootstrap, seed : int
        Resamples behind the effect size's interval (0: none), and the seed of
        the resamples and of the random partitions.

    Examples
    --------
    >>> from repspace.store import example_file, example_store
    >>> words = {"rose": [1.0, 0.2], "tulip": [0.9, 0.1], "ant": [0.1, 1.0], "wasp": [0.2, 0.8],
    ...          "love": [1.0, 0.0], "peace": [0.8, 0.3], "filth": [0.0, 1.0], "death": [0.3, 0.9]}
    >>> store = example_store()
    >>> _ = store.create_space("words", dim=2).add(list(words), list(words.values()))
    >>> files = [example_file(f"{stem}.txt", text) for stem, text in [
    ...     ("flowers", "rose\\ntulip\\n"), ("insects", "ant\\nwasp\\n"), ("pleasant", "love\\npeace\\n"),
    ...     ("unpleasant", "filth\\ndeath\\n")]]
    >>> r = run_weat(*files, store=store, space="words").results[0]
    >>> r.task_name, round(r.main_score, 3), r.info["p_value_method"]
    ('weat:flowers-insects-pleasant-unpleasant', 1.993, 'exact')
    """
    check_scalar(permutations, "permutations", int, low=0)
    check_scalar(bootstrap, "bootstrap", int, low=0)
    check_scalar(seed, "seed", int, low=0, high=2**32, include="left")
    files = [Path(p) for p in (x, y, a, b)]
    sets = [load_word_set(p) for p in files]  # every file read (and checked) before any model loads
    names = [p.stem for p in files]
    subjects = _subjects(store, encoder, space, layer, encoder_options, save, batch_size, progress)
    results = []
    for subject in subjects:
        result = weat(_words(subject), *sets, names=names, permutations=permutations, bootstrap=bootstrap,
                      seed=seed)
        results.append(result.with_info(subject=subject.label, **subject.info))
    revision = hashlib.sha256("".join(data_revision(p) for p in files).encode("ascii")).hexdigest()
    return _finish(results, subjects, revision, store, save)

