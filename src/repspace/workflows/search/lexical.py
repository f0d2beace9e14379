"""A stored space's BM25 index: built from its texts, persisted beside the store, cached in memory."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.errors import InputError, NotFoundError
from repspace.engines.search.lexical import (
    FORMAT,
    READ_BATCH,
    LexicalIndex,
    LexicalParams,
    read_meta,
)
from repspace.workflows.search.persist import stamp_matches

if TYPE_CHECKING:
    from repspace.core.store import Space

# ------------------------------------------------------------------ over a space
#: In-process cache: index folder -> (stamp it was built for, index).
_MEMORY: dict[str, tuple[dict[str, Any], LexicalIndex]] = {}


def lexical_folder(space: Space, params: LexicalParams) -> Path:
    """Where a space's lexical index with these parameters lives."""
    return space.store.index_dir / space.uid / params.slug


def _stamp_for(info: Any, params: LexicalParams, n_docs: int | None = None) -> dict[str, Any]:
    stamp = {"format": FORMAT, "space_uid": info.uid, "generation": info.generation,
             "next_row": info.next_row, "dead_rows": info.dead_rows, "params": params.to_dict()}
    if n_docs is not None:
        stamp["n_docs"] = n_docs
    return stamp


def ensure_lexical(space: Space, **params: Any) -> LexicalIndex:
    """The space's BM25 index, built (or rebuilt) first unless it matches the space exactly.

    The corpus is the text of every live item; items without text (``None``)
    are left out. The index lives in ``store.index_dir / space.uid /
    <params slug>`` with a stamp (space uid, generation, next row, dead rows,
    parameters, format version); any difference from the space means a
    rebuild, never an extension, since every BM25 weight depends on the whole
    corpus. An index this process already holds for the same stamp is reused
    without reading the disk. Over a read-only store the index is built in memory
    and kept by this process only.

    Parameters
    ----------
    space : Space
    **params : method, k1, b, stemmer, stopwords (see :class:`LexicalParams`)

    Examples
    --------
    >>> import tempfile, os
    >>> from repspace import Store
    >>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("t", dim=2)
    >>> _ = sp.add(["a", "b", "c"], np.eye(2)[[0, 1, 1]], texts=["cats purr", "dogs bark", None])
    >>> ix = ensure_lexical(sp)
    >>> len(ix), ix.search(["dogs"], k=2)[1].tolist()
    (2, [[1, -1]])
    >>> ensure_lexical(sp) is ix
    True
    """
    p = LexicalParams(**params)
    folder = lexical_folder(space, p)
    key = str(folder)
    info = space.info()
    wanted = _stamp_for(info, p)
    held = _MEMORY.get(key)
    if held is not None and stamp_matches(held[0], wanted):
        return held[1]
    index = _load_if_current(folder, wanted)
    if index is None:
        index, info = _build_for(space, p, info)
        stamp = _stamp_for(info, p, len(index))
        if space.store.readonly:  # built for this process only: nothing is written beside a read-only store
            index.stamp = stamp
        else:
            index.save(folder, stamp=stamp)
    assert index.stamp is not None
    _MEMORY[key] = (index.stamp, index)
    return index


def _load_if_current(folder: Path, wanted: dict[str, Any]) -> LexicalIndex | None:
    """The index in ``folder`` if its stamp matches ``wanted``; None if it is missing, stale or damaged."""
    try:
        if not stamp_matches(read_meta(folder).get("stamp"), wanted):
            return None
        index = LexicalIndex.load(folder)
    except (FileNotFoundError, InputError, NotFoundError):
        return None
    return index if stamp_matches(index.stamp, wanted) else None


def _build_for(space: Space, params: LexicalParams, info: Any) -> tuple[LexicalIndex, Any]:
    """Index the texts of the live items, read at one generation (retried if the space changes meanwhile)."""
    for _ in range(3):
        rows, texts = _corpus(space)
        after = space.info()
        if after.generation == info.generation:
            break
        info = after  # written to meanwhile: read again
    else:
        # Still changing: keep what was read, stamped with a generation it may not match,
        # so the next call rebuilds rather than trusts it.
        info = space.info()
        rows, texts = _corpus(space)
    index = LexicalIndex.build(texts, rows, **params.to_dict())
    return index, info


def _corpus(space: Space) -> tuple[np.ndarray, list[str]]:
    live = space.rows()
    rows: list[int] = []
    texts: list[str] = []
    for lo in range(0, len(live), READ_BATCH):
        items = space.items(live[lo : lo + READ_BATCH])
        for r in sorted(items):
            text = items[r].text
            if text is not None:
                rows.append(r)
                texts.append(text)
    return np.asarray(rows, dtype=np.int64), texts
