"""Ideal words of an attribute × object grid whose cells are items of a stored space or texts through an encoder.

The cells are named by a template over the attributes and objects (``"{attribute} {object}"``: ``red car``),
looked up as ids of a stored space (:func:`ideal_words_space`) or encoded as texts (:func:`ideal_words_encoder`);
a word space with no phrase ids can give the grid as rows of ids instead (``walk, walked, walking`` per verb:
:func:`ideal_words_grid`). :func:`repspace.engines.analyze.ideal_words` scores it.

Examples
--------
>>> from repspace.store import example_space
>>> ids = [["i0", "i1", "i2"], ["i3", "i4", "i5"]]
>>> ideal_words_grid(example_space(6, 4), ids).result.to_dict()["n_cells"]
6
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.checks import check_strings
from repspace.core.errors import InputError
from repspace.engines.analyze import IdealWords, ideal_words
from repspace.workflows.analyze._vocab import id_rows, rows_of

if TYPE_CHECKING:
    from repspace.core.store import Space

__all__ = ["DEFAULT_TEMPLATE", "SpaceIdealWords", "grid_texts", "ideal_words_encoder", "ideal_words_grid",
           "ideal_words_space"]

#: How a cell's id or text is made from its attribute and object.
DEFAULT_TEMPLATE = "{attribute} {object}"


@dataclass(frozen=True)
class SpaceIdealWords:
    """Ideal words of a grid read from ``source`` (a space's name or an encoder spec).

    Examples
    --------
    >>> from repspace.store import example_space
    >>> r = ideal_words_grid(example_space(4, 3), [["i0", "i1"], ["i2", "i3"]])
    >>> sorted(r.to_dict())[:3]
    ['attribute_norms', 'cells', 'dim']
    """

    source: str
    template: str | None
    result: IdealWords

    def to_dict(self) -> dict[str, Any]:
        """``{"source", "template", ...}`` and the keys of :meth:`IdealWords.to_dict`."""
        return {"source": self.source, "template": self.template, **self.result.to_dict()}


def grid_texts(attributes: Sequence[str], objects: Sequence[str], template: str = DEFAULT_TEMPLATE
               ) -> list[list[str]]:
    """The grid's cell texts, ``template`` formatted per (attribute, object), one row per attribute.

    Examples
    --------
    >>> grid_texts(["red", "blue"], ["car"], "a {attribute} {object}")
    [['a red car'], ['a blue car']]
    """
    attributes = check_strings(attributes, "attributes", "attribute")
    objects = check_strings(objects, "objects", "object")
    if not isinstance(template, str) or "{attribute}" not in template or "{object}" not in template:
        raise InputError(f"the template must contain {{attribute}} and {{object}}, not {template!r}")
    try:
        return [[template.format(attribute=a, object=o) for o in objects] for a in attributes]
    except (KeyError, IndexError, ValueError) as e:
        raise InputError(f"the template {template!r} has a field other than {{attribute}} and {{object}}: {e}"
                         ) from None


def _lookup(space: Space, cells: list[list[str]]) -> np.ndarray:
    widths = {len(r) for r in cells}
    if len(widths) != 1:
        raise InputError(f"every row of the grid needs the same number of cells, got {sorted(widths)}")
    index, vectors = id_rows(space)
    rows = rows_of(index, [c for r in cells for c in r], space.name, "grid cells")
    return np.asarray(vectors[rows], dtype=np.float64).reshape(len(cells), len(cells[0]), -1)


def ideal_words_space(space: Space, attributes: Sequence[str], objects: Sequence[str], *,
                      template: str = DEFAULT_TEMPLATE, normalize: bool = True) -> SpaceIdealWords:
    """Ideal words of the grid whose cell ``(i, j)`` is the item ``template.format(attribute=a_i, object=o_j)``.

    Examples
    --------
    >>> import numpy as np
    >>> from repspace.store import example_store
    >>> sp = example_store().create_space("g", dim=5)
    >>> _ = sp.add([f"{a} {o}" for a in ("red", "blue") for o in ("car", "cup")],
    ...            np.random.default_rng(0).standard_normal((4, 5)))
    >>> ideal_words_space(sp, ["red", "blue"], ["car", "cup"]).result.objects
    ('car', 'cup')
    """
    cells = grid_texts(attributes, objects, template)
    U = _lookup(space, cells)
    return SpaceIdealWords(space.name, template, ideal_words(U, attributes, objects, normalize=normalize))


def ideal_words_grid(space: Space, rows: Sequence[Sequence[str]], *, attributes: Sequence[str] | None = None,
                     objects: Sequence[str] | None = None, normalize: bool = True) -> SpaceIdealWords:
    """Ideal words of a grid given as rows of ids (row ``i`` the cells of attribute ``i``); unnamed rows and
    columns are called by their first column's and first row's ids.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> r = ideal_words_grid(example_space(6, 4), [["i0", "i1", "i2"], ["i3", "i4", "i5"]])
    >>> r.result.attributes, r.result.objects
    (('i0', 'i3'), ('i0', 'i1', 'i2'))
    """
    if isinstance(rows, str):
        raise InputError("the grid must be a list of rows of ids, not one string")
    cells = [check_strings(r, "a grid row", "id") for r in rows]
    if len(cells) < 2:
        raise InputError(f"the grid needs at least 2 rows (attributes), got {len(cells)}")
    U = _lookup(space, cells)
    attributes = [r[0] for r in cells] if attributes is None else attributes
    objects = list(cells[0]) if objects is None else objects
    return SpaceIdealWords(space.name, None, ideal_words(U, attributes, objects, normalize=normalize))


def ideal_words_encoder(encoder: str, attributes: Sequence[str], objects: Sequence[str], *,
                        template: str = DEFAULT_TEMPLATE, normalize: bool = True,
                        options: dict[str, Any] | None = None, batch_size: int = 64) -> SpaceIdealWords:
    """Ideal words of the grid of texts ``template.format(attribute=a_i, object=o_j)`` through an encoder.

    Examples
    --------
    >>> r = ideal_words_encoder("static", ["red", "blue"], ["car", "cup", "hat"])
    >>> r.source, r.result.dim
    ('static', 64)
    """
    from repspace.engines.encoders import get_encoder

    cells = grid_texts(attributes, objects, template)
    enc = get_encoder(encoder, **(options or {}))
    flat = [c for r in cells for c in r]
    U = np.asarray(enc.encode(flat, batch_size=batch_size), dtype=np.float64).reshape(len(cells), len(cells[0]), -1)
    return SpaceIdealWords(encoder, template, ideal_words(U, attributes, objects, normalize=normalize))
