"""Retrieval: do a query's nearest documents include the ones judged relevant?

Data comes in the BEIR layout (a folder with ``corpus.jsonl``, ``queries.jsonl``
and ``qrels/<split>.tsv``). Queries and documents are embedded (queries with the
encoder's query side, ``encode_queries``, when it has one: see
:func:`retrieval`), documents are ranked by cosine similarity (exact search, or an HNSW graph when asked), and
the run is scored with trec_eval's definitions (:mod:`repspace.engines.eval.ranking`):
``ndcg_at_10`` is the main score, beside nDCG, MAP, recall, precision and MRR at
MTEB's cut-offs (1, 3, 5, 10, 20, 100 and 1000), under MTEB's names
(``map_at_100``, ``mrr_at_10``...).

Each query retrieves :data:`DEPTH` documents (1000, as MTEB does) when the
ranking is exact, so its first 100 are those a shorter search would return;
an HNSW index and the hybrid fusion retrieve :data:`APPROX_DEPTH` (100), as a
deeper search would change the ranking itself (HNSW's efSearch is at least the
depth; fusion ranks the top ``depth`` of each list). A ranking of depth ``k``
is scored at the cut-offs up to ``max(k, 10)``.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from repspace.core.checks import check_choice, check_scalar
from repspace.core.errors import InputError
from repspace.core.exact import exact_search, normalize_rows
from repspace.core.files import read_jsonl
from repspace.core.space import Metric
from repspace.engines.eval._encode import as_encode, as_query_encode
from repspace.engines.eval._results import TaskResult
from repspace.engines.eval.ranking import query_scores
from repspace.engines.eval.uncertainty import DEFAULT_RESAMPLES, Interval, bootstrap_interval, mean_statistic
from repspace.engines.eval.units import Units, query_units

#: MTEB's cut-offs (``AbsTaskRetrieval.k_values``); every measure is reported at each.
CUTOFFS = (1, 3, 5, 10, 20, 100, 1000)
#: The scores an exact ranking reports (keys of :func:`ranking_scores`, MTEB's names).
SCORE_KEYS = tuple(f"{m}_at_{k}" for m in ("ndcg", "map", "recall", "precision", "mrr") for k in CUTOFFS)
#: The headline score.
MAIN_METRIC = "ndcg_at_10"
#: Documents retrieved per query by an exact ranking (MTEB's top 1000).
DEPTH = max(CUTOFFS)
#: Documents retrieved per query with an HNSW index, hybrid fusion or multi-vector search.
APPROX_DEPTH = 100
#: efSearch of an evaluation HNSW index when the spec does not give one: max(k, this); wider than a
#: query's :data:`~repspace.core.limits.DEFAULT_EF` (an evaluation measures the index near its best recall).
EVAL_DEFAULT_EF = 128

_HNSW_SPEC = re.compile(r"hnsw(\d+)(?:,ef(\d+))?")
_ACCEPTED = "'exact', 'hnsw<M>' or 'hnsw<M>,ef<E>' (e.g. 'hnsw32', 'hnsw16,ef64')"


def retrieval_scores(run: dict[str, list[str]], qrels: dict[str, dict[str, int]], depth: int) -> dict[str, float]:
    """The scores of a run ``depth`` documents deep: each measure at the cut-offs up to ``max(depth, 10)``.

    Examples
    --------
    >>> s = retrieval_scores({"q1": ["d2", "d1"]}, {"q1": {"d1": 1}}, depth=100)
    >>> s["ndcg_at_10"] == s["ndcg_at_100"], s["mrr_at_1"], s["mrr_at_3"], "ndcg_at_1000" in s
    (True, 0.0, 0.5, False)
    """
    return _run_scores(run, qrels, depth)[0]


def _run_scores(run: dict[str, list[str]], qrels: dict[str, dict[str, int]], depth: int, bootstrap: int = 0,
                seed: int = 0) -> tuple[dict[str, float], Interval | None, Units]:
    """:func:`retrieval_scores`, the bootstrap interval of the main score over the judged queries, and their units."""
    ks = tuple(k for k in CUTOFFS if k <= max(depth, 10))
    per_query = query_scores(run, qrels, ks)
    sums = dict.fromkeys(SCORE_KEYS, 0.0)
    for values in per_query.values():
        for key in sums.keys() & values.keys():
            sums[key] += values[key]
    n = len(per_query)
    scores = {key: float(sums[key] / n) for key in SCORE_KEYS if key in next(iter(per_query.values()))}
    interval = None
    if bootstrap and n >= 2:
        main = np.array([values[MAIN_METRIC] for values in per_query.values()])
        interval = bootstrap_interval(mean_statistic, main, n_resamples=bootstrap, seed=seed)
    return scores, interval, query_units(per_query, MAIN_METRIC)


def default_depth(index: str | None = None, lexical: str | None = None) -> int:
    """Documents retrieved per query when ``k`` is not given.

    :data:`DEPTH` for an exact ranking (dense, BM25), :data:`APPROX_DEPTH` with an
    HNSW index or hybrid fusion, whose ranking a deeper search would change (see the
    module docstring).

    Examples
    --------
    >>> default_depth(), default_depth("hnsw32"), default_depth(lexical="hybrid"), default_depth(lexical="bm25")
    (1000, 100, 100, 1000)
    """
    approximate = index is not None and str(index).strip().lower() != "exact"
    return APPROX_DEPTH if approximate or lexical == "hybrid" else DEPTH


def _depth(k: int | None, index: str | None = None, lexical: str | None = None) -> int:
    if k is None:
        return default_depth(index, lexical)
    return check_scalar(k, "k", int, low=1)


@dataclass(frozen=True)
class BeirData:
    """A retrieval data set: documents, queries and the judgements of one split.

    Attributes
    ----------
    corpus_ids, corpus_texts : tuple of str
        Documents in file order; a text is the title and the text joined by a space.
    query_ids, query_texts : tuple of str
        The queries that have at least one relevant judgement (score ≥ 1) in
        this split, in file order.
    qrels : dict of str to dict of str to int
        Query id to ``{document id: score}``, only known documents.
    split : str
        The qrels split (``test``, ``dev``...).
    name : str
        The data set's name (the folder's name).
    dropped_qrels : int
        Judgement lines naming a document that is not in the corpus (dropped).
    dropped_queries : int
        Queries of ``queries.jsonl`` without a relevant judgement in this split (dropped).

    Examples
    --------
    >>> d = BeirData(("d1", "d2"), ("a cat", "a dog"), ("q1",), ("cats",), {"q1": {"d1": 1}}, "test", "toy")
    >>> d.texts()
    ['a cat', 'a dog', 'cats']
    """

    corpus_ids: tuple[str, ...]
    corpus_texts: tuple[str, ...]
    query_ids: tuple[str, ...]
    query_texts: tuple[str, ...]
    qrels: dict[str, dict[str, int]]
    split: str = "test"
    name: str = "beir"
    dropped_qrels: int = 0
    dropped_queries: int = 0

    def __post_init__(self) -> None:
        if len(self.corpus_ids) != len(self.corpus_texts):
            raise InputError(f"{len(self.corpus_ids)} document ids but {len(self.corpus_texts)} texts")
        if len(self.query_ids) != len(self.query_texts):
            raise InputError(f"{len(self.query_ids)} query ids but {len(self.query_texts)} texts")
        if not self.corpus_ids:
            raise InputError(f"retrieval data {self.name!r} has no documents")
        if not self.query_ids:
            raise InputError(f"retrieval data {self.name!r} has no query with a relevant judgement")

    @property
    def n_documents(self) -> int:
        return len(self.corpus_ids)

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    def texts(self) -> list[str]:
        """Every text the task embeds: the documents, then the queries."""
        return list(self.corpus_texts) + list(self.query_texts)


def _read_jsonl(path: Path, fields: tuple[str, ...]) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) of each non-blank line; each object must have ``_id`` and string ``fields``."""
    if not path.is_file():
        raise InputError(f"{path} is missing (a BEIR folder holds corpus.jsonl, queries.jsonl and qrels/<split>.tsv)")
    rows = read_jsonl(path, "BEIR file")
    for line_no, obj in rows:
        if "_id" not in obj:
            raise InputError(f"{path}:{line_no}: expected a JSON object with an '_id' field")
        for name in fields:
            value = obj.get(name, "")
            if value is None:
                obj[name] = ""
            elif not isinstance(value, str):
                raise InputError(f"{path}:{line_no}: field {name!r} is not a string")
    return rows


