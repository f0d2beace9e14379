"""Vector codecs, named one way everywhere: a reduction, then a precision.

A codec keeps ``dims`` dimensions (``prefixD``: the first D coordinates, as
Matryoshka embeddings are truncated; ``pcaD``: the top D principal
directions) and stores each in a precision: ``float32``, ``float16``
(written ``fp16`` in specs), ``int8`` (one byte per dimension, per-dimension
ranges learned from data) or ``binary`` (one sign bit per dimension). The
same words name the first stage of a search index
(:mod:`repspace.engines.search.specs`: ``pca64,int8>rerank``) and the codecs
of a compression sweep (:class:`repspace.engines.eval.compression.Codec`:
``pca64,int8``), and both read them with :func:`split_items` and
:func:`parse_precision` from here.

The grammar of a codec string: comma-separated items, at most one reduction
(``prefixD``/``pcaD``) and at most one precision (``float32``, ``fp16`` or
``float16``, ``int8``, ``binary``); ``full`` (or nothing) means no reduction,
no precision means ``float32``. The canonical string leaves out what is
default: ``pca64,int8``, ``prefix128``, ``binary``, ``full``.

Examples
--------
>>> spec = parse_codec("PCA64, float16")
>>> str(spec), spec.precision, spec.bytes_per_vector(384)
('pca64,fp16', 'float16', 128)
>>> str(parse_codec("full")), str(parse_codec("int8")), parse_codec("binary").bytes_per_vector(384)
('full', 'int8', 48)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from repspace.core.checks import check_scalar
from repspace.core.errors import InputError

__all__ = ["PRECISIONS", "REDUCTIONS", "CodecSpec", "code_bytes", "parse_codec", "parse_precision", "sign_bits",
           "signs", "split_items"]

#: How dimensions are reduced.
REDUCTIONS: tuple[str, ...] = ("prefix", "pca")
#: Precisions, from the most to the least bytes per dimension (canonical names).
PRECISIONS: tuple[str, ...] = ("float32", "float16", "int8", "binary")
#: How each precision is written in a spec string.
SPEC_WORD = {"float32": "float32", "float16": "fp16", "int8": "int8", "binary": "binary"}
#: Every accepted spelling of a precision.
_PRECISION_WORDS = {"float32": "float32", "fp32": "float32", "float16": "float16", "fp16": "float16",
                    "int8": "int8", "binary": "binary"}
_ITEM = re.compile(r"([a-z]+)(\d*)")
#: Words whose digits belong to the name, not to a parameter (``int8`` is not ``int`` with 8).
_FUSED = {("int", "8"): "int8", ("fp", "16"): "fp16", ("fp", "32"): "fp32", ("float", "16"): "float16",
          ("float", "32"): "float32"}


def split_items(text: str) -> list[tuple[str, str]]:
    """Split a lower-cased, space-free spec part into ``(word, digits)`` items.

    The one tokenizer of codec and index spec strings: ``"pca64,hnsw32,int8"``
    gives ``[("pca", "64"), ("hnsw", "32"), ("int8", "")]``; precision words
    keep their digits (``int8``, ``fp16``, ``float32``). Raises
    :class:`InputError` naming the first item that is not a word with
    optional digits.

    Examples
    --------
    >>> split_items("pca64,hnsw32,int8")
    [('pca', '64'), ('hnsw', '32'), ('int8', '')]
    >>> split_items("prefix64,float16")
    [('prefix', '64'), ('float16', '')]
    """
    items = []
    for item in text.split(","):
        match = _ITEM.fullmatch(item)
        if match is None:
            raise InputError(f"unknown item {item!r} in {text!r}")
        word, digits = match.group(1), match.group(2)
        fused = _FUSED.get((word, digits))
        items.append((fused, "") if fused is not None else (word, digits))
    return items


def parse_precision(word: str) -> str | None:
    """The canonical precision a word names (``fp16`` -> ``float16``), or None if it names none.

    Examples
    --------
    >>> parse_precision("FP16"), parse_precision("int8"), parse_precision("hnsw")
    ('float16', 'int8', None)
    """
    return _PRECISION_WORDS.get(word.strip().lower()) if isinstance(word, str) else None


def code_bytes(dims: int, precision: str) -> int:
    """Bytes of one vector of ``dims`` dimensions: 4·d, 2·d, d or ⌈d/8⌉.

    Examples
    --------
    >>> [code_bytes(50, p) for p in PRECISIONS]
    [200, 100, 50, 7]
    """
    per = {"float32": 4, "float16": 2, "int8": 1}
    if precision == "binary":
        return (int(dims) + 7) // 8
    if precision not in per:
        raise InputError(f"unknown precision {precision!r}; expected one of {', '.join(PRECISIONS)}")
    return per[precision] * int(dims)


def sign_bits(x: np.ndarray) -> np.ndarray:
    """Binary codes: one bit per dimension, set where ``x > 0``, packed into ``⌈d/8⌉`` bytes per row.

    Padding bits are zero, which leaves Hamming distances between codes unchanged.

    Examples
    --------
    >>> sign_bits(np.array([[0.5, -1.0, 0.0, 2.0]])).tolist()
    [[144]]
    """
    return np.packbits(np.asarray(x) > 0, axis=1)


def signs(x: np.ndarray) -> np.ndarray:
    """The same sign bits as ``+1``/``-1`` float32 values (cosine of two such rows is ``1 - 2h/d``).

    Examples
    --------
    >>> signs(np.array([[0.5, -1.0, 0.0]])).tolist()
    [[1.0, -1.0, -1.0]]
    """
    return np.where(np.asarray(x) > 0, np.float32(1.0), np.float32(-1.0))


@dataclass(frozen=True)
class CodecSpec:
    """A parsed codec: ``method`` and ``dims`` of the reduction (``dims`` None: none), and a precision.

    Examples
    --------
    >>> CodecSpec("pca", 64, "int8")
    CodecSpec('pca64,int8')
    >>> CodecSpec(dims=0)
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: codec dims (None: all) must be a positive integer, not 0
    """

    method: str = "prefix"
    dims: int | None = None
    precision: str = "float32"

    def __post_init__(self) -> None:
        d = self.dims
        check_scalar(d, "codec dims (None: all)", int, low=1, none=True)
        if self.method not in REDUCTIONS:
            raise InputError(f"unknown codec method {self.method!r}; expected one of {', '.join(REDUCTIONS)}")
        if self.precision not in PRECISIONS:
            raise InputError(f"unknown precision {self.precision!r}; expected one of {', '.join(PRECISIONS)}")
        if d is not None:
            object.__setattr__(self, "dims", int(d))

    def __str__(self) -> str:
        parts = [] if self.dims is None else [f"{self.method}{self.dims}"]
        if self.precision != "float32":
            parts.append(SPEC_WORD[self.precision])
        return ",".join(parts) or "full"

    def __repr__(self) -> str:
        return f"CodecSpec({str(self)!r})"

    def bytes_per_vector(self, full_dim: int) -> int:
        """Bytes of one coded vector of a ``full_dim``-dimensional space (see :func:`code_bytes`)."""
        return code_bytes(full_dim if self.dims is None else self.dims, self.precision)


def parse_codec(text: str | CodecSpec) -> CodecSpec:
    """Parse a codec string (see the module docstring); a :class:`CodecSpec` passes through.

    Examples
    --------
    >>> parse_codec("prefix128,fp16")
    CodecSpec('prefix128,fp16')
    >>> parse_codec("pca64,int8,binary")
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: codec 'pca64,int8,binary' has two precisions; give one of float32, fp16, int8, binary
    """
    if isinstance(text, CodecSpec):
        return text
    if not isinstance(text, str):
        raise InputError(f"a codec is a string such as 'pca64,int8', not {type(text).__name__}")
    s = re.sub(r"\s+", "", text).lower()
    if not s:
        raise InputError("empty codec; write e.g. 'pca64,int8', 'prefix128', 'binary' or 'full'")
    try:
        items = split_items(s)
    except InputError:
        raise InputError(f"codec {text!r} does not parse; write e.g. 'pca64,int8', 'prefix128,fp16', 'binary' "
                         "or 'full'") from None
    method, dims, precision = "prefix", None, None
    seen_reduction = False
    for word, digits in items:
        p = parse_precision(word)
        if p is not None and not digits:
            if precision is not None:
                raise InputError(f"codec {text!r} has two precisions; give one of "
                                 f"{', '.join(SPEC_WORD[x] for x in PRECISIONS)}")
            precision = p
        elif (word in REDUCTIONS and digits) or (word == "full" and not digits):
            if seen_reduction:
                raise InputError(f"codec {text!r} has two reductions; give one of prefixD, pcaD or full")
            seen_reduction = True
            if word != "full":
                method, dims = word, int(digits)
        else:
            raise InputError(f"unknown codec item {word + digits!r} in {text!r}; write e.g. 'pca64,int8', "
                             "'prefix128,fp16', 'binary' or 'full'")
    return CodecSpec(method, dims, precision or "float32")
