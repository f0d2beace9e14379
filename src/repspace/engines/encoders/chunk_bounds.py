"""Where chunks of at most N tokens end: every N tokens, or at the last word or sentence boundary within N.

``--chunk N`` alone cuts a document every ``N`` tokens, so a chunk may end inside a word (``unbeliev`` |
``##ably``) or mid-sentence. :func:`bounded_chunks` keeps the cap of ``N`` tokens but, with ``by="words"`` or
``by="sentences"``, ends each chunk at the last boundary of that kind that the cap allows, so a chunk holds
whole words or whole sentences. Boundaries are read off the tokens' character offsets in the text, so they hold
for any tokenizer that gives offsets (and for whitespace words):

- a *word* boundary lies before token ``i`` when text separates it from token ``i - 1`` (a gap) or when either
  side of the joint is not a letter or digit (``city`` | ``.``); a ``##`` piece of a word has neither;
- a *sentence* boundary lies before token ``i`` when token ``i - 1`` ends with ``. ! ? …`` (or their CJK forms)
  and a gap follows it, when the gap holds a line break, or right after a CJK full stop ``。！？``.

When no boundary of the kind lies within the cap, a sentence chunk falls back to the last word boundary, and a
word chunk to the cap itself (one word longer than ``N`` tokens is cut). Chunks never overlap, never skip a
token, and each holds between 1 and ``N`` tokens.

Examples
--------
>>> text = "One two. Three four five."
>>> offsets = [(0, 3), (4, 7), (7, 8), (9, 14), (15, 19), (20, 24), (24, 25)]
>>> bounded_chunks(offsets, text, 4), bounded_chunks(offsets, text, 4, by="sentences")
([(0, 4), (4, 7)], [(0, 3), (3, 7)])
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from repspace.core.checks import check_choice, check_scalar

__all__ = ["CHUNK_BY", "bounded_chunks", "boundaries"]

#: The kinds of chunk end :func:`bounded_chunks` aligns to.
CHUNK_BY = ("tokens", "words", "sentences")

_SENTENCE_END = frozenset(".!?…")
_CJK_END = frozenset("。！？")


def boundaries(offsets: Sequence[Sequence[int]] | np.ndarray, text: str) -> tuple[np.ndarray, np.ndarray]:
    """Boolean arrays ``(word, sentence)``: is there a boundary before token ``i`` (``i`` = 1 .. T-1 at index i)?

    Index 0 is always False (no chunk ends before the first token).

    Examples
    --------
    >>> w, s = boundaries([(0, 2), (2, 4), (4, 5), (6, 8)], "unbe. Ok")
    >>> w.tolist(), s.tolist()
    ([False, False, True, True], [False, False, False, True])
    """
    spans = np.asarray(offsets, dtype=np.int64).reshape(-1, 2)
    n = len(spans)
    word, sentence = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    for i in range(1, n):
        prev_end, start = int(spans[i - 1, 1]), int(spans[i, 0])
        gap = text[prev_end:start]
        left = text[prev_end - 1] if prev_end > 0 else " "
        right = text[start] if start < len(text) else " "
        word[i] = bool(gap) or not left.isalnum() or not right.isalnum()
        sentence[i] = (left in _SENTENCE_END and bool(gap)) or "\n" in gap or left in _CJK_END
    return word, sentence


def bounded_chunks(offsets: Sequence[Sequence[int]] | np.ndarray, text: str, chunk_tokens: int,
                   by: str = "tokens") -> list[tuple[int, int]]:
    """Token spans ``[start, end)`` of at most ``chunk_tokens`` tokens, ending at boundaries of kind ``by``.

    Parameters
    ----------
    offsets : sequence of (int, int)
        Each token's character span in ``text`` (a fast tokenizer's ``offset_mapping``, no special tokens).
    text : str
    chunk_tokens : int
        The cap on tokens per chunk.
    by : {"tokens", "words", "sentences"}
        ``tokens``: every ``chunk_tokens`` tokens; otherwise the last boundary of that kind within the cap
        (see the module notes for the fall-backs).

    Examples
    --------
    >>> offsets = [(0, 2), (3, 7), (7, 11)]  # "is", "unbe", "##lief"
    >>> bounded_chunks(offsets, "is unbelief", 2), bounded_chunks(offsets, "is unbelief", 2, by="words")
    ([(0, 2), (2, 3)], [(0, 1), (1, 3)])
    """
    check_scalar(chunk_tokens, "chunk size", int, low=1)
    check_choice(by, "chunk-by", CHUNK_BY)
    n = len(offsets)
    if by == "tokens":
        return [(s, min(s + chunk_tokens, n)) for s in range(0, n, chunk_tokens)]
    word, sentence = boundaries(offsets, text)
    chunks: list[tuple[int, int]] = []
    start = 0
    while start < n:
        cap = min(start + chunk_tokens, n)
        end = cap
        if cap < n:  # the cut lies before token `cap`; look back for the last allowed boundary
            end = _last(sentence, start, cap) if by == "sentences" else 0
            end = end or _last(word, start, cap) or cap
        chunks.append((start, end))
        start = end
    return chunks


def _last(flags: np.ndarray, start: int, cap: int) -> int:
    """The largest ``i`` in ``(start, cap]`` with a boundary before token ``i``, or 0."""
    hits = np.flatnonzero(flags[start + 1:cap + 1])
    return int(start + 1 + hits[-1]) if len(hits) else 0
