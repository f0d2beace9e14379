"""Run an evaluation task over subjects, transforms and compression settings; record the results."""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from repspace.core.checks import check_choice, check_scalar
from repspace.core.errors import InputError
from repspace.core.store import Store
from repspace.engines.eval import TaskResult
from repspace.engines.eval.labels import classification, clustering, load_labelled
from repspace.engines.eval.mteb_format import (
    DEFAULT_LANGUAGES,
    data_revision,
    parse_languages,
)
from repspace.engines.eval.mteb_protocol import CLASSIFICATION_PROTOCOLS, CLUSTERING_PROTOCOLS
from repspace.engines.eval.pairclass import load_pairs, pairclass
from repspace.engines.eval.part_data import PartLabels, read_parts
from repspace.engines.eval.retrieval import load_beir, multivector_retrieval, retrieval
from repspace.engines.eval.sts import load_sts, sts
from repspace.engines.eval.comparisons import compare_results
from repspace.engines.eval.uncertainty import DEFAULT_RESAMPLES, Comparison
from repspace.engines.eval.words import (
    WordVectors,
    analogy,
    load_analogies,
    load_word_pairs,
    wordsim,
)
from repspace.workflows.evaluate._mteb import lookup_mteb_task, write_mteb
from repspace.workflows.evaluate._repair import (
    DEFAULT_KAPPA,
    distinct,
    fit_transform,
    hubness_info,
    hubness_retrieval,
    neighbour_hubness,
    parse_hubness,
    parse_transform,
    transform_output_dim,
)
from repspace.workflows.evaluate._models import check_models, model_specs, model_subjects
from repspace.workflows.evaluate._parts import check_parts, score_parts
from repspace.workflows.evaluate._subjects import Subject
from repspace.workflows.evaluate._tasks import MINED_TASKS, fit_texts, load_mined, score_mined

#: Task names, in the order the CLI lists them.
TASKS = ("sts", "retrieval", "wordsim", "analogy", "clustering", "classification", "pairclass", *MINED_TASKS)


