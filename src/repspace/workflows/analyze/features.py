"""Known features of a stored space's items: the variance each explains (metadata fields), and human feature norms
predicted from word vectors (a CSV of norms per word).

Examples
--------
>>> from repspace.store import example_space
>>> sp = example_space(20, 3, metadata=[{"g": "ab"[j % 2], "x": j} for j in range(20)])
>>> sorted(f.feature for f in feature_audit_space(sp, ["g", "x"]).audit.features)
['g', 'x']
"""

from __future__ import annotations

import csv
import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.checks import check_strings
from repspace.core.errors import InputError
from repspace.core.filters.columns import FALSE, INTEGER, REAL, TEXT, TRUE
from repspace.engines.analyze import FeatureAudit, FeatureNormPrediction, feature_audit, feature_norm_prediction
from repspace.engines.analyze.feature_norms import DEFAULT_COMPONENTS, DEFAULT_FOLDS
from repspace.workflows.analyze._vocab import SHOWN, id_rows

if TYPE_CHECKING:
    from repspace.core.store import Space

__all__ = ["SpaceFeatureAudit", "SpaceFeatureNorms", "feature_audit_space", "feature_norms_space", "read_norms"]


@dataclass(frozen=True)
class SpaceFeatureAudit:
    """The representation strength of metadata fields of a stored space.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> sp = example_space(10, 3, metadata=[{"g": "ab"[j % 2]} for j in range(10)])
    >>> feature_audit_space(sp, ["g"]).to_dict()["space"]
    't'
    """

    space: str
    audit: FeatureAudit

    def to_dict(self) -> dict[str, Any]:
        """``{"space", ...}`` and the keys of :meth:`FeatureAudit.to_dict`."""
        return {"space": self.space, **self.audit.to_dict()}


def _values(space: Space, fields: list[str]) -> tuple[np.ndarray, dict[str, list[Any]]]:
    generation, rows, cols = space.columns(fields)
    snap = space.snapshot()
    if snap.generation != generation or not np.array_equal(snap.rows, rows):
        raise InputError(f"space {space.name!r} changed while it was read; run again")
    out: dict[str, list[Any]] = {}
    for f in fields:
        col = cols[f]
        kinds, numbers, text = col.kind, col.number, col.text
        vals: list[Any] = []
        for i in range(len(kinds)):
            kind = kinds[i]
            vals.append(text[i] if kind == TEXT else "true" if kind == TRUE else "false" if kind == FALSE
                        else int(numbers[i]) if kind == INTEGER else float(numbers[i]) if kind == REAL else None)
        if all(v is None for v in vals):
            raise InputError(f"no item of space {space.name!r} has a scalar field {f!r}")
        out[f] = vals
    return snap.vectors, out


def feature_audit_space(space: Space, fields: Sequence[str], *, categorical: Collection[str] = ()
                        ) -> SpaceFeatureAudit:
    """:func:`repspace.engines.analyze.feature_audit` of metadata fields: numbers are numeric features, text and
    booleans categorical (``categorical`` names number fields read as classes); an item without the field, or
    with a list or object in it, is left out of that field's fit.

    Examples
    --------
    >>> from repspace.store import example_space, example_vectors
    >>> X = example_vectors(40, 3)
    >>> sp = example_space(40, 3, metadata=[{"x": float(v)} for v in X[:, 0]])
    >>> round(feature_audit_space(sp, ["x"]).audit.features[0].r2, 3) > 0
    True
    """
    fields = check_strings(fields, "fields", "field")
    if not fields:
        raise InputError("name at least one metadata field (--feature F)")
    if len(set(fields)) != len(fields):
        raise InputError("a feature is named twice")
    vectors, values = _values(space, fields)
    return SpaceFeatureAudit(space.name, feature_audit(vectors, values, categorical=categorical))


