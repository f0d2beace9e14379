"""One training step of the top-k sparse autoencoder, its gradients written out, and the Adam that applies them.

Owns :func:`train_step` (forward pass, MSE and AuxK losses, their gradients as
sparse products, the dead-latent counters) and :class:`Adam` (``torch.optim.Adam``'s
update on plain tensors). :class:`~repspace.engines.interpret.sae.model.SparseAutoencoder`
calls them once per batch.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["ADAM_EPS", "Adam", "train_step"]

#: Adam's epsilon in OpenAI's training loop.
ADAM_EPS = 6.25e-10

class Adam:
    """Adam (Kingma & Ba) exactly as ``torch.optim.Adam`` steps it, with OpenAI's epsilon, on plain tensors.

    Written out because ``torch.optim``'s per-step dispatch on the CPU costs
    more than the step itself for models of this size, and it imports
    ``torch._dynamo`` on first use; these four in-place updates cost one pass
    over the parameters (BENCHMARKS.md, "Figures behind the defaults").
    """

    def __init__(self, params: list[Any], lr: float, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = ADAM_EPS) -> None:
        self.params, self.lr, self.betas, self.eps = params, lr, betas, eps
        self.m = [p.new_zeros(p.shape) for p in params]
        self.v = [p.new_zeros(p.shape) for p in params]
        self.t = 0

    def step(self, grads: list[Any]) -> None:
        self.t += 1
        b1, b2 = self.betas
        step_size = self.lr / (1.0 - b1 ** self.t)
        root_c2 = math.sqrt(1.0 - b2 ** self.t)
        for p, g, m, v in zip(self.params, grads, self.m, self.v, strict=True):
            m.lerp_(g, 1.0 - b1)
            v.mul_(b2).addcmul_(g, g, value=1.0 - b2)
            p.addcdiv_(m, (v.sqrt() / root_c2).add_(self.eps), value=-step_size)


def _sparse_rows(values: Any, latents: Any, n_latents: int) -> sp.csr_matrix:
    """A ``rows × n_latents`` CSR matrix with the ``(rows, w)`` values at the ``(rows, w)`` latents."""
    rows, width = latents.shape
    indptr = np.arange(0, rows * width + 1, width, dtype=np.int64)
    return sp.csr_matrix((values.reshape(-1), latents.reshape(-1), indptr), shape=(rows, n_latents))


def _row_dots(torch: Any, grad: Any, atoms: Any, latents: Any) -> Any:
    """``out[b, j] = ⟨grad[b], atoms[latents[b, j]]⟩`` without forming the ``rows × w × d`` gather."""
    rows, width = latents.shape
    crow = torch.arange(0, rows * width + 1, width, dtype=torch.int64)
    with warnings.catch_warnings():  # torch calls its CSR tensors beta
        warnings.simplefilter("ignore", UserWarning)
        pattern = torch.sparse_csr_tensor(crow, latents.reshape(-1), torch.ones(rows * width),
                                          size=(rows, atoms.shape[0]))
        return torch.sparse.sampled_addmm(pattern, grad, atoms.T, beta=0.0).values().reshape(rows, width)


def train_step(torch: Any, F: Any, params: dict[str, Any], opt: Adam, batch: Any, since: Any,
                p: dict[str, Any], mse_scale: float) -> tuple[float, float]:
    """One Adam step with the gradients written out; updates ``since``. Returns (normalised MSE, AuxK loss).

    Only the ``k`` (and ``auxk``) selected latents of a row carry gradient, so
    every product but the dense pre-activation is sparse (OpenAI's kernels do
    the same on GPU): with ``S`` the codes, ``r = x̂ − x``, ``g = 2 r · scale / B``,
    ``∂W_dec = Sᵀ g``, ``∂z_bj = ⟨g_b, W_dec[j]⟩`` (through the ReLU), and with
    ``G`` those sparse pre-activation gradients ``∂W_enc = Gᵀ (x − b_pre)``,
    ``∂b_lat = Σ_b G_b``, ``∂b_pre = Σ_b g_b − ∂b_lat W_enc``.
    """
    w_enc, w_dec, b_lat, b_pre = params["w_enc"], params["w_dec"], params["b_lat"], params["b_pre"]
    n_latents, bsz = len(b_lat), len(batch)
    xc = batch - b_pre
    pre = F.linear(xc, w_enc, b_lat)
    top = torch.topk(pre, k=p["k"], dim=-1, sorted=False)
    z = torch.relu(top.values)
    dec = w_dec.numpy()
    codes = _sparse_rows(z.numpy(), top.indices.numpy(), n_latents)
    recon = torch.from_numpy(np.asarray(codes @ dec)) + b_pre
    resid = recon - batch
    mse = float((resid.double() ** 2).sum()) * mse_scale / bsz
    g_rec = resid * (2.0 * mse_scale / bsz)
    fired = top.indices[z > 0]  # dead-latent statistics come before the AuxK mask (as OpenAI's)
    since += bsz
    since[fired] = 0
    dead = since >= p["dead_window"]
    n_dead = int(dead.sum())
    g_dec = codes.T @ g_rec.numpy()
    g_pre = _row_dots(torch, g_rec, w_dec, top.indices) * (top.values > 0)
    grad_latents, grad_values = [top.indices], [g_pre]
    if p.get("multik") and p.get("multik_coef"):  # CSR / OpenAI's Multi-TopK: the top multik latents reconstruct too
        wide = torch.topk(pre, k=p["multik"], dim=-1, sorted=False)
        wide_codes = _sparse_rows(torch.relu(wide.values).numpy(), wide.indices.numpy(), n_latents)
        resid_wide = torch.from_numpy(np.asarray(wide_codes @ dec)) + b_pre - batch
        g_wide = resid_wide * (2.0 * mse_scale * p["multik_coef"] / bsz)
        g_dec = g_dec + wide_codes.T @ g_wide.numpy()
        g_rec = g_rec + g_wide  # both reach b_pre
        grad_latents.append(wide.indices)
        grad_values.append(_row_dots(torch, g_wide, w_dec, wide.indices) * (wide.values > 0))
    aux_value = 0.0
    if p["auxk"] and p["auxk_coef"] and n_dead:
        aux = torch.topk(pre.masked_fill_(~dead, -math.inf), k=min(p["auxk"], n_dead), dim=-1)
        za = torch.relu(aux.values)
        aux_codes = _sparse_rows(za.numpy(), aux.indices.numpy(), n_latents)
        target = -resid  # the residual x − x̂, reconstructed without b_pre
        denom = float(((target - target.mean(dim=0)).double() ** 2).sum())
        if denom > 0:
            diff = torch.from_numpy(np.asarray(aux_codes @ dec)) - target
            aux_value = float((diff.double() ** 2).sum()) / denom
            g_aux = diff * (2.0 * p["auxk_coef"] / denom)
            g_dec = g_dec + aux_codes.T @ g_aux.numpy()
            grad_latents.append(aux.indices)
            grad_values.append(_row_dots(torch, g_aux, w_dec, aux.indices) * (aux.values > 0))
    grad = _sparse_rows(torch.cat(grad_values, dim=1).numpy(), torch.cat(grad_latents, dim=1).numpy(), n_latents)
    g_blat = np.asarray(grad.sum(axis=0)).ravel().astype(np.float32)
    g_dec_t = torch.from_numpy(np.ascontiguousarray(g_dec, dtype=np.float32))
    g_dec_t -= (g_dec_t * w_dec).sum(dim=1, keepdim=True) * w_dec  # only the norm would change along an atom
    g_enc = torch.from_numpy(np.ascontiguousarray(grad.T @ xc.numpy(), dtype=np.float32))
    g_bpre = g_rec.sum(dim=0) - torch.from_numpy(g_blat) @ w_enc
    opt.step([g_enc, g_dec_t, torch.from_numpy(g_blat), g_bpre])
    w_dec /= w_dec.norm(dim=1, keepdim=True).clamp_min(1e-12)
    return mse, aux_value


# ----------------------------------------------------------------------------- metrics
