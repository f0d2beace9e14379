"""Run an evaluation task over subjects and compression settings; record the results."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from repspace.errors import InputError
from repspace.eval._results import TaskResult
from repspace.eval.labels import classification, clustering, load_labelled
from repspace.eval.pairclass import load_pairs, pairclass
from repspace.eval.retrieval import load_beir, multivector_retrieval, retrieval
from repspace.eval.sts import load_sts, sts
from repspace.eval.words import WordVectors, analogy, load_analogies, load_word_pairs, wordsim
from repspace.evaluate._subjects import Subject
from repspace.store import Store

#: Task names, in the order the CLI lists them.
TASKS = ("sts", "retrieval", "wordsim", "analogy", "clustering", "classification", "pairclass")


def load_data(task: str, source: str | Path, *, split: str = "test", text_col: str = "text",
              label_col: str = "label") -> Any:
    """Read a task's data from a file or folder.

    Parameters
    ----------
    task : str
        One of :data:`TASKS`.
    source : str or Path
        The file (folder for ``retrieval``).
    split : str
        ``retrieval``: which ``qrels/<split>.tsv``.
    text_col, label_col : str
        ``clustering``/``classification``: the columns of the labelled file.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "pairs.csv")
    >>> _ = open(p, "w").write("a cat,a kitten,5\\na cat,a car,0\\n")
    >>> len(load_data("sts", p))
    2
    """
    _check_task(task)
    if task == "sts":
        return load_sts(source)
    if task == "retrieval":
        return load_beir(source, split=split)
    if task == "wordsim":
        return load_word_pairs(source)
    if task == "analogy":
        return load_analogies(source)
    if task == "pairclass":
        return load_pairs(source)
    return load_labelled(source, text_col=text_col, label_col=label_col)


def _check_task(task: str) -> None:
    if task not in TASKS:
        raise InputError(f"unknown task {task!r}; tasks: {', '.join(TASKS)}")


def space_labels(subject: Subject, field: str) -> tuple[np.ndarray, list[Any]]:
    """A space subject's vectors and the labels in metadata ``field`` (items without it are skipped)."""
    if subject.space is None or subject.vectors is None:
        raise InputError("labels from metadata need a stored space (--space)")
    keep = [i for i, m in enumerate(subject.metadata) if m.get(field) is not None]
    if not keep:
        raise InputError(f"no item of space {subject.space.name} has metadata field {field!r}")
    return subject.vectors[keep], [subject.metadata[i][field] for i in keep]


def run_task(task: str, subject: Subject, data: Any = None, *, codec: Any = None, index: str | None = None,
             label_field: str | None = None, restrict_vocab: int | None = None, lexical: str | None = None,
             lexical_weight: float = 1.0, multivector: bool = False, candidates: int = 100) -> TaskResult:
    """Run one task on one subject (with one compression setting); the result records the subject.

    Parameters
    ----------
    task : str
        One of :data:`TASKS`.
    subject : Subject
        From :func:`encoder_subjects` or :func:`space_subject`.
    data : object
        From :func:`load_data`; for ``clustering``/``classification`` on a
        space it may be ``None`` with ``label_field`` naming a metadata field.
    codec : Codec, optional
        A compression setting.
    index : str, optional
        ``retrieval``: an approximate index spec (``hnsw32``) instead of exact search.
    label_field : str, optional
        ``clustering``/``classification`` on a space: the metadata field holding the labels.
    restrict_vocab : int, optional
        ``wordsim``/``analogy`` on a space: only its first N items.
    lexical, lexical_weight : optional
        ``retrieval``: ``"bm25"`` alone or ``"hybrid"`` (dense + BM25 by reciprocal-rank fusion).
    multivector, candidates : optional
        ``retrieval`` with an ``hf-layers`` encoder: late interaction over token states,
        MUVERA shortlist of ``candidates`` documents reranked by Chamfer similarity.
    """
    _check_task(task)
    if task == "sts":
        result = sts(subject.encode, data, codec=codec)
    elif task == "retrieval" and multivector:
        if subject.space is not None or codec is not None or lexical is not None:
            raise InputError("multi-vector retrieval takes an hf-layers encoder, without --space, sweeps or BM25")
        layer = subject.info.get("layer")
        result = multivector_retrieval(subject.info["encoder"], data, layer=-1 if layer is None else int(layer),
                                       candidates=candidates)
    elif task == "retrieval":
        from_space = _documents_from_space(subject, data)
        result = retrieval(subject.encode, data, codec=codec, index=index, lexical=lexical,
                           lexical_weight=lexical_weight)
        if subject.space is not None:
            result = result.with_info(documents_from_space=from_space)
    elif task == "wordsim":
        result = wordsim(_word_source(subject), data, codec=codec, restrict_vocab=restrict_vocab)
    elif task == "analogy":
        result = analogy(_word_source(subject), data, codec=codec, restrict_vocab=restrict_vocab)
    elif task == "pairclass":
        result = pairclass(subject.encode, data, codec=codec)
    else:
        fn = clustering if task == "clustering" else classification
        if label_field is not None:
            vectors, labels = space_labels(subject, label_field)
            result = fn(vectors, labels, codec=codec)
        elif data is None:
            raise InputError(f"{task} needs a labelled file, or --space with --label-field")
        else:
            result = fn(subject.encode, data.labels, texts=data.texts, codec=codec)
    return result.with_info(subject=subject.label, **subject.info)