def _ids_and_texts(path: Path, rows: list[tuple[int, dict[str, Any]]], join_title: bool) -> tuple[list[str], list[str]]:
    ids, texts, seen = [], [], set()
    for line_no, obj in rows:
        oid = str(obj["_id"])
        if oid in seen:
            raise InputError(f"{path}:{line_no}: id {oid!r} appears a second time")
        seen.add(oid)
        text = f"{obj.get('title') or ''} {obj.get('text') or ''}" if join_title else (obj.get("text") or "")
        ids.append(oid)
        texts.append(text.strip())
    return ids, texts


def load_beir(folder: str | Path, split: str = "test") -> BeirData:
    """Read a retrieval data set in the BEIR layout.

    Parameters
    ----------
    folder : str or Path
        Holds ``corpus.jsonl`` (``_id``, ``title``, ``text``), ``queries.jsonl``
        (``_id``, ``text``) and ``qrels/<split>.tsv`` (tab-separated
        ``query-id corpus-id score`` with a header line).
    split : str
        Which qrels file to read.

    Returns
    -------
    BeirData
        Document text = title and text joined by a space, stripped. Queries
        without a relevant judgement (score ≥ 1) are dropped (they would not
        count in any score); judgement lines naming an unknown document are
        dropped and counted in ``dropped_qrels``.

    Raises
    ------
    InputError
        A missing folder or file; a malformed line (its number is given); a
        repeated id; a judgement naming a query that ``queries.jsonl`` lacks.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp()) / "toy"
    >>> (root / "qrels").mkdir(parents=True)
    >>> _ = (root / "corpus.jsonl").write_text('{"_id": "d1", "title": "Cats", "text": "purr."}\\n'
    ...                                       '{"_id": "d2", "title": "", "text": "Dogs bark."}\\n')
    >>> _ = (root / "queries.jsonl").write_text('{"_id": "q1", "text": "what purrs"}\\n')
    >>> _ = (root / "qrels" / "test.tsv").write_text("query-id\\tcorpus-id\\tscore\\nq1\\td1\\t2\\nq1\\td9\\t1\\n")
    >>> data = load_beir(root)
    >>> data.corpus_texts, data.qrels, data.dropped_qrels, data.name
    (('Cats purr.', 'Dogs bark.'), {'q1': {'d1': 2}}, 1, 'toy')
    """
    root = Path(folder)
    if not root.is_dir():
        raise InputError(f"retrieval data folder {root} does not exist")
    corpus_path, queries_path = root / "corpus.jsonl", root / "queries.jsonl"
    qrels_path = root / "qrels" / f"{split}.tsv"
    if not qrels_path.is_file():
        have = sorted(p.stem for p in (root / "qrels").glob("*.tsv")) if (root / "qrels").is_dir() else []
        hint = f"; splits here: {', '.join(have)}" if have else ""
        raise InputError(f"{qrels_path} is missing (no qrels for split {split!r}{hint})")
    doc_ids, doc_texts = _ids_and_texts(corpus_path, _read_jsonl(corpus_path, ("title", "text")), True)
    query_ids, query_texts = _ids_and_texts(queries_path, _read_jsonl(queries_path, ("text",)), False)
    known_docs, known_queries = set(doc_ids), set(query_ids)
    qrels: dict[str, dict[str, int]] = {}
    dropped = 0
    try:
        with qrels_path.open(encoding="utf-8") as f:
            lines = f.read().splitlines()
    except UnicodeDecodeError as e:
        raise InputError(f"{qrels_path} is not UTF-8 text ({e.reason})") from None
    for line_no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        parts = [p.strip() for p in (line.split("\t") if "\t" in line else line.split())]
        if len(parts) != 3:
            raise InputError(f"{qrels_path}:{line_no}: expected 3 tab-separated fields "
                             f"(query-id, corpus-id, score), got {len(parts)}")
        qid, did, raw = parts
        try:
            score = int(raw)
        except ValueError:
            if line_no == 1 or all(not ln.strip() for ln in lines[: line_no - 1]):
                continue  # the header
            raise InputError(f"{qrels_path}:{line_no}: the score {raw!r} is not an integer") from None
        if qid not in known_queries:
            raise InputError(f"{qrels_path}:{line_no}: query id {qid!r} is not in {queries_path.name}")
        if did not in known_docs:
            dropped += 1
            continue
        qrels.setdefault(qid, {})[did] = score
    keep = [i for i, q in enumerate(query_ids) if any(s >= 1 for s in qrels.get(q, {}).values())]
    if not keep:
        raise InputError(f"{qrels_path} gives no query of {queries_path.name} a relevant document (score >= 1)")
    kept = [query_ids[i] for i in keep]
    return BeirData(
        corpus_ids=tuple(doc_ids),
        corpus_texts=tuple(doc_texts),
        query_ids=tuple(kept),
        query_texts=tuple(query_texts[i] for i in keep),
        qrels={q: qrels[q] for q in kept},
        split=split,
        name=root.resolve().name,
        dropped_qrels=dropped,
        dropped_queries=len(query_ids) - len(keep),
    )


