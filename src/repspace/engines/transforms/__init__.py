"""Repairs of a space as scikit-learn style transformers, and a compact spec string to chain them.

Each transform stores its hyper-parameters unchanged, learns in ``fit`` (returning
``self``) into attributes ending in ``_``, and applies itself with ``transform``
(``inverse_transform`` where one exists), so the transforms work in
:func:`sklearn.pipeline.make_pipeline`. Each also says exactly what it is
(``to_provenance()``: name, hyper-parameters and a sha256 of its fitted state)
and hands its fitted state over as arrays (``state()`` / ``from_state()``;
:func:`transforms_to_bytes` for a whole chain), so a derived space can be
reproduced. Arithmetic is float64; outputs are float32.

=====================  =====================================================  ==============
Transform              What it does                                           Spec
=====================  =====================================================  ==============
:class:`Center`        subtract the mean                                      ``center``
:class:`Normalize`     unit L2 rows (zero rows stay zero)                     ``normalize``
:class:`Whiten`        BERT-whitening (Su et al. 2021), optionally to ``k``   ``whiten[K]``
:class:`AllButTheTop`  remove mean and top ``D`` PCs (Mu & Viswanath 2018)    ``abtt[D]``
:class:`PCA`           scikit-learn's PCA                                     ``pca[K]``
:class:`TLDR`          a linear map learnt on kNN pairs (TLDR, 2021)          ``tldrK``
=====================  =====================================================  ==============

Examples
--------
>>> import numpy as np
>>> from sklearn.pipeline import make_pipeline
>>> from repspace.engines.transforms import parse_transforms, transforms_provenance
>>> X = np.random.default_rng(0).normal(size=(100, 8))
>>> pipe = make_pipeline(*parse_transforms("center,whiten4,normalize")).fit(X)
>>> Y = pipe.transform(X)
>>> Y.shape, Y.dtype
((100, 4), dtype('float32'))
>>> [r["spec"] for r in transforms_provenance(pipe)]
['center', 'whiten4', 'normalize']
"""

from repspace.core.estimators import NotFittedError
from repspace.engines.transforms._base import Transform, state_digest
from repspace.engines.transforms._spec import (
    ACCEPTED_FORMS,
    format_transforms,
    parse_transforms,
    transforms_from_bytes,
    transforms_provenance,
    transforms_to_bytes,
)
from repspace.engines.transforms.linear import (
    PCA,
    Affine,
    AllButTheTop,
    Center,
    Normalize,
    Whiten,
    default_abtt_components,
)
from repspace.engines.transforms.tldr import TLDR

__all__ = [
    "ACCEPTED_FORMS",
    "PCA",
    "TLDR",
    "Affine",
    "AllButTheTop",
    "Center",
    "Normalize",
    "NotFittedError",
    "Transform",
    "Whiten",
    "default_abtt_components",
    "format_transforms",
    "parse_transforms",
    "state_digest",
    "transforms_from_bytes",
    "transforms_provenance",
    "transforms_to_bytes",
]
