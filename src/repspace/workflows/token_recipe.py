"""The recipe of a multi-vector space made from texts: which encoder's token states, and how they were cut.

A multi-vector space ingested from texts (``repspace ingest SPACE FILE --multivector``) holds, per
item, the last-layer token states of a shipped ``hf-layers`` encoder (MiniLM), special tokens
left out and each token L2-normalised: ColBERT's late-interaction recipe without its learned
projection (:func:`repspace.engines.encoders.tokens.encode_tokens`). The recipe is recorded in
the space's provenance under ``tokens``, so a text query (``repspace search SPACE "a text"``)
goes through the very same steps with the query's own tokens (:func:`text_query_tokens`).

Examples
--------
>>> token_encoder_spec("MiniLM"), token_encoder_spec("hf-layers:minilm")
('hf-layers:minilm', 'hf-layers:minilm')
>>> recipe = token_recipe("minilm", max_length=64)
>>> recipe["encoder"], recipe["tokens"]["layer"], recipe["tokens"]["normalize"]
('hf-layers:minilm', -1, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.errors import InputError
from repspace.core.printable import excerpt
from repspace.core.progress import Progress

if TYPE_CHECKING:
    from repspace.core.store import Space

__all__ = ["TOKEN_LAYER", "encode_token_sets", "text_query_tokens", "token_encoder_spec", "token_recipe"]

#: The hidden state a text's token vectors come from: the last layer (what ColBERT projects and scores).
TOKEN_LAYER = -1
#: Names of the shipped encoder whose token states make a multi-vector space, and its hf-layers spec.
_MINILM_NAMES = ("minilm", "hf-layers:minilm")


def token_encoder_spec(encoder: str | None) -> str:
    """The ``hf-layers`` spec whose token states are used: ``minilm`` (any case) is the bundled MiniLM.

    Any other ``hf-layers:<folder>`` is taken as given; an encoder without token states (``static``,
    ``e5``, a sentence-transformers folder) is refused with one line.

    Examples
    --------
    >>> try:
    ...     token_encoder_spec("static")
    ... except InputError as e:
    ...     print(str(e)[:60])
    token vectors need an hf-layers encoder (hf-layers:minilm or
    """
    spec = "minilm" if encoder is None else str(encoder).strip()
    if spec.lower() in _MINILM_NAMES:
        return "hf-layers:minilm"
    if spec.startswith("hf-layers:") and len(spec) > len("hf-layers:"):
        return spec
    raise InputError(f"token vectors need an hf-layers encoder (hf-layers:minilm or minilm, its bundled MiniLM), "
                     f"not {excerpt(spec)}")


def token_recipe(encoder: str | None = None, *, max_length: int | None = None) -> dict[str, Any]:
    """The provenance of a multi-vector space made from texts: ``{encoder, tokens: {...}}``.

    ``tokens`` records the layer (last), that special tokens are left out and each token is
    L2-normalised, that no projection follows (ColBERT's learned 128-d projection has no
    counterpart in a sentence model), and the longest input in tokens (``max_length``, the
    encoder's own when None).
    """
    return {"encoder": token_encoder_spec(encoder), "kind": "token-states",
            "tokens": {"layer": TOKEN_LAYER, "skip_special": True, "normalize": True, "projection": None,
                       "max_length": max_length}}


def _encoder(recipe: dict[str, Any]) -> Any:
    from repspace.engines.encoders import get_encoder

    max_length = (recipe.get("tokens") or {}).get("max_length")
    return get_encoder(token_encoder_spec(recipe.get("encoder")),
                       **({"max_length": int(max_length)} if max_length else {}))


def encode_token_sets(texts: Sequence[str], recipe: dict[str, Any], *, batch_size: int = 32,
                      progress: Progress | None = None) -> list[np.ndarray]:
    """Each text's token vectors by ``recipe`` (:func:`token_recipe`): one ``(n_tokens, dim)`` float32 array each.

    Examples
    --------
    >>> sets = encode_token_sets(["A cat sat."], token_recipe("minilm"))
    >>> sets[0].shape, round(float(np.linalg.norm(sets[0][0])), 4)
    ((4, 384), 1.0)
    """
    from repspace.engines.encoders.tokens import encode_tokens

    tokens = recipe.get("tokens") or {}
    return encode_tokens(_encoder(recipe), list(texts), layer=int(tokens.get("layer", TOKEN_LAYER)),
                         batch_size=batch_size, normalize=bool(tokens.get("normalize", True)),
                         skip_special=bool(tokens.get("skip_special", True)), progress=progress)


def text_query_tokens(space: Space, text: str) -> np.ndarray:
    """A text as a query of a multi-vector space, by the space's recorded recipe: its ``(n_tokens, dim)`` tokens.

    Raises :class:`InputError` when the space has no recipe (its token vectors were ingested
    precomputed) or when the text has no token.

    Examples
    --------
    >>> import tempfile, os
    >>> from repspace.store import Store
    >>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space(
    ...     "tok", dim=384, metric="ip", layout="multivector", provenance=token_recipe("minilm"))
    >>> text_query_tokens(sp, "which cat?").shape  # which, cat, ?
    (3, 384)
    """
    recipe = space.provenance
    if recipe.get("kind") != "token-states":
        raise InputError(f"space {space.name!r} holds token vectors ingested precomputed, with no encoder to put a "
                         "text into them: search it with a stored id (--id) or a token matrix (library)")
    (tokens,) = encode_token_sets([text], recipe)
    if not len(tokens):
        raise InputError(f"the query text {excerpt(text)} has no token to match")
    if tokens.shape[1] != space.dim:
        raise InputError(f"the recorded encoder gives {tokens.shape[1]}-d tokens; space {space.name!r} holds "
                         f"{space.dim}-d tokens")
    return tokens
