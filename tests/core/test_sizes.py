"""Sizes written as people write them: decimal and binary units, bad input as one clear error."""

from __future__ import annotations

import pytest

from repspace.core.errors import InputError
from repspace.core.sizes import format_size, parse_size


@pytest.mark.parametrize("text,expected", [
    ("64MB", 64 * 10**6), ("64mb", 64 * 10**6), ("64 MiB", 64 * 2**20), ("1.5GiB", 3 * 2**29),
    ("500kB", 500_000), ("2KiB", 2048), ("1TB", 10**12), ("4096", 4096), ("4096B", 4096), (".5KiB", 512),
    (17, 17),
])
def test_units(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text,fragment", [
    ("64XB", "budget '64XB' is not a size: write a number and a unit, e.g. 64MB"),
    ("MB", "is not a size"), ("", "is not a size"), ("-5MB", "is not a size"), ("1e3MB", "is not a size"),
    ("0MB", "less than one byte"), ("0.4", "less than one byte"), (0, "at least 1 byte"), (3.5, "not float"),
])
def test_bad_sizes_are_one_clear_line(text, fragment):
    with pytest.raises(InputError) as e:
        parse_size(text, "budget")
    assert fragment in str(e.value) and "\n" not in str(e.value)


def test_format():
    assert format_size(64 * 2**20) == "64.0 MiB" and format_size(512) == "0.5 KiB"
