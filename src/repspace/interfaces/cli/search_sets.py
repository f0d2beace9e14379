"""``repspace search SPACE --all-of ID --none-of ID``: the set query (SetCSE) of ``repspace search``."""

from __future__ import annotations

from typing import Any

from repspace.core.errors import InputError
from repspace.core.hits import SearchResult
from repspace.interfaces.cli._common import open_store, progress_bar


def set_query_result(space: str, all_of: list[str], none_of: list[str], *, json: bool, others: dict[str, Any],
                     **options: Any) -> SearchResult:
    """The set query's result (:func:`repspace.workflows.search.set_search.set_search`); ``others`` are the
    options of a one-query search, refused here (one line) when one is given."""
    given = next((name for name, value in others.items() if value is not None), None)
    if given is not None:
        raise InputError(f"--all-of/--none-of make a set query: it does not combine with {given}")
    from repspace.workflows.search.set_request import SetQuery
    from repspace.workflows.search.set_search import set_search

    query = SetQuery.of(all_of, none_of, **options)  # every rule checked before the store is opened
    sp = open_store(create=False).space(space)
    with progress_bar(json) as bar:
        return set_search(sp, query, progress=bar)
