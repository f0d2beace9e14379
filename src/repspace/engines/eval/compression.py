"""Compression sweeps: what fewer dimensions and fewer bits per dimension cost in quality.

A :class:`Codec` turns float vectors into cheaper ones in two steps: it
*reduces* the dimension (``prefix``: keep the first ``dims`` coordinates, as
Matryoshka embeddings are meant to be truncated; ``pca``: project onto the
top ``dims`` principal components of the reference vectors), then lowers the
*precision* (``float32``, ``float16``, ``int8`` scalar quantisation,
``binary`` sign bits). Codecs are named as the first stage of a search index
is (:mod:`repspace.core.codecs`): ``pca64,int8``, ``prefix128,fp16``,
``binary``, ``full``; ``Codec.parse("pca64,int8")`` reads one. Tasks fit a codec on reference vectors, score on the
transformed vectors with cosine similarity, and record
:meth:`Codec.to_dict` and :attr:`Codec.bytes_per_vector` in the result's
``info``; :func:`tradeoff_rows` and :func:`plot_tradeoff` then show quality
against bytes per vector, each score with its bootstrap interval when the results carry one.

Examples
--------
>>> import numpy as np
>>> X = np.random.default_rng(0).standard_normal((100, 64)).astype(np.float32)
>>> codecs = sweep_codecs(parse_dims("16,32,full"), parse_precisions("float32,binary"), full_dim=64)
>>> [(c.name, c.fit(X).bytes_per_vector) for c in codecs][:3]
[('prefix16', 64), ('prefix32', 128), ('full', 256)]
>>> codecs[-1].name, codecs[-1].transform(X).shape, codecs[-1].bytes_per_vector
('pca32,binary', (100, 32), 4)
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from repspace.core.codecs import (
    PRECISIONS,
    REDUCTIONS,
    CodecSpec,
    code_bytes,
    parse_codec,
    parse_precision,
    signs,
)
from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.engines.eval._results import TaskResult

__all__ = [
    "Codec",
    "METHODS",
    "PRECISIONS",
    "parse_dims",
    "parse_precisions",
    "sweep_codecs",
    "tradeoff_rows",
    "tradeoff_figure",
    "plot_tradeoff",
]

Method = Literal["prefix", "pca"]
Precision = Literal["float32", "float16", "int8", "binary"]

#: Dimension-reduction methods, in their default sweep order.
METHODS: tuple[str, ...] = REDUCTIONS


class Codec:
    """Reduce dimension (prefix truncation or PCA), then quantise (float16, int8, binary).

    Parameters
    ----------
    dims : int or None, default None
        Dimensions kept; ``None`` keeps them all (the "full" codec).
    method : {"prefix", "pca"}, default "prefix"
        ``prefix`` keeps the first ``dims`` coordinates (Matryoshka
        truncation); ``pca`` projects onto the top ``dims`` principal
        components of the vectors given to :meth:`fit` (scikit-learn's
        ``PCA(n_components=dims, random_state=0)``).
    precision : {"float32", "float16", "int8", "binary"}, default "float32"
        How each kept dimension is stored.

        * ``float32``: unchanged.
        * ``float16``: rounded to half precision (returned widened to float32).
        * ``int8``: sentence-transformers' scalar quantisation with
          per-dimension ranges learned in :meth:`fit` (the minimum and maximum
          of the reduced reference vectors): each value becomes one of 256
          buckets between them, coded ``-128 .. 127``; values outside the
          range are clipped. The codes themselves are returned (as float32),
          and similarity is computed on them, as sentence-transformers' int8
          retrieval does.
        * ``binary``: one sign bit per dimension (``x > 0``), returned as
          ``+1`` / ``-1``. The cosine of two such vectors is then exactly
          ``1 - 2 * hamming / d``, a decreasing function of the Hamming
          distance between the packed bits, so rankings by cosine on the
          output equal rankings by Hamming distance.

    Attributes
    ----------
    n_features_in_ : int
        Dimension of the vectors seen in :meth:`fit`.
    dims_ : int
        Dimension after reduction (``dims``, or ``n_features_in_`` when ``dims`` is None).
    pca_ : sklearn.decomposition.PCA or None
        The fitted PCA (method ``pca`` only).
    ranges_ : ndarray of shape (2, dims_) or None
        Per-dimension minimum (row 0) and maximum (row 1) of the reduced
        reference vectors, float32 (precision ``int8`` only).

    Notes
    -----
    The int8 and binary arithmetic mirrors
    ``sentence_transformers.quantize_embeddings`` (precision ``"int8"`` with
    ``ranges=ranges_``, and the sign bits of ``"binary"``) instead of calling
    it: importing sentence-transformers loads torch and transformers, several
    seconds, for ten lines of numpy, and its binary output is packed bytes
    while cosine scoring needs one ±1 value per dimension. The tests check the
    int8 codes against ``quantize_embeddings`` itself.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.5, -1.0, 2.0], [1.5, 1.0, -2.0], [1.0, 0.0, 0.0]], dtype=np.float32)
    >>> c = Codec(2, "prefix", "int8").fit(X)
    >>> c.name, c.bytes_per_vector
    ('prefix2,int8', 2)
    >>> c.ranges_.tolist()
    [[0.5, -1.0], [1.5, 1.0]]
    >>> c.transform(X).tolist()  # the maximum may land in bucket 254 (float32 rounding, as in sentence-transformers)
    [[-128.0, -128.0], [126.0, 126.0], [-1.0, -1.0]]
    >>> Codec(precision="binary").fit(X).transform(X).tolist()
    [[1.0, -1.0, 1.0], [1.0, 1.0, -1.0], [1.0, -1.0, -1.0]]
    >>> Codec(precision="binary").fit(X).to_dict()
    {'dims': None, 'method': 'prefix', 'precision': 'binary', 'bytes_per_vector': 1}
    """

    def __init__(self, dims: int | None = None, method: Method = "prefix", precision: Precision = "float32") -> None:
        spec = CodecSpec(method, dims, parse_precision(precision) or precision)
        self.dims = spec.dims
        self.method = spec.method
        self.precision = spec.precision

    @classmethod
    def parse(cls, text: str | CodecSpec) -> Codec:
        """A codec from its name (:func:`repspace.core.codecs.parse_codec`): ``"pca64,int8"``, ``"binary"``.

        Examples
        --------
        >>> Codec.parse("prefix128, fp16")
        Codec(dims=128, method='prefix', precision='float16')
        """
        spec = parse_codec(text)
        return cls(spec.dims, spec.method, spec.precision)  # type: ignore[arg-type]

    # -- description ---------------------------------------------------------------

    @property
    def spec(self) -> CodecSpec:
        """The codec as a :class:`~repspace.core.codecs.CodecSpec`."""
        return CodecSpec(self.method, self.dims, self.precision)

    @property
    def name(self) -> str:
        """The codec's canonical string: ``pca64,int8``, ``prefix128,fp16``, ``full``."""
        return str(self.spec)

    @property
    def bytes_per_vector(self) -> int:
        """Storage of one transformed vector: 4·d (float32), 2·d (float16), d (int8), ⌈d/8⌉ (binary).

        ``d`` is the reduced dimension; for ``dims=None`` it is known only after :meth:`fit`.
        """
        d = self.dims if self.dims is not None else getattr(self, "dims_", None)
        if d is None:
            raise InputError(f"codec {self.name} has no dimension yet; fit it before asking its size")
        return code_bytes(int(d), self.precision)

    def to_dict(self) -> dict[str, Any]:
        """``{"dims", "method", "precision", "bytes_per_vector"}`` (bytes None for an unfitted full codec).

        Examples
        --------
        >>> Codec(64, "pca", "int8").to_dict()
        {'dims': 64, 'method': 'pca', 'precision': 'int8', 'bytes_per_vector': 64}
        """
        try:
            nbytes: int | None = self.bytes_per_vector
        except InputError:
            nbytes = None
        return {"dims": None if self.dims is None else int(self.dims), "method": self.method,
                "precision": self.precision, "bytes_per_vector": nbytes}

    def __repr__(self) -> str:
        return f"Codec(dims={self.dims!r}, method={self.method!r}, precision={self.precision!r})"

    # -- learning ------------------------------------------------------------------

    def fit(self, X: Any, y: Any = None) -> Codec:
        """Learn the PCA (method ``pca``) and the int8 ranges (precision ``int8``) from reference vectors.

        Parameters
        ----------
        X : array-like of shape (n, d)
            Reference vectors (the corpus), normalised or not as the caller chooses.
        y : ignored

        Returns
        -------
        Codec
            ``self``.

        Examples
        --------
        >>> import numpy as np
        >>> X = np.random.default_rng(1).standard_normal((20, 8))
        >>> Codec(4, "pca").fit(X).pca_.components_.shape
        (4, 8)
        >>> Codec(10).fit(X)
        Traceback (most recent call last):
        ...
        repspace.core.errors.InputError: codec prefix10 keeps 10 dimensions but the vectors have 8
        """
        X = self._check_array(X, "reference vectors")
        n, d = X.shape
        if n == 0:
            raise InputError(f"codec {self.name} needs at least one reference vector to fit")
        if self.dims is not None and self.dims > d:
            raise InputError(f"codec {self.name} keeps {self.dims} dimensions but the vectors have {d}")
        self.n_features_in_ = d
        self.dims_ = d if self.dims is None else int(self.dims)
        self.pca_ = None
        self.ranges_ = None
        if self.method == "pca":
            if n < 2:
                raise InputError(f"codec {self.name} needs at least 2 reference vectors to fit a PCA")
            if self.dims_ > min(n, d):
                raise InputError(f"codec {self.name} keeps {self.dims_} principal components but "
                                 f"{n} vectors of dimension {d} have at most {min(n, d)}")
            from sklearn.decomposition import PCA

            self.pca_ = PCA(n_components=self.dims_, random_state=0).fit(X)
        if self.precision == "int8":
            reduced = self._reduce(X)
            self.ranges_ = np.vstack([reduced.min(axis=0), reduced.max(axis=0)]).astype(np.float32)
        return self

    def transform(self, X: Any) -> np.ndarray:
        """Reduce, then quantise; always returns a float32 array of shape ``(n, dims_)``.

        Parameters
        ----------
        X : array-like of shape (n, n_features_in_)

        Returns
        -------
        ndarray of float32
            float32/float16 values, int8 codes in ``[-128, 127]``, or ±1 sign
            values, depending on :attr:`precision`; score it with cosine similarity.

        Examples
        --------
        >>> import numpy as np
        >>> X = np.array([[1.0, 1.0 / 3.0, -2.0]])
        >>> Codec(2, precision="float16").fit(X).transform(X)
        array([[1.        , 0.33325195]], dtype=float32)
        """
        if not hasattr(self, "dims_"):
            raise InputError(f"codec {self.name} is not fitted; call fit on the reference vectors first")
        X = self._check_array(X, "vectors")
        if X.shape[1] != self.n_features_in_:
            raise InputError(f"codec {self.name} was fitted on {self.n_features_in_}-d vectors, got {X.shape[1]}-d")
        Z = self._reduce(X)
        if self.precision == "float16":
            with np.errstate(over="ignore"):
                Z = Z.astype(np.float16)
            if not np.isfinite(Z).all():
                raise InputError(f"codec {self.name}: some values are too large for float16 (|x| > 65504)")
            Z = Z.astype(np.float32)
        elif self.precision == "int8":
            Z = self._int8_codes(Z).astype(np.float32)
        elif self.precision == "binary":
            Z = signs(Z)
        return np.ascontiguousarray(Z, dtype=np.float32)

    def fit_transform(self, X: Any, y: Any = None) -> np.ndarray:
        """:meth:`fit` then :meth:`transform` on the same vectors.

        Examples
        --------
        >>> import numpy as np
        >>> Codec(1).fit_transform(np.eye(2)).tolist()
        [[1.0], [0.0]]
        """
        return self.fit(X).transform(X)

    # -- internals -----------------------------------------------------------------

    def _check_array(self, X: Any, what: str) -> np.ndarray:
        try:
            arr = np.asarray(X, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise InputError(f"codec {self.name}: {what} are not a numeric array ({exc})") from None
        if arr.ndim != 2:
            raise InputError(f"codec {self.name}: {what} must be a 2-d array (n, d), got shape {arr.shape}")
        if arr.shape[1] == 0:
            raise InputError(f"codec {self.name}: {what} have dimension 0")
        if not np.isfinite(arr).all():
            raise InputError(f"codec {self.name}: {what} contain NaN or infinite values")
        return arr

    def _reduce(self, X: np.ndarray) -> np.ndarray:
        if self.pca_ is not None:
            return np.asarray(self.pca_.transform(X), dtype=np.float32)
        return X[:, : self.dims_]

    def _int8_codes(self, Z: np.ndarray) -> np.ndarray:
        # Exactly sentence_transformers.quantize_embeddings(Z, "int8", ranges=self.ranges_),
        # same float32 operations in the same order (see the class Notes for why it is mirrored).
        ranges = self.ranges_.astype(np.float32, copy=False)
        starts = ranges[0, :]
        steps = (ranges[1, :] - starts) / 255
        steps = np.where(steps == 0, 1, steps)
        q_vals = np.clip(np.floor((Z - starts) / steps), 0, 255)
        return (q_vals - 128).astype(np.int8)


# -- parsing and sweeps ----------------------------------------------------------------


def _items(text: str, what: str) -> list[str]:
    if not isinstance(text, str):
        raise InputError(f"{what} must be a comma-separated string, got {type(text).__name__}")
    items = [t.strip().lower() for t in text.split(",")]
    if not text.strip() or any(not t for t in items):
        raise InputError(f"{what} {text!r} has an empty entry; give a comma-separated list")
    seen: set[str] = set()
    for t in items:
        if t in seen:
            raise InputError(f"{what} {text!r} lists {t!r} twice")
        seen.add(t)
    return items


def parse_dims(text: str) -> list[int | None]:
    """Parse ``--dims``: positive integers and ``full`` (returned as None), in the order given.

    Parameters
    ----------
    text : str
        E.g. ``"16,32,64,128,256,full"``.

    Returns
    -------
    list of int or None

    Examples
    --------
    >>> parse_dims("16, 32,full")
    [16, 32, None]
    >>> parse_dims("16,0")
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: --dims entry '0' must be a positive integer or 'full'
    """
    out: list[int | None] = []
    for t in _items(text, "--dims"):
        if t == "full":
            out.append(None)
            continue
        try:
            value = int(t)
        except ValueError:
            raise InputError(f"--dims entry {t!r} is not an integer or 'full'") from None
        if value < 1:
            raise InputError(f"--dims entry {t!r} must be a positive integer or 'full'")
        if value in out:
            raise InputError(f"--dims {text!r} lists {value} twice")
        out.append(value)
    return out


def parse_precisions(text: str) -> list[str]:
    """Parse ``--precision``: names among float32, float16 (or fp16), int8, binary, in the order given.

    Examples
    --------
    >>> parse_precisions("float32,INT8, binary, fp16")
    ['float32', 'int8', 'binary', 'float16']
    >>> parse_precisions("float32,fp8")
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: unknown precision 'fp8' in --precision; expected float32, float16, int8, binary
    """
    out = []
    for t in _items(text, "--precision"):
        p = parse_precision(t)
        if p is None:
            raise InputError(f"unknown precision {t!r} in --precision; expected {', '.join(PRECISIONS)}")
        if p in out:
            raise InputError(f"--precision {text!r} lists {p} twice")
        out.append(p)
    return out


def sweep_codecs(dims: Iterable[int | None], precisions: Iterable[str], methods: Iterable[str] = METHODS,
                 full_dim: int | None = None, *, note: Callable[[str], None] | None = None) -> list[Codec]:
    """Every (method, precision, dims) codec of a sweep.

    At full dimension (``None``, or ``dims == full_dim``) only the prefix
    method is kept: PCA with every component is a rotation, which changes no
    cosine. A ``dims == full_dim`` entry becomes ``None`` (``full``), so the
    uncompressed float32 codec is always ``full``.

    Parameters
    ----------
    dims : iterable of int or None
        From :func:`parse_dims`.
    precisions : iterable of str
        From :func:`parse_precisions`.
    methods : iterable of str, default ("prefix", "pca")
    full_dim : int, optional
        Dimension of the vectors, when known: larger ``dims`` are dropped with a note.
    note : callable, optional
        Receives each note (one line); by default it is issued with :func:`warnings.warn`.

    Returns
    -------
    list of Codec
        Ordered by method, then precision (both in the order given), then dims
        ascending with ``full`` last.

    Examples
    --------
    >>> [c.name for c in sweep_codecs([64, None, 16, 512], ["float32", "int8"], full_dim=300, note=print)]
    dropped dims 512: larger than the vectors' dimension 300
    ['prefix16', 'prefix64', 'full', 'prefix16,int8', 'prefix64,int8', 'int8', 'pca16', 'pca64', 'pca16,int8', \
'pca64,int8']
    """
    say = note if note is not None else (lambda msg: warnings.warn(msg, UserWarning, stacklevel=3))
    methods = list(methods)
    precisions = [parse_precision(p) or p for p in precisions]
    for m in methods:
        if m not in METHODS:
            raise InputError(f"unknown codec method {m!r}; expected one of {', '.join(METHODS)}")
    for p in precisions:
        if p not in PRECISIONS:
            raise InputError(f"unknown precision {p!r}; expected one of {', '.join(PRECISIONS)}")
    if not methods or not precisions:
        raise InputError("a compression sweep needs at least one method and one precision")
    kept: list[int | None] = []
    dropped: list[int] = []
    for d in dims:
        check_scalar(d, "each of dims", int, low=1, none=True)
        if full_dim is not None and d is not None and d > full_dim:
            dropped.append(int(d))
            continue
        value = None if (d is None or (full_dim is not None and d == full_dim)) else int(d)
        if value not in kept:
            kept.append(value)
    if dropped:
        say(f"dropped dims {', '.join(map(str, dropped))}: larger than the vectors' dimension {full_dim}")
    if not kept:
        raise InputError("no dims left to sweep")
    ordered = sorted((d for d in kept if d is not None)) + ([None] if None in kept else [])
    codecs: list[Codec] = []
    for m in dict.fromkeys(methods):
        for p in dict.fromkeys(precisions):
            for d in ordered:
                if d is None and m != "prefix":
                    continue
                codecs.append(Codec(d, m, p))
    return codecs


# -- reporting -------------------------------------------------------------------------


def _codec_info(result: TaskResult) -> tuple[dict[str, Any], int]:
    codec = result.info.get("codec") if isinstance(result.info, dict) else None
    if not isinstance(codec, dict) or not {"dims", "method", "precision"} <= codec.keys():
        raise InputError(f"result {result.task_name}/{result.split} has no codec info; "
                         "it did not come from a compression sweep")
    nbytes = result.info.get("bytes_per_vector", codec.get("bytes_per_vector"))
    if isinstance(nbytes, bool) or not isinstance(nbytes, (int, np.integer)) or nbytes < 1:
        raise InputError(f"result {result.task_name}/{result.split} ({codec.get('precision')}) "
                         f"has no valid bytes_per_vector: {nbytes!r}")
    return codec, int(nbytes)


def _is_reference(codec: dict[str, Any]) -> bool:
    return codec["dims"] is None and codec["precision"] == "float32"


def _ends(result: TaskResult) -> tuple[float | None, float | None]:
    """The ends of a result's interval of its main score, ``(None, None)`` without one."""
    ci = result.interval
    return (None, None) if ci is None else (float(ci.low), float(ci.high))


def tradeoff_rows(results: Sequence[TaskResult]) -> list[dict[str, Any]]:
    """One row per sweep result, smallest vectors first.

    Parameters
    ----------
    results : sequence of TaskResult
        Each with ``info["codec"]`` (:meth:`Codec.to_dict`) and ``info["bytes_per_vector"]``.

    Returns
    -------
    list of dict
        ``{"codec", "method", "dims", "precision", "bytes_per_vector",
        "main_score", "ci_low", "ci_high", "relative"}``; ``ci_low``/``ci_high``
        are the ends of the main score's bootstrap interval
        (:attr:`TaskResult.interval`; None without one); ``relative`` is the
        score divided by the ``full`` (uncompressed float32) result's (None when
        there is none, or it is 0).

    Examples
    --------
    >>> import numpy as np
    >>> from repspace.engines.eval.uncertainty import Interval
    >>> full = Codec().fit(np.ones((1, 256)))
    >>> rs = [TaskResult("sts", "test", "spearman", {"spearman": s}, 0.0,
    ...                  {"codec": c.to_dict(), "bytes_per_vector": c.bytes_per_vector}, interval=ci)
    ...       for c, s, ci in [(full, 0.8, Interval(0.75, 0.84, 0.95, 1000)), (Codec(64, "pca", "binary"), 0.4, None)]]
    >>> [(r["codec"], r["bytes_per_vector"], r["ci_low"], r["ci_high"], r["relative"]) for r in tradeoff_rows(rs)]
    [('pca64,binary', 8, None, None, 0.5), ('full', 1024, 0.75, 0.84, 1.0)]
    """
    parsed = [(_codec_info(r), r) for r in results]
    ref = next((r.main_score for (c, _), r in parsed if _is_reference(c)), None)
    rows = []
    for (codec, nbytes), r in parsed:
        low, high = _ends(r)
        rows.append({
            "codec": str(CodecSpec(codec["method"], codec["dims"], codec["precision"])),
            "method": codec["method"],
            "dims": codec["dims"],
            "precision": codec["precision"],
            "bytes_per_vector": nbytes,
            "main_score": r.main_score,
            "ci_low": low,
            "ci_high": high,
            "relative": (r.main_score / ref) if ref not in (None, 0) else None,
        })
    rows.sort(key=lambda row: (row["bytes_per_vector"], METHODS.index(row["method"]) if row["method"] in METHODS
                               else len(METHODS), row["codec"]))
    return rows


def tradeoff_figure(results: Sequence[TaskResult], *, title: str | None = None) -> Any:
    """Draw quality against bytes per vector: one line per (method, precision), each interval a whisker.

    The x axis is bytes per vector on a log2 scale, ticks labelled with the
    byte counts present; the y axis is the results' main metric. A result with
    an interval (:attr:`TaskResult.interval`) gets an error bar from its
    ``low`` to its ``high`` end, in its line's colour (one
    :class:`~matplotlib.container.ErrorbarContainer` per line, in
    ``ax.containers``). The uncompressed ``full`` (float32) point, when
    present, is marked with a star.

    Parameters
    ----------
    results : sequence of TaskResult
        Sweep results of one task (same main metric), each carrying
        ``info["codec"]`` and ``info["bytes_per_vector"]``.
    title : str, optional
        Defaults to ``"<task>: quality vs bytes per vector"``.

    Returns
    -------
    matplotlib.figure.Figure
        A figure of its own (not registered with pyplot: nothing to close), one axes.

    Examples
    --------
    >>> from repspace.engines.eval.uncertainty import Interval
    >>> cs = [Codec(d, "prefix", "int8") for d in (8, 16)]
    >>> rs = [TaskResult("sts", "test", "spearman", {"spearman": s}, 0.0,
    ...                  {"codec": c.to_dict(), "bytes_per_vector": c.bytes_per_vector},
    ...                  interval=Interval(s - 0.05, s + 0.03, 0.95, 1000)) for c, s in zip(cs, (0.6, 0.7))]
    >>> (ax,) = tradeoff_figure(rs).axes
    >>> [[(float(x), round(float(y), 2)) for x, y in seg] for seg in ax.containers[0].lines[2][0].get_segments()]
    [[(8.0, 0.55), (8.0, 0.63)], [(16.0, 0.65), (16.0, 0.73)]]
    """
    results = list(results)
    if not results:
        raise InputError("nothing to plot: no results")
    parsed = [(*_codec_info(r), r) for r in results]
    metrics = list(dict.fromkeys(r.main_metric for r in results))
    if len(metrics) > 1:
        raise InputError(f"cannot plot results with different main metrics together: {', '.join(metrics)}")
    tasks = list(dict.fromkeys(r.task_name for r in results))

    from matplotlib.figure import Figure

    groups: dict[tuple[str, str], list[tuple[int, float, float | None, float | None]]] = {}
    for codec, nbytes, r in parsed:
        groups.setdefault((codec["method"], codec["precision"]), []).append((nbytes, r.main_score, *_ends(r)))

    def order(key: tuple[str, str]) -> tuple[int, int, str]:
        m, p = key
        return (METHODS.index(m) if m in METHODS else len(METHODS),
                PRECISIONS.index(p) if p in PRECISIONS else len(PRECISIONS), f"{m}/{p}")

    markers = {"float32": "o", "float16": "s", "int8": "^", "binary": "D"}
    colors = {"float32": "C0", "float16": "C1", "int8": "C2", "binary": "C3"}
    styles = {"prefix": "-", "pca": "--"}
    fig = Figure(figsize=(8, 5))
    ax = fig.subplots()
    for m, p in sorted(groups, key=order):
        pts = sorted(groups[(m, p)], key=lambda pt: pt[:2])
        (line,) = ax.plot([x for x, *_ in pts], [y for _, y, *_ in pts], linestyle=styles.get(m, ":"),
                          marker=markers.get(p, "o"), color=colors.get(p), label=f"{m} {p}")
        ci = [(x, low, high) for x, _, low, high in pts if low is not None and high is not None]
        if ci:
            # drawn from the low end up by the interval's length: the ends are the interval's whatever the score
            ax.errorbar([x for x, _, _ in ci], [low for _, low, _ in ci],
                        yerr=[[0.0] * len(ci), [high - low for _, low, high in ci]], fmt="none",
                        ecolor=line.get_color(), elinewidth=1, capsize=3, alpha=0.7, label="_nolegend_")
    ref = [(nbytes, r.main_score) for codec, nbytes, r in parsed if _is_reference(codec)]
    if ref:
        ax.scatter([ref[0][0]], [ref[0][1]], marker="*", s=280, color="gold", edgecolors="black",
                   zorder=5, label="full float32 (uncompressed)")
    ax.set_xscale("log", base=2)
    ticks = sorted({nbytes for _, nbytes, _ in parsed})
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(t) for t in ticks], rotation=45 if len(ticks) > 8 else 0)
    ax.minorticks_off()
    ax.set_xlabel("bytes per vector")
    with_ci = any(r.interval is not None for _, _, r in parsed)
    level = next((r.interval.level for _, _, r in parsed if r.interval is not None), None)
    ax.set_ylabel(metrics[0] + (f" (whiskers: {level:.0%} bootstrap interval)" if with_ci else ""))
    ax.set_title(title if title is not None else f"{', '.join(tasks)}: quality vs bytes per vector")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig


def plot_tradeoff(results: Sequence[TaskResult], path: str | Path, *, title: str | None = None) -> Path:
    """Plot quality against bytes per vector (:func:`tradeoff_figure`, intervals as whiskers); write a PNG.

    Parameters
    ----------
    results : sequence of TaskResult
        Sweep results of one task (same main metric), each carrying
        ``info["codec"]`` and ``info["bytes_per_vector"]``.
    path : str or Path
        Where the PNG goes (parent folders are created).
    title : str, optional
        Defaults to ``"<task>: quality vs bytes per vector"``.

    Returns
    -------
    Path
        ``path``.

    Examples
    --------
    >>> import tempfile, os
    >>> cs = [Codec(d, "prefix", p) for p in ("float32", "int8") for d in (8, 16)]
    >>> rs = [TaskResult("sts", "test", "spearman", {"spearman": 0.5 + c.bytes_per_vector / 200}, 0.0,
    ...                  {"codec": c.to_dict(), "bytes_per_vector": c.bytes_per_vector}) for c in cs]
    >>> out = plot_tradeoff(rs, os.path.join(tempfile.mkdtemp(), "sts.png"))
    >>> out.suffix, out.stat().st_size > 1000
    ('.png', True)
    """
    fig = tradeoff_figure(results, title=title)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120, format="png")
    return path