def _documents_from_space(subject: Subject, data: Any) -> int:
    """Corpus documents whose id is an item of the space take that item's vector (whatever its text).

    A space built from the corpus with another text layout (the body without
    the title, say) is then still reused rather than embedded again.
    """
    if subject.space is None or subject.vectors is None:
        return 0
    row_of = {item_id: i for i, item_id in enumerate(subject.ids)}
    pairs = [(text, row_of[doc]) for doc, text in zip(data.corpus_ids, data.corpus_texts) if doc in row_of]
    if pairs:
        subject.encode.remember([t for t, _ in pairs], subject.vectors[[r for _, r in pairs]])
    return len(pairs)


def _word_source(subject: Subject) -> Any:
    if subject.space is not None and subject.vectors is not None:
        return WordVectors(subject.ids, subject.vectors)
    return subject.encode


def evaluate(task: str, subjects: Sequence[Subject], data: Any = None, *, codecs: Sequence[Any] | None = None,
             **options: Any) -> list[TaskResult]:
    """Run a task over every subject and every compression setting.

    Each distinct text is embedded once per subject (the subjects' caches),
    and once for all layers of a layered encoder.

    Parameters
    ----------
    task : str
    subjects : sequence of Subject
    data : object
        From :func:`load_data`.
    codecs : sequence of Codec, optional
        Compression settings to sweep; ``None`` scores the vectors as they are.
    **options
        Passed to :func:`run_task`.

    Returns
    -------
    list of TaskResult
        Subject-major, then codec order.

    Examples
    --------
    >>> import numpy as np
    >>> from repspace.evaluate import encoder_subjects
    >>> from repspace.eval.sts import StsPairs
    >>> pairs = StsPairs(["a cat", "a man runs", "stocks fell"], ["a kitten", "a man jogs", "a cat"],
    ...                  np.array([5.0, 4.0, 0.0]), "toy")
    >>> [r.task_name for r in evaluate("sts", encoder_subjects("static"), pairs)]
    ['sts:toy']
    """
    if not subjects:
        raise InputError("nothing to evaluate: give an encoder or a space")
    out = []
    for subject in subjects:
        for codec in (codecs or [None]):
            out.append(run_task(task, subject, data, codec=codec, **options))
    return out


def save_results(store: Store, subjects: Sequence[Subject], results: Sequence[TaskResult]) -> list[int]:
    """Record results in the store: those of a space linked to the generation that was read.

    Returns
    -------
    list of int
        The ids of the recorded results.
    """
    by_label = {s.label: s for s in subjects}
    ids = []
    for result in results:
        subject = by_label[result.info["subject"]]
        if subject.space is not None:
            ids.append(store.save_result(result.to_dict(), space=subject.space,
                                         generation=subject.info["generation"]))
        else:
            ids.append(store.save_result(result.to_dict(), subject=subject.label))
    return ids


