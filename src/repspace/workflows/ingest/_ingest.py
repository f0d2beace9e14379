"""The ingest workflow: records in, a durable space out, texts embedded at most once.

Order of work, so that bad input never changes the store:

1. read and validate the whole input (ids, texts, metadata, vectors);
2. look up content hashes already in the space: those texts are not embedded
   again (their stored vectors are reused);
3. embed the rest (outside any write transaction, so readers and other writers
   are not held up);
4. write: one atomic transaction by default, or one per ``commit_every`` items.
   A killed run keeps its committed batches, and re-running it embeds only what
   is missing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from repspace.core.checks import check_scalar
from repspace.core.errors import ConflictError, InputError, NotFoundError, RepspaceError
from repspace.core.printable import excerpt
from repspace.core.progress import Progress
from repspace.core.space import Metric
from repspace.core.limits import DEFAULT_ENCODER
from repspace.core.store import Space, Store
from repspace.core.store import validate as v
from repspace.workflows.ingest._target import IngestReport, created_or_existing, existing_space, refuse_existing
from repspace.workflows.ingest.readers import Records, parse_vectors, read_records




def ingest_records(
    store: Store,
    space: str,
    records: Records,
    *,
    encoder: str | None = None,
    encoder_options: dict[str, Any] | None = None,
    metric: str | None = None,
    dtype: str = "float32",
    batch_size: int = 64,
    commit_every: int | None = None,
    on_conflict: str = "upsert",
    auto_id: bool = False,
    progress: Progress | None = None,
) -> IngestReport:
    """Ingest records into ``space`` (created when missing).

    Parameters
    ----------
    store : Store
    space : str
        Name of the space; with an encoder ``layer="all"`` one space per hidden
        state is written, named ``<space>@<layer>``.
    records : Records
        From :func:`repspace.workflows.ingest.read_records` or built by hand.
    encoder : str, optional
        Registry spec (``minilm``, ``st:<folder>``, ``model2vec:<folder>``,
        ``static``, ``hf-layers:<folder>``). Default: the space's own encoder,
        or ``minilm`` for a new space with texts. Precomputed vectors need none.
    encoder_options : dict, optional
        Options for the encoder (``layer``, ``pooling``, ``normalize``, ``prompt``).
    metric : ``cosine`` (default for new spaces), ``ip`` or ``l2``.
    commit_every : int, optional
        Commit every this many items (default: the whole input in one transaction).
    on_conflict : ``upsert`` (default) or ``error``.

    Returns
    -------
    IngestReport

    Examples
    --------
    >>> import os, tempfile
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
    >>> records = Records("inline", ["a", "b", "c"], None, np.eye(3, dtype="float32"), [{"y": 1}, {"y": 2}, {"y": 2}])
    >>> r = ingest_records(store, "toy", records)
    >>> r.added, store.space("toy").info().metric.value, store.space("toy").filter_rows("y = 2").tolist()
    (3, 'cosine', [1, 2])
    """
    t0 = time.perf_counter()
    duplicates = 0
    if auto_id:
        records, duplicates = _drop_duplicate_ids(records)
    n = len(records)
    if n == 0:
        raise InputError(f"{records.source}: no items to ingest")
    # 1. Validate everything before any work or write.
    ids = v.check_ids(records.ids)
    texts = v.check_texts(records.texts, ids) if records.texts is not None else None
    v.check_metas(records.metadata, ids)
    if records.vectors is None and texts is None:
        raise InputError(f"{records.source}: nothing to store: no text column and no vectors")
    check_scalar(commit_every, "commit_every", int, low=1, none=True)
    if on_conflict not in ("upsert", "error"):
        raise InputError(f"on_conflict must be 'upsert' or 'error', not {excerpt(on_conflict)}")

    if records.vectors is not None:
        if encoder is not None:
            raise InputError("vectors are given: do not name an --encoder as well")
        vectors = np.asarray(records.vectors)
        existing = existing_space(store, space)
        v.check_vectors(vectors, ids, existing.dim if existing else vectors.shape[1],
                        existing.dtype if existing else dtype)
        with created_or_existing(store, space, vectors.shape[1], metric, dtype,
                                 {"encoder": "precomputed", "source": Path(records.source).name}) as target:
            if on_conflict == "error":
                refuse_existing(target, ids)
            _check_directions(target, ids, vectors, None)
            totals = _write(target, ids, vectors, texts, records.metadata, commit_every, on_conflict, progress)
        return IngestReport([target.name], n, 0, 0, *totals, duplicates, time.perf_counter() - t0, 0.0)

    assert texts is not None
    v.check_texts_to_embed(texts, ids, records.source)
    from repspace.engines.encoders import get_encoder
    from repspace.workflows.stored_transforms import STATE_NAME, encoder_for_space

    opts = dict(encoder_options or {})
    existing = existing_space(store, space)
    spec = encoder or (existing.provenance.get("encoder") if existing else None) or DEFAULT_ENCODER
    if existing is not None and existing.provenance.get("encoder") not in (None, spec):
        raise ConflictError(
            f"space {space!r} was made with encoder {existing.provenance.get('encoder')!r}, not {spec!r}; "
            "ingest into a new space"
        )
    layer = opts.get("layer")
    # Adding to an existing space re-creates its encoder from its recorded recipe (with the
    # fitted transforms of a derived space, which the texts must go through as well).
    if existing is not None and existing.state(STATE_NAME) is not None:
        if opts:
            raise InputError(f"space {space!r} is derived ({existing.provenance.get('transforms_spec')}); "
                             "add texts to it without encoder options")
        enc = encoder_for_space(existing)
    elif existing is not None and not opts:
        # encoder_for_space, not from_provenance alone: a space learned by `repspace learn` embeds new texts with
        # its stored model (doc2vec infers them), which the encoder registry does not know.
        enc = encoder_for_space(existing)
    else:
        enc = get_encoder(spec, **opts)
    if getattr(enc, "sparse", False):  # a SparseEncoder folder: its rows go to a sparse space
        from repspace.workflows.ingest.sparse_encode import ingest_encoded_sparse

        return ingest_encoded_sparse(store, space, enc, ids, texts, records, metric=metric, batch_size=batch_size,
                                     commit_every=commit_every, on_conflict=on_conflict, progress=progress,
                                     duplicates=duplicates, t0=t0)
    if layer == "all" or (isinstance(layer, (list, tuple))):
        return _ingest_layers(store, space, enc, ids, texts, records, metric, dtype, batch_size,
                              commit_every, on_conflict, progress, duplicates, t0)
    with created_or_existing(store, space, enc.dim, metric, dtype, enc.provenance()) as target:
        if on_conflict == "error":
            refuse_existing(target, ids)
        vectors, n_encoded, n_reused, enc_s = _embed_missing(
            [target], texts,
            lambda todo: [enc.encode(todo, batch_size=batch_size, progress=progress)],
        )
        _check_directions(target, ids, vectors[0], enc.spec)
        totals = _write(target, ids, vectors[0], texts, records.metadata, commit_every, on_conflict, progress)
    return IngestReport([target.name], n, n_encoded, n_reused, *totals, duplicates,
                        time.perf_counter() - t0, enc_s)


def _ingest_layers(store: Store, space: str, enc: Any, ids: list[str], texts: list[str], records: Records,
                   metric: str | None, dtype: str, batch_size: int, commit_every: int | None, on_conflict: str,
                   progress: Progress | None, duplicates: int, t0: float) -> IngestReport:
    from repspace.engines.encoders import LayeredEncoder

    if not isinstance(enc, LayeredEncoder):
        raise InputError(f"encoder {enc.spec!r} has no layers; layer='all' needs hf-layers:<folder>")
    layers = list(range(enc.n_layers))
    with ExitStack() as stack:
        targets = [stack.enter_context(created_or_existing(store, f"{space}@{i}", enc.dim, metric, dtype,
                                                           enc.provenance(layer=i))) for i in layers]
        if on_conflict == "error":
            for t in targets:
                refuse_existing(t, ids)
        vectors, n_encoded, n_reused, enc_s = _embed_missing(
            targets, texts,
            lambda todo: list(enc.encode_layers(todo, layers=layers, batch_size=batch_size,
                                                progress=progress)),
        )
        for t, vecs in zip(targets, vectors):  # every layer checked before any is written
            _check_directions(t, ids, vecs, enc.spec)
        totals = np.zeros(4, dtype=np.int64)
        for t, vecs in zip(targets, vectors):
            totals += _write(t, ids, vecs, texts, records.metadata, commit_every, on_conflict, progress)
    return IngestReport([t.name for t in targets], len(ids), n_encoded, n_reused, *map(int, totals), duplicates,
                        time.perf_counter() - t0, enc_s, {"layers": layers})


def _embed_missing(
    targets: list[Space], texts: list[str], encode: Callable[[list[str]], list[np.ndarray]]
) -> tuple[list[np.ndarray], int, int, float]:
    """Vectors for every text per target space: stored ones reused by content hash, the rest embedded once."""
    hashes = [v.text_hash(t) for t in texts]
    found = [t.rows_for_hashes(hashes) for t in targets]
    # A text is reused only if every target space has it; otherwise it is embedded (once, for all).
    reuse = [all(h in f for f in found) for h in hashes]
    todo_index: dict[str, int] = {}
    todo: list[str] = []
    for h, t, r in zip(hashes, texts, reuse):
        if not r and h not in todo_index:
            todo_index[h] = len(todo)
            todo.append(t)
    t_enc = time.perf_counter()
    fresh = encode(todo) if todo else None
    enc_s = time.perf_counter() - t_enc
    out = []
    for k, (target, f) in enumerate(zip(targets, found)):
        vecs = np.empty((len(texts), target.dim), dtype=np.float32)
        reused_pos = [i for i, r in enumerate(reuse) if r]
        if reused_pos:
            vecs[reused_pos] = target.read_rows([f[hashes[i]] for i in reused_pos])
        new_pos = [i for i, r in enumerate(reuse) if not r]
        if new_pos:
            assert fresh is not None
            vecs[new_pos] = fresh[k][[todo_index[hashes[i]] for i in new_pos]]
        out.append(vecs)
    return out, len(todo), sum(reuse), enc_s


def _check_directions(space: Space, ids: list[str], vectors: np.ndarray, encoder: str | None) -> None:
    """In a cosine space every vector must have a direction: checked for the whole input before the first
    batch is written (with ``commit_every`` a later batch's refusal would leave the earlier ones stored)."""
    if space.metric is Metric.COSINE:
        with np.errstate(over="ignore", invalid="ignore"):  # check_vectors refused what float32 cannot hold
            stored = np.asarray(vectors, dtype=np.float32).astype(space.dtype)
        v.check_directions(stored, ids, encoder=encoder)


def _write(space: Space, ids: list[str], vectors: np.ndarray, texts: list[str | None] | None,
           metadata: list[dict[str, Any]], commit_every: int | None, on_conflict: str,
           progress: Progress | None) -> tuple[int, int, int, int]:
    n = len(ids)
    step = commit_every or n
    added = replaced = updated = unchanged = 0
    for start in range(0, n, step):
        stop = min(n, start + step)
        r = space.add(ids[start:stop], vectors[start:stop], None if texts is None else texts[start:stop],
                      metadata[start:stop], on_conflict=on_conflict)  # type: ignore[arg-type]
        added, replaced, updated, unchanged = (added + r.added, replaced + r.replaced, updated + r.updated,
                                               unchanged + r.unchanged)
        if progress is not None:
            progress("write", stop, n)
    return added, replaced, updated, unchanged


def _drop_duplicate_ids(records: Records) -> tuple[Records, int]:
    seen: set[str] = set()
    keep = []
    for i, item_id in enumerate(records.ids):
        if item_id not in seen:
            seen.add(item_id)
            keep.append(i)
    if len(keep) == len(records.ids):
        return records, 0
    return Records(
        records.source,
        [records.ids[i] for i in keep],
        None if records.texts is None else [records.texts[i] for i in keep],
        None if records.vectors is None else np.asarray(records.vectors)[keep],
        [records.metadata[i] for i in keep],
        records.columns,
    ), len(records.ids) - len(keep)





def add_items(store: Store, space: str, items: Sequence[Mapping[str, Any]]) -> IngestReport:
    """Add items given as objects (``{"id", "text" | "vector", "metadata"}``) to an existing space, all or none.

    The HTTP service's writes: every item carries a vector, or none does and their
    texts are embedded with the space's own encoder (each distinct text once, stored
    vectors reused), under the rules of :func:`ingest_records` (one transaction, upsert).

    Examples
    --------
    >>> from repspace.store import example_store
    >>> store = example_store()
    >>> _ = store.create_space("t", dim=2)
    >>> add_items(store, "t", [{"id": "a", "vector": [1, 0], "metadata": {"n": 1}}]).added
    1
    >>> add_items(store, "t", [{"id": "b", "vector": [1, 0]}, {"id": "c", "text": "no vector"}])
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: give every item a vector, or none (their texts are then embedded)
    """
    store.space(space)  # an existing space: NotFoundError otherwise (a write never creates one)
    if not items:
        raise InputError("no items to add")
    ids = [it.get("id") for it in items]
    vecs = [it.get("vector") for it in items]
    texts = [it.get("text") for it in items]
    metas = [it.get("metadata") or {} for it in items]
    given = sum(v is not None for v in vecs)
    if given not in (0, len(items)):
        raise InputError("give every item a vector, or none (their texts are then embedded)")
    vectors = None
    if given:
        if all(isinstance(v, (list, tuple)) for v in vecs) and len({len(v) for v in vecs}) != 1:
            raise InputError("the items' vectors have different lengths")
        vectors = parse_vectors("request", vecs, "vector")  # numbers only; integers float32 holds exactly
    has_text = any(t is not None for t in texts)
    return ingest_records(store, space, Records("request", ids, texts if has_text else None, vectors, metas))
