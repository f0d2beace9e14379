"""PyLate's MaxSim on saved token vectors: run by tests/engines/search/test_maxsim.py with the Python of a separate
virtual environment that holds ``pylate==1.6.0`` (``make pylate-reference``); pytest only collects it (no doctest).

Usage: ``python _pylate_maxsim.py IN.npz OUT.npy``. ``IN.npz`` holds ``q0 .. q{m-1}`` (query token sets) and
``d0 .. d{n-1}`` (document token sets), float32; ``OUT.npy`` gets the ``(m, n)`` float64 matrix of
``pylate.scores.colbert_scores`` of every query against every document, each document scored on its own (no
padding, so PyLate's mask, which multiplies padded similarities by 0 instead of leaving them out, plays no part),
on its pure-torch backend in float64.
"""

from __future__ import annotations

import sys

import numpy as np


def main(src: str, dst: str) -> None:
    # imported here: pytest's --doctest-modules imports this file in the project's venv, which has no pylate
    import torch
    from pylate.scores import colbert_scores

    data = np.load(src)
    queries = [data[f"q{i}"] for i in range(sum(name.startswith("q") for name in data.files))]
    docs = [data[f"d{i}"] for i in range(sum(name.startswith("d") for name in data.files))]
    out = np.empty((len(queries), len(docs)), np.float64)
    for j, doc in enumerate(docs):
        d = torch.from_numpy(doc.astype(np.float64))[None]
        for i, query in enumerate(queries):
            q = torch.from_numpy(query.astype(np.float64))[None]
            out[i, j] = float(colbert_scores(q, d, backend="torch")[0, 0])
    np.save(dst, out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