def read_norms(path: str | Path, *, word_column: str | None = None) -> tuple[list[str], list[str], np.ndarray]:
    """``(words, norm names, values)`` of a CSV of norms: a header row, one word per row; the word column is
    ``word_column`` (default the first), every other column a numeric norm.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "n.csv")
    >>> _ = open(p, "w").write("word,is_round,has_wings\\nball,0.9,0\\nbird,0.1,1\\n")
    >>> words, names, Y = read_norms(p)
    >>> words, names, Y.tolist()
    (['ball', 'bird'], ['is_round', 'has_wings'], [[0.9, 0.0], [0.1, 1.0]])
    """
    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            table = [r for r in csv.reader(fh) if r]
    except OSError as e:
        raise InputError(f"cannot read the norms file {path}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise InputError(f"the norms file {path} is not UTF-8 text") from None
    if len(table) < 2:
        raise InputError(f"the norms file {path} needs a header row and at least one word")
    header = [h.strip() for h in table[0]]
    col = 0 if word_column is None else (header.index(word_column) if word_column in header else -1)
    if col < 0:
        raise InputError(f"the norms file has no column {word_column!r} (columns: {', '.join(header[:8])})")
    names = [h for i, h in enumerate(header) if i != col]
    if not names:
        raise InputError(f"the norms file {path} has no norm column beside the words")
    words, rows = [], []
    for line, r in enumerate(table[1:], start=2):
        if len(r) != len(header):
            raise InputError(f"{path}:{line} has {len(r)} columns, the header {len(header)}")
        vals = []
        for i, cell in enumerate(r):
            if i == col:
                continue
            try:
                v = float(cell)
            except ValueError:
                raise InputError(f"{path}:{line}: norm {header[i]!r} is {cell!r}, not a number") from None
            if not math.isfinite(v):
                raise InputError(f"{path}:{line}: norm {header[i]!r} is {cell!r}, not a finite number")
            vals.append(v)
        words.append(r[col].strip())
        rows.append(vals)
    if len(set(words)) != len(words):
        dup = next(w for i, w in enumerate(words) if w in words[:i])
        raise InputError(f"the norms file {path} lists {dup!r} twice")
    return words, names, np.asarray(rows, dtype=np.float64)


@dataclass(frozen=True)
class SpaceFeatureNorms:
    """Feature norms predicted from a stored space's word vectors.

    Examples
    --------
    >>> from repspace.engines.analyze import NormScore
    >>> r = FeatureNormPrediction(10, 3, 2, 2, (NormScore("a", 0.1, 0.2),), 0.1, 0.2, 0)
    >>> SpaceFeatureNorms("w", "n.csv", 12, 2, r).to_dict()["missing"]
    2
    """

    space: str
    norms_file: str
    words: int
    missing: int
    prediction: FeatureNormPrediction

    def to_dict(self) -> dict[str, Any]:
        """``{"space", "norms_file", "words", "missing", ...}`` and the keys of
        :meth:`FeatureNormPrediction.to_dict`."""
        return {"space": self.space, "norms_file": self.norms_file, "words": self.words, "missing": self.missing,
                **self.prediction.to_dict()}


def feature_norms_space(space: Space, norms: str | Path, *, word_column: str | None = None,
                        components: int = DEFAULT_COMPONENTS, folds: int = DEFAULT_FOLDS, seed: int = 0
                        ) -> SpaceFeatureNorms:
    """:func:`repspace.engines.analyze.feature_norm_prediction` of the norms in a CSV (:func:`read_norms`) from
    the vectors of its words that are ids of the space (the others are counted as ``missing``).

    Examples
    --------
    >>> import tempfile, os
    >>> from repspace.store import example_space, example_vectors
    >>> X = example_vectors(30, 4)
    >>> p = os.path.join(tempfile.mkdtemp(), "n.csv")
    >>> _ = open(p, "w").write("word,a\\n" + "".join(f"i{j},{2 * X[j, 0]:.6f}\\n" for j in range(30)))
    >>> r = feature_norms_space(example_space(30, 4), p, components=2, folds=3)
    >>> r.words, r.prediction.mean_ridge_r2 > 0.99
    (30, True)
    """
    words, names, Y = read_norms(norms, word_column=word_column)
    index, vectors = id_rows(space)
    keep = [i for i, w in enumerate(words) if w in index]
    missing = [w for w in words if w not in index]
    if len(keep) < max(4, folds):
        shown = ", ".join(repr(w) for w in missing[:SHOWN])
        raise InputError(f"{len(keep)} of the {len(words)} words of the norms file are in space {space.name!r}; "
                         f"the test needs {max(4, folds)} (not found: {shown})")
    X = np.asarray(vectors[[index[words[i]] for i in keep]], dtype=np.float64)
    pred = feature_norm_prediction(X, Y[keep], names, components=components, folds=folds, seed=seed)
    return SpaceFeatureNorms(space.name, Path(norms).name, len(words), len(missing), pred)