@dataclass(frozen=True)
class EvalReport:
    """What :func:`run` did: the results, the sweep table and files written.

    Attributes
    ----------
    results : list of TaskResult
    tradeoff : list of dict
        For a compression sweep: quality against bytes per vector
        (:func:`repspace.eval.compression.tradeoff_rows`); empty otherwise.
    plot : Path or None
        The trade-off PNG, for a sweep.
    saved : list of int
        Ids of the results recorded in the store (``save=True``).
    """

    results: list[TaskResult]
    tradeoff: list[dict[str, Any]] = field(default_factory=list)
    plot: Path | None = None
    saved: list[int] = field(default_factory=list)

    def to_dict(self) -> list[dict[str, Any]]:
        """The ``--json`` output: one MTEB-shaped TaskResult per subject and setting."""
        return [r.to_dict() for r in self.results]


def run(task: str, source: str | Path | None, *, store: Store | None = None, encoder: str | None = None,
        space: str | None = None, layer: int | str | None = None, encoder_options: dict[str, Any] | None = None,
        dims: str | None = None, precision: str | None = None, methods: Sequence[str] = ("prefix", "pca"),
        plot: str | Path | None = None, save: bool = False, batch_size: int = 64, progress: Any = None,
        split: str = "test", text_col: str = "text", label_col: str = "label", **options: Any) -> EvalReport:
    """The whole ``repspace eval TASK`` command: resolve, load, evaluate, sweep, plot, record.

    Parameters
    ----------
    task : str
        One of :data:`TASKS`.
    source : str, Path or None
        The task's data (see :func:`load_data`); ``None`` only for
        ``clustering``/``classification`` on a space with ``label_field``.
    store : Store, optional
        Needed for ``space`` and ``save``.
    encoder : str, optional
        Registry spec; the default when neither ``encoder`` nor ``space`` is given is ``minilm``.
    space : str, optional
        A stored space instead of an encoder.
    layer : int or ``"all"``, optional
        For layered encoders.
    dims, precision : str, optional
        A compression sweep: ``"16,32,full"`` and ``"float32,int8,binary"``.
    plot : path, optional
        Where the sweep's PNG goes (default ``<task>-tradeoff.png``).
    save : bool
        Record the results in the store.
    **options
        ``index``, ``label_field``, ``restrict_vocab``: see :func:`run_task`.
    """
    from repspace.eval import compression
    from repspace.evaluate._subjects import encoder_subjects, space_subject

    _check_task(task)
    if encoder is not None and space is not None:
        raise InputError("give --encoder or --space, not both")
    if (space is not None or save) and store is None:
        raise InputError("a store is needed for --space and --save")
    sweep = dims is not None or precision is not None
    if sweep and layer == "all":
        raise InputError("a compression sweep takes one layer; pick one with --layer N")
    data = None if source is None else load_data(task, source, split=split, text_col=text_col, label_col=label_col)
    if space is not None:
        if layer is not None or encoder_options:
            raise InputError("--layer and encoder options apply to --encoder, not to a stored space")
        subjects = [space_subject(store, space, batch_size=batch_size, progress=progress)]
    else:
        subjects = encoder_subjects(encoder or "minilm", layer=layer, options=encoder_options,
                                    batch_size=batch_size, progress=progress)
    codecs = None
    if sweep:
        codecs = compression.sweep_codecs(compression.parse_dims(dims or "full"),
                                          compression.parse_precisions(precision or "float32"),
                                          methods=methods, full_dim=subjects[0].dim)
    results = evaluate(task, subjects, data, codecs=codecs, **options)
    tradeoff, plot_path = [], None
    if sweep:
        tradeoff = compression.tradeoff_rows(results)
        plot_path = compression.plot_tradeoff(results, Path(plot or f"{task}-tradeoff.png"),
                                              title=f"{results[0].task_name}: {subjects[0].label}")
    saved = save_results(store, subjects, results) if save else []
    return EvalReport(results, tradeoff, plot_path, saved)
