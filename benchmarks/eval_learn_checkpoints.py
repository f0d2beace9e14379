"""A real checkpoint series: word2vec on gensim's Lee corpus stored after every epoch, tracked by ``analyze track``.

Usage: ``.venv/bin/python benchmarks/eval_learn_checkpoints.py [--epochs N] [--out DIR]`` (prints markdown).

``learn_space(..., checkpoints=True)`` (``repspace learn word2vec lee_background.cor --checkpoints``) trains
skip-gram (50 dimensions, window 5, min count 2, seed 1, one worker: deterministic) and stores the vectors after
epoch 1 .. N as ``lee@epoch1`` .. ``lee@epochN``. Per epoch: gensim's training loss of the epoch, the label-free
figures of :func:`repspace.analyze.track_spaces` (uniformity, local intrinsic dimension, k = 20), and the
word-similarity Spearman correlation on MEN-3k and WS-353 (pairs in the vocabulary:
:func:`repspace.engines.eval.wordsim`). Writes ``learn-checkpoints.json`` and ``learn-checkpoints.png`` to
``--out`` (default ``benchmarks/results``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
if str(REPO / "src") not in sys.path:  # run from a checkout without an editable install
    sys.path.insert(0, str(REPO / "src"))

DATA = REPO.parent / "shared" / "data" / "word-sim"
SETS = {"EN-MEN-TR-3k": "MEN-3k", "EN-WS-353-ALL": "WS-353"}


def run(epochs: int) -> dict[str, Any]:
    from gensim.test.utils import datapath

    from repspace import Store
    from repspace.analyze import track_spaces
    from repspace.engines.eval.words import WordVectors, load_word_pairs, wordsim
    from repspace.workflows.learn import learn_space

    with tempfile.TemporaryDirectory() as tmp, Store(str(Path(tmp) / "s.db")) as store:
        r = learn_space(store, "lee", "word2vec", datapath("lee_background.cor"), sg=True, vector_size=50,
                        window=5, min_count=2, epochs=epochs, seed=1, checkpoints=True)
        track = track_spaces([store.space(n) for n in r.checkpoints]).to_dict()
        rows = []
        pairs = {name: load_word_pairs(DATA / f"{stem}.txt") for stem, name in SETS.items()
                 if (DATA / f"{stem}.txt").is_file()}
        for e, (space, q, loss) in enumerate(zip(r.checkpoints, track["spaces"], r.epoch_loss), start=1):
            sp = store.space(space)
            wv = WordVectors(sp.ids(), sp.vectors())
            scores = {name: round(wordsim(wv, p, bootstrap=0).scores["spearman"], 4) for name, p in pairs.items()}
            rows.append({"epoch": e, "space": space, "loss": loss, "uniformity": round(q["uniformity"], 4),
                         "local_id_mean": round(q["local_id_mean"], 3),
                         "local_id_median": round(q["local_id_median"], 3), **scores})
    return {"corpus": "gensim lee_background.cor (300 documents, 58,152 tokens)", "vocabulary": r.n,
            "settings": {"sg": True, "vector_size": 50, "window": 5, "min_count": 2, "epochs": epochs, "seed": 1},
            "epochs": rows}


def figure(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = result["epochs"]
    x = [r["epoch"] for r in rows]
    panels = [("loss", "training loss of the epoch"), ("local_id_mean", "mean local ID (k = 20)"),
              ("uniformity", "uniformity (t = 2)")] + [(n, f"{n} Spearman") for n in SETS.values() if n in rows[0]]
    fig, axes = plt.subplots(1, len(panels), figsize=(3.2 * len(panels), 3.0))
    for ax, (key, title) in zip(axes, panels):
        ax.plot(x, [r[key] for r in rows], marker="o", ms=3)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("epoch", fontsize=8)
        ax.tick_params(labelsize=7)
    fig.suptitle("word2vec skip-gram on the Lee corpus: checkpoints tracked by repspace analyze track", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def measure(quick: bool) -> dict[str, Any]:
    """For ``benchmarks/evaluation.py`` (the learn parts): the series (5 epochs with ``quick``, else 20), its figure
    written beside the results."""
    result = run(5 if quick else 20)
    if not quick:
        figure(result, BENCH_DIR / "results" / "learn-checkpoints.png")
    return result


def render(result: dict[str, Any]) -> list[str]:
    """The table of the series, one row per epoch."""
    cols = [k for k in result["epochs"][0] if k != "space"]
    lines = [f"{result['corpus']}, vocabulary {result['vocabulary']:,}; skip-gram, "
             + ", ".join(f"{k} {v}" for k, v in result["settings"].items() if k != "sg")
             + "; each epoch stored as a space and tracked by `repspace analyze track` (figure: "
             "[learn-checkpoints.png](benchmarks/results/learn-checkpoints.png)).", "",
             "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in result["epochs"]:
        lines.append("| " + " | ".join(f"{r[c]:,.4g}" if isinstance(r[c], float) else str(r[c]) for c in cols) + " |")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--out", type=Path, default=BENCH_DIR / "results")
    args = ap.parse_args()
    result = run(args.epochs)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "learn-checkpoints.json").write_text(json.dumps(result, indent=1) + "\n")
    figure(result, args.out / "learn-checkpoints.png")
    cols = [k for k in result["epochs"][0] if k != "space"]
    print("| " + " | ".join(cols) + " |\n|" + "---|" * len(cols))
    for r in result["epochs"]:
        print("| " + " | ".join(f"{r[c]:,.4g}" if isinstance(r[c], float) else str(r[c]) for c in cols) + " |")


if __name__ == "__main__":
    main()
