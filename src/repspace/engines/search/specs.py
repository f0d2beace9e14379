"""Index spec strings: what a funnel index is, written the way FAISS's index factory writes it.

A spec is ``FIRST[>REFINE]``. ``FIRST`` is the in-memory first stage (comma-separated
items, as in ``"PCA64,IVF1024,PQ16"``); ``REFINE`` is an optional exact second stage
that shortlists ``k·F`` candidates from the first stage and rescores them with the
full float vectors, read from the store (the two-tier design: only compact codes live
in memory). Case and spaces are ignored.

=========================================  ==========================================
First stage                                What is held in memory
=========================================  ==========================================
``exact``                                  full float32 vectors, brute force (no refine)
``hnsw32[,ef64]``                          full vectors in an HNSW graph with M=32
``hnsw32,int8`` / ``hnsw32,fp16``          the graph over int8 codes / float16 vectors
``hnsw32,shards4[,ef64]``                  4 graphs over disjoint rows, searched by fan-out
``int8``                                   one byte per dimension (trained ranges)
``binary``                                 one bit per dimension (sign), Hamming search
``pca64[,hnsw32][,int8|fp16][,ef64]``     64 PCA components, brute force or HNSW
``tldr64[,hnsw32][,int8|fp16][,ef64]``    64 TLDR components (a linear map learnt on kNN pairs)
``prefix64[,hnsw32][,int8|fp16][,ef64]``  the first 64 dimensions (Matryoshka)
``prefix64,ivf1024[,nprobe16]``            IVF lists over the first 64 dimensions (AdANNS)
``ivf1024,pq32[,nprobe16]``                IVF lists with 32-byte product-quantizer codes
``opq32,ivf1024,pq32[,nprobe16]``          the same after a learned rotation (OPQ)
=========================================  ==========================================

``tldrD`` is ``pcaD`` with another linear map: TLDR (Kalantidis et al., 2021), trained on the
sample to keep each vector's nearest neighbours near (:mod:`repspace.core.tldr`).

``prefixD,ivfN`` is AdANNS' IVF (Rege et al., 2023): the coarse quantizer is trained
and the lists hold float vectors on the first ``D`` dimensions only (renormalised for
cosine), so a query probes and scans ``D``-dimensional vectors; with ``>rerank`` the
shortlist is rescored on all dimensions. ``opqM`` before ``ivfN,pqM`` rotates the
vectors first with a rotation learned to suit ``M`` sub-quantizers (Ge et al.'s OPQ,
FAISS' ``OPQM,IVFN,PQM``): the same bytes per vector, a smaller quantization error.

``shardsN`` after a plain graph splits the rows into N disjoint shards (row ``r`` in
shard ``r mod N``), one HNSW graph each, built in parallel (``--backend ray``: one
shard per task); a search asks every shard for its top ``k`` and merges them by
score (FAISS' ``IndexShards``). It reads as FAISS' comma items do: one more fact
about how the graph is stored.

``int8``/``fp16`` after a graph or a reduction say how its vectors are held: one
byte per dimension (per-dimension ranges trained on the data, FAISS'
``SQ8``) or half floats, instead of float32 (FAISS' ``HNSW32_SQ8`` and
``PCA64,SQfp16``). ``REFINE`` is ``rescoreF`` or ``rerankF`` (synonyms). Without ``F`` it is
:data:`DEFAULT_INT8_FACTOR` (4) for ``int8``, whose shortlist is already good, and
:data:`DEFAULT_FACTOR` (10) for every other kind. The canonical string spells ``F``
out and uses ``rescore`` for the quantizers (``int8``, ``binary``, ``hnsw32,int8``, after
sentence-transformers' rescoring recipe) and ``rerank`` for the others (after
AdANNS' shortlist-on-low-dimensions, rerank-on-full funnel).

Examples
--------
>>> spec = parse_spec("PCA64, HNSW32 > rerank")
>>> str(spec), spec.slug, spec.refine_factor
('pca64,hnsw32>rerank10', 'pca64-hnsw32', 10)
>>> str(parse_spec("int8>rerank"))
'int8>rescore4'
>>> parse_spec("hnsw1")
Traceback (most recent call last):
...
repspace.core.errors.InputError: HNSW M must be between 2 and 256, not 1 (in 'hnsw1')
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from repspace.core.codecs import CodecSpec, code_bytes, parse_precision, split_items
from repspace.core.errors import InputError

__all__ = ["ACCEPTED_FORMS", "CODES", "DEFAULT_FACTOR", "DEFAULT_GRAPH_CODES_FACTOR", "DEFAULT_INT8_FACTOR", "KINDS",
           "REDUCED", "IndexSpec", "parse_spec"]

#: The first-stage kinds (``opqM,ivfN,pqM`` is an ``ivfpq`` with ``opq``; ``prefixD,ivfN`` a ``prefix`` with ``nlist``).
KINDS = ("exact", "hnsw", "int8", "binary", "pca", "tldr", "prefix", "ivfpq")
#: The kinds that reduce the dimension before the first stage compares (``dims`` applies).
REDUCED = ("pca", "tldr", "prefix")
#: How a graph or a reduction may hold its vectors instead of float32.
CODES = ("int8", "fp16")
#: Refine factor of a bare ``rerank``/``rescore`` after ``int8``.
DEFAULT_INT8_FACTOR = 4
#: Refine factor of a bare ``rescore`` after a graph over int8 or fp16 codes (``hnsw32,int8``):
#: the graph's own ranking is already close, the rescoring only fixes the order.
DEFAULT_GRAPH_CODES_FACTOR = 2
#: Refine factor of a bare ``rerank``/``rescore`` after every other kind.
DEFAULT_FACTOR = 10
#: What error messages list.
ACCEPTED_FORMS = (
    "exact, hnsw32[,int8|fp16][,ef64][>rescore2], hnsw32,shards4[,ef64], int8[>rescore4], binary[>rescore8], "
    "pca64[,hnsw32][,int8|fp16][>rerank10], tldr64[,hnsw32][,int8|fp16][>rerank10], "
    "prefix64[,hnsw32][,int8|fp16][>rerank10], "
    "prefix64,ivf1024[,nprobe16][>rerank10], ivf1024,pq32[,nprobe16][>rerank10], "
    "opq32,ivf1024,pq32[,nprobe16][>rerank10]"
)

#: The words a first stage is written with (see :func:`repspace.core.codecs.split_items`).
_STAGES = frozenset({"exact", "hnsw", "ef", "int8", "binary", "pca", "tldr", "prefix", "ivf", "pq", "nprobe",
                     "fp16", "shards", "opq"})
_LIMITS = {  # field: (low, high, what)
    "m": (2, 256, "HNSW M"),
    "graph_m": (2, 256, "HNSW M"),
    "ef": (1, 100_000, "HNSW ef"),
    "dims": (1, 1_000_000, "dimensions"),
    "nlist": (1, 10_000_000, "IVF lists"),
    "pq_m": (1, 100_000, "PQ sub-quantizers"),
    "nprobe": (1, 10_000_000, "nprobe"),
    "refine_factor": (1, 10_000, "refine factor"),
    "shards": (2, 4096, "HNSW shards"),
    "opq": (1, 100_000, "OPQ sub-spaces"),
}


@dataclass(frozen=True)
class IndexSpec:
    """A parsed index spec; see the module docstring for the grammar.

    Attributes
    ----------
    kind : ``exact``, ``hnsw``, ``int8``, ``binary``, ``pca``, ``tldr``, ``prefix`` or ``ivfpq``.
    dims : reduced dimensions of ``pca``/``tldr``/``prefix``.
    m : HNSW M of the ``hnsw`` kind.
    ef : HNSW beam at search time (``hnsw`` and the reduced+graph forms; None: default).
    nlist, pq_m, nprobe : IVF lists, PQ sub-quantizers (bytes per code) and lists probed
        (None: default) of ``ivfpq``; ``prefix`` with ``nlist`` is AdANNS' IVF over the prefix.
    opq : sub-spaces of the OPQ rotation learned before an ``ivfpq`` (None: no rotation).
    graph_m : HNSW M of ``pcaD,hnswM`` / ``tldrD,hnswM`` / ``prefixD,hnswM`` (None: brute force over the
        reduced vectors).
    codes : ``int8`` or ``fp16``: how ``hnsw``, ``pca``, ``tldr`` and ``prefix`` hold their vectors
        (None: float32).
    shards : disjoint shards of a plain ``hnsw`` graph, searched by fan-out (None: one graph).
    refine_factor : F of the refine stage (None: no refine stage).

    Examples
    --------
    >>> IndexSpec("ivfpq", nlist=256, pq_m=10, refine_factor=10)
    IndexSpec('ivf256,pq10>rerank10')
    >>> IndexSpec("int8", refine_factor=0)
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: refine factor must be between 1 and 10000, not 0 (in 'int8>rescore0')
    """

    kind: str
    dims: int | None = None
    m: int | None = None
    ef: int | None = None
    nlist: int | None = None
    pq_m: int | None = None
    nprobe: int | None = None
    graph_m: int | None = None
    refine_factor: int | None = None
    codes: str | None = None
    shards: int | None = None
    opq: int | None = None

    def __post_init__(self) -> None:
        k = self.kind
        if k not in KINDS:
            raise InputError(f"unknown index kind {k!r}; use one of: {', '.join(KINDS)}")
        if self.codes is not None:
            if self.codes not in CODES:
                raise InputError(f"unknown vector codes {self.codes!r}; use one of: {', '.join(CODES)}")
            if k not in ("hnsw", *REDUCED):
                raise InputError(f"{self.codes} codes apply to hnsw, pca, tldr and prefix indexes, not {k}")
        allowed = {
            "exact": set(),
            "hnsw": {"m", "ef", "refine_factor", "shards"},
            "int8": {"refine_factor"},
            "binary": {"refine_factor"},
            "pca": {"dims", "graph_m", "ef", "refine_factor"},
            "tldr": {"dims", "graph_m", "ef", "refine_factor"},
            "prefix": {"dims", "graph_m", "ef", "refine_factor", "nlist", "nprobe"},
            "ivfpq": {"nlist", "pq_m", "nprobe", "refine_factor", "opq"},
        }[k]
        required = {"hnsw": {"m"}, "pca": {"dims"}, "tldr": {"dims"}, "prefix": {"dims"},
                    "ivfpq": {"nlist", "pq_m"}}.get(k, set())
        text = self._text() if required.issubset(n for n in required if getattr(self, n) is not None) else k
        for name, (low, high, what) in _LIMITS.items():
            value = getattr(self, name)
            if value is None:
                if name in required:
                    raise InputError(f"index kind {k!r} needs {what}; accepted forms: {ACCEPTED_FORMS}")
                continue
            if name not in allowed:
                if k == "exact" and name == "refine_factor":
                    raise InputError(f"exact search needs no refine stage (in {text!r})")
                raise InputError(f"{what} does not apply to {k} indexes (in {text!r}); "
                                 f"accepted forms: {ACCEPTED_FORMS}")
            if not isinstance(value, int) or isinstance(value, bool):
                raise InputError(f"{what} must be an integer, not {value!r}")
            if not low <= value <= high:
                raise InputError(f"{what} must be between {low} and {high}, not {value} (in {text!r})")
        if k in REDUCED and self.ef is not None and self.graph_m is None:
            raise InputError(f"ef needs a graph: write {k}{self.dims},hnsw32,ef{self.ef} (in {text!r})")
        if self.shards is not None and (self.codes is not None or self.refine_factor is not None):
            raise InputError(f"shards split a plain float graph: write hnsw{self.m},shards{self.shards} "
                             f"(no codes, no refine stage; in {text!r})")
        if k == "prefix":
            self._check_prefix_ivf(text)
        if self.nprobe is not None and self.nlist is not None and self.nprobe > self.nlist:
            raise InputError(f"nprobe {self.nprobe} exceeds the {self.nlist} IVF lists (in {text!r})")

    def _check_prefix_ivf(self, text: str) -> None:
        """``prefixD,ivfN``: IVF lists of float prefixes; no graph, no codes; nprobe needs the lists."""
        if self.nlist is None:
            if self.nprobe is not None:
                raise InputError(f"nprobe needs IVF lists: write prefix{self.dims},ivf1024,nprobe{self.nprobe} "
                                 f"(in {text!r})")
            return
        if self.graph_m is not None:
            raise InputError(f"prefix{self.dims} is searched by a graph or by IVF lists, not both (in {text!r})")
        if self.codes is not None:
            raise InputError(f"prefix{self.dims},ivf{self.nlist} holds float prefixes in its lists; "
                             f"{self.codes} codes do not apply (in {text!r})")

    # -- strings -----------------------------------------------------------------------

    def _first(self) -> str:
        k = self.kind
        if k == "exact":
            return "exact"
        codes = f",{self.codes}" if self.codes is not None else ""
        if k == "hnsw":
            shards = f",shards{self.shards}" if self.shards is not None else ""
            return f"hnsw{self.m}{codes}{shards}" + (f",ef{self.ef}" if self.ef is not None else "")
        if k in ("int8", "binary"):
            return k
        if k in REDUCED:
            s = f"{k}{self.dims}"
            if self.graph_m is not None:
                s += f",hnsw{self.graph_m}"
            if self.nlist is not None:
                return s + f",ivf{self.nlist}" + codes + (f",nprobe{self.nprobe}" if self.nprobe is not None else "")
            return s + codes + (f",ef{self.ef}" if self.ef is not None else "")
        s = (f"opq{self.opq}," if self.opq is not None else "") + f"ivf{self.nlist},pq{self.pq_m}"
        return s + (f",nprobe{self.nprobe}" if self.nprobe is not None else "")

    def _text(self) -> str:
        if self.refine_factor is None:
            return self._first()
        quantized = self.kind in ("int8", "binary") or (self.kind == "hnsw" and self.codes is not None)
        word = "rescore" if quantized else "rerank"
        return f"{self._first()}>{word}{self.refine_factor}"

    def __str__(self) -> str:
        return self._text()

    def __repr__(self) -> str:
        return f"IndexSpec({self._text()!r})"

    @property
    def slug(self) -> str:
        """A file-name-safe name of what is *stored*: the build parameters only.

        Search-time parameters (``ef``, ``nprobe``, the refine factor) do not change the
        stored codes, so specs that differ only in them share one file.

        Examples
        --------
        >>> parse_spec("pca64,hnsw32,ef128>rerank4").slug
        'pca64-hnsw32'
        >>> parse_spec("ivf1024,pq32,nprobe8>rerank").slug
        'ivf1024-pq32'
        >>> parse_spec("hnsw32,shards4,ef128").slug
        'hnsw32-shards4'
        >>> parse_spec("opq32,ivf1024,pq32>rerank").slug, parse_spec("prefix64,ivf256,nprobe4>rerank").slug
        ('opq32-ivf1024-pq32', 'prefix64-ivf256')
        """
        k = self.kind
        codes = f"-{self.codes}" if self.codes is not None else ""
        if k == "hnsw":
            return f"hnsw{self.m}{codes}" + (f"-shards{self.shards}" if self.shards is not None else "")
        if k in REDUCED:
            ivf = f"-ivf{self.nlist}" if self.nlist is not None else ""
            return f"{k}{self.dims}" + (f"-hnsw{self.graph_m}" if self.graph_m is not None else "") + ivf + codes
        if k == "ivfpq":
            return (f"opq{self.opq}-" if self.opq is not None else "") + f"ivf{self.nlist}-pq{self.pq_m}"
        return k

    # -- properties --------------------------------------------------------------------

    @property
    def needs_training(self) -> bool:
        """Whether the first stage must be fitted on sample vectors (int8 codes, pca, tldr, IVF lists).

        Examples
        --------
        >>> parse_spec("int8").needs_training, parse_spec("prefix32").needs_training
        (True, False)
        >>> parse_spec("prefix32,ivf64").needs_training
        True
        >>> parse_spec("hnsw32,int8").needs_training, parse_spec("hnsw32,fp16").needs_training
        (True, False)
        """
        return self.kind in ("int8", "pca", "tldr", "ivfpq") or self.codes == "int8" or self.nlist is not None

    @property
    def exact_rerank(self) -> bool:
        """Whether a refine stage rescores the shortlist exactly with the full vectors.

        Examples
        --------
        >>> parse_spec("binary>rescore8").exact_rerank, parse_spec("hnsw32").exact_rerank
        (True, False)
        """
        return self.refine_factor is not None

    @property
    def codec(self) -> CodecSpec | None:
        """What the first stage holds, as a codec (:mod:`repspace.core.codecs`); None for ``ivfpq`` and ``tldr``.

        Graphs and flat stages hold their vectors at a precision, reduced or not;
        IVF-PQ codes are not a per-dimension codec, and a TLDR map is no codec's reduction.

        Examples
        --------
        >>> str(parse_spec("pca64,hnsw32,int8>rerank").codec), str(parse_spec("binary").codec)
        ('pca64,int8', 'binary')
        >>> str(parse_spec("hnsw32,fp16").codec), str(parse_spec("exact").codec)
        ('fp16', 'full')
        """
        if self.kind in ("ivfpq", "tldr"):
            return None
        if self.kind in ("int8", "binary"):
            return CodecSpec(precision=self.kind)
        precision = parse_precision(self.codes) if self.codes is not None else "float32"
        if self.kind in ("pca", "prefix"):
            return CodecSpec(self.kind, self.dims, precision or "float32")
        return CodecSpec(precision=precision or "float32")

    def vector_bytes(self, dim: int) -> int:
        """Bytes held in memory per indexed vector of dimension ``dim``: a lower bound of the index's size / rows.

        What every vector costs whatever the data: its code (4 bytes per float dimension, 2 for
        fp16, 1 for int8, one bit for binary, ``pq_m`` for PQ), an 8-byte row label (not for
        ``exact``, which is the float matrix itself), and for a graph its level-0 neighbour
        slots (``2M`` of 4 bytes, allocated whether filled or not). Trained parameters
        (centroids, codebooks, PCA or TLDR maps, rotations) and the graph's upper levels come on top, which
        is why this is a lower bound; a memory budget rules specs out with it before anything
        is built.

        Examples
        --------
        >>> [parse_spec(s).vector_bytes(384) for s in ("exact", "binary", "ivf1024,pq32", "hnsw32")]
        [1536, 56, 40, 1800]
        """
        if self.kind == "exact":
            return 4 * dim
        if self.kind == "ivfpq":
            return int(self.pq_m) + 8  # type: ignore[arg-type]
        if self.kind == "binary":
            return code_bytes(dim, "binary") + 8
        held = self.dims if self.kind in REDUCED else dim
        codes = "int8" if self.kind == "int8" else self.codes
        per_dim = {"int8": 1, "fp16": 2}.get(codes or "", 4)
        links = 4 * 2 * int(self.m or self.graph_m) if self.graph else 0  # type: ignore[arg-type]
        return per_dim * int(held) + 8 + links  # type: ignore[arg-type]

    @property
    def graph(self) -> bool:
        """Whether the first stage is an HNSW graph (``ef`` applies).

        Examples
        --------
        >>> parse_spec("prefix32,hnsw16").graph
        True
        """
        return self.kind == "hnsw" or self.graph_m is not None


def parse_spec(text: str | IndexSpec) -> IndexSpec:
    """Parse an index spec string (see the module docstring); an :class:`IndexSpec` passes through.

    Raises :class:`~repspace.core.errors.InputError` with the accepted forms when the
    string does not parse.

    Examples
    --------
    >>> parse_spec("ivf1024,pq32>rerank")
    IndexSpec('ivf1024,pq32>rerank10')
    >>> parse_spec("hnsw32,ef64").ef
    64
    >>> parse_spec("OPQ32, IVF1024, PQ32, nprobe16 > rerank")
    IndexSpec('opq32,ivf1024,pq32,nprobe16>rerank10')
    >>> parse_spec("prefix64,ivf1024>rerank")
    IndexSpec('prefix64,ivf1024>rerank10')
    >>> parse_spec("ivf1024")
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: ivf1024 needs a product quantizer: write ivf1024,pq32 (in 'ivf1024')
    """
    if isinstance(text, IndexSpec):
        return text
    if not isinstance(text, str):
        raise InputError(f"an index spec is a string such as 'hnsw32' or 'int8>rescore4', not {type(text).__name__}")
    return _parse_text(text)


@functools.lru_cache(maxsize=512)
def _parse_text(text: str) -> IndexSpec:
    """:func:`parse_spec` of a string, remembered: a search names its index on every call (specs are frozen)."""
    raw = text
    s = re.sub(r"\s+", "", text).lower()
    if not s:
        raise InputError(f"empty index spec; accepted forms: {ACCEPTED_FORMS}")
    parts = s.split(">")
    if len(parts) > 2:
        raise InputError(f"an index spec has at most one refine stage ('>'), not {len(parts) - 1} (in {raw!r})")
    first = parts[0]
    refine = _parse_refine(parts[1], raw) if len(parts) == 2 else None
    if not first:
        raise InputError(f"index spec {raw!r} has no first stage; accepted forms: {ACCEPTED_FORMS}")
    items = []
    for item in first.split(","):
        try:
            ((name, digits),) = split_items(item)
        except InputError:
            raise InputError(f"unknown stage {item!r} in index spec {raw!r}; "
                             f"accepted forms: {ACCEPTED_FORMS}") from None
        if parse_precision(name) == "float16":  # the codec word: fp16 (float16 accepted)
            name = "fp16"
        if name not in _STAGES:
            raise InputError(f"unknown stage {name + digits!r} in index spec {raw!r}; accepted forms: {ACCEPTED_FORMS}")
        items.append((name, digits))
    head, head_digits = items[0]
    rest = items[1:]
    needs_number = {"hnsw", "ef", "pca", "tldr", "prefix", "ivf", "pq", "nprobe", "shards", "opq"}
    for name, digits in items:
        if name in needs_number and not digits:
            raise InputError(f"{name} needs a number, e.g. {name}{_EXAMPLE[name]} (in {raw!r})")
        if name not in needs_number and digits:
            raise InputError(f"unknown stage {name + digits!r} in index spec {raw!r}; accepted forms: {ACCEPTED_FORMS}")

    def take(allowed_names: tuple[str, ...]) -> dict[str, int]:
        got: dict[str, int] = {}
        for name, digits in rest:
            key = "codes" if name in CODES else name
            if key == "codes" and key in got and name in allowed_names:
                raise InputError(f"{name} after {CODES[got[key]]}: a stage holds its vectors one way "
                                 f"(int8 or fp16), in index spec {raw!r}")
            if name not in allowed_names or key in got:
                what = "repeated" if key in got else "does not fit after"
                raise InputError(f"{name}{digits} {what} {head}{head_digits} in index spec {raw!r}; "
                                 f"accepted forms: {ACCEPTED_FORMS}")
            got[key] = CODES.index(name) if name in CODES else int(digits)
        return got

    def codes_of(got: dict[str, int]) -> str | None:
        return CODES[got["codes"]] if "codes" in got else None

    opq = None
    if head == "opq":  # a rotation for the product quantizer that follows: opqM,ivfN,pqM
        if not rest or rest[0][0] != "ivf":
            raise InputError(f"opq{head_digits} rotates the vectors for a product quantizer: write "
                             f"opq{head_digits},ivf1024,pq{head_digits} (in {raw!r})")
        opq = int(head_digits)
        (head, head_digits), rest = rest[0], rest[1:]
    if head in ("exact", "int8", "binary"):
        take(())
        if head == "exact":
            if refine is not None:
                raise InputError(f"exact search needs no refine stage (in {raw!r})")
            return IndexSpec("exact")
        factor = refine if refine != 0 else (DEFAULT_INT8_FACTOR if head == "int8" else DEFAULT_FACTOR)
        return IndexSpec(head, refine_factor=factor)
    factor = DEFAULT_FACTOR if refine == 0 else refine
    if head == "hnsw":
        got = take(("ef", "shards", *CODES))
        if refine == 0 and "codes" in got:
            factor = DEFAULT_GRAPH_CODES_FACTOR
        return IndexSpec("hnsw", m=int(head_digits), ef=got.get("ef"), refine_factor=factor, codes=codes_of(got),
                         shards=got.get("shards"))
    if head in REDUCED:
        got = take(("hnsw", "ef", *CODES, *(("ivf", "nprobe") if head == "prefix" else ())))
        if "ef" in got and "hnsw" not in got:
            raise InputError(f"ef needs a graph: write {head}{head_digits},hnsw32,ef{got['ef']} (in {raw!r})")
        return IndexSpec(head, dims=int(head_digits), graph_m=got.get("hnsw"), ef=got.get("ef"),
                         refine_factor=factor, codes=codes_of(got), nlist=got.get("ivf"), nprobe=got.get("nprobe"))
    if head == "ivf":
        got = take(("pq", "nprobe"))
        if "pq" not in got:
            raise InputError(f"ivf{head_digits} needs a product quantizer: write ivf{head_digits},pq32 (in {raw!r})")
        return IndexSpec("ivfpq", nlist=int(head_digits), pq_m=got["pq"], nprobe=got.get("nprobe"),
                         refine_factor=factor, opq=opq)
    raise InputError(f"an index spec starts with exact, hnsw, int8, binary, pca, tldr, prefix, opq or ivf, "
                     f"not {head!r} "
                     f"(in {raw!r}); accepted forms: {ACCEPTED_FORMS}")


_EXAMPLE = {"hnsw": "32", "ef": "64", "pca": "64", "tldr": "64", "prefix": "64", "ivf": "1024", "pq": "32",
            "nprobe": "16", "shards": "4", "opq": "32"}


def _parse_refine(text: str, raw: str) -> int:
    """The refine factor of ``rescoreF``/``rerankF``; 0 for a bare word (the kind's default)."""
    match = re.fullmatch(r"(rescore|rerank)(\d*)", text)
    if match is None:
        raise InputError(f"unknown refine stage {text!r} in index spec {raw!r}: write rescoreF or rerankF "
                         "(e.g. int8>rescore4, pca64>rerank10)")
    if not match.group(2):
        return 0
    value = int(match.group(2))
    if value < 1:
        raise InputError(f"refine factor must be between 1 and {_LIMITS['refine_factor'][1]}, not {value} "
                         f"(in {raw!r})")
    return value
