"""Learn spaces and heads from the user's data: word2vec, fastText, doc2vec, node2vec, Poincare, retrofitting, CCA, heads.

The engine functions train on corpora, graphs and pairs given as Python
objects (:func:`train_word2vec`, :func:`train_poincare`, :func:`retrofit`,
:func:`train_matryoshka_head` ...); :func:`learn_space`, :func:`train_head`,
:func:`retrofit_space` and :func:`cca_spaces` train from stored spaces and
store the learned space with its recipe. The Poincare ball's geometry (Mobius
addition, exponential and logarithmic maps, distances, exact search) comes
with them.

Examples
--------
>>> from repspace.learn import corpus_from_texts
>>> corpus = corpus_from_texts(["the cat sat", "the dog ran"])
>>> corpus.documents[0], corpus.n_tokens
(('the', 'cat', 'sat'), 6)
"""

from repspace.core import hyperbolic as _core_hyperbolic
from repspace.core.hyperbolic import *  # noqa: F403 - every name of its __all__
from repspace.engines import learn as _engines_learn
from repspace.engines.learn import *  # noqa: F403 - every name of its __all__
from repspace.workflows import learn as _workflows_learn
from repspace.workflows.learn import *  # noqa: F403 - every name of its __all__

__all__ = [
    *_core_hyperbolic.__all__,
    *_engines_learn.__all__,
    *_workflows_learn.__all__,
]
