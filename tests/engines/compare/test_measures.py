"""The MEASURES registry: every declaration (direction, symmetry, invariances) checked, and every measure on
degenerate input (a defined value or an InputError, never NaN)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.compare import INVARIANCES, MEASURES, Measure

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)

K = 5


def run(key: str, X: np.ndarray, Y: np.ndarray, k: int = K) -> float:
    m = MEASURES[key]
    result = m.function(X, Y, k=k) if m.uses_k else m.function(X, Y)
    return m.score(result)


@pytest.fixture(scope="module")
def pair() -> tuple[np.ndarray, np.ndarray]:
    """Two related, non-trivial spaces (150 items, 6 and 5 dimensions)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((150, 6)) * np.array([3.0, 2.0, 1.5, 1.0, 0.8, 0.6]) + 0.5
    Y = np.tanh(X @ rng.standard_normal((6, 5))) + 0.4 * rng.standard_normal((150, 5)) + 0.3
    return X, Y


def transformed(Y: np.ndarray, invariance: str) -> list[np.ndarray]:
    d = Y.shape[1]
    rng = np.random.default_rng(11)
    Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    if invariance == "orthogonal":
        return [Y @ Q]
    if invariance == "isotropic_scaling":
        return [2.5 * Y, -0.3 * Y]
    if invariance == "translation":
        return [Y + 4.0 * rng.standard_normal(d)]
    if invariance == "permutation":
        return [Y[:, rng.permutation(d)]]
    assert invariance == "invertible_linear"
    return [Y @ (np.diag(np.logspace(0, -2.2, d)) @ Q)]


def test_registry_keys_are_metrics_md_names() -> None:
    assert list(MEASURES) == ["cka_linear", "cka_debiased", "mutual_knn", "neighbourhood_jaccard", "rsa",
                              "procrustes", "svcca"]
    for key, m in MEASURES.items():
        assert m.key == key and set(m.invariances) <= set(INVARIANCES)
        assert m.to_dict()["invariances"] == sorted(m.invariances)
    assert [k for k, m in MEASURES.items() if not m.larger_is_more_similar] == ["procrustes"]
    with pytest.raises(ValueError, match="unknown invariances"):
        Measure("x", run, True, True, frozenset({"affine"}))


@pytest.mark.parametrize("key", list(MEASURES))
@pytest.mark.parametrize("invariance", INVARIANCES)
def test_declared_invariances_hold_and_undeclared_ones_do_not(key: str, invariance: str, pair) -> None:
    X, Y = pair
    base = run(key, X, Y)
    changes = [abs(run(key, X, Z) - base) for Z in transformed(Y, invariance)]
    if invariance in MEASURES[key].invariances:
        assert max(changes) < 1e-8, f"{key} declares {invariance} but changed by {max(changes)}"
    else:
        assert max(changes) > 1e-3, f"{key} does not declare {invariance} yet did not change"


@pytest.mark.parametrize("key", list(MEASURES))
def test_symmetry_as_declared(key: str, pair) -> None:
    X, Y = pair
    assert MEASURES[key].symmetric
    assert run(key, X, Y) == pytest.approx(run(key, Y, X), abs=1e-10)


@pytest.mark.parametrize("key", list(MEASURES))
def test_direction_as_declared(key: str, pair) -> None:
    """A space compared with itself is more similar than with a related space, per ``larger_is_more_similar``."""
    X, Y = pair
    same, other = run(key, X, X), run(key, X, Y)
    lo, hi = MEASURES[key].value_range
    assert lo <= other <= hi and lo <= same <= hi
    assert (same > other) if MEASURES[key].larger_is_more_similar else (same < other)


# Degenerate input ------------------------------------------------------------------------------------------------

def _cases() -> dict[str, tuple[np.ndarray, np.ndarray, int]]:
    rng = np.random.default_rng(3)

    def other(n: int, d: int = 4) -> np.ndarray:
        return rng.standard_normal((n, d))

    base = rng.standard_normal((20, 5))
    zero_rows = rng.standard_normal((30, 4))
    zero_rows[[2, 17]] = 0.0
    return {
        "zero_variance_columns": (np.hstack([rng.standard_normal((40, 3)), np.full((40, 3), 2.0)]), other(40), K),
        "duplicate_rows": (np.vstack([base, base]), other(40), K),
        "n_below_d": (rng.standard_normal((8, 30)), other(8, 50), 3),
        "n_at_most_k": (rng.standard_normal((3, 4)), other(3), 3),
        "constant_space": (np.full((20, 4), 1.5), other(20), K),
        "tiny_n": (rng.standard_normal((2, 3)), other(2), 1),
        "zero_rows": (zero_rows, other(30), K),
        "one_dimension": (rng.standard_normal((30, 1)), other(30, 1), K),
    }


CASES = _cases()
ERRORS = {  # (case, measure) pairs that must raise InputError; every other pair gives a defined value
    ("n_at_most_k", "mutual_knn"), ("n_at_most_k", "neighbourhood_jaccard"), ("n_at_most_k", "cka_debiased"),
    ("constant_space", "cka_linear"), ("constant_space", "cka_debiased"), ("constant_space", "rsa"),
    ("constant_space", "procrustes"), ("constant_space", "svcca"),
    ("tiny_n", "cka_debiased"), ("tiny_n", "rsa"),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("key", list(MEASURES))
def test_degenerate_input_gives_a_value_or_a_clear_error(case: str, key: str) -> None:
    X, Y, k = CASES[case]
    for A, B in ((X, Y), (Y, X)):
        if (case, key) in ERRORS:
            with pytest.raises(InputError) as info:
                run(key, A, B, k=k)
            assert "\n" not in str(info.value) and len(str(info.value)) < 200
        else:
            value = run(key, A, B, k=k)
            lo, hi = MEASURES[key].value_range
            assert math.isfinite(value) and lo <= value <= hi, f"{key} on {case}: {value}"
