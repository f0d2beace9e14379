"""A property-based run of the service's OpenAPI schema (schemathesis) against a real uvicorn: no 5xx.

Every operation is called with requests generated from its schema, valid and invalid,
a bounded number of times; the store is read-only, so nothing generated can change it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

schemathesis = pytest.importorskip("schemathesis")

from _http_server import Server, _make_store  # noqa: E402  (the same server the API tests start)


@pytest.fixture(scope="module")
def api_schema(tmp_path_factory) -> Iterator[object]:
    path: Path = tmp_path_factory.mktemp("schema") / "s.db"
    _make_store(path)
    server = Server(path)
    try:
        yield schemathesis.openapi.from_url(server.url + "/api/v1/openapi.json")
    finally:
        server.stop()


def _on_the_space(drawn: tuple) -> object:
    """Half the cases name the served space (and one of its items), so that bodies reach the engine."""
    case, real = drawn
    if real and case.path_parameters:
        for name in ("space", "a", "b"):
            if name in case.path_parameters:
                case.path_parameters[name] = "docs"
        if "item_id" in case.path_parameters:
            case.path_parameters["item_id"] = "d7"
    return case


def test_no_request_the_schema_allows_or_forbids_gets_a_server_error(api_schema):
    """Each operation, 80 generated requests (schemathesis's strategies driven by hypothesis directly: its
    pytest plugin does not load under this pytest)."""
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) == 13
    statuses: dict[int, int] = {}
    for operation in operations:
        @given(case=st.tuples(operation.as_strategy(), st.booleans()).map(_on_the_space))
        @settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        def call(case):
            response = case.call(timeout=60)
            statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
            assert response.status_code < 500, (case.method, case.path, case.body, response.status_code,
                                                 response.text)
            if response.status_code >= 400:
                body = response.json()
                assert set(body) == {"error"} and "\n" not in body["error"], body
            if case.method == "POST" and case.path.endswith("/items"):
                assert response.status_code == 403  # a read-only service: no generated write gets through

        call()
    assert sum(statuses.values()) >= 100 and any(s < 300 for s in statuses) and any(s >= 400 for s in statuses), \
        statuses
