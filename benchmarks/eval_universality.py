"""SAE feature universality, cross-layer feature flow and compatibility over a chain of updates, for EVALUATION.md.

Usage: ``.venv/bin/python benchmarks/eval_universality.py [--quick]`` (prints markdown), or
``benchmarks/evaluation.py --only universality`` (into EVALUATION.md; ``--stored`` reads the last full run back
from ``benchmarks/results/eval-universality.json``: the full run takes 15-25 minutes on the shared machine).

Universality (Lan et al. 2024, S106) and flow (S285): the Cranfield abstracts cut into sentences, embedded by
all-MiniLM-L6-v2's layers 2, 4 and 6 (mean-pooled, one forward pass) and by the static model2vec model; a top-k
sparse autoencoder per space (1,024 latents, k = 16, seed 0, the project's default epochs), features matched by
activation correlation (one-to-one by the Hungarian algorithm; many-to-one by the maximum, as the paper does),
SVCCA of the matched decoder directions beside 20 random pairings. Flow: features of layers 2 -> 4 -> 6 linked
where their activation correlation reaches 0.5. The chain (CoReS, S055): layers 2 -> 4 -> 6 as three successive
"versions" on Cranfield's queries and abstracts, each newer one's queries on each older index by a Procrustes or
ridge map, raw (same width) or through d-simplex heads, the diagonal re-indexed. ``--quick``: the first 2,000
sentences.
"""

from __future__ import annotations

import json
import re
import sys
import textwrap
from typing import Any

import common as c
import numpy as np

WIDTH = 112
DATA = c.REPO.parent / "shared" / "data"
STORED = c.RESULTS / "eval-universality.json"
LAYERS = [2, 4, 6]
PAIRS = [("L6", "static", ("hungarian", "max")), ("L4", "L6", ("hungarian",)), ("L2", "L6", ("hungarian",))]
CHAIN_METHODS = ("raw", "procrustes", "ridge", "head")


def measure(quick: bool, stored: bool = False) -> dict[str, Any]:
    """``{"universality": {...}}``; ``stored``: the last full run's figures, read back."""
    if stored:
        return json.loads(STORED.read_text())
    from repspace.core.exact import normalize_rows
    from repspace.engines.compare import feature_flow, feature_universality
    from repspace.engines.encoders import get_encoder
    from repspace.engines.eval import load_beir
    from repspace.engines.interpret import SparseAutoencoder
    from repspace.workflows.analyze import compat_chain
    from repspace.workflows.dictionary import default_epochs

    data = load_beir(DATA / "cranfield-beir")
    texts = [s for t in data.corpus_texts for s in re.split(r"(?<=\.)\s+", t) if s.strip()]
    texts = texts[:2000] if quick else texts
    c.log(f"evaluation: universality, {len(texts):,} Cranfield sentences through MiniLM layers {LAYERS} and static")
    layered = get_encoder("hf-layers:minilm")
    spaces = dict(zip([f"L{x}" for x in LAYERS], layered.encode_layers(texts, layers=LAYERS)))
    spaces["static"] = get_encoder("static").encode(texts)
    codes, dec = {}, {}
    for name, X in spaces.items():
        X = normalize_rows(np.asarray(X, np.float32))
        sae = SparseAutoencoder(1024, 16, seed=0, epochs=default_epochs(len(X))).fit(X)
        codes[name], dec[name] = sae.transform(X), sae.components_
    out: dict[str, Any] = {"sentences": len(texts), "pairs": []}
    for a, b, methods in PAIRS:
        for method in methods:
            u = feature_universality(codes[a], codes[b], dec[a], dec[b], method=method, n_random=20).to_dict()
            out["pairs"].append({"a": a, "b": b, "method": method,
                                 **{k: v for k, v in u.items() if k not in ("decoder", "activations")}})
    flow = feature_flow([codes[f"L{x}"] for x in LAYERS], threshold=0.5, mode="threshold",
                        labels=[f"L{x}" for x in LAYERS])
    out["flow"] = flow.to_dict(nodes=False)
    c.log("evaluation: universality, the chain of MiniLM layers on Cranfield")
    q = layered.encode_layers(list(data.query_texts), layers=LAYERS)
    d = layered.encode_layers(list(data.corpus_texts), layers=LAYERS)
    out["chain"] = {m: compat_chain(list(q), list(d), data, method=m, names=[f"L{x}" for x in LAYERS]).to_dict()
                    for m in CHAIN_METHODS}
    result = {"universality": out}
    if not quick:
        STORED.write_text(json.dumps(result, indent=1, default=float))
    return result