def parse_index(spec: str | None, k: int = 100) -> tuple[str, int, int]:
    """Read an index spec: ``None``/``"exact"``, ``"hnsw<M>"`` or ``"hnsw<M>,ef<E>"``.

    Parameters
    ----------
    spec : str or None
    k : int
        Results per query. The default efSearch is ``max(k, 128)``; a given
        one below ``k`` is raised to ``k`` (FAISS searches with at least k).

    Returns
    -------
    (canonical spec, M, efSearch)
        The spec with the efSearch actually used; ``("exact", 0, 0)`` for
        exact search.

    Examples
    --------
    >>> parse_index(None)
    ('exact', 0, 0)
    >>> parse_index("HNSW16")
    ('hnsw16,ef128', 16, 128)
    >>> parse_index("hnsw32, ef64", k=10)
    ('hnsw32,ef64', 32, 64)
    >>> parse_index("hnsw32,ef64", k=100)
    ('hnsw32,ef100', 32, 100)
    >>> parse_index("ivf")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: unknown index 'ivf'; use 'exact', 'hnsw<M>' or 'hnsw<M>,ef<E>' (e.g. ...)
    """
    if spec is None:
        return "exact", 0, 0
    key = str(spec).strip().lower().replace(" ", "")
    if key == "exact":
        return "exact", 0, 0
    match = _HNSW_SPEC.fullmatch(key)
    if match is None:
        raise InputError(f"unknown index {spec!r}; use {_ACCEPTED}")
    m = int(match.group(1))
    if not 2 <= m <= 256:
        raise InputError(f"HNSW M must be between 2 and 256, not {m} (index {spec!r})")
    ef = int(match.group(2)) if match.group(2) else max(k, EVAL_DEFAULT_EF)
    if ef < 1:
        raise InputError(f"efSearch must be at least 1 (index {spec!r})")
    ef = max(ef, k)
    return f"hnsw{m},ef{ef}", m, ef


