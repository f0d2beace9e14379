"""Layers: ``profile_layers`` (the layer profile) against the bare forward passes it runs.

Texts: distinct STS-B training sentences (10,000 by default), ``hf-layers:minilm``,
all 7 hidden states, batch 32, the default settings (typos for the augmentation,
the shuffled-token baseline, 1,000 bootstrap resamples per figure and layer).
Each batch of 32 texts goes through the model once as 96 sequences: the texts,
their perturbations and their shuffled copies.

The anchor runs exactly those forward passes and nothing else: the same texts
and perturbations (made before the clock starts) tokenised the same way (sorted by length within the same
chunks), the shuffled rows as a copy of the originals' ids (same shapes), and
``model(**inputs, output_hidden_states=True)`` under ``torch.inference_mode()``.
Ratio = profile seconds / anchor seconds (1.0 = the figures, the perturbations,
the shuffles and the bootstrap cost nothing); goal <= 1.3. A second row gives,
for scale, the bare forward passes of the texts alone (``encode_layers``), so
the cost of the two extra copies shows; it has no goal.

Memory: what the profile keeps per input is a float64 per figure and layer
(recorded as ``kept_bytes``); the token states live for one batch.

``--texts N`` runs a smaller size (the result records it); ``--quick`` 300 texts.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import common as c

NAME = "layers"
GOAL = ("<=", 1.3)
BATCH = 32
ENCODER = "hf-layers:minilm"


def sizes(quick: bool, texts: int | None = None) -> dict[str, Any]:
    return {"texts": texts or (300 if quick else 10_000), "batch_size": BATCH, "repeats": 1 if quick else 2,
            "threads": 2}


def bare_passes(enc: Any, texts: list[str], perturbed: list[str], batch_size: int) -> int:
    """The profile's forward passes alone: texts + perturbations (made beforehand) + same-shape shuffled rows."""
    import torch

    from repspace.workflows.layer_profile_pass import CHUNK_BATCHES

    loaded, prompt, size = enc.loaded, enc.prompt or "", batch_size * CHUNK_BATCHES
    passes = 0
    with torch.inference_mode():
        for start in range(0, len(texts), size):
            chunk, changed = texts[start:start + size], perturbed[start:start + size]
            order = sorted(range(len(chunk)), key=lambda i: -len(chunk[i]))
            for s in range(0, len(order), batch_size):
                index = order[s:s + batch_size]
                rows = [prompt + chunk[i] for i in index] + [prompt + changed[i] for i in index]
                batch = loaded.tokenizer(rows, padding=True, truncation=True, max_length=enc.max_length,
                                         return_tensors="pt")
                b = len(index)
                inputs = {k: torch.cat([v, v[:b]]) for k, v in batch.items()
                          if loaded.input_names is None or k in loaded.input_names}
                loaded.model(**inputs, output_hidden_states=True, return_dict=True)
                passes += 1
    return passes


def run(quick: bool = False, texts: int | None = None) -> Path:
    import torch

    from repspace.engines.encoders import get_encoder
    from repspace.engines.eval.perturb import perturb
    from repspace.workflows.layer_profile import profile_layers

    c.begin(NAME, quick)
    p = sizes(quick, texts)
    sentences = c.stsb_sentences(p["texts"])
    n = len(sentences)
    torch.set_num_threads(p["threads"])
    enc = get_encoder(ENCODER)
    c.log(f"layers: {n:,} sentences, {enc.n_layers} states, batch {BATCH}")
    profile_layers(ENCODER, sentences[:BATCH], bootstrap=10)  # warm up: model loaded, first batch run
    perturbed = perturb(sentences, "typos", seed=0)  # what the profile makes chunk by chunk, outside the anchor
    times, values = c.alternate_values({
        "layer profile": lambda: profile_layers(ENCODER, sentences, batch_size=BATCH),
        "bare": lambda: bare_passes(enc, sentences, perturbed, BATCH),
        "texts alone": lambda: enc.encode_layers(sentences, batch_size=BATCH),
    }, p["repeats"])
    prof, bare, alone = (c.best(times[k]) for k in ("layer profile", "bare", "texts alone"))
    profile = values["layer profile"]
    kept = n * len(profile.figures) * len(profile.layers) * 8
    rows = [
        c.row(f"profile {n:,} STS-B sentences, all {len(profile.layers)} MiniLM states, batch {BATCH} "
              f"(+ perturbed + shuffled copies)", prof, "s", "the same forward passes, bare", bare, prof / bare, GOAL,
              forward_passes=values["bare"], kept_bytes=kept),
        c.row(f"the same {n:,} sentences alone through the model (encode_layers, no copies)", alone, "s",
              None, None, prof / alone),
    ]
    last = profile.to_dict()["layers"][-1]
    details = {"times_s": times, "last_layer": {k: v for k, v in last.items() if isinstance(v, dict)},
               "skipped": profile.skipped, "settings": profile.settings}
    return c.write_result(NAME, {**p, "encoder": ENCODER, "source": str(c.STSB_TRAIN),
                                 "reduced_from": None if texts is None else 10_000}, rows, details=details)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--texts", type=int, default=None, help="sentences (default 10,000; --quick 300)")
    args = ap.parse_args()
    print(run(args.quick, args.texts))
