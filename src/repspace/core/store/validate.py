"""Checks on a batch before it touches the store.

Every check raises :class:`~repspace.core.errors.InputError` with one line naming the
first offending item, so that a bad batch is refused whole and the store stays
as it was.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from repspace.core.errors import InputError
from repspace.core.printable import CONTROL, escape_controls, excerpt

MAX_ID_LENGTH = 1024

#: How deeply an item's metadata may nest objects and arrays, counting the
#: metadata object itself as level 1 (``{"a": {"b": [1]}}`` is 3 levels deep).
#: Far below what breaks Parquet readers (pyarrow refuses schemas nested more
#: than 100 levels, and a list takes two) or Python's recursion.
MAX_METADATA_DEPTH = 32


def text_hash(text: str) -> str:
    """The content hash of a text: the first 128 bits of its SHA-256, in hex.

    Examples
    --------
    >>> text_hash("hello")
    '2cf24dba5fb0a30e26e83b2ac5b9e29e'
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def check_ids(ids: Sequence[Any]) -> list[str]:
    """Ids must be non-empty strings of printable characters, unique within the batch.

    An id is data that every route must reach again (a URL, a terminal, a
    ``--ids`` file of one id per line), so control characters (C0, DEL, C1:
    ``NUL``, ``ESC``, a newline, U+0085) are refused; any other Unicode is kept
    exactly (U+2028, right-to-left marks, ``/``, quotes, emoji).

    A batch of valid string ids is checked with whole-batch operations (a set,
    one UTF-8 encode and one regular-expression scan of all ids); any other
    batch goes through the per-id loop, which names the first offending id.

    Examples
    --------
    >>> check_ids(["a/b", "caf\u00e9", 7])
    ['a/b', 'caf\u00e9', '7']
    >>> try:
    ...     check_ids(["ok", "bad\\x00id"])
    ... except InputError as e:
    ...     print(e)
    id at position 1 has a control character (\\x00 at character 3): ids cannot hold control characters
    """
    fast = _valid_str_ids(ids)
    if fast is not None:
        return fast
    out: list[str] = []
    seen: dict[str, int] = {}
    for i, item_id in enumerate(ids):
        if isinstance(item_id, (int, np.integer)) and not isinstance(item_id, bool):
            item_id = str(item_id)
        if not isinstance(item_id, str):
            raise InputError(f"id at position {i} is {type(item_id).__name__}, not a string")
        if not item_id or not item_id.strip():
            raise InputError(f"id at position {i} is empty")
        if len(item_id) > MAX_ID_LENGTH:
            raise InputError(f"id at position {i} is longer than {MAX_ID_LENGTH} characters")
        _check_utf8(item_id, f"id at position {i}")
        control = CONTROL.search(item_id)
        if control is not None:
            raise InputError(f"id at position {i} has a control character ({escape_controls(control.group())} at "
                             f"character {control.start()}): ids cannot hold control characters")
        if item_id in seen:
            raise InputError(f"duplicate id {excerpt(item_id)} at positions {seen[item_id]} and {i} of the batch")
        seen[item_id] = i
        out.append(item_id)
    return out


def _valid_str_ids(ids: Sequence[Any]) -> list[str] | None:
    """The ids as a list when all are valid strings (the common case), else None."""
    out = list(ids)
    if not all(type(i) is str for i in out) or len(set(out)) != len(out):
        return None
    if not all(map(str.strip, out)) or max(map(len, out), default=0) > MAX_ID_LENGTH:
        return None
    joined = "".join(out)
    try:
        joined.encode("utf-8")  # lone surrogates (undecodable bytes read as text) fail here
    except UnicodeEncodeError:
        return None
    if CONTROL.search(joined) is not None:  # the loop names the id and the character
        return None
    return out


