"""Interpret a space: probes, concept axes, sparse dictionaries, concept erasure, mean decompositions.

The engine functions take arrays (:func:`probe`, :func:`axis`,
:func:`concept_basis`, :class:`SparseAutoencoder`, :class:`LeaceEraser`,
:func:`polar`, :func:`matching_pursuit` ...); the ``*_space`` functions and
:func:`fit_dictionary` work on stored spaces and their metadata.

Examples
--------
>>> import numpy as np
>>> from repspace.interpret import probe
>>> rng = np.random.default_rng(0)
>>> X = rng.standard_normal((200, 4)); y = (X[:, 0] > 0).astype(int)
>>> result = probe(X, y, cv=3)
>>> result.metric, result.score > 0.9
('accuracy', True)
"""

from repspace.engines import interpret as _engines_interpret
from repspace.engines.interpret import *  # noqa: F403 - every name of its __all__
from repspace.workflows.dictionary import (
    Dictionary,
    DictionaryReport,
    LatentSummary,
    fit_dictionary,
    list_dictionaries,
    load_dictionary,
)
from repspace.workflows import dictionary_reading as _workflows_dictionary_reading
from repspace.workflows import dictionary_universality as _workflows_dictionary_universality
from repspace.workflows.dictionary_universality import *  # noqa: F403 - every name of its __all__
from repspace.workflows.dictionary_reading import *  # noqa: F403 - every name of its __all__
from repspace.workflows import interpret as _workflows_interpret
from repspace.workflows.interpret import *  # noqa: F403 - every name of its __all__
from repspace.workflows import interpret_axes as _workflows_interpret_axes
from repspace.workflows.interpret_axes import *  # noqa: F403 - every name of its __all__
from repspace.workflows import interpret_bases as _workflows_interpret_bases
from repspace.workflows.interpret_bases import *  # noqa: F403 - every name of its __all__
from repspace.workflows import transport as _workflows_transport
from repspace.workflows.transport import *  # noqa: F403 - every name of its __all__

__all__ = [
    *_engines_interpret.__all__,
    *_workflows_dictionary_reading.__all__,
    *_workflows_dictionary_universality.__all__,
    *_workflows_interpret.__all__,
    *_workflows_interpret_axes.__all__,
    *_workflows_interpret_bases.__all__,
    *_workflows_transport.__all__,
    "Dictionary",
    "DictionaryReport",
    "LatentSummary",
    "fit_dictionary",
    "list_dictionaries",
    "load_dictionary",
]
