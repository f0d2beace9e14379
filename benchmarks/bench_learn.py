"""Learning spaces (``repspace learn``, ``repspace.engines.learn``): word2vec and doc2vec on gensim, Poincare
embeddings, node2vec walks, retrofitting and Matryoshka heads, each against the plain library call or the
published reference algorithm, measured in the same run.

Every figure is the median of ``repeats`` runs (3; quick: 1), the contenders alternating (A, B, A, B, ...) so
that the noise of the 2 shared cores falls on both; every run is kept in the details. Time ratios are
**repspace s / anchor s** (lower is better, 1.0 = no overhead); the node2vec speed ratios are **repspace
steps/s / reference steps/s** (higher is better). Each row's note says which.

1. **word2vec on gensim's Lee corpus** (``lee_background.cor``: 300 news stories, 58,152 tokens; skip-gram,
   100 dimensions, 10 epochs, ``min_count`` 2, seed 0, 1 worker; quick: 3 epochs).
   (a) The path a user takes: a cold process ``repspace --store S learn word2vec lee_background.cor --space
   wN --sg --vector-size 100 --epochs 10 --min-count 2 --seed 0`` (``subprocess``, wall time; one store,
   a new space each run), against a cold ``python -c`` script doing the same with plain gensim (read the
   file, ``simple_preprocess`` each line, ``Word2Vec(sg=1, ..., workers=1)``); one untimed run of each first
   (page cache). (b) ``repspace.workflows.learn.learn_space(store, ..., "word2vec", path, sg=True, ...)``
   in this process against the same gensim calls in this process. The overhead is broken down once, step
   by step as ``learn_space`` takes them: read and tokenise (the corpus fingerprint included, and alone),
   gensim's ``build_vocab`` + ``train``, the rest of ``train_word2vec`` (counts, recipe, ``model_to_bytes``),
   ``model_to_bytes`` alone (gensim's ``save`` to a temporary file, read back), the model's SHA-256, and
   ``write_space`` (the store rows and the model file beside the store, durably); the cold process's
   import costs (``repspace --help``; ``python -c "import gensim.models"``) beside them.
2. **doc2vec PV-DBOW** on the same corpus (``dm=0``, 50 dimensions, 40 epochs, ``min_count`` 2: gensim's
   Lee tutorial; quick: 10 epochs): ``learn_space(..., "doc2vec", ..., dm=False)`` against gensim's
   ``Doc2Vec`` on ``TaggedDocument(simple_preprocess(line), [i])``, both in this process.
3. **Poincare embeddings** of WordNet's mammal closure (``hypernym_closure("mammal.n.01")``: 6,540
   pairs, 1,180 nodes; needs ``/usr/share/wordnet``): ``train_poincare(relations, size=10, epochs=10,
   burn_in=2, seed=0)`` (which trains epoch by epoch for progress, checks and sorts the relations, reads
   the vectors back and saves the model) against plain gensim ``PoincareModel(relations, size=10,
   negative=10, burn_in=2, seed=0, workers=1).train(epochs=10)`` (quick: 2 epochs after 1 of burn-in).
   The largest coordinate difference of the two results is kept (the module documents them as the same).
4. **node2vec walks** on a Barabasi-Albert graph (``networkx.barabasi_albert_graph(100_000, 5, seed=0)``:
   100,000 nodes, 499,975 edges, degrees 5 to ~1,100; quick: 10,000 nodes), read with
   ``graph_from_edges``: ``walk_indices(graph, walk_length=80, num_walks=10, p, q, seed=0)`` at
   ``(p, q) = (1, 1), (0.25, 4), (4, 0.25)``, steps/s (a step: one node appended to a walk). The anchor is
   **the reference algorithm re-typed for the anchor** (Grover & Leskovec's published ``src/node2vec.py``,
   github.com/aditya-grover/node2vec: alias tables per node and per edge, a pure-Python walk loop that sorts
   the current node's neighbours at every step, on a networkx graph; Python 3; see ``ref_*`` below): the
   node2vec packages on PyPI do not install with numpy 2. It runs from a random sample of walk starts
   (1,000; quick: 100), in two passes drawing the same walks (``np.random.seed(0)`` before each): the first
   builds each alias table the first time a walk needs it (timed apart: seconds per table entry), the
   second walks with every table ready, which is the walk rate reported (median of the repeats). End to
   end, the reference builds the tables of every node and edge first (``sum(deg) + sum(deg**2)`` entries):
   that time is extrapolated from the seconds per entry measured in the first pass, the walks' from its
   steps/s. Memory: the reference's tables (16 bytes an entry, numpy ``int64`` + ``float64`` as in its
   ``alias_setup``, plus each table's measured Python overhead) against the arrays repspace's sampler
   adds to the graph (``row * n + column`` keys, one ``int64`` per directed edge, and per-node totals).
5. **Retrofitting** GloVe 6B 50d (400,000 words; quick: the first 100,000) to WordNet's synonyms
   (``synonym_lexicon()``, a dict of 110,390 lemmas; 10 iterations): ``retrofit(words, X, lexicon)`` (Jacobi,
   one ``scipy.sparse`` product an iteration; the dict is made a ``Lexicon`` inside the call), and the same
   given a ``Lexicon`` built beforehand (``lexicon_from_mapping``, as ``retrofit_space`` calls it), against
   **Faruqui et al.'s reference loop re-typed for the anchor** (github.com/mfaruqui/retrofitting
   ``retrofit.py``: ``deepcopy`` of a dict of word -> float64 vector, 10 passes of in-place Gauss-Seidel
   updates in Python); the dict and the lexicon's lists are made outside the timing. The largest coordinate
   difference of the two results is kept (Jacobi and Gauss-Seidel after 10 iterations differ by design,
   by about 1e-3).
6. **Matryoshka head** on 5,749 random pairs of 384-d standard normal float32 vectors with uniform scores
   (seed 0; the size of STS-B's training split; quick: 1,000 pairs): ``train_matryoshka_head(A, B, scores,
   epochs=5, threads=1)`` (the default prefixes 32, 64, 128, 256, 384, CoSENT on each; PCA start) and the
   same with one prefix (``dims=[None]``), seconds per epoch (the call / epochs), against a minimal plain
   torch loop: ``nn.Linear(384, 384)``, CoSENT (scale 10) on the full output, batches of 64, Adam lr 1e-3,
   1 thread. One small untimed call of each first (torch's first use costs about 2 s).
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import itertools
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import common as c
import numpy as np

NAME = "learn"
LEE = "lee_background.cor"
#: Ratio notes.
TIME_RATIO = "ratio = repspace s / anchor s (lower is better; 1 = no overhead)"
SPEED_RATIO = "ratio = repspace steps/s / reference steps/s (higher is better)"

#: The cold anchor of 1(a): plain gensim in a new process, as a user would write it.
COLD_W2V = """\
import sys
from gensim.models import Word2Vec
from gensim.utils import simple_preprocess
with open(sys.argv[1], encoding="utf-8") as f:
    sentences = [simple_preprocess(line) for line in f]