def lossy_in_float32(arr: np.ndarray) -> np.ndarray:
    """Which integers change when cast to float32 (every one up to 2**24 is exact; beyond, some are).

    Examples
    --------
    >>> lossy_in_float32(np.array([3, 2**24, 2**24 + 1, 2**40], dtype=np.int64)).tolist()
    [False, False, True, False]
    """
    f64 = arr.astype(np.float32).astype(np.float64)  # the float32 value, exactly
    fits = np.abs(f64) < 2.0**63
    back = np.zeros(arr.shape, dtype=np.int64)
    back[fits] = f64[fits].astype(np.int64)
    return ~fits | (back != arr.astype(np.int64))


def check_vectors(vectors: Any, ids: list[str], dim: int, dtype: str) -> np.ndarray:
    """Return the batch as C-contiguous float32 (n, dim); refuse NaN, inf and wrong shapes."""
    try:
        arr = np.asarray(vectors)
    except (ValueError, TypeError) as e:
        raise InputError(f"vectors are not a numeric array: {e}") from None
    if arr.ndim == 1 and len(ids) == 1 and arr.shape[0] == dim:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise InputError(f"vectors must be a 2-d array (n, {dim}); got shape {arr.shape}")
    if arr.shape[0] != len(ids):
        raise InputError(f"got {arr.shape[0]} vectors for {len(ids)} ids")
    if arr.shape[1] != dim:
        raise InputError(f"vectors have dimension {arr.shape[1]}; this space has dimension {dim}")
    if not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
        raise InputError(f"vectors have dtype {arr.dtype}; expected numbers")
    if np.issubdtype(arr.dtype, np.integer) and arr.size:
        lossy = lossy_in_float32(arr).any(axis=1)  # 2**40 + 1 became 1099511627776.0 silently
        if lossy.any():
            i = int(np.argmax(lossy))
            raise InputError(f"vector of id {excerpt(ids[i])} (position {i}) has integers float32 cannot hold exactly "
                             f"({arr.dtype} input, beyond 2**24): convert them to floats first")
    source = arr
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is refused below, with the id
        arr = np.ascontiguousarray(arr, dtype=np.float32)
    limit = np.finfo(np.float16).max if dtype == "float16" else np.inf
    bad = ~np.isfinite(arr).all(axis=1)
    if limit != np.inf:
        bad |= (np.abs(arr) > limit).any(axis=1)
    if bad.any():
        i = int(np.argmax(bad))
        if not np.isfinite(source[i]).all():
            what = "NaN or inf"
        else:
            what = f"values beyond {dtype} range (largest magnitude {np.abs(source[i]).max():.3g})"
        raise InputError(f"vector of id {excerpt(ids[i])} (position {i}) has {what}")
    return arr


def check_directions(vectors: np.ndarray, ids: Sequence[str], *, encoder: str | None = None) -> None:
    """Refuse vectors a cosine space cannot compare: a cosine is a ratio over the lengths, and a vector of
    length zero has no direction (every cosine with it is 0/0).

    ``vectors`` are rows as stored; the length is computed in float32 as a
    search normalises them, so a row too small (its squares underflow) or too
    large (they overflow) to normalise is refused with it. With ``encoder`` the
    vectors were embedded from texts by it, and the message says so.

    Examples
    --------
    >>> check_directions(np.array([[1.0, 0.0]], dtype=np.float32), ["a"])
    >>> try:
    ...     check_directions(np.array([[1.0, 0.0], [0.0, 0.0]], dtype=np.float32), ["a", "b"])
    ... except InputError as e:
    ...     print(e)
    vector of id 'b' (position 1) is all zeros: a cosine space compares directions, and it has none
    """
    arr = np.asarray(vectors, dtype=np.float32)
    if arr.ndim != 2 or not arr.size:
        return
    found = _first_undirected(arr)
    if found is not None:
        i, zero = found
        if encoder is not None:
            what = (f"the text of id {excerpt(ids[i])} (position {i}) embeds to "
                    f"{'the zero vector' if zero else 'a vector float32 cannot normalise'} with encoder {encoder}")
        else:
            what = f"vector of id {excerpt(ids[i])} (position {i}) " + (
                "is all zeros" if zero else "has a length float32 cannot normalise (values too small or too large)")
        raise InputError(f"{what}: a cosine space compares directions, and it has none")


