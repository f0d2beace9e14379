"""Small, seeded stores and spaces for examples, notebooks and tests.

Every docstring example that needs a space used to build one by hand: a
temporary folder, a store, a space, random vectors with ids ``i0``, ``i1`` ...
These helpers do that in one line, with the same seeded data each time
(``numpy.random.default_rng(seed).standard_normal((n, dim))``), so an example
shows the function it documents and not its setup; users get the same toys for
their own experiments, as scikit-learn's ``make_blobs`` does.

Examples
--------
>>> from repspace.store import example_space
>>> sp = example_space(n=60, dim=8)
>>> len(sp), sp.dim, sp.ids()[:2]
(60, 8, ['i0', 'i1'])
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from typing import Any

import numpy as np

from repspace.workflows.store import Space, Store

__all__ = ["example_file", "example_pair", "example_space", "example_store", "example_vectors"]


def example_store() -> Store:
    """An empty store in a new temporary folder (``<tmp>/s.db``), left for the system to clean.

    Examples
    --------
    >>> from repspace.store import example_store
    >>> example_store().spaces()
    []
    """
    return Store(os.path.join(tempfile.mkdtemp(), "s.db"))


def example_file(name: str, text: str) -> str:
    """Write ``text`` (UTF-8) to a file ``name`` in a new temporary folder, left for the system to clean.

    The readers' examples (STS and pair-classification CSVs, analogy questions,
    corpora, edge lists, lexicons) show the file they read and the reader, not
    the three lines that make a temporary file.

    Parameters
    ----------
    name : str
        The file's name; readers that take a split or a data set name from it
        (``toy-dev.csv`` is split ``dev``) see it as given.
    text : str
        The file's content, written as is: no newline added, none translated.

    Returns
    -------
    str
        The file's path.

    Examples
    --------
    >>> import os
    >>> from repspace.store import example_file
    >>> p = example_file("toy-test.csv", "a,b,1\\n")
    >>> os.path.basename(p), open(p, encoding="utf-8").read()
    ('toy-test.csv', 'a,b,1\\n')
    """
    path = os.path.join(tempfile.mkdtemp(), name)
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)
    return path


def example_vectors(n: int = 60, dim: int = 8, *, seed: int = 0) -> np.ndarray:
    """``n`` standard-normal rows of ``dim`` numbers from ``numpy.random.default_rng(seed)``.

    Examples
    --------
    >>> from repspace.store import example_vectors
    >>> example_vectors(3, 2).shape
    (3, 2)
    """
    return np.random.default_rng(seed).standard_normal((n, dim))


def example_space(n: int = 60, dim: int = 8, *, store: Store | None = None, name: str = "t", seed: int = 0,
                  metric: str = "cosine", vectors: np.ndarray | None = None,
                  texts: Sequence[str] | None = None,
                  metadata: Sequence[dict[str, Any]] | None = None) -> Space:
    """A space ``name`` of ``n`` items ``i0 ... i{n-1}``: seeded random vectors (or ``vectors``), texts, metadata.

    Parameters
    ----------
    n, dim : int
        How many items, of how many dimensions (``vectors``, when given, sets both).
    store : Store, optional
        Where to create the space; a new :func:`example_store` when omitted.
    name, metric : str
        The space's name and metric.
    seed : int
        The seed of :func:`example_vectors`.
    vectors : array of shape (n, dim), optional
        The rows to store instead of random ones.
    texts, metadata : sequence, optional
        One text, one metadata dict per item.

    Returns
    -------
    Space

    Examples
    --------
    >>> from repspace.store import example_space
    >>> sp = example_space(6, 2, metadata=[{"even": j % 2 == 0} for j in range(6)])
    >>> sp.filter_rows("even = true").tolist()
    [0, 2, 4]
    """
    x = example_vectors(n, dim, seed=seed) if vectors is None else np.asarray(vectors)
    space = (store or example_store()).create_space(name, dim=x.shape[1], metric=metric)
    space.add([f"i{j}" for j in range(x.shape[0])], x, texts=texts, metadata=metadata)
    return space


def example_pair(n_a: int = 60, n_b: int = 40, dim: int = 8, *,
                 store: Store | None = None) -> tuple[Space, Space]:
    """Spaces ``a`` and ``b`` in one store: ``b`` holds the first ``n_b`` items of ``a``, rotated.

    ``a`` is :func:`example_vectors` ``(n_a, dim)``; ``b`` is its first ``n_b``
    rows times a random orthogonal matrix (seed 1), so every neighbourhood and
    every distance of the shared items is the same in both: the toy of a
    perfect alignment.

    Examples
    --------
    >>> from repspace.store import example_pair
    >>> a, b = example_pair()
    >>> len(a), len(b), b.ids()[-1]
    (60, 40, 'i39')
    """
    store = store or example_store()
    x = example_vectors(n_a, dim)
    q, _ = np.linalg.qr(np.random.default_rng(1).standard_normal((dim, dim)))
    a = example_space(store=store, name="a", vectors=x)
    b = example_space(store=store, name="b", vectors=x[:n_b] @ q)
    return a, b
