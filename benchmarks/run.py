"""Run the benchmark suite (``make bench``) and regenerate the tables of BENCHMARKS.md.

Usage: ``.venv/bin/python benchmarks/run.py [--quick] [--only NAME ...] [--keep-work]``

Each benchmark module writes ``benchmarks/results/<name>.json``; every figure
in it stands beside an anchor measured in the same run (see each module's
docstring for what it measures and against what). ``--quick`` uses small sizes
for a smoke run of a few minutes, written to ``benchmarks/results-quick/`` (git-ignored)
so that it never replaces the real results; the default sizes are the real ones.
Work files go to ``benchmarks/.work/`` and are removed at the end.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
import traceback

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import common as c
import report

#: In this order: ingest leaves the stores that load, exact and hnsw reuse; search caches the MiniLM
#: vectors (benchmarks/.cache) that diagnose and onequery read (they embed them themselves when run alone).
BENCHMARKS = ["ingest", "load", "exact", "hnsw", "search", "encode", "eval", "diagnose", "analyze", "compare",
              "onequery", "serve", "layout", "explorer", "interpret", "distributed", "learn", "layers", "sparse"]


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description="Run repspace's benchmarks and write BENCHMARKS.md.")
    ap.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    ap.add_argument("--only", nargs="+", choices=BENCHMARKS, metavar="NAME",
                    help=f"run only these ({', '.join(BENCHMARKS)})")
    ap.add_argument("--keep-work", action="store_true", help="keep benchmarks/.work (stores, indexes)")
    return ap.parse_args(argv)


def run_one(name: str, quick: bool) -> bool:
    c.log(f"=== {name}{' (quick)' if quick else ''}")
    t0 = time.perf_counter()
    try:
        path = importlib.import_module(f"bench_{name}").run(quick)
    except Exception:  # noqa: BLE001  (one broken benchmark must not lose the others' results)
        traceback.print_exc()
        c.log(f"=== {name} FAILED after {time.perf_counter() - t0:.0f} s")
        return False
    c.log(f"=== {name} done in {time.perf_counter() - t0:.0f} s -> {path.relative_to(c.REPO)}")
    return True


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    names = [n for n in BENCHMARKS if not args.only or n in args.only]
    ok = True
    try:
        for name in names:
            ok &= run_one(name, args.quick)
    finally:
        if not args.keep_work:
            c.clean_work()
    if args.quick:  # a smoke run renders its own copy, beside its results
        doc = report.write(c.QUICK_RESULTS, c.QUICK_RESULTS / "BENCHMARKS.md")
    else:
        doc = report.write()
    c.log(f"wrote {doc.relative_to(c.REPO)}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
