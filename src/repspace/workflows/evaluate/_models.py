"""Several models in one evaluation: resolve them, and refuse, before any loads, what does not combine.

:func:`repspace.workflows.evaluate.run` evaluates every model given (encoders
and stored spaces) on the same data and compares them pair by pair
(:func:`repspace.engines.eval.comparisons.compare_results`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from repspace.core.errors import InputError
from repspace.core.store import Store
from repspace.workflows.evaluate._subjects import Subject, encoder_subjects, space_subject


def model_specs(encoder: str | Sequence[str] | None, space: str | Sequence[str] | None) -> tuple[list[str], list[str]]:
    """The encoder specs and space names asked for, as lists (a single string is one model).

    Examples
    --------
    >>> model_specs("static", None), model_specs(["static", "minilm"], "glove")
    ((['static'], []), (['static', 'minilm'], ['glove']))
    """
    def listed(value: str | Sequence[str] | None) -> list[str]:
        if value is None:
            return []
        return [value] if isinstance(value, str) else [str(v) for v in value]

    return listed(encoder), listed(space)


def check_models(task: str, encoders: Sequence[str], spaces: Sequence[str], *, layer: Any = None,
                 sweep: bool = False) -> None:
    """Refuse, in one line and before any model loads, several models where they do not combine.

    Several models are compared on one setting each: not with a dimension or
    precision sweep, not with several layers of one encoder, and not on
    clustering (which has no per-unit scores to test them on); a model named
    twice is refused too.

    Examples
    --------
    >>> check_models("sts", ["static", "minilm"], [])
    >>> check_models("sts", ["static"], ["glove"], sweep=True)
    Traceback (most recent call last):
    repspace.core.errors.InputError: comparing several models (static, space glove) scores each as it is: \
drop --dims/--precision, or sweep one model at a time
    """
    models = [*encoders, *(f"space {s}" for s in spaces)]
    if len(models) < 2:
        return
    repeated = sorted({m for m in models if models.count(m) > 1})
    if repeated:
        raise InputError(f"{', '.join(repeated)} is given twice: name each model once")
    what = f"comparing several models ({', '.join(models)})"
    if sweep:
        raise InputError(f"{what} scores each as it is: drop --dims/--precision, or sweep one model at a time")
    if layer == "all" or (isinstance(layer, Sequence) and not isinstance(layer, str)):
        raise InputError(f"{what} takes one layer of each: --layer N, or all layers of one model at a time")
    if task == "clustering":
        raise InputError(f"{what} needs per-unit scores, and clustering has none: evaluate one model at a time")


def model_subjects(store: Store | None, encoders: Sequence[str], spaces: Sequence[str], *, layer: Any = None,
                   encoder_options: dict[str, Any] | None = None, batch_size: int = 64,
                   progress: Any = None) -> list[Subject]:
    """The subjects of the models: each encoder (``minilm`` when no model is named), then each stored space.

    ``layer`` and ``encoder_options`` apply to the encoders; with spaces alone they are refused.

    Examples
    --------
    >>> [s.label for s in model_subjects(None, ["static", "hf-layers:minilm"], [], layer=None)]
    ['static', 'hf-layers:minilm']
    """
    if spaces and not encoders and (layer is not None or encoder_options):
        raise InputError("--layer and encoder options apply to --encoder, not to a stored space")
    if spaces and store is None:
        raise InputError("a store is needed for --space and --save")
    subjects = [s for spec in (encoders or ([] if spaces else ["minilm"]))
                for s in encoder_subjects(spec, layer=layer, options=encoder_options, batch_size=batch_size,
                                          progress=progress)]
    return subjects + [space_subject(store, name, batch_size=batch_size, progress=progress) for name in spaces]