def _search(queries: np.ndarray, docs: np.ndarray, k: int, m: int, ef: int) -> list[np.ndarray]:
    """Row numbers of each query's top k documents, best first: exact, or from an HNSW graph.

    HNSW candidates are re-scored in float64 and ordered like exact search
    (score descending, lower row first), so the two agree whenever the graph
    finds the true top k. The re-scoring sums each pair the same way (``einsum``):
    a BLAS matrix-vector product rounds a row by where it sits in the candidate
    list (and by CPU), which gave duplicate documents unequal scores and broke
    the lower-row rule.
    """
    if m == 0:
        _, idx = exact_search(queries, docs, k, metric="cosine")
        return list(idx)
    from repspace.engines.search.hnsw import HNSWIndex, HNSWParams

    qn, dn = normalize_rows(queries), normalize_rows(docs)
    index = HNSWIndex(dn.shape[1], Metric.COSINE, HNSWParams(m=m))
    index.add(dn, np.arange(len(dn)))
    _, idx = index.search(qn, min(k, len(dn)), ef=ef)
    out = []
    q64 = qn.astype(np.float64)
    for r in range(len(qn)):
        rows = idx[r][idx[r] >= 0]
        scores = np.einsum("ij,j->i", dn[rows].astype(np.float64), q64[r])
        out.append(rows[np.lexsort((rows, -scores))])
    return out


