"""The second kernel set of ``make test-portable``: choose it for this machine, print it, run a command under it.

``make test`` runs on the kernels this machine picks: numpy's widest SIMD loops, the BLAS kernels
OpenBLAS detects, FAISS's widest SIMD level, BLAS on every core in the driver and on one thread in
each Ray worker. A user's machine may pick others and round differently, so the numerics-sensitive
tests are run again under a second set that differs in each of these:

* **numpy** (``NPY_DISABLE_CPU_FEATURES``): with AVX-512, every AVX-512 group of numpy's own dispatch
  list (``X86_V4``, ``AVX512_*``), so numpy runs the AVX2 loops of an AVX2 machine; without it,
  every dispatched group (``X86_V3``...), so numpy runs its baseline loops. Only names in the
  dispatch list are given: numpy refuses a baseline name, and a name it does not know does nothing.
* **FAISS**: ``FAISS_SIMD_LEVEL`` (``AVX2``, or ``NONE`` without AVX-512) is what a dynamic-dispatch
  faiss-cpu wheel (one ``libfaiss.so``, ``get_compile_options()`` says ``DD``) reads;
  ``FAISS_OPT_LEVEL`` picks among the ``swigfaiss_avx2``/``swigfaiss_avx512`` modules of older
  wheels, whose loader compares ``AVX2`` case-sensitively (so ``AVX2``, not ``avx2``).
* **OpenBLAS** (``OPENBLAS_CORETYPE``): kept as it is when the environment sets it or
  ``OPENBLAS_L2_SIZE`` (some processors need them); otherwise the kernels of the previous
  generation, which this CPU also runs: ``Haswell`` (AVX2 + FMA, what an AVX2 machine
  selects) under AVX-512, ``Sandybridge`` (AVX, no FMA) under AVX2, nothing older.
* **torch** (``ATEN_CPU_CAPABILITY``, ``MKL_ENABLE_INSTRUCTIONS``, ``ONEDNN_MAX_CPU_ISA``): the
  same step down.
* **threads**: BLAS/OpenMP/torch in the driver on one thread (two on a one-core machine) instead of
  every core; the Ray workers on two (``REPSPACE_TEST_RAY_THREADS``, read by
  ``tests/workflows/distributed/conftest.py``) instead of Ray's one per task.

Usage: ``python tests/portable_env.py COMMAND [ARG...]`` prints the settings, one per line, then
replaces itself with ``COMMAND`` run under them.

Examples
--------
>>> groups = ["X86_V3", "X86_V4", "AVX512_ICL", "AVX512_SPR"]  # numpy 2.4's dispatch list on x86-64
>>> env = portable_env({}, cores=2, dispatch=groups, features={"AVX512F": True, "AVX2": True, "FMA3": True})
>>> env["NPY_DISABLE_CPU_FEATURES"], env["FAISS_SIMD_LEVEL"], env["OPENBLAS_CORETYPE"], env["OMP_NUM_THREADS"]
('X86_V4 AVX512_ICL AVX512_SPR', 'AVX2', 'Haswell', '1')
>>> env = portable_env({"OPENBLAS_CORETYPE": "Zen"}, cores=1, dispatch=groups, features={"AVX2": True, "FMA3": True})
>>> env["NPY_DISABLE_CPU_FEATURES"], env["FAISS_SIMD_LEVEL"], env["OPENBLAS_CORETYPE"], env["OMP_NUM_THREADS"]
('X86_V3 X86_V4 AVX512_ICL AVX512_SPR', 'NONE', 'Zen', '2')
>>> "OPENBLAS_CORETYPE" in portable_env({"OPENBLAS_L2_SIZE": "1048576"}, dispatch=groups, features={"AVX512F": True})
False
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

#: Threads of each Ray worker in the portable run (Ray gives a one-CPU task one thread).
RAY_WORKER_THREADS = 2

#: Settings with AVX-512 and without: FAISS SIMD level, OpenBLAS core, torch capability, MKL, oneDNN.
STEP_DOWN = {
    True: {"FAISS_SIMD_LEVEL": "AVX2", "FAISS_OPT_LEVEL": "AVX2", "OPENBLAS_CORETYPE": "Haswell",
           "ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2"},
    False: {"FAISS_SIMD_LEVEL": "NONE", "FAISS_OPT_LEVEL": "generic", "OPENBLAS_CORETYPE": "Sandybridge",
            "ATEN_CPU_CAPABILITY": "default", "MKL_ENABLE_INSTRUCTIONS": "SSE4_2",
            "ONEDNN_MAX_CPU_ISA": "SSE41"},
}


def cpu_count() -> int:
    """CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def numpy_groups() -> tuple[list[str], dict[str, bool]]:
    """numpy's dispatch list (SIMD groups above its baseline) and the CPU features it found."""
    try:
        from numpy._core import _multiarray_umath as umath  # numpy >= 2
    except ImportError:  # pragma: no cover - numpy 1.x
        from numpy.core import _multiarray_umath as umath
    return list(umath.__cpu_dispatch__), dict(umath.__cpu_features__)


