"""The one scalar validator: what it accepts, what it refuses, and the one line it writes."""

import math

import numpy as np
import pytest

from repspace.core.checks import check_choice, check_scalar, positive_int
from repspace.core.errors import InputError


@pytest.mark.parametrize("value", [1, 7, np.int64(3), np.int32(4096)])
def test_integers_in_bounds_come_back_as_python_ints(value):
    out = check_scalar(value, "ef", int, low=1, high=4096)
    assert out == int(value) and type(out) is int


@pytest.mark.parametrize("value", [0, 4097, 2.0, "3", True, np.bool_(True), None, float("nan")])
def test_integers_out_of_bounds_or_of_another_type_are_one_input_error(value):
    with pytest.raises(InputError, match=r"^ef must be an integer in \[1, 4096\], not "):
        check_scalar(value, "ef", int, low=1, high=4096)


@pytest.mark.parametrize("value", [0, 1, 0.25, np.float32(0.5), np.int8(1)])
def test_numbers_accept_ints_and_numpy_floats_and_return_floats(value):
    out = check_scalar(value, "alpha", float, low=0, high=1)
    assert type(out) is float and out == pytest.approx(float(value))


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, False])
def test_numbers_refuse_infinities_nan_and_booleans(value):
    with pytest.raises(InputError, match="alpha must be a number"):
        check_scalar(value, "alpha", float)


@pytest.mark.parametrize("kwargs, what", [
    ({"low": 0}, "a non-negative integer"),
    ({"low": 0, "include": "neither"}, "a positive integer"),
    ({"low": 1}, "a positive integer"),
    ({"low": 2}, "an integer >= 2"),
    ({"high": 9, "include": "neither"}, "an integer < 9"),
    ({"low": 0, "high": 2**32, "include": "left"}, "an integer in [0, 4294967296)"),
    ({}, "an integer"),
])
def test_the_message_is_written_from_the_bounds(kwargs, what):
    with pytest.raises(InputError) as err:
        check_scalar("x", "n", int, **kwargs)
    assert str(err.value) == f"n must be {what}, not 'x'"


def test_open_and_closed_bounds_are_honoured_at_the_edges():
    assert check_scalar(0.0, "t", float, low=0, high=1, include="left") == 0.0
    with pytest.raises(InputError, match=r"t must be a number in \[0, 1\), not 1"):
        check_scalar(1, "t", float, low=0, high=1, include="left")
    with pytest.raises(InputError, match=r"t must be a number in \(0, 1\], not 0"):
        check_scalar(0, "t", float, low=0, high=1, include="right")


def test_none_is_passed_through_only_when_allowed():
    assert check_scalar(None, "k", int, low=1, none=True) is None
    with pytest.raises(InputError, match="k must be a positive integer, not None"):
        positive_int(None, "k")


def test_choices_name_every_option_and_refuse_unhashable_or_boolean_values():
    assert check_choice("sum", "fusion", ("rrf", "sum")) == "sum"
    for bad in ("max", ["rrf"], True, None):
        with pytest.raises(InputError, match="^fusion must be one of rrf, sum, not "):
            check_choice(bad, "fusion", ("rrf", "sum"))
