"""First stages of a funnel index: one class per kind of what is held in memory.

:class:`~repspace.engines.search.funnel.FunnelIndex` runs the funnel (masks,
shortlists, the exact rerank, files); a *stage* knows what its kind stores
and how FAISS searches it: the FAISS index it builds, what it trains, how
vectors become codes, the search parameters, how FAISS's distances become
"larger is nearer" keys and then scores, its memory, and its file. The kinds:

==================  =======================================================
:class:`Flat`       ``exact``, ``int8``, ``pcaD``/``tldrD``/``prefixD`` (reduced), any with
                    ``int8``/``fp16`` codes: an ``IndexFlat`` or ``IndexScalarQuantizer``
:class:`Graph`      ``hnswM`` and ``pcaD,hnswM``/``prefixD,hnswM`` (``tldrD``...): an ``IndexHNSWFlat``
                    or ``IndexHNSWSQ`` over (reduced) vectors or codes
:class:`Binary`     ``binary``: sign bits in an ``IndexBinaryFlat`` (Hamming)
:class:`IVFPQ`      ``ivfN,pqM``: FAISS' ``IVF{N},PQ{M}``; ``opqM,ivfN,pqM``: the same in an
                    ``IndexPreTransform`` after an ``OPQMatrix`` (``OPQ{M},IVF{N},PQ{M}``)
:class:`PrefixIVF`  ``prefixD,ivfN`` (AdANNS): an ``IndexIVFFlat`` over the first ``D`` dimensions
==================  =======================================================

A stage holds only what the stored codes depend on (the spec's slug and the
trained PCA or TLDR map); search-time settings (``ef``, ``nprobe``) come with each call, so
views of an index with other search settings share one stage.
"""

from __future__ import annotations

from typing import Any

import faiss
import numpy as np

from repspace.core.codecs import code_bytes, sign_bits
from repspace.core.errors import InputError
from repspace.core.exact import normalize_rows
from repspace.core.limits import DEFAULT_EF, MAX_EF
from repspace.core.space import Metric
from repspace.core.tldr import fit_tldr
from repspace.engines.search.hnsw import faiss_metric
from repspace.engines.search.specs import REDUCED, IndexSpec

#: HNSW construction beam (as :class:`~repspace.engines.search.hnsw.HNSWParams`' default).
EF_CONSTRUCTION = 100
#: Graph kinds search a mask keeping at most this share of rows by brute force over it.
FLAT_MAX_SHARE = 0.02
#: IVF lists probed when the spec gives no ``nprobe``: ``nlist // 16``, at least 8.
MIN_NPROBE = 8
#: Largest float64 block (rows × dim) held while projecting onto the PCA subspace (64 MiB).
PROJECT_ENTRIES = 8 * 1024 * 1024
#: FAISS scalar quantizer of each ``codes`` choice of a spec.
QTYPE = {"int8": faiss.ScalarQuantizer.QT_8bit, "fp16": faiss.ScalarQuantizer.QT_fp16}


def stage_for(spec: IndexSpec, dim: int, metric: Metric) -> Stage:
    """The first stage of ``spec`` for ``dim``-dimensional vectors (checks that they fit)."""
    if spec.kind == "binary":
        return Binary(spec, dim, metric)
    if spec.kind == "ivfpq":
        return IVFPQ(spec, dim, metric)
    if spec.nlist is not None:
        return PrefixIVF(spec, dim, metric)
    if spec.graph:
        return Graph(spec, dim, metric)
    return Flat(spec, dim, metric)


