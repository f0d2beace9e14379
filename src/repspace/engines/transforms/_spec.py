"""Transform chains: a compact spec string, their provenance, and their fitted state as bytes.

A spec lists transforms in the order they apply, comma-separated, the way FAISS's
index factory writes ``"PCA64,IVF1024,PQ16"``; case and spaces are ignored:

==================  ================================================================
Item                Transform
==================  ================================================================
``center``          :class:`Center`
``normalize``       :class:`Normalize` (also ``l2norm``)
``whiten[K]``       :class:`Whiten`, all dimensions or the first ``K`` (``whiten128``)
``abtt[D]``         :class:`AllButTheTop`, ``D`` directions or the d/100 default
``pca[K]``          :class:`PCA`, ``K`` components or ``min(n, d)``
``tldrK``           :class:`~repspace.engines.transforms.tldr.TLDR`, ``K`` components (learnt on kNN pairs)
==================  ================================================================

An empty spec (or ``none``) is the empty chain. The list :func:`parse_transforms`
returns is unfitted; fit it step by step or hand it to
:func:`sklearn.pipeline.make_pipeline`.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from repspace.core.errors import InputError
from repspace.engines.transforms._base import Transform
from repspace.engines.transforms.linear import (
    PCA,
    Affine,
    AllButTheTop,
    Center,
    Normalize,
    Whiten,
)
from repspace.engines.transforms.tldr import TLDR

__all__ = [
    "ACCEPTED_FORMS",
    "REGISTRY",
    "format_transforms",
    "parse_transforms",
    "transforms_from_bytes",
    "transforms_provenance",
    "transforms_to_bytes",
]

#: Spec token → class.
REGISTRY: dict[str, type[Transform]] = {
    "center": Center, "normalize": Normalize, "whiten": Whiten, "abtt": AllButTheTop, "pca": PCA, "tldr": TLDR,
}
#: Every step a saved chain may hold: the parseable ones, and maps fitted on pairs (``affine``).
RESTORABLE: dict[str, type[Transform]] = {**REGISTRY, "affine": Affine}
_ALIASES = {"l2norm": "normalize", "allbutthetop": "abtt"}
#: What an error message lists as the accepted items.
ACCEPTED_FORMS = ("center, normalize, whiten[K], abtt[D], pca[K], tldrK "
                  "(comma-separated, e.g. 'center,whiten128,normalize')")
_ITEM = re.compile(r"^([a-z][a-z0-9]*?)(\d*)$")
_FORMAT = "repspace.engines.transforms"
_VERSION = 1


def parse_transforms(spec: str) -> list[Transform]:
    """The unfitted transforms a spec string names, in the order they apply.

    Examples
    --------
    >>> parse_transforms("center, Whiten128 ,normalize")
    [Center(), Whiten(k=128), Normalize()]
    >>> parse_transforms("abtt,pca64")
    [AllButTheTop(), PCA(n_components=64)]
    >>> parse_transforms("center,sphere")
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: unknown transform 'sphere' in 'center,sphere'; accepted: center, normalize, whiten[K], abtt[D], pca[K], tldrK (comma-separated, e.g. 'center,whiten128,normalize')
    """
    if not isinstance(spec, str):
        raise InputError(f"a transform spec is a string, not {type(spec).__name__}")
    text = "".join(spec.split()).lower()
    if text in ("", "none"):
        return []
    out: list[Transform] = []
    for item in text.split(","):
        if not item:
            raise InputError(f"empty item in transform spec {spec!r}; accepted: {ACCEPTED_FORMS}")
        m = _ITEM.match(item)
        word, digits = (m.group(1), m.group(2)) if m else (item, "")
        word = _ALIASES.get(word, word)
        if word not in REGISTRY:
            raise InputError(f"unknown transform {item!r} in {spec!r}; accepted: {ACCEPTED_FORMS}")
        number = int(digits) if digits else None
        if number is not None and word in ("center", "normalize"):
            raise InputError(f"{word} takes no number ({item!r} in {spec!r}); accepted: {ACCEPTED_FORMS}")
        if number is not None and number < 1:
            raise InputError(f"the number in {item!r} must be at least 1 (in {spec!r})")
        if word == "whiten":
            out.append(Whiten(k=number))
        elif word == "abtt":
            out.append(AllButTheTop(n_components=number))
        elif word == "pca":
            out.append(PCA(n_components=number))
        elif word == "tldr":
            if number is None:
                raise InputError(f"tldr needs its output dimensions, e.g. tldr64 (in {spec!r})")
            out.append(TLDR(n_components=number))
        else:
            out.append(REGISTRY[word]())
    return out


def _steps(transforms: Any) -> list[Transform]:
    """A list of transforms from a list, a single transform or a scikit-learn Pipeline of them."""
    if isinstance(transforms, Transform):
        return [transforms]
    steps = getattr(transforms, "steps", None)  # sklearn.pipeline.Pipeline
    items = [s for _, s in steps] if steps is not None else list(transforms)
    for i, s in enumerate(items):
        if not isinstance(s, Transform):
            raise InputError(f"step {i} is a {type(s).__name__}, not a repspace transform")
    return items


def format_transforms(transforms: Transform | Iterable[Transform] | Any) -> str:
    """The canonical spec of a chain (a list, one transform or a Pipeline); inverse of :func:`parse_transforms`.

    Only ``k``, ``n_components`` are spelled out; other hyper-parameters (``eps``,
    the PCA solver) live in :func:`transforms_provenance`.

    Examples
    --------
    >>> format_transforms(parse_transforms("CENTER , l2norm, whiten64"))
    'center,normalize,whiten64'
    """
    return ",".join(s.to_spec() for s in _steps(transforms))


def transforms_provenance(transforms: Transform | Iterable[Transform] | Any) -> list[dict[str, Any]]:
    """One :meth:`Transform.to_provenance` record per step, in order (JSON-able).

    Examples
    --------
    >>> X = np.array([[1.0, 2.0], [3.0, 6.0], [0.0, 1.0]])
    >>> recs = transforms_provenance([Center().fit(X), Normalize().fit(X)])
    >>> [(r["spec"], r["fitted"], len(r["state_sha256"])) for r in recs]
    [('center', True, 64), ('normalize', True, 64)]
    """
    return [s.to_provenance() for s in _steps(transforms)]


def transforms_to_bytes(transforms: Transform | Iterable[Transform] | Any) -> bytes:
    """The fitted chain as one ``.npz`` (a JSON header plus each step's state; no pickle).

    Examples
    --------
    >>> X = np.array([[1.0, 2.0], [3.0, 6.0], [0.0, 1.0]])
    >>> chain = [Center().fit(X), Whiten().fit(X)]
    >>> back = transforms_from_bytes(transforms_to_bytes(chain))
    >>> back
    [Center(), Whiten()]
    >>> bool((back[1].transform(X) == chain[1].transform(X)).all())
    True
    """
    steps = _steps(transforms)
    header: dict[str, Any] = {"format": _FORMAT, "version": _VERSION, "steps": []}
    arrays: dict[str, np.ndarray] = {}
    for i, s in enumerate(steps):
        if not s.__sklearn_is_fitted__():
            raise InputError(f"step {i} ({s.to_spec()}) is not fitted; fit the chain before saving it")
        header["steps"].append({"name": s.name, "params": s.to_provenance()["params"]})
        for attr, arr in s.state().items():
            arrays[f"{i}.{attr}"] = arr
    arrays["header"] = np.frombuffer(json.dumps(header, sort_keys=True).encode(), dtype=np.uint8)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def transforms_from_bytes(data: bytes) -> list[Transform]:
    """The fitted chain :func:`transforms_to_bytes` wrote.

    The bytes are read without pickle: anything else is refused.

    Examples
    --------
    >>> import pickle
    >>> X = np.array([[1.0, 2.0], [3.0, 2.0]])
    >>> chain = transforms_from_bytes(transforms_to_bytes([Center().fit(X), Normalize().fit(X)]))
    >>> chain, chain[0].transform(X).tolist()
    ([Center(), Normalize()], [[-1.0, 0.0], [1.0, 0.0]])
    >>> transforms_from_bytes(pickle.dumps([Center()]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    repspace.core.errors.InputError: not a saved transform chain: ...
    """
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        header = json.loads(arrays.pop("header").tobytes().decode())
    except (OSError, ValueError, KeyError, UnicodeDecodeError) as e:
        raise InputError(f"not a saved transform chain: {e}") from None
    if not isinstance(header, dict) or header.get("format") != _FORMAT:
        raise InputError("not a saved transform chain (no repspace.engines.transforms header)")
    if header.get("version") != _VERSION:
        raise InputError(f"saved transform chain has version {header.get('version')}; this repspace reads "
                         f"{_VERSION}")
    out: list[Transform] = []
    steps: Sequence[dict[str, Any]] = header.get("steps", [])
    for i, step in enumerate(steps):
        cls = RESTORABLE.get(step.get("name"))
        if cls is None:
            raise InputError(f"saved step {i} is an unknown transform {step.get('name')!r}")
        prefix = f"{i}."
        state = {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)}
        out.append(cls.from_state(step.get("params", {}), state))
    return out
