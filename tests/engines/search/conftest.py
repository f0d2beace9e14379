"""The search fixtures (tests/_search_reference.py)."""

from _search_reference import brute, rng, store  # noqa: F401 - fixtures are found by name