def load_data(task: str, source: str | Path, *, split: str = "test", text_col: str = "text",
              label_col: str = "label") -> Any:
    """Read a task's data from a file or folder.

    Parameters
    ----------
    task : str
        One of :data:`TASKS`.
    source : str or Path
        The file (folder for ``retrieval``; for ``bitext`` also a pair of files, one sentence per line).
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
    if task in MINED_TASKS:
        return load_mined(task, source)
    return load_labelled(source, text_col=text_col, label_col=label_col)


def _check_task(task: str) -> None:
    check_choice(task, "task", TASKS)


def space_labels(subject: Subject, field: str) -> tuple[np.ndarray, list[Any]]:
    """A space subject's vectors and the labels in metadata ``field`` (items without it are skipped).

    Examples
    --------
    >>> from repspace.evaluate import space_subject
    >>> from repspace.store import example_space
    >>> kinds = [{"kind": "animal"}] * 4 + [{"kind": "thing"}]
    >>> store = example_space(5, 3, name="toy", metadata=kinds).store
    >>> X, labels = space_labels(space_subject(store, "toy"), "kind")
    >>> X.shape, labels
    ((5, 3), ['animal', 'animal', 'animal', 'animal', 'thing'])
    >>> space_labels(space_subject(store, "toy"), "colour")
    Traceback (most recent call last):
    repspace.core.errors.InputError: no item of space toy has metadata field 'colour'
    """
    if subject.space is None or subject.vectors is None:
        raise InputError("labels from metadata need a stored space (--space)")
    keep = [i for i, m in enumerate(subject.metadata) if m.get(field) is not None]
    if not keep:
        raise InputError(f"no item of space {subject.space.name} has metadata field {field!r}")
    return subject.vectors[keep], [subject.metadata[i][field] for i in keep]


def run_task(task: str, subject: Subject, data: Any = None, *, codec: Any = None, index: str | None = None,
             label_field: str | None = None, restrict_vocab: int | None = None, lexical: str | None = None,
             lexical_weight: float = 1.0, multivector: bool = False, candidates: int = 100,
             transform: str | None = None, hubness: str | None = None, kappa: int = DEFAULT_KAPPA,
             measure_hubness: int | None = None, bootstrap: int = DEFAULT_RESAMPLES, seed: int = 0,
             protocol: str = "repspace", train: Any = None, parts: PartLabels | None = None) -> TaskResult:
    """Run one task on one subject (with one transform and one compression setting); the result records them.

    Parameters
    ----------
    task : str
        One of :data:`TASKS`.
    subject : Subject
        From :func:`encoder_subjects` or :func:`space_subject`.
    data : object
        From :func:`load_data` (a path is loaded with it); for ``clustering``/``classification``
        on a space it may be ``None`` with ``label_field`` naming a metadata field.
    codec : Codec, optional
        A compression setting (fitted after the transform, on transformed vectors).
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
    transform : str, optional
        A transform spec (``center,whiten128``; :func:`repspace.engines.transforms.parse_transforms`),
        fitted without labels on the task's own vectors (see :mod:`repspace.workflows.evaluate._repair`
        for what each task fits on), then applied to every vector the task scores.
        Recorded as ``transform``, ``transform_fit`` and ``transform_provenance``.
    hubness : str, optional
        ``retrieval``: rank by a hubness-reduced similarity, ``csls``,
        ``mutual-proximity`` or ``local-scaling`` (every document scored exactly);
        recorded as ``hubness_reduction``.
    kappa : int
        Neighbourhood size of the hubness-reduction statistics.
    measure_hubness : int, optional
        Also record ``hubness`` (k-occurrence skewness, Robin Hood... at this k)
        of the rows the transform is fitted on, after it (cosine k-NN graph; with
        ``hubness``, the corpus graph under the reduced similarity).
    bootstrap : int
        Resamples of the task's units (pairs, queries, questions, items) behind
        the 95% interval of the main score (:attr:`TaskResult.interval`); 0: none.
        Clustering has none (see :func:`repspace.engines.eval.clustering`).
    seed : int
        The bootstrap's seed (for ``classification`` also the folds' shuffling seed).
    protocol : str
        ``clustering``/``classification``: ``repspace`` or ``mteb`` (MTEB's evaluator's
        protocol, :mod:`repspace.engines.eval.mteb_protocol`; clustering also ``mteb-legacy``).
    train : LabelledTexts or path, optional
        ``classification`` with ``protocol="mteb"``: the training split (else MTEB's cross-validation).
    parts : PartLabels, optional
        Also score each part of the data alone (:func:`repspace.engines.eval.part_data.read_parts`, ``--by``)
        and their macro average: :attr:`TaskResult.parts` (see :mod:`repspace.workflows.evaluate._parts`).

    Examples
    --------
    >>> from repspace.workflows.evaluate import encoder_subjects
    >>> from repspace.engines.eval.sts import StsPairs
    >>> pairs = StsPairs(["a cat", "a man runs", "stocks fell"], ["a kitten", "a man jogs", "a cat"],
    ...                  np.array([5.0, 4.0, 0.0]), "toy")
    >>> r = run_task("sts", encoder_subjects("static")[0], pairs, transform="center")
    >>> r.info["transform"], r.info["transform_fit"]["on"], r.info["transform_fit"]["n"]
    ('center', 'distinct sentences', 5)
    >>> run_task("sts", encoder_subjects("static")[0], pairs, bootstrap=0).interval is None
    True
    >>> from repspace.evaluate import PartLabels
    >>> r = run_task("sts", encoder_subjects("static")[0], pairs, parts=PartLabels("genre", ("a", "a", "b")),
    ...              bootstrap=0)
    Traceback (most recent call last):
    repspace.core.errors.InputError: part 'b' of --by genre (1 unit) cannot be scored: STS needs at least 2 pairs
    """
    _check_task(task)
    if isinstance(data, (str, Path)) or (task == "bitext" and isinstance(data, (tuple, list))):
        data = load_data(task, data)
    options = {"codec": codec, "index": index, "label_field": label_field, "restrict_vocab": restrict_vocab,
               "lexical": lexical, "lexical_weight": lexical_weight, "multivector": multivector,
               "candidates": candidates, "transform": transform, "hubness": hubness, "kappa": kappa,
               "measure_hubness": measure_hubness, "protocol": protocol, "train": train}
    if parts is not None:
        return score_parts(_run_one, task, subject, data, parts, bootstrap=bootstrap, seed=seed, **options)
    return _run_one(task, subject, data, bootstrap=bootstrap, seed=seed, **options)


def _run_one(task: str, subject: Subject, data: Any, *, codec: Any, index: str | None, label_field: str | None,
             restrict_vocab: int | None, lexical: str | None, lexical_weight: float, multivector: bool,
             candidates: int, transform: str | None, hubness: str | None, kappa: int, measure_hubness: int | None,
             bootstrap: int, seed: int, protocol: str, train: Any) -> TaskResult:
    """:func:`run_task` on the whole of ``data`` (loaded)."""
    _check_resampling(bootstrap, seed)
    _check_protocol(task, protocol, train, label_field)
    spec = parse_transform(transform)
    method = parse_hubness(hubness)
    if isinstance(train, (str, Path)):
        train = load_data(task, train)
    if method is not None:
        if task != "retrieval":
            raise InputError(f"hubness reduction re-ranks retrieval results; it does not apply to {task}")
        if multivector or lexical is not None or index not in (None, "exact"):
            raise InputError("hubness reduction scores every document exactly by dense vectors; "
                             "it does not combine with --index, --bm25, --hybrid or --multivector")
    if spec is not None and (multivector or lexical == "bm25"):
        raise InputError("--transform applies to dense vectors; BM25 and multi-vector retrieval use none")
    if measure_hubness is not None and (multivector or lexical == "bm25"):
        raise InputError("measure_hubness needs dense vectors; BM25 and multi-vector retrieval use none")
    if task == "retrieval" and multivector:
        if subject.space is not None or codec is not None or lexical is not None:
            raise InputError("multi-vector retrieval takes an hf-layers encoder, without --space, sweeps or BM25")
        layer = subject.info.get("layer")
        result = multivector_retrieval(subject.info["encoder"], data, layer=-1 if layer is None else int(layer),
                                       candidates=candidates, bootstrap=bootstrap, seed=seed)
        return result.with_info(subject=subject.label, **subject.info)
    t0 = time.perf_counter()
    from_space = _documents_from_space(subject, data) if task == "retrieval" else 0
    repair: dict[str, Any] = {}
    encode: Any = subject.encode
    # retrieval's queries go to the encoder's query side (e5: "query: "), cached apart from documents
    encode_queries: Any = getattr(subject.encode, "encode_queries", subject.encode)
    fitted = None
    rows = what = None
    if spec is not None or measure_hubness is not None:
        rows, what = _fit_rows(task, subject, data, label_field, restrict_vocab)
        if spec is not None:
            fitted = fit_transform(spec, rows, fitted_on=what)
            rows = fitted.transform(rows)
            encode = fitted.encode(subject.encode)
            encode_queries = fitted.encode(encode_queries)
            repair.update(fitted.info())
        if measure_hubness is not None:
            hub = neighbour_hubness(rows, measure_hubness, reduction=method, kappa=kappa)
            repair["hubness"] = hubness_info(hub, what)
    resampling = {"bootstrap": bootstrap, "seed": seed}
    if task == "sts":
        result = sts(encode, data, codec=codec, **resampling)
    elif task == "retrieval" and method is not None:
        result = hubness_retrieval(encode, data, method, kappa=kappa, codec=codec, encode_queries=encode_queries,
                                   **resampling)
    elif task == "retrieval":
        result = retrieval(encode, data, codec=codec, index=index, lexical=lexical,
                           lexical_weight=lexical_weight, encode_queries=encode_queries, **resampling)
    elif task in ("wordsim", "analogy"):
        words = _word_source(subject)
        if fitted is not None:
            words = fitted.words(words, restrict_vocab) if isinstance(words, WordVectors) else encode
        fn = wordsim if task == "wordsim" else analogy
        result = fn(words, data, codec=codec, restrict_vocab=restrict_vocab, **resampling)
    elif task == "pairclass":
        result = pairclass(encode, data, codec=codec, **resampling)
    elif task in MINED_TASKS:
        result = score_mined(task, encode, encode_queries, data, codec=codec, **resampling)
    else:
        fn = functools.partial(clustering, protocol=protocol) if task == "clustering" else functools.partial(
            classification, **resampling, protocol=protocol, train=train)
        if label_field is not None:
            vectors, labels = space_labels(subject, label_field)
            if fitted is not None:
                vectors = fitted.transform(vectors)
            result = fn(vectors, labels, codec=codec)
        elif data is None:
            raise InputError(f"{task} needs a labelled file, or --space with --label-field")
        else:
            # named after the file, as every file task is: two data sets' results never share a name (an MTEB
            # results file, a saved result's task)
            result = fn(encode, data.labels, texts=data.texts, codec=codec, name=f"{task}:{data.name}")
    if task == "retrieval" and subject.space is not None:
        result = result.with_info(documents_from_space=from_space)
    if rows is not None:  # the fit (and its encoding) happened before the task's own clock started
        result = replace(result, evaluation_time=time.perf_counter() - t0)
    return result.with_info(subject=subject.label, **subject.info, **repair)


def _check_protocol(task: str, protocol: Any, train: Any, label_field: str | None) -> None:
    """A protocol the task lacks, or a training split it cannot use, is one error line before any encoding."""
    if task not in ("clustering", "classification"):
        if protocol != "repspace" or train is not None:
            raise InputError(f"--protocol and --train apply to clustering and classification, not {task}")
        return
    check_choice(protocol, "protocol", CLUSTERING_PROTOCOLS if task == "clustering" else CLASSIFICATION_PROTOCOLS)
    if train is not None and (task != "classification" or protocol != "mteb"):
        raise InputError("--train is the training split of classification under --protocol mteb")
    if train is not None and label_field is not None:
        raise InputError("--train takes a labelled file; it does not combine with --label-field")


def _check_resampling(bootstrap: Any, seed: Any) -> None:
    """A bad ``bootstrap`` or ``seed`` is one error line, before anything is embedded."""
    check_scalar(bootstrap, "bootstrap", int, low=0)
    check_scalar(seed, "seed", int, low=0, high=2**32, include="left")


def _fit_rows(task: str, subject: Subject, data: Any, label_field: str | None,
              restrict_vocab: int | None) -> tuple[np.ndarray, str]:
    """The rows a transform is fitted on for this task, and what they are (no labels among them)."""
    if task in ("sts", "pairclass"):
        if data is None:
            raise InputError(f"{task} needs its data to fit a transform on")
        texts = data.texts() if task == "sts" else list(data.sentences1) + list(data.sentences2)
        return subject.encode(distinct(texts)), "distinct sentences"
    if task == "retrieval":
        return subject.encode(list(data.corpus_texts)), "corpus documents"
    if task in MINED_TASKS:
        texts, what = fit_texts(task, data)
        return subject.encode(texts), what
    if task in ("clustering", "classification"):
        if label_field is not None:
            vectors, _ = space_labels(subject, label_field)
            return vectors, "labelled vectors of the space (labels unused)"
        if data is None:
            raise InputError(f"{task} needs a labelled file, or --space with --label-field")
        return subject.encode(distinct(data.texts)), "distinct texts"
    source = _word_source(subject)
    if isinstance(source, WordVectors):
        if restrict_vocab is not None and restrict_vocab < len(source):
            return np.asarray(source.vectors[:restrict_vocab]), f"first {restrict_vocab} words of the vocabulary"
        return np.asarray(source.vectors), "vocabulary"
    if task == "wordsim":
        words = distinct(w.lower() for w in list(data.word1) + list(data.word2))
    else:
        words = distinct(w.lower() for q in data.questions for w in q)
    return subject.encode(words), "distinct task words"


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
             transforms: Sequence[str | None] | None = None, bootstrap: int = DEFAULT_RESAMPLES, seed: int = 0,
             **options: Any) -> list[TaskResult]:
    """Run a task over every subject, every transform and every compression setting.

    Each distinct text is embedded once per subject (the subjects' caches),
    and once for all layers of a layered encoder, however many transforms and
    codecs are swept.

    Parameters
    ----------
    task : str
    subjects : sequence of Subject
    data : object
        From :func:`load_data`.
    codecs : sequence of Codec, optional
        Compression settings to sweep; ``None`` scores the vectors as they are.
    transforms : sequence of str or None, optional
        Transform specs to sweep (``None`` or ``"none"`` for the vectors as they
        are), each fitted on the task's own vectors; see :func:`run_task`.
    bootstrap, seed : int
        Resamples behind each main score's 95% interval (0: none) and their
        seed, the same for every subject and setting: see :func:`run_task`.
    **options
        Passed to :func:`run_task` (``transform=`` for a single one, ``hubness=``...).

    Returns
    -------
    list of TaskResult
        Subject-major, then transform, then codec order.

    Examples
    --------
    >>> import numpy as np
    >>> from repspace.workflows.evaluate import encoder_subjects
    >>> from repspace.engines.eval.sts import StsPairs
    >>> pairs = StsPairs(["a cat", "a man runs", "stocks fell"], ["a kitten", "a man jogs", "a cat"],
    ...                  np.array([5.0, 4.0, 0.0]), "toy")
    >>> [r.task_name for r in evaluate("sts", encoder_subjects("static"), pairs)]
    ['sts:toy']
    >>> [r.interval for r in evaluate("sts", encoder_subjects("static"), pairs, bootstrap=0)]
    [None]
    """
    if not subjects:
        raise InputError("nothing to evaluate: give an encoder or a space")
    if transforms is not None and "transform" in options:
        raise InputError("give transform= or transforms=, not both")
    specs = [parse_transform(t) for t in transforms] if transforms is not None else [options.pop("transform", None)]
    parse_hubness(options.get("hubness"))  # an unknown method fails before anything is embedded
    _check_resampling(bootstrap, seed)
    out = []
    for subject in subjects:
        for spec in specs or [None]:
            for codec in (codecs or [None]):
                out.append(run_task(task, subject, data, codec=codec, transform=spec, bootstrap=bootstrap,
                                    seed=seed, **options))
    return out


def save_results(store: Store, subjects: Sequence[Subject], results: Sequence[TaskResult]) -> list[int]:
    """Record results in the store: those of a space linked to the generation that was read.

    Returns
    -------
    list of int
        The ids of the recorded results.

    Examples
    --------
    A space that holds every text of the task is scored with its own vectors, and the result is
    recorded with the generation it read:

    >>> from repspace.evaluate import StsPairs, space_subject
    >>> from repspace.store import example_space
    >>> texts = ["a cat", "a kitten", "a dog", "a puppy", "a car"]
    >>> store = example_space(5, 3, name="toy", texts=texts).store
    >>> subjects = [space_subject(store, "toy")]
    >>> pairs = StsPairs(["a cat", "a dog", "a cat"], ["a kitten", "a puppy", "a car"], np.array([5.0, 4.0, 0.0]),
    ...                  name="pairs")
    >>> results = evaluate("sts", subjects, pairs)
    >>> save_results(store, subjects, results)
    [1]
    >>> [(s.subject, s.task_name, s.generation, s.stale) for s in store.results()]
    [('toy', 'sts:pairs', 1, False)]
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
    """What :func:`run` did: the results, the sweep table, the comparisons of several models and files written.

    Attributes
    ----------
    results : list of TaskResult
    tradeoff : list of dict
        For a compression sweep: quality against bytes per vector
        (:func:`repspace.engines.eval.compression.tradeoff_rows`), each row with a ``subject`` key when
        several subjects (layers) were swept (:meth:`grid`); empty otherwise.
    plot : Path or None
        The trade-off PNG, for a sweep.
    saved : list of int
        Ids of the results recorded in the store (``save=True``).
    written : list of Path
        The MTEB result files written (``output_dir``), one per result.
    comparisons : list of Comparison
        With several models: every pair's difference, paired interval and
        Holm-corrected p-value (:func:`repspace.engines.eval.comparisons.compare_results`);
        empty otherwise.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> texts = ["a cat", "a kitten", "a dog", "a puppy", "a car"]
    >>> vectors = [[1.0, 0.0, 0.0], [1.0, 0.1, 0.0], [0.0, 1.0, 0.0], [0.2, 1.0, 0.0], [0.0, 0.0, 1.0]]
    >>> store = example_space(name="toy", vectors=vectors, texts=texts).store
    >>> pairs = store.path.with_name("pairs.csv")
    >>> _ = pairs.write_text("a cat,a kitten,5\\na dog,a puppy,4\\na cat,a car,0\\n")
    >>> r = run("sts", pairs, store=store, space="toy", save=True)
    >>> [(x.task_name, x.info["subject"], round(x.main_score, 3)) for x in r.results]
    [('sts:pairs', 'space toy', 1.0)]
    >>> r.saved, r.tradeoff, r.plot, r.written, r.to_dict()[0]["task_name"]
    ([1], [], None, [], 'sts:pairs')
    """

    results: list[TaskResult]
    tradeoff: list[dict[str, Any]] = field(default_factory=list)
    plot: Path | None = None
    saved: list[int] = field(default_factory=list)
    written: list[Path] = field(default_factory=list)
    comparisons: list[Comparison] = field(default_factory=list)

    def to_dict(self) -> list[dict[str, Any]] | dict[str, list[dict[str, Any]]]:
        """The ``--json`` output: a TaskResult per subject and setting (mteb's ``TaskResult.from_dict`` reads each);
        with comparisons, ``{"results": [...], "comparisons": [...]}`` (:meth:`Comparison.to_dict`)."""
        results = [r.to_dict() for r in self.results]
        if not self.comparisons:
            return results
        return {"results": results, "comparisons": [c.to_dict() for c in self.comparisons]}

    def grid(self) -> dict[str, Any]:
        """A sweep as a grid: ``{"subjects", "layers", "codecs", "scores", "intervals"}``, ``scores[i][j]`` the main
        score of subject ``i`` (layer ``layers[i]``, None for a subject without layers) with codec ``j`` (None where
        that codec was not run), codecs smallest first; ``intervals[i][j]`` its bootstrap interval ``[low, high]``
        (None where the cell has none).

        Examples
        --------
        >>> r = EvalReport([], tradeoff=[
        ...     {"subject": "m[0]", "layer": 0, "codec": "prefix16", "main_score": 0.5, "ci_low": 0.4, "ci_high": 0.6},
        ...     {"subject": "m[1]", "layer": 1, "codec": "prefix16", "main_score": 0.7}])
        >>> r.grid()
        {'subjects': ['m[0]', 'm[1]'], 'layers': [0, 1], 'codecs': ['prefix16'], 'scores': [[0.5], [0.7]], \
'intervals': [[[0.4, 0.6]], [None]]}
        """
        layer_of = {row.get("subject"): row.get("layer") for row in self.tradeoff}
        subjects = list(layer_of)
        codecs = list(dict.fromkeys(row["codec"] for row in self.tradeoff))
        cell = {(row.get("subject"), row["codec"]): row for row in self.tradeoff}

        def interval(row: dict[str, Any] | None) -> list[float] | None:
            if row is None or row.get("ci_low") is None or row.get("ci_high") is None:
                return None
            return [row["ci_low"], row["ci_high"]]

        rows = [[cell.get((s, c)) for c in codecs] for s in subjects]
        return {"subjects": subjects, "layers": [layer_of[s] for s in subjects], "codecs": codecs,
                "scores": [[None if r is None else r["main_score"] for r in row] for row in rows],
                "intervals": [[interval(r) for r in row] for row in rows]}


def _tradeoff(results: Sequence[TaskResult], *, several: bool) -> list[dict[str, Any]]:
    """The sweep's trade-off rows; for several subjects (layers) each subject's rows (relative to its own
    ``full``) with a ``subject`` key, subject by subject."""
    from repspace.engines.eval import compression

    if not several:
        return compression.tradeoff_rows(results)
    groups: dict[str, list[TaskResult]] = {}
    for r in results:
        groups.setdefault(r.info["subject"], []).append(r)
    return [{"subject": label, "layer": group[0].info.get("layer"), **row} for label, group in groups.items()
            for row in compression.tradeoff_rows(group)]


def run(task: str, source: str | Path | None, *, store: Store | None = None,
        encoder: str | Sequence[str] | None = None, space: str | Sequence[str] | None = None,
        layer: int | str | None = None, encoder_options: dict[str, Any] | None = None,
        dims: str | None = None, precision: str | None = None, methods: Sequence[str] = ("prefix", "pca"),
        plot: str | Path | None = None, save: bool = False, batch_size: int = 64, progress: Any = None,
        split: str = "test", text_col: str = "text", label_col: str = "label", transform: str | None = None,
        hubness: str | None = None, output_dir: str | Path | None = None, language: str | Sequence[str] | None = None,
        mteb_task: str | None = None, bootstrap: int = DEFAULT_RESAMPLES, seed: int = 0, by: str | None = None,
        **options: Any) -> EvalReport:
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
    encoder : str or list of str, optional
        Registry spec, or several; the default when neither ``encoder`` nor ``space`` is given is ``minilm``.
    space : str or list of str, optional
        A stored space, or several, scored instead of or beside the encoders.
        With two or more models in all, each is evaluated on the same data
        and every pair is compared (:attr:`EvalReport.comparisons`,
        :func:`repspace.engines.eval.comparisons.compare_results` with
        ``bootstrap`` resamples and ``seed``); several models do not combine
        with a sweep, with several layers, or with clustering.
    layer : int or ``"all"``, optional
        For layered encoders.
    dims, precision : str, optional
        A compression sweep: ``"16,32,full"`` and ``"float32,int8,binary"``.
    plot : path, optional
        Where the sweep's PNG goes (default ``<task>-tradeoff.png``); one subject only: a sweep of several
        layers (``layer="all"``) is a layer x codec grid (:meth:`EvalReport.grid`) and draws no plot.
    save : bool
        Record the results in the store.
    transform : str, optional
        A transform spec fitted on the task's own vectors before scoring (and
        before any compression): see :func:`run_task`.
    hubness : str, optional
        ``retrieval``: query-time hubness reduction (``csls``, ``mutual-proximity``,
        ``local-scaling``).
    output_dir : path, optional
        Also write the results in MTEB's results layout there
        (:func:`repspace.workflows.evaluate.write_mteb`; ``mteb.ResultCache(output_dir)`` reads it).
    language : str or list of str, optional
        The data's languages as MTEB writes them (``eng-Latn``, ``eng-Latn,deu-Latn``);
        default that of ``mteb_task``, else ``eng-Latn``.
    mteb_task : str, optional
        The registered MTEB task the data is (``STSBenchmark``; ``sts``, ``retrieval``,
        ``reranking``, ``bitext`` and ``summarization`` only, checked against mteb's registry,
        which must be installed): the task name of the MTEB files, whose ``main_score`` is then
        that task's main score.
    bootstrap : int
        Resamples of the task's units behind each main score's 95% interval
        (``ci_low``/``ci_high`` beside ``main_score`` in the results, the saved
        ones and the MTEB files); 0: none. See :func:`run_task`.
    seed : int
        The bootstrap's seed (and the comparisons'): the same seed gives the same interval.
    by : str, optional
        Also score the data split by this column of its file (``genre``; a JSON key such as
        ``metadata.domain``; :func:`repspace.engines.eval.part_data.read_parts`): each part alone
        and their macro average, in each result's :attr:`TaskResult.parts`.
    **options
        ``index``, ``label_field``, ``restrict_vocab``, ``kappa``, ``measure_hubness``, ``protocol``,
        ``train`` (a path is read with ``text_col`` and ``label_col``): see :func:`run_task`.
    """
    from repspace.engines.eval import compression

    _check_task(task)
    spec = parse_transform(transform)  # malformed specs and methods fail before any model loads
    method = parse_hubness(hubness)
    if method is not None and task != "retrieval":
        raise InputError(f"hubness reduction re-ranks retrieval results; it does not apply to {task}")
    _check_resampling(bootstrap, seed)
    _check_protocol(task, options.get("protocol", "repspace"), options.get("train"), options.get("label_field"))
    check_parts(task, by, label_field=options.get("label_field"), multivector=bool(options.get("multivector")))
    encoders, spaces = model_specs(encoder, space)
    sweep = dims is not None or precision is not None
    check_models(task, encoders, spaces, layer=layer, sweep=sweep)
    if (spaces or save) and store is None:
        raise InputError("a store is needed for --space and --save")
    if output_dir is not None and Path(output_dir).exists() and not Path(output_dir).is_dir():
        raise InputError(f"--output-dir {output_dir} is a file, not a folder")
    named = lookup_mteb_task(mteb_task, task) if mteb_task is not None else None
    languages = parse_languages(language) if language is not None else (
        named.languages if named is not None and named.languages else DEFAULT_LANGUAGES)
    if sweep and plot is not None and (layer == "all" or (isinstance(layer, Sequence) and not isinstance(layer, str))):
        raise InputError("a trade-off plot draws one layer; pick one with --layer N (a sweep of several layers "
                         "is the layer x codec grid, printed as a table)")
    data = None if source is None else load_data(task, source, split=split, text_col=text_col, label_col=label_col)
    if by is not None:  # a column the file lacks fails before any model loads
        options["parts"] = read_parts(data, source, by)
    if isinstance(options.get("train"), (str, Path)):  # --train: read with the same columns
        options["train"] = load_data(task, options["train"], text_col=text_col, label_col=label_col)
    if named is not None and data is not None:
        named.check_split(data.split)
    revision = data_revision(source) if source is not None else None
    subjects = model_subjects(store, encoders, spaces, layer=layer, encoder_options=encoder_options,
                              batch_size=batch_size, progress=progress)
    codecs = None
    if sweep:
        codecs = compression.sweep_codecs(compression.parse_dims(dims or "full"),
                                          compression.parse_precisions(precision or "float32"),
                                          methods=methods, full_dim=transform_output_dim(spec, subjects[0].dim))
    results = evaluate(task, subjects, data, codecs=codecs, transform=spec, hubness=method, bootstrap=bootstrap,
                       seed=seed, **options)
    if revision is None and subjects[0].space is not None:  # labels read from the space's metadata
        revision = f"{subjects[0].info['space_uid']}-{subjects[0].info['generation']}"
    results = [r.with_mteb(dataset_revision=revision, languages=languages,
                           mteb_task=None if named is None else named.name,
                           mteb_main_metric=None if named is None else named.main_metric) for r in results]
    tradeoff, plot_path = [], None
    if sweep:
        tradeoff = _tradeoff(results, several=len(subjects) > 1)
        if len(subjects) == 1:
            plot_path = compression.plot_tradeoff(results, Path(plot or f"{task}-tradeoff.png"),
                                                  title=f"{results[0].task_name}: {subjects[0].label}")
    several = len(encoders) + len(spaces) > 1
    comparisons = compare_results(results, n_resamples=bootstrap, seed=seed) if several else []
    saved = save_results(store, subjects, results) if save else []
    written = write_mteb(output_dir, results, subjects) if output_dir is not None else []
    return EvalReport(results, tradeoff, plot_path, saved, written, comparisons)