def retrieval_from_vectors(
    query_vectors: np.ndarray,
    corpus_vectors: np.ndarray,
    data: BeirData,
    *,
    index: str | None = None,
    k: int | None = None,
) -> dict[str, float]:
    """Rank the documents for each query by cosine similarity and score the run.

    Parameters
    ----------
    query_vectors : (n_queries, d) array
        One row per ``data.query_ids``, in that order.
    corpus_vectors : (n_documents, d) array
        One row per ``data.corpus_ids``, in that order.
    data : BeirData
        Ids and judgements.
    index : str, optional
        ``None``/``"exact"``, ``"hnsw<M>"`` or ``"hnsw<M>,ef<E>"`` (see :func:`parse_index`).
    k : int, optional
        Documents retrieved per query (default :func:`default_depth`: 1000 exact,
        100 with an HNSW index); scored at the cut-offs up to ``max(k, 10)``.

    Returns
    -------
    dict of str to float
        The keys of :data:`SCORE_KEYS` up to that cut-off (trec_eval definitions,
        see :mod:`repspace.engines.eval.ranking`).

    Examples
    --------
    >>> data = BeirData(("d1", "d2", "d3"), ("", "", ""), ("q1", "q2"), ("", ""),
    ...                 {"q1": {"d2": 1}, "q2": {"d3": 2, "d1": 1}}, "test", "toy")
    >>> docs = np.array([[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]])
    >>> queries = np.array([[0.1, 1.0], [1.0, 0.9]])
    >>> s = retrieval_from_vectors(queries, docs, data)
    >>> s["ndcg_at_10"], s["recall_at_10"]
    (1.0, 1.0)
    """
    k = _depth(k, index)
    return _scores_of(_dense_rows(query_vectors, corpus_vectors, data, index, k), data, k)[0]


def _dense_rows(query_vectors: np.ndarray, corpus_vectors: np.ndarray, data: BeirData, index: str | None,
                k: int) -> list[np.ndarray]:
    """Row numbers of each query's top ``k`` documents by cosine (exact or HNSW), after checking the arrays."""
    _, m, ef = parse_index(index, k)
    q = np.asarray(query_vectors, dtype=np.float32)
    x = np.asarray(corpus_vectors, dtype=np.float32)
    if q.ndim != 2 or x.ndim != 2 or q.shape[1] != x.shape[1]:
        raise InputError(f"query vectors {q.shape} and document vectors {x.shape} must be 2-d with one dimension")
    if len(q) != data.n_queries or len(x) != data.n_documents:
        raise InputError(f"{len(q)} query and {len(x)} document vectors for {data.n_queries} queries "
                         f"and {data.n_documents} documents")
    if not (np.isfinite(q).all() and np.isfinite(x).all()):
        raise InputError("query or document vectors contain NaN or infinite values")
    return _search(q, x, k, m, ef)