def check_query_direction(query: Any, dim: int, what: str = "the query vector") -> None:
    """Refuse a query a cosine space cannot compare: one of length zero (all zeros) or one float32 cannot
    normalise, whose every score would be 0. ``what`` names the query in the message.

    Anything else wrong with the query (its shape, NaN, not numbers) is left to the search's own checks,
    which name it better.

    Examples
    --------
    >>> check_query_direction([0.5, 0.0], 2)
    >>> try:
    ...     check_query_direction([0.0, 0.0], 2, "the query text (embedded)")
    ... except InputError as e:
    ...     print(e)
    the query text (embedded) is all zeros: a cosine space compares directions, and it has none
    """
    if isinstance(query, np.ndarray) and query.dtype == np.float32:
        q = query  # already float32 (a search's query): no conversion, nothing to overflow
    else:
        try:
            with np.errstate(all="ignore"):
                q = np.asarray(query, dtype=np.float32)
        except (TypeError, ValueError, OverflowError):
            return
    if q.ndim not in (1, 2) or q.size == 0 or q.shape[-1] != dim or not np.isfinite(q).all():
        return
    found = _first_undirected(q.reshape(-1, dim))
    if found is not None:
        how = "is all zeros" if found[1] else "has a length float32 cannot normalise"
        raise InputError(f"{what} {how}: a cosine space compares directions, and it has none")


def _first_undirected(rows: np.ndarray) -> tuple[int, bool] | None:
    """``(position, all zeros)`` of the first float32 row whose length, computed as a search normalises it,
    is zero or not finite; None when every row has a direction."""
    with np.errstate(over="ignore", under="ignore"):
        lengths = np.sqrt(np.add.reduce(rows * rows, axis=1))  # np.linalg.norm's own arithmetic, without its checks
    if len(lengths) == 1:  # one query: Python comparisons, not array passes
        if 0 < float(lengths[0]) < np.inf:
            return None
    bad = ~(lengths > 0) | ~np.isfinite(lengths)
    if not bad.any():
        return None
    i = int(np.argmax(bad))
    return i, not rows[i].any()


def check_texts_to_embed(texts: Sequence[str | None], ids: Sequence[str], source: str = "") -> None:
    """Texts to embed must have something to embed: a missing, empty or whitespace-only text is refused.

    An encoder's tokenizer drops whitespace, so ``"   "`` embeds exactly as
    ``""``: to the special tokens alone (a vector of no content, MiniLM) or to
    the zero vector (a static encoder). Either way the item's vector would not
    say anything of it; the text is a user error, named with its item.

    Examples
    --------
    >>> check_texts_to_embed(["a cat", " x "], ["a", "b"])
    >>> try:
    ...     check_texts_to_embed(["a cat", "  "], ["a", "b"], "docs.jsonl")
    ... except InputError as e:
    ...     print(e)
    docs.jsonl: item 'b' (position 1) has an empty text (only whitespace): there is nothing to embed
    """
    where = f"{source}: " if source else ""
    for i, t in enumerate(texts):
        if t is None:
            raise InputError(f"{where}item {excerpt(ids[i])} (position {i}) has no text to embed")
        if not t.strip():
            what = "an empty text" if not t else "an empty text (only whitespace)"
            raise InputError(f"{where}item {excerpt(ids[i])} (position {i}) has {what}: there is nothing to embed")


