"""``GET /api/v1/spaces/{space}`` through a real ``repspace serve``: the same description as ``repspace info
--json`` (one result type, :class:`~repspace.workflows.describe.SpaceDescription`), a sparse space's statistics
included, and its expected FLOPs equal to Σ_j p_j² written out on the dense matrix."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest
import scipy.sparse as sps
from _http_server import Server, make_store

from repspace import Store
from repspace.core.sparse import SparseRows
from repspace.interfaces.cli import main

pytestmark = pytest.mark.slow  # spawns the server

ROWS, FEATURES = 120, 30


def _rows() -> sps.csr_array:
    m = sps.random_array((ROWS, FEATURES), density=0.2, format="csr", dtype=np.float32,
                         rng=np.random.default_rng(3))
    m.data = (m.data + 0.1).astype(np.float32)
    m = sps.csr_array(sps.diags_array((np.arange(ROWS) % 10 != 0).astype(np.float32)) @ m)  # every 10th empty
    m.eliminate_zeros()
    m.sort_indices()
    return m


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[Server, Path]]:
    path = make_store(tmp_path_factory.mktemp("info") / "s.db")
    store = Store(path)
    store.create_space("bow", dim=FEATURES, metric="ip", layout="sparse",
                       features=[f"t{j}" for j in range(FEATURES)]).add([f"r{i}" for i in range(ROWS)],
                                                                        SparseRows.from_scipy(_rows()))
    store.close()
    with Server(path) as server:
        yield server, path


def _cli_info(path: Path, space: str, capsys) -> dict:
    assert main(["-q", "--store", str(path), "info", space, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_sparse_space_shows_the_statistics_info_shows(served, capsys):
    server, path = served
    got = httpx.get(server.url + "/api/v1/spaces/bow").json()
    cli = _cli_info(path, "bow", capsys)
    assert got["layout"] == cli["layout"] == "sparse"
    assert got["sparse"] == cli["sparse"]
    assert {k: got[k] for k in ("name", "count", "dim", "metric", "generation")} == \
        {k: cli[k] for k in ("name", "count", "dim", "metric", "generation")}
    dense = _rows().toarray()
    p = (dense != 0).mean(axis=0)
    assert got["sparse"]["expected_flops"] == pytest.approx(float((p**2).sum()), rel=1e-12)
    assert (got["sparse"]["rows"], got["sparse"]["nnz"], got["sparse"]["empty_rows"]) == \
        (ROWS, int((dense != 0).sum()), ROWS // 10)
    assert got["sparse"]["feature_names"] is True and got["sparse"]["negative_weights"] is False


def test_a_dense_space_has_no_sparse_statistics(served, capsys):
    server, path = served
    got = httpx.get(server.url + "/api/v1/spaces/docs").json()
    assert got["layout"] == "dense" and got["sparse"] is None and "sparse" not in _cli_info(path, "docs", capsys)
    schema = httpx.get(server.url + "/api/v1/openapi.json").json()
    described = schema["paths"]["/api/v1/spaces/{space}"]["get"]["responses"]["200"]["content"]
    assert described["application/json"]["schema"]["$ref"].endswith("/SpaceDescription")
