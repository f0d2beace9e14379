"""Pooling recipes computed with transformers alone: the independent reference of the pooling-recipe tests.

Each text runs through MiniLM's ``AutoModel`` by itself (no padding, so no mask is needed) and its hidden states
are pooled by hand in float64, as the recipes of :mod:`repspace.engines.encoders.pooling_recipes` define them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

#: The recipes :func:`direct_recipes` computes (MiniLM: 7 hidden states, 0 the embedding output, 6 the last).
DIRECT_RECIPES = ("mean", "cls", "max", "last", "first-last", "mix:0+6", "max@2")


def load_minilm(folder: Path) -> tuple[object, object]:
    """MiniLM's tokenizer and AutoModel loaded directly with transformers, independently of repspace."""
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    return tokenizer, AutoModel.from_pretrained(str(folder), local_files_only=True).eval()


def direct_recipes(raw: tuple[object, object], texts: list[str], max_length: int = 512) -> dict[str, np.ndarray]:
    """Each recipe of :data:`DIRECT_RECIPES` for every text, ``(len(texts), d)`` float64 arrays."""
    import torch

    tokenizer, model = raw
    out: dict[str, list[np.ndarray]] = {k: [] for k in DIRECT_RECIPES}
    for text in texts:
        batch = tokenizer([text], return_tensors="pt", truncation=True, max_length=max_length)
        with torch.inference_mode():
            h = [s[0].double().numpy() for s in model(**batch, output_hidden_states=True).hidden_states]
        out["mean"].append(h[6].mean(axis=0))
        out["cls"].append(h[6][0])
        out["max"].append(h[6].max(axis=0))
        out["last"].append(h[6][-1])
        out["first-last"].append(((h[1] + h[6]) / 2).mean(axis=0))
        out["mix:0+6"].append(((h[0] + h[6]) / 2).mean(axis=0))
        out["max@2"].append(h[2].max(axis=0))
    return {k: np.stack(v) for k, v in out.items()}