def retrieval(
    encode: Any,
    data: BeirData | str | Path,
    *,
    codec: Any = None,
    index: str | None = None,
    k: int | None = None,
    split: str | None = None,
    name: str | None = None,
    lexical: str | None = None,
    lexical_weight: float = 1.0,
    encode_queries: Any = None,
    bootstrap: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> TaskResult:
    """Score an encoder on a retrieval data set (BEIR layout).

    Parameters
    ----------
    encode : callable or object with ``encode``
        Texts to vectors; the documents go to it in one call. When it also
        has an ``encode_queries`` method (a repspace
        :class:`~repspace.engines.encoders.Encoder`, a
        :class:`~repspace.engines.eval.TextCache`), the queries go to that, in
        another call; otherwise to ``encode`` as well.
    data : BeirData, str or Path
        From :func:`load_beir`, or a BEIR folder to load.
    codec : Codec, optional
        A compression: fitted on the document vectors, then applied to
        documents and queries before ranking.
    index : str, optional
        ``None``/``"exact"`` (exact cosine search), ``"hnsw<M>"`` or
        ``"hnsw<M>,ef<E>"`` (an HNSW graph with M links, searched with
        efSearch E, default ``max(k, 128)``: approximate results).
    k : int, optional
        Documents retrieved per query: default 1000 (MTEB's deepest cut-off),
        100 with an HNSW index or ``hybrid`` (:func:`default_depth`); the
        scores go up to the cut-off ``max(k, 10)``.
    split : str, optional
        The qrels split when ``data`` is a folder (default ``test``); for a
        BeirData it must be ``None`` or its own split.
    name : str, optional
        Task name; default ``retrieval:<data set name>``.
    lexical : ``None``, ``"bm25"`` or ``"hybrid"``
        Score BM25 over the corpus texts alone (``encode`` is not called), or
        the dense ranking fused with BM25 by reciprocal-rank fusion (c = 60,
        top ``k`` of each list), as ``repspace search --hybrid`` does.
    lexical_weight : float
        Weight of the BM25 list in the hybrid fusion (the dense list has 1).
    encode_queries : callable or object with ``encode``, optional
        The query side, given explicitly (it wins over
        ``encode.encode_queries``): for an asymmetric model passed as two
        plain functions, or a query side that went through a transform.
    bootstrap : int
        Resamples of the queries behind the main score's interval (the mean of
        the per-query nDCG@10, :func:`~repspace.engines.eval.uncertainty.bootstrap_interval`,
        percentile, 95%); 0: no interval (nor with a single query).
    seed : int
        The bootstrap's seed.

    Returns
    -------
    TaskResult
        Main metric ``ndcg_at_10``; scores :data:`SCORE_KEYS` up to that cut-off;
        info with ``n_queries``, ``n_documents``, ``index``, ``depth``, ``dropped_qrels``,
        ``dropped_queries`` (and ``codec``, ``bytes_per_vector`` with a codec);
        the main score's bootstrap interval as :attr:`TaskResult.interval`; each
        judged query's nDCG@10, by query id, as :attr:`TaskResult.units` (whatever ``bootstrap``).

    Examples
    --------
    >>> data = BeirData(("d1", "d2", "d3"), ("a cat purrs", "stocks fell", "the dog barks"),
    ...                 ("q1",), ("a purring cat",), {"q1": {"d1": 1}}, "test", "toy")
    >>> r = retrieval(lambda texts: np.array([[t.count("cat"), 1.0] for t in texts]), data)
    >>> r.task_name, r.main_metric, r.main_score
    ('retrieval:toy', 'ndcg_at_10', 1.0)
    >>> r.info["n_documents"], r.info["index"]
    (3, 'exact')

    An asymmetric model: queries and documents are embedded apart.

    >>> docs_side = lambda texts: np.array([[t.count("cat"), 1.0] for t in texts])
    >>> wrong_side = lambda texts: np.array([[0.0, 1.0] for t in texts])
    >>> retrieval(docs_side, data, encode_queries=docs_side).main_score
    1.0
    >>> retrieval(docs_side, data, encode_queries=wrong_side).main_score < 1.0
    True
    """
    t0 = time.perf_counter()
    k = _depth(k, index, lexical)
    check_scalar(bootstrap, "bootstrap", int, low=0)
    if isinstance(data, BeirData):
        if split is not None and split != data.split:
            raise InputError(f"split {split!r} asked for, but the data given holds split {data.split!r}")
    else:
        data = load_beir(data, split or "test")
    spec, _, _ = parse_index(index, k)
    if lexical is not None:
        check_choice(lexical, "lexical", ("bm25", "hybrid"))
    if lexical == "bm25":
        rows = _bm25_rows(data, k)
        scores, interval, units = _scores_of(rows, data, k, bootstrap, seed)
        info = {"n_queries": data.n_queries, "n_documents": data.n_documents, "index": "bm25", "depth": k,
                "dropped_qrels": data.dropped_qrels, "dropped_queries": data.dropped_queries}
        return TaskResult(name or f"retrieval:{data.name}", data.split, MAIN_METRIC, scores,
                          time.perf_counter() - t0, info, interval=interval, units=units)
    docs = as_encode(encode)(list(data.corpus_texts))
    queries = as_query_encode(encode, encode_queries)(list(data.query_texts))
    if docs.shape[1] != queries.shape[1]:
        raise InputError(f"documents were encoded to {docs.shape[1]} dimensions but queries to {queries.shape[1]}")
    info: dict[str, Any] = {
        "n_queries": data.n_queries,
        "n_documents": data.n_documents,
        "index": spec,
        "depth": k,
        "dropped_qrels": data.dropped_qrels,
        "dropped_queries": data.dropped_queries,
    }
    if codec is not None:
        codec.fit(docs)
        docs, queries = _transformed(codec, docs), _transformed(codec, queries)
        info.update(codec=codec.to_dict(), bytes_per_vector=int(codec.bytes_per_vector))
    if lexical == "hybrid":
        from repspace.engines.search.fusion import rrf

        _, m, ef = parse_index(index, k)
        dense = _search(queries, docs, k, m, ef)
        lex = _bm25_rows(data, k)
        rows = []
        for d_rows, l_rows in zip(dense, lex):
            _, fused = rrf([np.asarray(d_rows), np.asarray(l_rows)], k, weights=[1.0, lexical_weight])
            rows.append(fused[fused >= 0])
        info.update(index=f"{spec}+bm25 (rrf, lexical weight {lexical_weight:g})", lexical="hybrid",
                    lexical_weight=float(lexical_weight))
    else:
        rows = _dense_rows(queries, docs, data, index, k)
    scores, interval, units = _scores_of(rows, data, k, bootstrap, seed)
    return TaskResult(name or f"retrieval:{data.name}", data.split, MAIN_METRIC, scores,
                      time.perf_counter() - t0, info, interval=interval, units=units)


def _bm25_rows(data: BeirData, k: int) -> list[np.ndarray]:
    """Each query's top ``k`` documents by BM25 (bm25s, Lucene variant, English stemming and stop words)."""
    from repspace.engines.search.lexical import LexicalIndex

    index = LexicalIndex.build(list(data.corpus_texts), np.arange(data.n_documents))
    _, rows = index.search(list(data.query_texts), min(k, data.n_documents))
    return [r[r >= 0] for r in rows]


def _scores_of(rows: list[np.ndarray], data: BeirData, depth: int, bootstrap: int = 0,
               seed: int = 0) -> tuple[dict[str, float], Interval | None, Units]:
    """The scores of the ranked rows, the main score's interval over the queries (``bootstrap`` resamples) and
    the per-query main scores."""
    ids = np.asarray(data.corpus_ids, dtype=object)
    run = {qid: ids[r].tolist() for qid, r in zip(data.query_ids, rows)}
    return _run_scores(run, data.qrels, depth, bootstrap, seed)


def _transformed(codec: Any, x: np.ndarray) -> np.ndarray:
    out = np.asarray(codec.transform(x), dtype=np.float32)
    if out.ndim != 2 or len(out) != len(x):
        raise InputError(f"codec {getattr(codec, 'name', codec)!r} turned {x.shape} vectors into shape {out.shape}")
    return out


def multivector_retrieval(
    encoder: Any,
    data: BeirData,
    *,
    layer: int = -1,
    candidates: int = 100,
    config: Any = None,
    k: int = APPROX_DEPTH,
    exact_check: bool = True,
    name: str | None = None,
    bootstrap: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> TaskResult:
    """Score late interaction (one vector per token) on a BEIR data set, searched with MUVERA.

    Documents and queries become token sets (:func:`repspace.engines.encoders.tokens.encode_tokens`,
    normalised token states of ``layer``); documents are shortlisted by their
    fixed-dimensional encodings (:class:`repspace.engines.search.muvera.MultiVectorIndex`)
    and the ``candidates`` best reranked by exact Chamfer similarity.

    Parameters
    ----------
    encoder : str or Encoder
        An ``hf-layers`` encoder (``hf-layers:minilm``).
    data : BeirData
    layer : int
        The hidden layer whose token states are used.
    candidates : int
        Documents reranked per query.
    config : FDEConfig, optional
        The encoding (default: k_sim 4, d_proj 16, 10 repetitions).
    k : int
        Documents retrieved per query.
    exact_check : bool
        Also run exact Chamfer search over every document and report MUVERA's
        recall@10 against it (``recall_vs_exact_chamfer`` in info) and exact
        Chamfer's own nDCG@10 (``exact_chamfer_ndcg_at_10``).
    bootstrap, seed : int
        The main score's interval over the queries, as in :func:`retrieval`.

    Returns
    -------
    TaskResult
        The usual retrieval scores and interval; info with ``index`` = ``muvera(...)>chamfer``.

    Examples
    --------
    >>> data = BeirData(("d1", "d2"), ("a cat purrs", "stocks fell"), ("q1",), ("a purring cat",),
    ...                 {"q1": {"d1": 1}}, "test", "toy")
    >>> r = multivector_retrieval("hf-layers:minilm", data, candidates=2)
    >>> r.main_score, r.info["recall_vs_exact_chamfer"]
    (1.0, 1.0)
    """
    from repspace.engines.encoders.tokens import encode_tokens
    from repspace.engines.search.muvera import FDEConfig, MultiVectorIndex

    t0 = time.perf_counter()
    check_scalar(candidates, "candidates", int, low=1)
    docs = encode_tokens(encoder, list(data.corpus_texts), layer=layer)
    queries = encode_tokens(encoder, list(data.query_texts), layer=layer)
    dim = next((d.shape[1] for d in docs if len(d)), None)
    if dim is None:
        raise InputError("no document has any token")
    config = config or FDEConfig(dim)
    index = MultiVectorIndex.build(docs, config)
    kk = min(k, data.n_documents)
    _, rows = index.search(queries, kk, candidates=max(candidates, kk))
    found = [r[r >= 0] for r in rows]
    scores, interval, units = _scores_of(found, data, k, bootstrap, seed)
    info: dict[str, Any] = {"n_queries": data.n_queries, "n_documents": data.n_documents, "depth": k,
                            "index": f"muvera(k_sim={config.k_sim},d_proj={config.d_proj},reps={config.reps})"
                                     f">chamfer{candidates}", "layer": layer}
    if exact_check:
        _, exact_rows = index.exact_search(queries, kk)
        exact = [r[r >= 0] for r in exact_rows]
        top = min(10, kk)
        info["recall_vs_exact_chamfer"] = float(np.mean(
            [len(set(a[:top].tolist()) & set(b[:top].tolist())) / max(len(b[:top]), 1) for a, b in zip(found, exact)]))
        info["exact_chamfer_ndcg_at_10"] = _scores_of(exact, data, k)[0]["ndcg_at_10"]
    return TaskResult(name or f"retrieval:{data.name}", data.split, MAIN_METRIC, scores,
                      time.perf_counter() - t0, info, interval=interval, units=units)