def check_texts(texts: Sequence[Any] | None, ids: list[str]) -> list[str | None]:
    """Texts are strings or None, valid UTF-8 (no lone surrogates)."""
    if texts is None:
        return [None] * len(ids)
    texts = list(texts)
    if len(texts) != len(ids):
        raise InputError(f"got {len(texts)} texts for {len(ids)} ids")
    for i, t in enumerate(texts):
        if t is None:
            continue
        if isinstance(t, float) and math.isnan(t):  # a missing value from pandas/pyarrow
            texts[i] = None
            continue
        if not isinstance(t, str):
            raise InputError(f"text of id {excerpt(ids[i])} is {type(t).__name__}, not a string")
        _check_utf8(t, f"text of id {excerpt(ids[i])}")
    return texts


def check_metas(metas: Sequence[Any] | None, ids: list[str]) -> list[str]:
    """Metadata are JSON objects (dicts with string keys) nested at most :data:`MAX_METADATA_DEPTH` levels.

    Returns their JSON text (keys sorted).

    Examples
    --------
    >>> check_metas([{"b": 1, "a": [2]}], ["x"])
    ['{"a": [2], "b": 1}']
    >>> deep: dict = {}
    >>> for _ in range(40):
    ...     deep = {"k": deep}
    >>> try:
    ...     check_metas([{"ok": 1}, deep], ["x", "y"])
    ... except InputError as e:
    ...     print(e)
    metadata of id 'y' is nested too deeply: at most 32 levels of objects and arrays are accepted
    """
    if metas is None:
        return ["{}"] * len(ids)
    metas = list(metas)
    if len(metas) != len(ids):
        raise InputError(f"got {len(metas)} metadata records for {len(ids)} ids")
    out = []
    for i, m in enumerate(metas):
        if m is None:
            out.append("{}")
            continue
        if not isinstance(m, Mapping):
            raise InputError(f"metadata of id {excerpt(ids[i])} is {type(m).__name__}, not an object")
        try:
            text = json.dumps(m, ensure_ascii=False, allow_nan=False, sort_keys=True, default=json_default)
        except RecursionError:
            raise InputError(_too_deep(ids[i])) from None
        except (TypeError, ValueError) as e:
            raise InputError(f"metadata of id {excerpt(ids[i])} is not valid JSON: {e}") from None
        # A text with at most MAX_METADATA_DEPTH brackets cannot nest deeper (the usual case, counted in C).
        if text.count("{") + text.count("[") > MAX_METADATA_DEPTH and metadata_depth(m) > MAX_METADATA_DEPTH:
            raise InputError(_too_deep(ids[i]))
        _check_utf8(text, f"metadata of id {excerpt(ids[i])}")
        out.append(text)
    return out


def metadata_depth(value: Any, stop: int = MAX_METADATA_DEPTH) -> int:
    """How many levels of objects and arrays ``value`` nests (a scalar is 0).

    Counting stops a level past ``stop``: the result is exact up to ``stop``
    and ``stop + 1`` for anything deeper. Iterative, so any depth is safe.

    Examples
    --------
    >>> metadata_depth({"a": {"b": [1, 2]}}), metadata_depth("x"), metadata_depth({})
    (3, 0, 1)
    """
    deepest = 0
    todo: list[tuple[Any, int]] = [(value, 0)]
    while todo:
        node, level = todo.pop()
        if isinstance(node, np.ndarray):
            deepest = max(deepest, level + node.ndim)  # json_default writes it as nested lists
            continue
        if isinstance(node, Mapping):
            children: Any = node.values()
        elif isinstance(node, (list, tuple)):
            children = node
        else:
            continue
        level += 1
        deepest = max(deepest, level)
        if deepest > stop:
            return stop + 1
        todo.extend((child, level) for child in children)
    return deepest


def _too_deep(item_id: str) -> str:
    return (f"metadata of id {excerpt(item_id)} is nested too deeply: at most {MAX_METADATA_DEPTH} levels of objects "
            "and arrays are accepted")


def json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _check_utf8(s: str, what: str) -> None:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InputError(f"{what} is not valid UTF-8 (character {e.start})") from None