def _cell(v: float | None) -> str:
    return "—" if v is None else f"{v:.4f}"


def render(res: dict[str, Any]) -> list[str]:
    """The EVALUATION.md section."""
    r = res["universality"]
    lines = ["", "## SAE feature universality, feature flow and a chain of updates (`repspace interpret universality`,"
             " `interpret flow`, `analyze compat-chain`)", ""]
    lines += textwrap.fill(
        f"{r['sentences']:,} Cranfield sentences through all-MiniLM-L6-v2's layers 2, 4, 6 and the static model; one "
        "top-k SAE per space (1,024 latents, k = 16); features matched by activation correlation, SVCCA of the "
        "matched decoder directions beside 20 random pairings (Lan et al. 2024 report SVCCA well above random "
        "pairings for LLM pairs; no figure of theirs is for these models).", width=WIDTH).splitlines()
    lines += ["", "| spaces | matching | pairs | mean pair correlation | decoder SVCCA | random pairings (mean ± sd) "
                  "| p |", "|---|---|---|---|---|---|---|"]
    for p in r["pairs"]:
        m = p["match"]
        lines.append(f"| {p['a']} ↔ {p['b']} | {p['method']} | {m['n_pairs']} | {m['mean_correlation']:.3f} | "
                     f"{p['svcca_decoder']:.3f} | {p['decoder_random_mean']:.3f} ± "
                     f"{p['decoder_random_sd'] or 0:.3f} | {p['decoder_random_p']:.3f} |")
    name = {i: f"L{x}" for i, x in enumerate(LAYERS)}
    steps = "; ".join(f"{name.get(s['layer'], s['layer'])} → {name.get(s['next_layer'], s['next_layer'])}: "
                      f"{s['persists']} persist, {s['dies']} die, {s['born']} born ({s['n_edges']} edges)"
                      for s in r["flow"]["steps"])
    lines += ["", *textwrap.fill(f"Feature flow, activation correlation ≥ 0.5: {steps}.", width=WIDTH).splitlines()]
    lines += ["", *textwrap.fill(
        "Compatibility over the chain L2 → L4 → L6 on Cranfield (nDCG@10; row: the queries' model, column: the "
        "index's; the diagonal re-indexed; `head`: held-out queries only). AC is CoReS's share of compatible pairs, "
        "AM its mean of the matrix.", width=WIDTH).splitlines()]
    lines += ["", "| method | L4 on L2 | L6 on L2 | L6 on L4 | L2 / L4 / L6 re-indexed | AC | AM | transitive |",
              "|---|---|---|---|---|---|---|---|"]
    for method, ch in r["chain"].items():
        m = ch["matrix"]
        lines.append(f"| {method} | {_cell(m[1][0])} | {_cell(m[2][0])} | {_cell(m[2][1])} | "
                     f"{m[0][0]:.4f} / {m[1][1]:.4f} / {m[2][2]:.4f} | {ch['ac']:.3f} | {ch['am']:.4f} | "
                     f"{'yes' if ch['transitive'] else 'no'} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    return c.section_main(argv, __doc__, measure, render, "the first 2,000 sentences")


if __name__ == "__main__":
    sys.exit(main())
