"""The search fixtures (tests/_search_reference.py); ``store`` is tests/conftest.py's."""

from _search_reference import brute, rng  # noqa: F401 - fixtures are found by name