def portable_env(environ: Mapping[str, str], *, cores: int | None = None,
                 dispatch: list[str] | None = None, features: Mapping[str, bool] | None = None) -> dict[str, str]:
    """``environ`` with the second kernel set applied (see the module's docstring)."""
    if dispatch is None or features is None:
        dispatch, features = numpy_groups()
    cores = cores or cpu_count()
    avx512 = bool(features.get("AVX512F"))
    env = dict(environ)
    if avx512:
        groups = [g for g in dispatch if g == "X86_V4" or "AVX512" in g]
    else:
        groups = list(dispatch)
    already = env.get("NPY_DISABLE_CPU_FEATURES", "").replace(",", " ").split()
    env["NPY_DISABLE_CPU_FEATURES"] = " ".join(dict.fromkeys(already + groups))
    step = STEP_DOWN[avx512]
    for key in ("FAISS_SIMD_LEVEL", "FAISS_OPT_LEVEL", "ATEN_CPU_CAPABILITY", "MKL_ENABLE_INSTRUCTIONS",
                "ONEDNN_MAX_CPU_ISA"):
        env[key] = step[key]
    if not (env.get("OPENBLAS_CORETYPE") or env.get("OPENBLAS_L2_SIZE")) and \
            (avx512 or (features.get("AVX2") and features.get("FMA3"))):
        env["OPENBLAS_CORETYPE"] = step["OPENBLAS_CORETYPE"]
    driver = "1" if cores > 1 else "2"
    for key in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[key] = driver
    env["REPSPACE_TEST_RAY_THREADS"] = str(RAY_WORKER_THREADS)
    return env


def describe(env: Mapping[str, str], environ: Mapping[str, str]) -> list[str]:
    """One line per setting: its value, and whether it was chosen here or kept from the environment."""
    dispatch, features = numpy_groups()
    lines = [f"portable kernel set ({cpu_count()} cores; numpy dispatch list "
             f"{' '.join(dispatch) or '(none)'}; AVX-512 {'yes' if features.get('AVX512F') else 'no'}):"]
    for key in ("NPY_DISABLE_CPU_FEATURES", "FAISS_SIMD_LEVEL", "FAISS_OPT_LEVEL", "OPENBLAS_CORETYPE",
                "OPENBLAS_L2_SIZE", "ATEN_CPU_CAPABILITY", "MKL_ENABLE_INSTRUCTIONS", "ONEDNN_MAX_CPU_ISA",
                "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "REPSPACE_TEST_RAY_THREADS"):
        if key in env:
            how = "kept from the environment" if environ.get(key) == env[key] else "set"
            lines.append(f"  {key}={env[key]}  ({how})")
        else:
            lines.append(f"  {key} unset (OpenBLAS detects its kernels)" if key == "OPENBLAS_CORETYPE"
                         else f"  {key} unset")
    return lines


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.split("Examples")[0].strip(), file=sys.stderr)
        return 2
    env = portable_env(os.environ)
    print("\n".join(describe(env, os.environ)), flush=True)
    os.execvpe(argv[0], argv, env)
    return 1  # pragma: no cover - execvpe does not return


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
