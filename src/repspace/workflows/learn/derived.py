"""Learn a derived space from a stored one: retrofitting, Matryoshka and pair-adapter heads, CCA.

- :func:`retrofit_space`: Faruqui et al.'s retrofitting of a word space to a
  lexicon (a file of ``word neighbour ...`` lines, or ``"wordnet"``: WordNet's
  synonyms from Debian's ``wordnet-base``). Only words in the lexicon move.
- :func:`train_head`: a linear head on the frozen space, trained on scored text
  pairs (a ``sentence1,sentence2,score`` CSV, as STS-B): ``matryoshka`` (every
  prefix of the output is a good small embedding: search the new space with
  ``--index prefix64,...``) or ``adapter`` (contrastive or margin loss with
  distance-weighted negatives). The pairs are embedded with the space's own
  encoder; a dev file chooses the epoch only.
- :func:`cca_spaces`: canonical correlation analysis between two spaces over the
  items they share: each space projected onto its canonical directions.

Each result is a derived space (``derived_from`` in its provenance names the
source, the method, the full recipe and the data's fingerprints). Heads and
CCA are fitted affine maps stored as the space's chain, so new texts are
embedded by the source's encoder and then the map: ``repspace search NEW 'text'``
works. A retrofitted space keeps its source's encoder: a text query lands where
the source puts it (a word's original vector), among the retrofitted items.

Examples
--------
>>> import numpy as np
>>> from repspace.store import example_store
>>> store = example_store()
>>> words = ["cat", "kitten", "dog", "car", "automobile", "tree"]
>>> X = np.random.default_rng(0).normal(size=(6, 8))
>>> _ = store.create_space("w", dim=8).add(words, X)
>>> lex = store.path.with_name("lex.txt")
>>> _ = lex.write_text("cat kitten\\nkitten cat\\ncar automobile\\nautomobile car\\n")
>>> r = retrofit_space(store, "w", "w-rf", lex)
>>> r.details["counts"]["updated"], r.n
(4, 6)
>>> bool(np.allclose(store.space("w-rf").vectors_of(["tree"]), X[5:6]))
True
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.checks import check_choice
from repspace.core.errors import InputError
from repspace.core.progress import Progress, relabel
from repspace.core.space import check_space_name
from repspace.workflows.learn._params import check_params
from repspace.workflows.learn._report import LearnedSpace
from repspace.workflows.new_space import refuse_existing

if TYPE_CHECKING:
    from repspace.core.store import Space, Store

__all__ = ["HEAD_METHODS", "cca_spaces", "retrofit_space", "train_head"]

#: The heads :func:`train_head` trains.
HEAD_METHODS: tuple[str, ...] = ("matryoshka", "adapter")


def _source(store: Store, source: str, what: str) -> Space:
    src = store.space(source)
    src.metric.require_vector_space(what)
    return src


def _report(space: Space, method: str, t0: float, train_seconds: float, details: dict[str, Any]) -> LearnedSpace:
    info = space.info()
    return LearnedSpace(space=space.name, uid=space.uid, method=method, n=info.count, dim=info.dim,
                        metric=info.metric.value, train_seconds=train_seconds, seconds=time.perf_counter() - t0,
                        recipe=space.provenance, details=details)


# ----------------------------------------------------------------------------- retrofitting


def retrofit_space(store: Store, source: str, name: str, lexicon: str | Path | Mapping[str, Any], *,
                   iterations: int = 10, alpha: float = 1.0, beta: float | None = None, lowercase: bool = True,
                   progress: Progress | None = None) -> LearnedSpace:
    """Retrofit the word space ``source`` to ``lexicon`` and store the result as the derived space ``name``.

    Parameters
    ----------
    store : Store
    source : str
        A space whose item ids are words (a learned word2vec/fastText space,
        GloVe ingested as vectors, ...).
    name : str
        The new space (must not exist).
    lexicon : path, ``"wordnet"`` or mapping
        A file of ``word neighbour1 neighbour2 ...`` lines (Faruqui et al.'s
        format), ``"wordnet"`` for WordNet 3.0's synonyms (Debian's
        ``wordnet-base``), or a mapping of word to neighbours.
    iterations, alpha, beta, lowercase
        Of :func:`repspace.engines.learn.retrofit.retrofit` (the paper: 10
        iterations, ``alpha = 1``, ``beta = 1/degree``; words matched in lower case).
    progress : callable, optional
        ``(phase, done, total)``: ``write``.

    Returns
    -------
    LearnedSpace
        ``details``: ``counts`` (vocabulary, lexicon words in it, edges used,
        words updated and changed), ``last_step``.

    Raises
    ------
    InputError
        An empty or unreadable lexicon, none of its words in the space, a
        bad setting. Nothing is stored.

    Examples
    --------
    >>> from repspace.store import example_store
    >>> store = example_store()
    >>> X = np.random.default_rng(0).normal(size=(4, 8))
    >>> _ = store.create_space("w", dim=8).add(["car", "auto", "automobile", "tree"], X)
    >>> r = retrofit_space(store, "w", "w-rf", {"car": ["auto", "automobile"], "auto": ["car"]})
    >>> r.details["counts"]["updated"], store.space("w-rf").provenance["derived_from"]["method"]
    (2, 'retrofit')
    >>> bool(np.allclose(store.space("w-rf").vectors_of(["tree", "automobile"]), X[[3, 2]]))  # no entry: unmoved
    True
    """
    from repspace.engines.learn.retrofit import lexicon_from_mapping, read_lexicon, retrofit
    from repspace.workflows.transform import write_derived

    t0 = time.perf_counter()
    check_space_name(name)
    src = _source(store, source, "retrofitting")
    refuse_existing(store, name)
    if isinstance(lexicon, Mapping):
        lex = lexicon_from_mapping(lexicon, lowercase=lowercase)
        where = "mapping"
    elif str(lexicon) == "wordnet":
        from repspace.engines.learn.wordnet import synonym_lexicon

        lex = lexicon_from_mapping(synonym_lexicon(), lowercase=lowercase)
        where = "wordnet-synonyms (WordNet 3.0, Debian wordnet-base)"
    else:
        lex = read_lexicon(lexicon, lowercase=lowercase)
        where = str(Path(lexicon).resolve())
    generation = src.info().generation  # read before the vectors: a later write shows as a newer generation
    items, X = src.dump()
    result = retrofit([it.id for it in items], X, lex, iterations=iterations, alpha=alpha, beta=beta,
                      lowercase=lowercase)
    refuse_existing(store, name)
    derived_from = {"space": source, "uid": src.uid, "generation": generation, "method": "retrofit",
                    "recipe": result.recipe, "lexicon": {"source": where, "fingerprint": lex.fingerprint},
                    "counts": dict(result.counts)}
    space = write_derived(store, src, name, [], derived_from, items=items, vectors=result.vectors,
                          progress=progress)
    return _report(space, "retrofit", t0, result.seconds,
                   {"counts": dict(result.counts), "last_step": result.last_step, "lexicon": where})


# ----------------------------------------------------------------------------- heads on labelled pairs


def _pairs_record(path: str | Path, n: int) -> dict[str, Any]:
    data = Path(path).read_bytes()
    return {"file": str(Path(path).resolve()), "pairs": n, "sha256": hashlib.sha256(data).hexdigest()}


def _embed_pairs(encoder: Any, pairs: Any, progress: Progress | None, phase: str) -> tuple[np.ndarray, np.ndarray]:
    """The two sides of each pair through the frozen encoder, every distinct sentence once."""
    distinct = sorted(set(pairs.sentences1) | set(pairs.sentences2))
    vectors = np.asarray(encoder.encode(distinct, progress=relabel(progress, phase)), dtype=np.float32)
    at = {s: i for i, s in enumerate(distinct)}
    return (vectors[[at[s] for s in pairs.sentences1]], vectors[[at[s] for s in pairs.sentences2]])


def train_head(store: Store, source: str, name: str, method: str, pairs: str | Path, *,
               dev: str | Path | None = None, progress: Progress | None = None, **params: Any) -> LearnedSpace:
    """Train a linear head on the frozen space ``source`` from scored text pairs; store it as the space ``name``.

    Parameters
    ----------
    store : Store
    source : str
        A space with an encoder (its texts' vectors are the frozen inputs).
    name : str
        The new space (must not exist): every item of ``source`` through the head.
    method : ``matryoshka`` or ``adapter``
        :func:`repspace.engines.learn.heads.train_matryoshka_head` or
        :func:`~repspace.engines.learn.heads.train_pair_adapter`.
    pairs : path
        ``sentence1,sentence2,score`` CSV (a header row optional; STS-B's files).
    dev : path, optional
        The same format; chooses the epoch (early stopping) and nothing else.
    progress : callable, optional
        ``(phase, done, total)``: ``encode pairs``, ``encode dev``, ``train``, ``write``.
    **params
        Hyper-parameters of the engine's function (``epochs``, ``lr``,
        ``batch_size``, ``dims``, ``loss``, ``seed``, ``threads``, ...).

    Returns
    -------
    LearnedSpace
        ``details``: ``pairs``, ``dev`` (records with SHA-256), ``best_epoch``,
        ``dev_spearman`` (of the chosen epoch), ``history``.

    Raises
    ------
    InputError
        An unknown method or hyper-parameter, a bad pairs file, a space with
        no encoder (vectors made outside repspace) or not a vector space.

    Examples
    --------
    A Matryoshka head on a word2vec space learned here (any space with an encoder will do):

    >>> from repspace.learn import learn_space
    >>> from repspace.store import example_store
    >>> store = example_store()
    >>> corpus = store.path.with_name("c.txt")
    >>> _ = corpus.write_text("the cat sat on the mat\\nthe dog sat on the log\\n" * 20)
    >>> _ = learn_space(store, "pets", "word2vec", corpus, vector_size=8, min_count=1)
    >>> pairs = store.path.with_name("pairs.csv")
    >>> _ = pairs.write_text("the cat,a cat,4.5\\nthe cat,the log,0.2\\nthe dog,a dog,4.2\\nthe mat,the log,2.5\\n")
    >>> r = train_head(store, "pets", "pets-m", "matryoshka", pairs, dims=[4, 8], epochs=2)
    >>> r.method, r.n, r.dim, r.details["pairs"]["pairs"], r.details["best_epoch"]
    ('matryoshka', 7, 8, 4, 2)
    """
    from repspace.engines.eval.sts import load_sts
    from repspace.engines.learn.heads import train_matryoshka_head, train_pair_adapter
    from repspace.engines.transforms.linear import Affine
    from repspace.workflows.stored_transforms import encoder_for_space
    from repspace.workflows.transform import write_derived

    t0 = time.perf_counter()
    trainers = {"matryoshka": train_matryoshka_head, "adapter": train_pair_adapter}
    check_choice(method, "method", HEAD_METHODS)
    params = check_params(f"{method} head", trainers[method], params, fixed=("dev", "progress"))
    check_space_name(name)
    src = _source(store, source, f"a {method} head")
    refuse_existing(store, name)
    generation = src.info().generation  # read before write_derived reads the vectors
    train = load_sts(pairs)
    held = load_sts(dev) if dev is not None else None
    encoder = encoder_for_space(src)
    A, B = _embed_pairs(encoder, train, progress, "encode pairs")
    dev_data = None
    if held is not None:
        Ad, Bd = _embed_pairs(encoder, held, progress, "encode dev")
        dev_data = (Ad, Bd, held.scores)
    head = trainers[method](A, B, train.scores, dev=dev_data, progress=progress, **params)
    refuse_existing(store, name)
    chain = [Affine.from_map(head.W, head.b)]
    best = next((h for h in head.history if h["epoch"] == head.recipe.get("best_epoch")), None)
    details = {"pairs": _pairs_record(pairs, len(train)),
               "dev": None if dev is None or held is None else _pairs_record(dev, len(held)),
               "best_epoch": head.recipe.get("best_epoch"),
               "dev_spearman": None if best is None else best.get("dev_spearman"),
               "history": [dict(h) for h in head.history]}
    derived_from = {"space": source, "uid": src.uid, "generation": generation, "method": method,
                    "recipe": head.recipe, "pairs": details["pairs"], "dev": details["dev"]}
    space = write_derived(store, src, name, chain, derived_from, progress=progress)
    return _report(space, method, t0, head.seconds, details)


# ----------------------------------------------------------------------------- CCA


def cca_spaces(store: Store, a: str, b: str, out_a: str, out_b: str, *, n_components: int | None = None,
               progress: Progress | None = None, **params: Any) -> tuple[LearnedSpace, LearnedSpace]:
    """Canonical correlation analysis of spaces ``a`` and ``b`` over their shared items (joined on id).

    Each space is projected onto its canonical directions (``(x − mean) · W``),
    stored as the derived spaces ``out_a`` and ``out_b``: row ``i`` of one and
    row ``i`` of the other are as correlated as CCA can make them, component by
    component, so the two derived spaces can be searched against each other.

    Parameters
    ----------
    store : Store
    a, b : str
        The two spaces (vector spaces), sharing at least ``n_components + 2`` ids.
    out_a, out_b : str
        The new spaces (must not exist).
    n_components : int, optional
        Canonical directions kept (default: the smaller dimension).
    progress : callable, optional
        ``(phase, done, total)``: ``write``.
    **params
        Of :func:`repspace.engines.align.cca.fit_cca` (``reg``).

    Returns
    -------
    (LearnedSpace, LearnedSpace)
        ``details``: ``shared`` items, ``correlations`` (canonical, descending).

    Examples
    --------
    ``b`` is a linear map of ``a``, so each canonical pair correlates perfectly:

    >>> from repspace.store import example_store
    >>> store = example_store()
    >>> X = np.random.default_rng(0).normal(size=(20, 4))
    >>> ids = [f"w{i}" for i in range(20)]
    >>> _ = store.create_space("a", dim=4).add(ids, X)
    >>> _ = store.create_space("b", dim=3).add(ids, X @ np.random.default_rng(1).normal(size=(4, 3)))
    >>> ra, rb = cca_spaces(store, "a", "b", "a-cca", "b-cca")
    >>> ra.space, rb.dim, ra.details["shared"], [round(c, 3) for c in ra.details["correlations"]]
    ('a-cca', 3, 20, [1.0, 1.0, 1.0])
    """
    from repspace.engines.align import fit_cca
    from repspace.engines.transforms.linear import Affine
    from repspace.workflows.compare import joined
    from repspace.workflows.transform import write_derived

    t0 = time.perf_counter()
    for new in (out_a, out_b):
        check_space_name(new)
        refuse_existing(store, new)
    if out_a == out_b:
        raise InputError("the two CCA spaces need different names")
    params = check_params("CCA", fit_cca, params)
    sa, sb = _source(store, a, "CCA"), _source(store, b, "CCA")
    j = joined(sa, sb)
    start = time.perf_counter()
    fit = fit_cca(j.x, j.y, n_components=n_components, **params)
    fit_seconds = time.perf_counter() - start
    details = {"shared": len(j.ids), "correlations": [float(c) for c in fit.correlations]}
    out = []
    sides = ((sa, out_a, fit.Wx, fit.mean_x, b, j.generation_x), (sb, out_b, fit.Wy, fit.mean_y, a, j.generation_y))
    for src, new, W, mean, other, generation in sides:
        W = np.asarray(W, dtype=np.float64)
        step = Affine.from_map(W, -np.asarray(mean, dtype=np.float64) @ W)
        derived_from = {"space": src.name, "uid": src.uid, "generation": generation, "method": "cca",
                        "with": other, "recipe": fit.recipe, "shared": len(j.ids)}
        refuse_existing(store, new)
        space = write_derived(store, src, new, [step], derived_from, progress=progress)
        out.append(_report(space, "cca", t0, fit_seconds, details))
    return out[0], out[1]
