"""Metadata nesting is bounded when items are added: one line naming the item and the limit, nothing written."""

from __future__ import annotations

import json

import numpy as np
import pytest

from repspace import InputError
from repspace.core.store.validate import MAX_METADATA_DEPTH, check_metas, metadata_depth


def _nested(levels: int, kind: str = "mixed") -> dict:
    """Metadata ``levels`` deep, counting the object itself: objects, lists or both in turn below it."""
    value: object = "leaf"
    for i in range(levels - 1):
        as_list = kind == "list" or (kind == "mixed" and i % 2 == 1)
        value = [value] if as_list else {"k": value}
    return {"top": value}


def _json_depth(text: str) -> int:
    """Nesting of a JSON text, counted on its brackets (an independent count: keys and leaves hold none)."""
    depth = deepest = 0
    for ch in text:
        depth += ch in "[{"
        depth -= ch in "]}"
        deepest = max(deepest, depth)
    return deepest


@pytest.mark.parametrize("kind", ["dict", "list", "mixed"])
@pytest.mark.parametrize("levels", [1, 2, 31, 32, 33, 99, 500])
def test_depth_is_counted_like_the_json_text(kind, levels):
    meta = _nested(levels, kind)
    assert _json_depth(json.dumps(meta)) == levels
    assert metadata_depth(meta) == min(levels, MAX_METADATA_DEPTH + 1)
    assert metadata_depth(meta, stop=1000) == levels


def test_depth_of_scalars_empty_containers_and_arrays():
    assert metadata_depth(3) == metadata_depth("x") == metadata_depth(None) == 0
    assert metadata_depth({}) == metadata_depth([]) == 1
    assert metadata_depth({"a": np.zeros((2, 3))}) == 3  # written as lists of lists
    assert metadata_depth({"a": np.float32(1)}) == 1


def test_limit_is_well_below_what_breaks_parquet_readers():
    assert MAX_METADATA_DEPTH == 32  # pyarrow opens at most 100 schema levels, and a list takes two


@pytest.mark.parametrize("kind", ["dict", "list", "mixed"])
def test_metadata_up_to_the_limit_is_accepted(kind):
    meta = _nested(MAX_METADATA_DEPTH, kind)
    assert json.loads(check_metas([meta], ["a"])[0]) == meta


@pytest.mark.parametrize("levels", [MAX_METADATA_DEPTH + 1, 99, 500, 5000, 100_000])
def test_deeper_metadata_is_one_error_naming_the_item_and_the_limit(levels):
    metas = [{"ok": 1}, _nested(levels)]
    with pytest.raises(InputError) as e:
        check_metas(metas, ["fine", "too deep"])
    message = str(e.value)
    assert "\n" not in message and "'too deep'" in message and str(MAX_METADATA_DEPTH) in message
    assert "nested too deeply" in message


def test_a_wide_but_shallow_object_is_accepted():
    meta = {"rows": [{"a": [i], "b": {"c": i}} for i in range(500)]}  # many brackets, three levels
    assert json.loads(check_metas([meta], ["a"])[0]) == meta


@pytest.fixture
def space(store):
    sp = store.create_space("s", dim=2)
    sp.add(["a", "b"], [[1.0, 0.0], [0.0, 1.0]], metadata=[{"n": 1}, {"n": 2}])
    return sp


def _state(space):
    items, vectors = space.dump()
    return [(it.id, it.metadata) for it in items], vectors.tobytes(), space.info().generation


@pytest.mark.parametrize("levels", [MAX_METADATA_DEPTH + 1, 99, 500])
def test_a_batch_with_one_deep_item_writes_nothing(space, levels):
    before = _state(space)
    with pytest.raises(InputError, match="'c'"):
        space.add(["a", "c", "d"], [[2.0, 0.0], [1.0, 1.0], [0.5, 0.5]],
                  metadata=[{"n": 9}, _nested(levels), {"n": 4}])
    with pytest.raises(InputError, match="'b'"):
        space.update_metadata(["a", "b"], [{"n": 7}, _nested(levels)])
    with pytest.raises(InputError, match="'b'"):
        space.update_metadata(["a", "b"], [{"n": 7}, _nested(levels)], merge=False)
    assert _state(space) == before


def test_merging_shallow_patches_cannot_nest_past_the_limit(space):
    """A merge patch keeps the deeper of the two trees at each key, so both under the limit stay under it."""
    half = _nested(MAX_METADATA_DEPTH, "dict")
    space.update_metadata(["a"], [half])
    space.update_metadata(["a"], [{"top": {"k": {"other": [1]}}}])
    assert metadata_depth(space.get(["a"])[0].metadata, stop=1000) == MAX_METADATA_DEPTH