Word2Vec(sentences=sentences, sg=1, vector_size=100, epochs=int(sys.argv[2]), min_count=2, seed=0, workers=1)
"""


def sizes(quick: bool) -> dict[str, Any]:
    if quick:
        return {"repeats": 1, "w2v_epochs": 3, "d2v_epochs": 10, "poincare_epochs": 2, "poincare_burn_in": 1,
                "graph_nodes": 10_000, "graph_m": 5, "walk_length": 80, "num_walks": 2, "ref_starts": 100,
                "glove_words": 100_000, "retrofit_iterations": 10, "head_pairs": 1_000, "head_epochs": 2}
    return {"repeats": 3, "w2v_epochs": 10, "d2v_epochs": 40, "poincare_epochs": 10, "poincare_burn_in": 2,
            "graph_nodes": 100_000, "graph_m": 5, "walk_length": 80, "num_walks": 10, "ref_starts": 1_000,
            "glove_words": None, "retrofit_iterations": 10, "head_pairs": 5_749, "head_epochs": 5}


def med(times: list[float]) -> float:
    return float(np.median(times))


def lee_path() -> Path:
    from gensim.test.utils import datapath

    path = Path(datapath(LEE))
    if not path.is_file():
        raise FileNotFoundError(f"gensim's test data {LEE} is absent from this install")
    return path


def gensim_sentences(path: Path) -> list[list[str]]:
    from gensim.utils import simple_preprocess

    with path.open(encoding="utf-8") as f:
        return [simple_preprocess(line) for line in f]


# ------------------------------------------------------------------ 1. word2vec
def word2vec_rows(p: dict[str, Any], folder: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    from gensim.models import Word2Vec

    from repspace import Store
    from repspace.workflows.learn import learn_space

    path = lee_path()
    epochs = p["w2v_epochs"]
    kw = {"vector_size": 100, "epochs": epochs, "min_count": 2, "seed": 0}
    exe = Path(sys.executable).with_name("repspace")
    cli_db, store = folder / "cli.db", Store(folder / "w2v.db")
    counter = itertools.count()

    def cli() -> None:
        subprocess.run([str(exe), "--store", str(cli_db), "learn", "word2vec", str(path), "--space",
                        f"w{next(counter)}", "--sg", "--vector-size", "100", "--epochs", str(epochs),
                        "--min-count", "2", "--seed", "0"], check=True, capture_output=True)

    def cold_gensim() -> None:
        subprocess.run([sys.executable, "-c", COLD_W2V, str(path), str(epochs)], check=True, capture_output=True)

    def ours() -> Any:
        return learn_space(store, f"w{next(counter)}", "word2vec", path, sg=True, **kw)

    def plain() -> Any:
        return Word2Vec(sentences=gensim_sentences(path), sg=1, workers=1, **kw)

    try:
        c.log("learn: word2vec warm-up (one untimed run of each)")
        for warm_up in (cli, cold_gensim, ours, plain):
            warm_up()
        c.log(f"learn: word2vec x {p['repeats']} (cold CLI, cold gensim, learn_space, gensim)")
        times, values = c.alternate_values({"cli": cli, "cold_gensim": cold_gensim, "learn_space": ours,
                                            "gensim": plain}, p["repeats"])
        report, model = values["learn_space"], values["gensim"]
        breakdown, cold = word2vec_breakdown(store, path, kw, model, exe, p["repeats"])
    finally:
        store.close()
    cli_s, cold_s, ours_s, plain_s = (med(times[k]) for k in ("cli", "cold_gensim", "learn_space", "gensim"))
    what = (f"word2vec on Lee ({report.documents} docs, {report.tokens:,} tokens; skip-gram, 100-d, {epochs} "
            f"epochs, min_count 2, 1 worker)")
    rows = [
        c.row(f"{what}: cold `repspace learn word2vec` (new process), wall time", cli_s, "s",
              "cold `python -c` plain gensim script (read, simple_preprocess, Word2Vec)", cold_s, cli_s / cold_s,
              ratio_means=TIME_RATIO, vocabulary=report.vocabulary, gensim_vocabulary=len(model.wv),
              note=f"{TIME_RATIO}; cold `repspace --help` {cold['repspace_help_s']:.2f} s, "
                   f"`import gensim.models` {cold['import_gensim_models_s']:.2f} s"),
        c.row(f"{what}: `learn_space` in-process (tokenise, train, write the space and the model)", ours_s, "s",
              "gensim in-process (simple_preprocess + Word2Vec)", plain_s, ours_s / plain_s, ratio_means=TIME_RATIO,
              train_seconds=report.train_seconds,
              note=f"{TIME_RATIO}; of which gensim build_vocab + train {report.train_seconds:.2f} s "
                   f"(breakdown below)"),
    ]
    details = {"times_s": times, "report": {k: v for k, v in report.to_dict().items() if k != "recipe"},
               "gensim_vocabulary": len(model.wv),
               "breakdown of learn_space, one run": breakdown, "breakdown of the cold process, medians": cold}
    return rows, details


def word2vec_breakdown(store: Any, path: Path, kw: dict[str, Any], model: Any, exe: Path,
                       repeats: int) -> tuple[dict[str, float], dict[str, float]]:
    """learn_space's steps one by one (as it takes them), the anchor's two steps, and the cold imports."""
    from repspace.engines.learn import corpus_fingerprint, read_text_corpus, train_word2vec
    from repspace.engines.learn._gensim import model_to_bytes
    from repspace.workflows.learn._store import write_space

    read_s, corpus = c.timed(lambda: read_text_corpus(path))
    fp_s, _ = c.timed(lambda: corpus_fingerprint(corpus.documents))
    call_s, trained = c.timed(lambda: train_word2vec(corpus, sg=True, **kw))
    save_s, _ = c.timed(lambda: model_to_bytes(model))
    sha_s, sha = c.timed(lambda: hashlib.sha256(trained.model_bytes).hexdigest())
    prov = {"encoder": "learn:word2vec", **trained.recipe, "model_file": "learn/word2vec.model",
            "model_sha256": sha, "model_bytes": len(trained.model_bytes)}
    write_s, _ = c.timed(lambda: write_space(
        store, "breakdown", trained.keys, trained.vectors, metric="cosine", provenance=prov,
        metadata=lambda lo, hi: [{"count": int(t)} for t in trained.counts[lo:hi]],
        files={"learn/word2vec.model": trained.model_bytes}))
    tok_s, sentences = c.timed(lambda: gensim_sentences(path))
    from gensim.models import Word2Vec

    gensim_s, _ = c.timed(lambda: Word2Vec(sentences=sentences, sg=1, workers=1, **kw))
    breakdown = {
        "read_and_tokenise_with_fingerprint_s": read_s, "of_which_fingerprint_s": fp_s,
        "gensim_build_vocab_and_train_s": trained.seconds,
        "rest_of_train_word2vec_s": call_s - trained.seconds, "model_to_bytes_alone_s": save_s,
        "model_sha256_s": sha_s, "write_space_rows_and_model_file_s": write_s,
        "anchor_simple_preprocess_s": tok_s, "anchor_Word2Vec_s": gensim_s,
    }
    helps, imports = [], []
    for _ in range(repeats):
        helps.append(c.timed(lambda: subprocess.run([str(exe), "--help"], check=True, capture_output=True))[0])
        imports.append(c.timed(lambda: subprocess.run([sys.executable, "-c", "import gensim.models"], check=True,
                                                      capture_output=True))[0])
    return breakdown, {"repspace_help_s": med(helps), "import_gensim_models_s": med(imports)}


# ------------------------------------------------------------------- 2. doc2vec
def doc2vec_rows(p: dict[str, Any], folder: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    from gensim.models.doc2vec import Doc2Vec, TaggedDocument

    from repspace import Store
    from repspace.workflows.learn import learn_space

    path = lee_path()
    kw = {"vector_size": 50, "epochs": p["d2v_epochs"], "min_count": 2, "seed": 0}
    store = Store(folder / "d2v.db")
    counter = itertools.count()

    def ours() -> Any:
        return learn_space(store, f"d{next(counter)}", "doc2vec", path, dm=False, **kw)

    def plain() -> Any:
        docs = [TaggedDocument(words, [i]) for i, words in enumerate(gensim_sentences(path))]
        return Doc2Vec(documents=docs, dm=0, workers=1, **kw)

    try:
        c.log(f"learn: doc2vec x {p['repeats']}")
        times, values = c.alternate_values({"learn_space": ours, "gensim": plain}, p["repeats"])
    finally:
        store.close()
    report = values["learn_space"]
    o, g = med(times["learn_space"]), med(times["gensim"])
    row = c.row(f"doc2vec PV-DBOW on Lee (50-d, {kw['epochs']} epochs, min_count 2, 1 worker): `learn_space` "
                "in-process", o, "s", "gensim in-process (simple_preprocess + TaggedDocument + Doc2Vec)", g, o / g,
                ratio_means=TIME_RATIO, train_seconds=report.train_seconds,
                note=f"{TIME_RATIO}; of which gensim build_vocab + train {report.train_seconds:.2f} s")
    return [row], {"times_s": times, "report": {k: v for k, v in report.to_dict().items() if k != "recipe"}}


# ------------------------------------------------------------------ 3. Poincare
def poincare_rows(p: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    from gensim.models.poincare import PoincareModel

    from repspace.engines.learn import hypernym_closure, train_poincare

    closure_s, relations = c.timed(lambda: hypernym_closure("mammal.n.01"))
    epochs, burn_in = p["poincare_epochs"], p["poincare_burn_in"]

    def ours() -> Any:
        return train_poincare(relations, size=10, epochs=epochs, burn_in=burn_in, seed=0)

    def plain() -> Any:
        model = PoincareModel(relations, size=10, negative=10, burn_in=burn_in, seed=0, workers=1)
        model.train(epochs=epochs)
        return model

    c.log(f"learn: Poincare x {p['repeats']} ({len(relations):,} relations)")
    times, values = c.alternate_values({"train_poincare": ours, "gensim": plain}, p["repeats"])
    r, m = values["train_poincare"], values["gensim"]
    rows_of = [m.kv.key_to_index[k] for k in r.keys]
    diff = float(np.abs(m.kv.vectors[rows_of] - r.vectors).max())
    o, g = med(times["train_poincare"]), med(times["gensim"])
    row = c.row(f"Poincare, WordNet mammal closure ({len(relations):,} pairs, {len(r.keys):,} nodes; 10-d, "
                f"{burn_in} burn-in + {epochs} epochs): `train_poincare`", o, "s",
                "gensim PoincareModel(...).train(epochs) directly", g, o / g, ratio_means=TIME_RATIO,
                max_abs_diff=diff, note=f"{TIME_RATIO}; vectors differ from gensim's by at most {diff:.1e}")
    return [row], {"times_s": times, "hypernym_closure_s": closure_s, "train_seconds": r.seconds,
                   "max_abs_diff_vs_gensim": diff}


# ------------------------------------------------------------------ 4. node2vec
# The reference algorithm re-typed for the anchor: Grover & Leskovec's src/node2vec.py
# (github.com/aditya-grover/node2vec), in Python 3. alias_setup, alias_draw and node2vec_walk are theirs
# as published (np.int -> np.int64); ref_tables holds their get_alias_edge and the node tables of
# preprocess_transition_probs, each table made on first use so that a sample of walks needs only the tables
# it visits (the published code makes all of them before any walk).
def ref_alias_setup(probs: list[float]) -> tuple[np.ndarray, np.ndarray]:
    K = len(probs)
    q = np.zeros(K)
    J = np.zeros(K, dtype=np.int64)  # np.int in the published code (removed from numpy)
    smaller = []
    larger = []
    for kk, prob in enumerate(probs):
        q[kk] = K * prob
        if q[kk] < 1.0:
            smaller.append(kk)
        else:
            larger.append(kk)
    while len(smaller) > 0 and len(larger) > 0:
        small = smaller.pop()
        large = larger.pop()
        J[small] = large
        q[large] = q[large] + q[small] - 1.0
        if q[large] < 1.0:
            smaller.append(large)
        else:
            larger.append(large)
    return J, q


def ref_alias_draw(J: np.ndarray, q: np.ndarray) -> int:
    K = len(J)
    kk = int(np.floor(np.random.rand() * K))
    if np.random.rand() < q[kk]:
        return kk
    else:
        return J[kk]


def ref_node2vec_walk(G: Any, alias_nodes: Any, alias_edges: Any, walk_length: int, start_node: int) -> list[int]:
    walk = [start_node]
    while len(walk) < walk_length:
        cur = walk[-1]
        cur_nbrs = sorted(G.neighbors(cur))
        if len(cur_nbrs) > 0:
            if len(walk) == 1:
                walk.append(cur_nbrs[ref_alias_draw(alias_nodes[cur][0], alias_nodes[cur][1])])
            else:
                prev = walk[-2]
                walk.append(cur_nbrs[ref_alias_draw(alias_edges[(prev, cur)][0], alias_edges[(prev, cur)][1])])
        else:
            break
    return walk


def ref_tables(G: Any, p: float, q: float) -> tuple[Any, Any]:
    """The reference's alias tables of nodes and of edges, each made (and timed) the first time it is read."""
    def node_table(node: int) -> tuple[np.ndarray, np.ndarray]:
        unnormalized_probs = [G[node][nbr]["weight"] for nbr in sorted(G.neighbors(node))]
        norm_const = sum(unnormalized_probs)
        return ref_alias_setup([float(u) / norm_const for u in unnormalized_probs])

    def edge_table(edge: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        src, dst = edge
        unnormalized_probs = []
        for dst_nbr in sorted(G.neighbors(dst)):
            if dst_nbr == src:
                unnormalized_probs.append(G[dst][dst_nbr]["weight"] / p)
            elif G.has_edge(dst_nbr, src):
                unnormalized_probs.append(G[dst][dst_nbr]["weight"])
            else:
                unnormalized_probs.append(G[dst][dst_nbr]["weight"] / q)
        norm_const = sum(unnormalized_probs)
        return ref_alias_setup([float(u) / norm_const for u in unnormalized_probs])

    return _OnFirstUse(node_table), _OnFirstUse(edge_table)


class _OnFirstUse(dict):
    """A dict that makes a missing table on first read, counting the seconds and the entries made."""

    def __init__(self, make: Any) -> None:
        super().__init__()
        self.make, self.seconds, self.entries = make, 0.0, 0

    def __missing__(self, key: Any) -> Any:
        t0 = time.perf_counter()
        value = self[key] = self.make(key)
        self.seconds += time.perf_counter() - t0
        self.entries += len(value[0])
        return value


def table_overhead(tables: dict[Any, tuple[np.ndarray, np.ndarray]], keyed: bool) -> float:
    """Mean bytes of one table beyond its 16 bytes an entry: array headers, the (J, q) tuple, key, dict slot."""
    if not tables:
        return 0.0
    over = [sys.getsizeof(J) + sys.getsizeof(q) - J.nbytes - q.nbytes + sys.getsizeof((J, q))
            + (sys.getsizeof(k) if keyed else 0) for k, (J, q) in tables.items()]
    return float(np.mean(over)) + sys.getsizeof(tables) / len(tables)


def sampler_bytes(graph: Any, p: float, q: float) -> int:
    """The arrays repspace's walk sampler builds beside the graph's CSR (its keys, totals, degrees)."""
    try:
        from repspace.engines.learn.node2vec import _Sampler

        s = _Sampler(graph, p, q)
        return sum(a.nbytes for a in (s.keys, s.total, s.deg, s.rowcum) if a is not None)
    except (ImportError, AttributeError):  # the private sampler changed: its arrays as they were written
        return 8 * len(graph.indices) + 16 * graph.n_nodes


def node2vec_rows(p: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    import networkx as nx

    from repspace.engines.learn.graph import graph_from_edges
    from repspace.engines.learn.node2vec import walk_indices

    n, wl, nw = p["graph_nodes"], p["walk_length"], p["num_walks"]
    ba_s, G = c.timed(lambda: nx.barabasi_albert_graph(n, p["graph_m"], seed=0))
    nx.set_edge_attributes(G, 1, "weight")  # the reference's read_graph gives an unweighted graph weight 1
    gfe_s, graph = c.timed(lambda: graph_from_edges(list(G.edges()), nodes=[str(i) for i in range(n)]))
    deg = graph.degrees().astype(np.int64)
    entries_all = int(deg.sum() + (deg**2).sum())  # node tables: sum(deg); edge tables u->v: deg(v) each
    tables_all = n + len(graph.indices)
    starts = np.random.default_rng(1).choice(n, min(n, p["ref_starts"]), replace=False).tolist()
    rows, details = [], {"graph": {"generator": f"networkx.barabasi_albert_graph({n}, {p['graph_m']}, seed=0)",
                                   "nodes": n, "edges": graph.n_edges, "max_degree": int(deg.max()),
                                   "sum_deg_squared": int((deg**2).sum()), "barabasi_albert_s": ba_s,
                                   "graph_from_edges_s": gfe_s},
                         "walk_output_bytes": nw * n * wl * 4, "pq": {}}
    mem_ref = None
    for pp, qq in ((1.0, 1.0), (0.25, 4.0), (4.0, 0.25)):
        c.log(f"learn: node2vec walks p={pp:g} q={qq:g}: repspace x {p['repeats']}")
        ours_s, steps = [], 0
        for _ in range(p["repeats"]):
            secs, w = c.timed(lambda pp=pp, qq=qq: walk_indices(graph, walk_length=wl, num_walks=nw, p=pp, q=qq,
                                                                 seed=0))
            ours_s.append(secs)
            steps = int((w >= 0).sum()) - len(w)
            del w
        c.log(f"learn: node2vec walks p={pp:g} q={qq:g}: reference, {len(starts):,} walks")
        alias_nodes, alias_edges = ref_tables(G, pp, qq)
        np.random.seed(0)
        first_s, walks = c.timed(lambda an=alias_nodes, ae=alias_edges: [ref_node2vec_walk(G, an, ae, wl, x)
                                                                          for x in starts])
        build_s = alias_nodes.seconds + alias_edges.seconds
        built = alias_nodes.entries + alias_edges.entries
        ready_n, ready_e = dict(alias_nodes), dict(alias_edges)
        ref_s = []
        for _ in range(p["repeats"]):
            np.random.seed(0)
            secs, again = c.timed(lambda rn=ready_n, re=ready_e: [ref_node2vec_walk(G, rn, re, wl, x) for x in starts])
            assert again == walks  # the same walks, every table ready
            ref_s.append(secs)
        ref_steps = sum(len(x) - 1 for x in walks)
        per_entry = build_s / built
        ours_rate, ref_rate = steps / med(ours_s), ref_steps / med(ref_s)
        pre_all = per_entry * entries_all
        ref_total = pre_all + steps / ref_rate
        if mem_ref is None:
            overhead = (table_overhead(ready_n, False) * n + table_overhead(ready_e, True) * len(graph.indices))
            mem_ref = 16 * entries_all + overhead
            mem_ours = sampler_bytes(graph, pp, qq)
        label = f"node2vec walks p={pp:g} q={qq:g} ({n:,} nodes, {graph.n_edges:,} edges; {nw} x {wl} from each node)"
        rows += [
            c.row(f"{label}: walk_indices steps/s", ours_rate, "steps/s",
                  "reference node2vec walk loop, alias tables ready", ref_rate, ours_rate / ref_rate,
                  seconds=med(ours_s), steps=steps, ref_walks=len(starts), ref_steps=ref_steps,
                  ratio_means=SPEED_RATIO,
                  note=f"{SPEED_RATIO}; repspace {med(ours_s):.2f} s for {steps:,} steps; reference on "
                       f"{len(starts):,} sampled walks ({ref_steps:,} steps), re-typed from the published code"),
            c.row(f"{label}: end to end (reference: alias tables of every node and edge, then the walks)",
                  steps / med(ours_s), "steps/s", "reference, tables + walks (extrapolated)", steps / ref_total,
                  ref_total / med(ours_s), ref_seconds=ref_total, ref_tables_s=pre_all,
                  ratio_means=SPEED_RATIO,
                  note=f"{SPEED_RATIO}; reference {ref_total:,.0f} s of which tables {pre_all:,.0f} s "
                       f"({entries_all:,} entries at {1e6 * per_entry:.2f} us, measured on {built:,})"),
        ]
        details["pq"][f"p={pp:g},q={qq:g}"] = {
            "repspace_s": ours_s, "steps": steps, "reference_walk_s": ref_s, "reference_first_pass_s": first_s,
            "reference_tables_made": len(ready_n) + len(ready_e), "reference_entries_made": built,
            "reference_table_build_s": build_s, "reference_s_per_entry": per_entry,
            "reference_steps": ref_steps, "reference_tables_all_s_extrapolated": pre_all}
    rows.append(c.row(
        f"node2vec walk state beyond the graph ({n:,} nodes, {graph.n_edges:,} edges): memory", mem_ours / 2**20,
        "MiB", "reference alias tables of every node and edge (estimate)", mem_ref / 2**20, mem_ours / mem_ref,
        ref_entries=entries_all, ref_tables=tables_all,
        ratio_means="repspace bytes / reference bytes (lower is better)",
        note=(f"ratio = repspace bytes / reference bytes (lower is better); reference {entries_all:,} entries in "
              f"{tables_all:,} tables (16 B an entry + measured per-table overhead); repspace: an int64 key per "
              "directed edge and per-node totals, no per-edge table")))
    details["memory"] = {"repspace_bytes": mem_ours, "reference_bytes_estimate": mem_ref,
                         "reference_entries": entries_all, "reference_tables": tables_all}
    return rows, details


# ------------------------------------------------------------------ 5. retrofit
def ref_retrofit(wordVecs: dict[str, np.ndarray], lexicon: dict[str, list[str]], numIters: int) -> dict:
    """Faruqui et al.'s reference loop (github.com/mfaruqui/retrofitting, retrofit.py), re-typed for the anchor."""
    newWordVecs = copy.deepcopy(wordVecs)
    wvVocab = set(newWordVecs.keys())
    loopVocab = wvVocab.intersection(set(lexicon.keys()))
    for _ in range(numIters):
        # loop through every node also in ontology (else just use data estimate)
        for word in loopVocab:
            wordNeighbours = set(lexicon[word]).intersection(wvVocab)
            numNeighbours = len(wordNeighbours)
            # no neighbours, pass - use data estimate
            if numNeighbours == 0:
                continue
            # the weight of the data estimate if the number of neighbours
            newVec = numNeighbours * wordVecs[word]
            # loop over neighbours and add to new vector (currently with weight 1)
            for ppWord in wordNeighbours:
                newVec += newWordVecs[ppWord]
            newWordVecs[word] = newVec / (2 * numNeighbours)
    return newWordVecs


def retrofit_rows(p: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    from repspace.engines.learn import lexicon_from_mapping, retrofit, synonym_lexicon

    load_s, (words, X) = c.timed(c.glove)
    if p["glove_words"]:
        words, X = words[:p["glove_words"]], X[:p["glove_words"]]
    lex_s, lexicon = c.timed(synonym_lexicon)
    iters = p["retrofit_iterations"]
    word_vecs = {w: X[i].astype(np.float64) for i, w in enumerate(words)}  # the reference reads float64 rows
    ref_lexicon = {w: list(nbrs) for w, nbrs in lexicon.items()}
    mapping_s, lex = c.timed(lambda: lexicon_from_mapping(lexicon, lowercase=True))
    retrofit(words[:1000], X[:1000], lex, iterations=1)  # warm-up: scipy.sparse imported
    c.log(f"learn: retrofit x {p['repeats']} ({len(words):,} words)")
    times, values = c.alternate_values({"retrofit": lambda: retrofit(words, X, lexicon, iterations=iters),
                                        "prebuilt": lambda: retrofit(words, X, lex, iterations=iters),
                                        "reference": lambda: ref_retrofit(word_vecs, ref_lexicon, iters)},
                                       p["repeats"])
    r, ref = values["retrofit"], values["reference"]
    diff = max(float(np.abs(ref[w] - r.vectors[i]).max()) for i, w in enumerate(words))
    same = bool(np.array_equal(r.vectors, values["prebuilt"].vectors))
    o, b, a = med(times["retrofit"]), med(times["prebuilt"]), med(times["reference"])
    what = (f"retrofit GloVe 6B 50d ({len(words):,} words) to WordNet synonyms ({len(lexicon):,} lemmas; "
            f"{r.counts['updated']:,} words moved), {iters} iterations")
    anchor = "Faruqui et al.'s reference loop (dict of vectors, Python), re-typed"
    rows = [
        c.row(f"{what}: `retrofit(words, X, synonym_lexicon())`", o, "s", anchor, a, o / a, ratio_means=TIME_RATIO,
              max_abs_diff=diff,
              note=(f"{TIME_RATIO}; the lexicon (a dict) is canonicalised in the call ({mapping_s:.2f} s alone); "
                    f"Jacobi vs the reference's Gauss-Seidel: largest difference {diff:.1e}")),
        c.row(f"{what}: `retrofit` given a prebuilt `Lexicon` (as `retrofit_space` calls it)", b, "s", anchor, a,
              b / a, ratio_means=TIME_RATIO, same_vectors=same,
              note=f"{TIME_RATIO}; same vectors as with the dict: {same}"),
    ]
    details = {"times_s": times, "counts": dict(r.counts), "max_abs_diff_vs_reference": diff,
               "breakdown of the setup (untimed)": {"glove_load_s": load_s, "synonym_lexicon_s": lex_s,
                                                    "lexicon_from_mapping_s": mapping_s}}
    return rows, details


# -------------------------------------------------------------------- 6. heads
def torch_anchor(A: np.ndarray, B: np.ndarray, scores: np.ndarray, epochs: int) -> None:
    """A minimal plain-torch loop: one linear layer, CoSENT on the full output, batches of 64, Adam."""
    import torch
    import torch.nn.functional as F

    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    lin = torch.nn.Linear(A.shape[1], A.shape[1])
    opt = torch.optim.Adam(lin.parameters(), lr=1e-3)
    At, Bt, St = torch.from_numpy(A), torch.from_numpy(B), torch.from_numpy(scores.astype(np.float32))
    for _ in range(epochs):
        for idx in torch.randperm(len(At), generator=gen).split(64):
            cos = F.cosine_similarity(lin(At[idx]), lin(Bt[idx]))
            s = St[idx]
            diff = 10.0 * (cos[None, :] - cos[:, None])
            terms = diff[s[:, None] > s[None, :]]
            loss = torch.logsumexp(torch.cat([terms.new_zeros(1), terms]), dim=0)
            opt.zero_grad()
            loss.backward()
            opt.step()


def heads_rows(p: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    import torch

    from repspace.engines.learn import train_matryoshka_head

    n, d, epochs = p["head_pairs"], 384, p["head_epochs"]
    rng = np.random.default_rng(0)
    A = rng.standard_normal((n, d), dtype=np.float32)
    B = rng.standard_normal((n, d), dtype=np.float32)
    scores = rng.uniform(0.0, 5.0, n)
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        train_matryoshka_head(A[:256], B[:256], scores[:256], epochs=1, threads=1)  # warm-up: torch's first use
        torch_anchor(A[:256], B[:256], scores[:256], 1)
        c.log(f"learn: Matryoshka head x {p['repeats']} ({n:,} pairs, {epochs} epochs)")
        times, values = c.alternate_values({
            "matryoshka": lambda: train_matryoshka_head(A, B, scores, epochs=epochs, threads=1, seed=0),
            "one_prefix": lambda: train_matryoshka_head(A, B, scores, dims=[None], epochs=epochs, threads=1, seed=0),
            "torch": lambda: torch_anchor(A, B, scores, epochs)}, p["repeats"])
    finally:
        torch.set_num_threads(before)
    dims = values["matryoshka"].recipe["params"]["dims"]
    per = {k: med(v) / epochs for k, v in times.items()}
    anchor = "plain torch: nn.Linear, CoSENT on one prefix, batch 64, Adam, 1 thread"
    what = f"Matryoshka head, {n:,} random pairs of {d}-d vectors, batch 64, 1 thread"
    rows = [
        c.row(f"{what}: `train_matryoshka_head`, default prefixes {dims}: seconds per epoch", per["matryoshka"],
              "s", anchor, per["torch"], per["matryoshka"] / per["torch"], ratio_means=TIME_RATIO,
              note=f"{TIME_RATIO}; CoSENT on {len(dims)} prefixes against 1 (the call / {epochs} epochs)"),
        c.row(f"{what}: `train_matryoshka_head(dims=[None])` (one prefix, like for like): seconds per epoch",
              per["one_prefix"], "s", anchor, per["torch"], per["one_prefix"] / per["torch"],
              ratio_means=TIME_RATIO, note=f"{TIME_RATIO}; PCA start, deterministic algorithms, epoch bookkeeping"),
    ]
    return rows, {"times_s": times, "epochs": epochs, "dims": dims}


# ------------------------------------------------------------------------- run
def run(quick: bool = False) -> Path:
    c.begin(NAME, quick)
    p = sizes(quick)
    folder = c.work_dir(NAME)
    for old in sorted(folder.rglob("*"), reverse=True):
        old.rmdir() if old.is_dir() else old.unlink()
    results: list[dict[str, Any]] = []
    details: dict[str, Any] = {}
    sections = [("word2vec", "word2vec on Lee", lambda: word2vec_rows(p, folder)),
                ("doc2vec", "doc2vec on Lee", lambda: doc2vec_rows(p, folder)),
                ("poincare", "Poincare on the mammal closure", lambda: poincare_rows(p)),
                ("node2vec", "node2vec walks", lambda: node2vec_rows(p)),
                ("retrofit", "retrofit GloVe to WordNet synonyms", lambda: retrofit_rows(p)),
                ("heads", "Matryoshka head", lambda: heads_rows(p))]
    for key, case, fn in sections:
        t0 = time.perf_counter()
        try:
            rows, details[key] = fn()
            results += rows
        except Exception as e:  # noqa: BLE001  (a missing data set or package: reported, the rest goes on)
            c.log(f"learn: {key} failed: {type(e).__name__}: {e}")
            results.append(c.error_row(case, e))
        details.setdefault(key, {})["section_s"] = round(time.perf_counter() - t0, 1)
    import gensim
    import networkx

    params = {**p, "corpus": LEE, "gensim": gensim.__version__, "networkx": networkx.__version__,
              "statistic": f"median of {p['repeats']} alternating runs",
              "ratios": "time rows: repspace s / anchor s (lower is better); node2vec rows: repspace steps/s / "
                        "reference steps/s (higher is better)"}
    return c.write_result(NAME, params, results, details=details)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    print(run(ap.parse_args().quick))
