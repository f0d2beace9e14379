"""Learn spaces from the user's own data and store them with their full recipe.

Three modules, one per kind of input:

- :mod:`~repspace.workflows.learn.corpus`: texts -> word2vec, fastText or doc2vec
  (:func:`learn_space`); text queries through :class:`LearnedEncoder`.
- :mod:`~repspace.workflows.learn.graphs`: an edge list -> Poincare embeddings of a
  hierarchy (:func:`learn_poincare`, a ``poincare`` space) or node2vec
  (:func:`learn_node2vec`).
- :mod:`~repspace.workflows.learn.derived`: a stored space -> a derived space:
  retrofitted to a lexicon (:func:`retrofit_space`), a Matryoshka head or a
  pair adapter trained on labelled pairs (:func:`train_head`), or CCA between
  two spaces (:func:`cca_spaces`). Heads are stored as fitted transform chains,
  so the derived space encodes new texts through its source's encoder.

Every learned space is written under a temporary name and renamed when
complete: on any error nothing is stored.
"""

from repspace.workflows.learn._report import LearnedSpace
from repspace.workflows.learn.corpus import (
    DEFAULT_BUCKET,
    METHODS,
    LearnedEncoder,
    LearnReport,
    learn_space,
    learned_encoder,
    model_path,
)
from repspace.workflows.learn.derived import HEAD_METHODS, cca_spaces, retrofit_space, train_head
from repspace.workflows.learn.graphs import GRAPH_METHODS, learn_node2vec, learn_poincare

__all__ = [
    "DEFAULT_BUCKET",
    "GRAPH_METHODS",
    "HEAD_METHODS",
    "METHODS",
    "LearnReport",
    "LearnedEncoder",
    "LearnedSpace",
    "cca_spaces",
    "learn_node2vec",
    "learn_poincare",
    "learn_space",
    "learned_encoder",
    "model_path",
    "retrofit_space",
    "train_head",
]