class Stage:
    """What every first stage does; subclasses fill in their kind."""

    def __init__(self, spec: IndexSpec, dim: int, metric: Metric) -> None:
        self.spec = spec
        self.dim = dim
        self.metric = metric
        self.fmetric = faiss_metric(metric)

    @property
    def reduced_dim(self) -> int:
        """Dimension of what the first stage compares."""
        return self.dim

    def empty(self, trained: Any = None) -> Any:
        """A fresh, empty FAISS index labelled by rows (``trained``: a fitted inner index)."""
        raise NotImplementedError

    def train(self, x: np.ndarray) -> Any:
        """Fit on prepared sample vectors; returns the empty, trained index."""
        return self.empty()

    def encode(self, x: np.ndarray) -> np.ndarray:
        """What the FAISS index takes for prepared vectors (rows or queries)."""
        return x

    def uses_flat(self, n_allowed: int, ntotal: int, kk: int, ef: int | None, spec: IndexSpec) -> bool:
        """Whether a mask keeping ``n_allowed`` of ``ntotal`` rows is searched by brute force over the held vectors.

        ``spec`` is the one searched with (its ``ef``/``nprobe`` may differ from the stage's).
        """
        return False

    def params(self, kk: int, ef: int | None, widen: float, spec: IndexSpec) -> Any:
        """FAISS search parameters; ``widen`` = held rows / allowed rows (>= 1)."""
        return faiss.SearchParameters()

    def key(self, dist: np.ndarray) -> np.ndarray:
        """FAISS's distances as float64 "larger is nearer" keys."""
        d = dist.astype(np.float64)
        return -np.sqrt(np.maximum(d, 0.0)) if self.metric is Metric.L2 else d

    def scores(self, key: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Keys in the metric's convention: distances ascending for l2, similarities otherwise."""
        return -key if self.metric is Metric.L2 else key

    def memory(self, index: Any, n: int) -> dict[str, int]:
        """Bytes of codes, graph and trained model of ``n`` held vectors (labels are counted by the caller)."""
        raise NotImplementedError

    def write(self, index: Any, path: str) -> None:
        """Write the index as a plain FAISS file."""
        faiss.write_index(index, path)

    def read(self, path: str) -> tuple[Any, Any]:
        """``(index, owner)`` read from a file written by :meth:`write` (``owner`` keeps parts alive)."""
        obj = faiss.read_index(path)
        return obj, None

    def verify(self, index: Any) -> bool:
        """Whether a loaded index has the structure, size and metric this stage builds."""
        raise NotImplementedError


class Flat(Stage):
    """Float vectors (or int8/fp16 codes of them), reduced or not, searched by brute force.

    PCA projects onto the principal subspace *without* subtracting the mean
    (``x @ A.T`` with FAISS' trained ``PCAMatrix.A``), which keeps inner products
    approximately unchanged (centred projections lose the ``mean·x`` term that
    inner product and cosine rankings depend on); for ``l2`` the mean cancels
    anyway. For ``cosine`` reduced vectors are renormalised, as Matryoshka
    prefixes are. TLDR (``tldrD``) is applied the same way, ``x @ W.T`` with the
    learnt map ``W`` (:func:`repspace.core.tldr.fit_tldr`, seed 0, neighbours by inner
    product on the prepared vectors, or by l2), held in a ``faiss.LinearTransform``.
    """

    def __init__(self, spec: IndexSpec, dim: int, metric: Metric) -> None:
        super().__init__(spec, dim, metric)
        if spec.kind in REDUCED and spec.dims > dim:  # type: ignore[operator]
            raise InputError(f"{spec.kind}{spec.dims} keeps more dimensions than the vectors have ({dim})")
        #: int8/fp16 codes of the held vectors (kind ``int8`` is full-dimension int8 codes).
        self.codes = "int8" if spec.kind == "int8" else spec.codes
        self.pca: Any = None  # faiss.PCAMatrix (pca) or faiss.LinearTransform (tldr)
        self.proj: np.ndarray | None = None  # (dims, dim) float32: its A

    @property
    def reduced_dim(self) -> int:
        return int(self.spec.dims) if self.spec.kind in REDUCED else self.dim  # type: ignore[arg-type]

    def new_inner(self) -> Any:
        """The float-vector index inside the ID map."""
        if self.codes is not None:
            return faiss.IndexScalarQuantizer(self.reduced_dim, QTYPE[self.codes], self.fmetric)
        return faiss.IndexFlat(self.reduced_dim, self.fmetric)

    def empty(self, trained: Any = None) -> Any:
        return faiss.IndexIDMap(trained if trained is not None else self.new_inner())

    def train(self, x: np.ndarray) -> Any:
        n, sp = x.shape[0], self.spec
        if sp.kind == "pca":
            if n < sp.dims:  # type: ignore[operator]
                raise InputError(f"pca{sp.dims} needs at least {sp.dims} training vectors, not {n}")
            pca = faiss.PCAMatrix(self.dim, int(sp.dims))  # type: ignore[arg-type]
            pca.train(x)
            self.set_pca(pca)
        elif sp.kind == "tldr":
            self.set_pca(tldr_transform(x, int(sp.dims), self.metric))  # type: ignore[arg-type]
        inner = None
        if self.codes == "int8":
            if n < 2:
                what = "int8 needs" if sp.kind == "int8" else "int8 codes need"
                raise InputError(f"{what} at least 2 training vectors to fit value ranges, not {n}")
            inner = self.new_inner()
            inner.train(self.encode(x))
        return self.empty(inner)

    def set_pca(self, pca: Any) -> None:
        self.pca = pca
        a = faiss.vector_to_array(pca.A).astype(np.float32)
        self.proj = np.ascontiguousarray(a.reshape(pca.d_out, pca.d_in))

    def encode(self, x: np.ndarray) -> np.ndarray:
        """Prepared vectors as the first stage compares them (float32, C-contiguous)."""
        sp = self.spec
        if sp.kind == "prefix":
            x = np.ascontiguousarray(x[:, : sp.dims])
        elif sp.kind in ("pca", "tldr"):
            assert self.proj is not None
            x = project(x, self.proj)
        else:
            return x
        return normalize_rows(x) if self.metric is Metric.COSINE else x

    def storage(self, index: Any) -> Any:
        """The index holding the codes (the inner index of the ID map)."""
        return faiss.downcast_index(index.index)

    def memory(self, index: Any, n: int) -> dict[str, int]:
        parts = {"codes": 0, "graph": 0, "model": 0}
        if self.pca is not None:  # FAISS keeps the full eigenvector matrix beside a PCA's projection
            p = self.pca
            parts["model"] += 4 * (p.A.size() + p.b.size())
            if isinstance(p, faiss.PCAMatrix):
                parts["model"] += 4 * (p.mean.size() + p.PCAMat.size() + p.eigenvalues.size())
            parts["model"] += 0 if self.proj is None else self.proj.nbytes
        storage = self.storage(index)
        parts["codes"] = n * int(storage.code_size)
        if isinstance(storage, faiss.IndexScalarQuantizer):
            parts["model"] += 4 * storage.sq.trained.size()
        return parts

    def write(self, index: Any, path: str) -> None:
        if self.spec.kind in ("pca", "tldr"):  # the trained map travels with the codes
            faiss.write_index(faiss.IndexPreTransform(self.pca, index), path)
        else:
            faiss.write_index(index, path)

    def read(self, path: str) -> tuple[Any, Any]:
        obj = faiss.read_index(path)
        sp = self.spec
        if sp.kind not in ("pca", "tldr"):
            return obj, None
        what = "PCA" if sp.kind == "pca" else "TLDR"
        if not isinstance(obj, faiss.IndexPreTransform) or obj.chain.size() != 1:
            raise InputError(f"{path} does not hold index {sp.slug!r} (a {what} transform and its index)")
        pca = faiss.downcast_VectorTransform(obj.chain.at(0))
        want = faiss.PCAMatrix if sp.kind == "pca" else faiss.LinearTransform
        if not isinstance(pca, want) or pca.d_in != self.dim or pca.d_out != sp.dims:
            raise InputError(f"{path} does not hold index {sp.slug!r} for dimension {self.dim} "
                             f"({type(pca).__name__} {pca.d_in}->{pca.d_out})")
        self.set_pca(pca)
        return faiss.downcast_index(obj.index), obj

    def expected_inner(self) -> type:
        return faiss.IndexFlat if self.codes is None else faiss.IndexScalarQuantizer

    def verify(self, index: Any) -> bool:
        if index.d != self.reduced_dim or index.metric_type != self.fmetric:
            return False
        if not isinstance(index, faiss.IndexIDMap):
            return False
        inner = faiss.downcast_index(index.index)
        if not isinstance(inner, self.expected_inner()):
            return False
        storage = self.storage(index)
        return self.codes is None or storage.sq.qtype == QTYPE[self.codes]


class Graph(Flat):
    """An HNSW graph over (reduced) vectors or their int8/fp16 codes.

    A mask keeping at most :data:`FLAT_MAX_SHARE` of the rows, or no more than
    the beam, is searched by brute force over the vectors the graph holds
    (a beam wide enough to find them would visit more nodes than that); wider
    masks widen the beam by ``held / allowed`` rows, up to :data:`MAX_EF`.
    """

    @property
    def m(self) -> int:
        return int(self.spec.m or self.spec.graph_m)  # type: ignore[arg-type]

    def new_inner(self) -> Any:
        d = self.reduced_dim
        if self.codes is not None:
            inner = faiss.IndexHNSWSQ(d, QTYPE[self.codes], self.m, self.fmetric)
        else:
            inner = faiss.IndexHNSWFlat(d, self.m, self.fmetric)
        inner.hnsw.efConstruction = EF_CONSTRUCTION
        return inner

    def beam(self, kk: int, ef: int | None, spec: IndexSpec) -> int:
        return max(int(ef or spec.ef or DEFAULT_EF), kk)

    def uses_flat(self, n_allowed: int, ntotal: int, kk: int, ef: int | None, spec: IndexSpec) -> bool:
        return n_allowed <= max(FLAT_MAX_SHARE * ntotal, self.beam(kk, ef, spec))

    def params(self, kk: int, ef: int | None, widen: float, spec: IndexSpec) -> Any:
        params = faiss.SearchParametersHNSW()
        params.efSearch = int(min(max(MAX_EF, kk), self.beam(kk, ef, spec) * widen))
        return params

    def storage(self, index: Any) -> Any:
        return faiss.downcast_index(faiss.downcast_index(index.index).storage)

    def memory(self, index: Any, n: int) -> dict[str, int]:
        parts = super().memory(index, n)
        h = faiss.downcast_index(index.index).hnsw
        parts["graph"] = 4 * h.neighbors.size() + 4 * h.levels.size() + 8 * h.offsets.size()
        return parts

    def expected_inner(self) -> type:
        return faiss.IndexHNSWFlat if self.codes is None else faiss.IndexHNSWSQ

    def verify(self, index: Any) -> bool:
        return super().verify(index) and faiss.downcast_index(index.index).hnsw.nb_neighbors(1) == self.m


class Binary(Stage):
    """Sign bits ``x > 0`` in an ``IndexBinaryFlat`` (padded with zero bits to a multiple of 8,
    which leaves Hamming distances unchanged); keys are ``-h``, scores ``h`` (``l2``) or the
    sign agreement ``1 - 2h/d`` (``cosine``, ``ip``)."""

    @property
    def nbits(self) -> int:
        return 8 * code_bytes(self.dim, "binary")

    def empty(self, trained: Any = None) -> Any:
        return faiss.IndexBinaryIDMap(faiss.IndexBinaryFlat(self.nbits))

    def encode(self, x: np.ndarray) -> np.ndarray:
        return sign_bits(x)

    def key(self, dist: np.ndarray) -> np.ndarray:
        return -dist.astype(np.float64)  # Hamming distance

    def scores(self, key: np.ndarray, rows: np.ndarray) -> np.ndarray:
        if self.metric is Metric.L2:
            return -key
        return np.where(rows >= 0, 1.0 + 2.0 * key / self.dim, -np.inf)  # key = -h

    def memory(self, index: Any, n: int) -> dict[str, int]:
        return {"codes": n * code_bytes(self.dim, "binary"), "graph": 0, "model": 0}

    def write(self, index: Any, path: str) -> None:
        faiss.write_index_binary(index, path)

    def read(self, path: str) -> tuple[Any, Any]:
        return faiss.read_index_binary(path), None

    def verify(self, index: Any) -> bool:
        return isinstance(index, faiss.IndexBinaryIDMap) and index.d == self.nbits


class IVFPQ(Stage):
    """FAISS' ``IVF{nlist},PQ{pq_m}``; row labels are kept in the inverted lists. Selective
    masks probe more lists (``nprobe`` widened by ``held / allowed`` rows, up to all).

    With ``opq`` the index is FAISS' ``OPQ{opq},IVF{nlist},PQ{pq_m}``: an ``IndexPreTransform``
    whose ``OPQMatrix`` (a learned ``dim × dim`` rotation, Ge et al.) is applied to vectors
    and queries before the IVF-PQ; it is trained on the same sample first, then the
    IVF-PQ on the rotated sample. Search parameters pass through the transform."""

    def __init__(self, spec: IndexSpec, dim: int, metric: Metric) -> None:
        super().__init__(spec, dim, metric)
        for what, m in (("pq", spec.pq_m), ("opq", spec.opq)):
            if m is not None and dim % m:
                divisors = [d for d in range(1, dim + 1) if dim % d == 0]
                raise InputError(f"{what}{m} must divide the dimension {dim}; use {what} with one of {divisors}")

    @property
    def factory(self) -> str:
        """The FAISS index-factory string this stage builds."""
        sp = self.spec
        return (f"OPQ{sp.opq}," if sp.opq is not None else "") + f"IVF{sp.nlist},PQ{sp.pq_m}"

    def empty(self, trained: Any = None) -> Any:
        return trained

    def train(self, x: np.ndarray) -> Any:
        sp, n = self.spec, x.shape[0]
        need = max(int(sp.nlist), 256)  # type: ignore[arg-type]
        if n < need:
            raise InputError(f"{sp.slug.replace('-', ',')} needs at least {need} training vectors "
                             f"({sp.nlist} IVF lists, 256 PQ centroids), not {n}")
        index = faiss.index_factory(self.dim, self.factory, self.fmetric)
        # index_factory turns on polysemous training for PQ8 codes: slow (minutes) and
        # unused here, since codes are searched by ADC, not by Hamming pre-filtering.
        faiss.downcast_index(faiss.extract_index_ivf(index)).do_polysemous_training = False
        index.train(x)
        return index

    def params(self, kk: int, ef: int | None, widen: float, spec: IndexSpec) -> Any:
        return ivf_params(spec, widen)

    def memory(self, index: Any, n: int) -> dict[str, int]:
        ivfpq = faiss.downcast_index(faiss.extract_index_ivf(index))
        model = 4 * int(ivfpq.nlist) * self.dim  # coarse centroids
        model += 4 * ivfpq.pq.centroids.size() + 4 * ivfpq.precomputed_table.size()
        if isinstance(index, faiss.IndexPreTransform):  # the OPQ rotation
            opq = faiss.downcast_VectorTransform(index.chain.at(0))
            model += 4 * (opq.A.size() + opq.b.size())
        return {"codes": n * int(ivfpq.code_size), "graph": 0, "model": model}

    def verify(self, index: Any) -> bool:
        if index.d != self.dim or index.metric_type != self.fmetric:
            return False
        sp = self.spec
        if sp.opq is not None:
            if not isinstance(index, faiss.IndexPreTransform) or index.chain.size() != 1:
                return False
            # FAISS reads an OPQMatrix back as the LinearTransform it applies (its M is not stored)
            rot = faiss.downcast_VectorTransform(index.chain.at(0))
            if not isinstance(rot, faiss.LinearTransform) or (rot.d_in, rot.d_out) != (self.dim,) * 2:
                return False
            index = faiss.downcast_index(index.index)
        return isinstance(index, faiss.IndexIVFPQ) and index.nlist == sp.nlist and index.pq.M == sp.pq_m


class PrefixIVF(Flat):
    """AdANNS' IVF (``prefixD,ivfN``): an ``IndexIVFFlat`` whose coarse quantizer is trained
    on, and whose lists hold, the first ``D`` dimensions (renormalised for cosine); row
    labels are kept in the lists. The IVF is FAISS' ``IVF{N},Flat`` of the prefixes; masks
    widen ``nprobe`` as :class:`IVFPQ` does."""

    def new_inner(self) -> Any:
        return faiss.index_factory(self.reduced_dim, f"IVF{self.spec.nlist},Flat", self.fmetric)

    def empty(self, trained: Any = None) -> Any:
        return trained

    def train(self, x: np.ndarray) -> Any:
        n, sp = x.shape[0], self.spec
        if n < sp.nlist:  # type: ignore[operator]
            raise InputError(f"prefix{sp.dims},ivf{sp.nlist} needs at least {sp.nlist} training vectors, not {n}")
        ivf = self.new_inner()
        ivf.train(self.encode(x))
        return ivf

    def params(self, kk: int, ef: int | None, widen: float, spec: IndexSpec) -> Any:
        return ivf_params(spec, widen)

    def memory(self, index: Any, n: int) -> dict[str, int]:
        ivf = faiss.extract_index_ivf(index)
        return {"codes": n * int(ivf.code_size), "graph": 0, "model": 4 * int(ivf.nlist) * self.reduced_dim}

    def write(self, index: Any, path: str) -> None:
        faiss.write_index(index, path)

    def read(self, path: str) -> tuple[Any, Any]:
        return faiss.read_index(path), None

    def verify(self, index: Any) -> bool:
        ivf = faiss.downcast_index(index)
        return (isinstance(ivf, faiss.IndexIVFFlat) and ivf.d == self.reduced_dim
                and ivf.metric_type == self.fmetric and ivf.nlist == self.spec.nlist)


def ivf_params(spec: IndexSpec, widen: float) -> Any:
    """IVF search parameters: the spec's ``nprobe`` (default ``nlist // 16``, at least
    :data:`MIN_NPROBE`) widened by ``widen`` = held rows / allowed rows, up to every list."""
    nlist = int(spec.nlist)  # type: ignore[arg-type]
    params = faiss.SearchParametersIVF()
    params.nprobe = int(min(nlist, (spec.nprobe or max(MIN_NPROBE, nlist // 16)) * widen))
    return params


def tldr_transform(x: np.ndarray, dims: int, metric: Metric) -> Any:
    """A ``faiss.LinearTransform`` (no bias) holding the TLDR map fitted on prepared sample vectors.

    Neighbour pairs by inner product (``cosine`` vectors are unit already) or by ``l2``;
    seed 0 and :data:`~repspace.core.limits.TLDR_MAX_ROWS` rows at most, so the same sample
    gives the same map on one machine (see :mod:`repspace.core.tldr` for other CPUs).
    """
    fit = fit_tldr(x, dims, metric="l2" if metric is Metric.L2 else "ip", seed=0)
    lt = faiss.LinearTransform(int(x.shape[1]), dims, False)
    faiss.copy_array_to_vector(np.ascontiguousarray(fit.components.astype(np.float32)).ravel(), lt.A)
    lt.is_trained = True
    return lt


def project(x: np.ndarray, proj: np.ndarray) -> np.ndarray:
    """``x @ proj.T`` as C-contiguous float32, computed in float64 a block of rows at a time.

    A float32 product rounds a row by where it sits in the batch and by CPU (the BLAS
    kernel), which gave duplicate vectors codes an ulp apart: a first stage then shortlisted
    copies by that noise instead of by row. The float64 product rounded to float32 gives
    every copy the same code on every CPU.
    """
    out = np.empty((x.shape[0], proj.shape[0]), dtype=np.float32)
    p64 = proj.T.astype(np.float64)
    step = max(1, PROJECT_ENTRIES // max(1, x.shape[1]))
    for lo in range(0, x.shape[0], step):
        out[lo : lo + step] = x[lo : lo + step].astype(np.float64) @ p64
    return out
