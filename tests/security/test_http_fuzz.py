"""Schemathesis against ``repspace serve``, from the service's own OpenAPI schema: no check fails.

``schemathesis run --checks all`` (every check that applies: not_a_server_error, status_code_conformance,
content_type_conformance, response_headers_conformance, response_schema_conformance, positive_data_acceptance,
negative_data_rejection, missing_required_header, unsupported_method, allow_header_conformance, use_after_free,
ensure_resource_availability, ignored_auth, ...) and all its phases (examples, coverage, fuzzing, stateful),
positive and negative data, against two real servers: a read-only one without a token and a writable one with
a token. Their store holds two spaces embedded with the bundled ``static`` encoder over the same ids (some of
them hostile: ``/``, ``%``, ``..``, emoji), so that every route, the three two-space ones included, is reached
with real names and ids. What no JSON Schema can say (the served names and ids, a filter's grammar, an index
spec, a vector's length) comes from tests/_http_fuzz_hooks.py.

Bounded for ``make test``: :data:`EXAMPLES` cases per operation and :data:`MAX_TIME` seconds per server.
``make fuzz`` runs the same test with ``REPSPACE_FUZZ_EXAMPLES`` (and ``REPSPACE_FUZZ_TIME``) raised; each run
prints the number of generated cases and the time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from _http_server import Server

pytestmark = pytest.mark.slow

#: Cases per API operation and phase, and seconds per server, in ``make test`` (``make fuzz`` raises both).
EXAMPLES = int(os.environ.get("REPSPACE_FUZZ_EXAMPLES", "10"))
MAX_TIME = int(os.environ.get("REPSPACE_FUZZ_TIME", "45"))
#: Operations of the API (the schema test fails when a route is added without being fuzzed here).
OPERATIONS = 16
N = 120
IDS = [f"i{i}" for i in range(N - 8)] + ["a/b", "..", "100%", "q?x=1#f", "sp ace", "emoji \U0001f600",
                                         "line\u2028sep", "\u202ertl"]
HOOKS = Path(__file__).resolve().parents[1] / "_http_fuzz_hooks.py"
#: Seconds a request may take, for the service's --query-timeout and schemathesis's response-time check: speed
#: is not what this test asserts (a first UMAP layout compiles its numba code; a loaded machine is slow).
SLOW = 600
TOKEN = "fuzz-t0ken"


def _build(path: Path) -> int:
    """The fuzz store: spaces ``a`` and ``b`` over the same ids, embedded with ``static``, and ``w`` (a copy of
    ``a``) that the writes go to; returns the dimension."""
    from repspace import Store
    from repspace.workflows.ingest import ingest_records
    from repspace.workflows.ingest.readers import Records

    store = Store(path)
    try:
        texts = [f"document {i} about {['cats', 'dates', 'music', 'rivers'][i % 4]} and {w}"
                 for i, w in enumerate(["parsing", "flutes", "boats", "maps"] * (N // 4))]
        meta = [{"n": i, "lang": ["en", "de", "fr"][i % 3], "long": i % 5 == 0} for i in range(N)]
        ingest_records(store, "a", Records("fuzz", IDS, texts, None, meta), encoder="static")
        ingest_records(store, "b", Records("fuzz", IDS, texts[::-1], None, meta), encoder="static")
        ingest_records(store, "w", Records("fuzz", IDS, texts, None, meta), encoder="static")  # written to
        return store.space("a").info().dim
    finally:
        store.close()


def _config(folder: Path) -> Path:
    path = folder / "schemathesis.toml"
    path.write_text(f"hooks = {json.dumps(str(HOOKS))}\n\n[generation]\ndatabase = \"none\"\n", encoding="utf-8")
    return path


def _run(server: Server, folder: Path, dim: int, *headers: str) -> tuple[int, str, dict]:
    report = folder / "report.json"
    command = [str(Path(sys.executable).parent / "schemathesis"), "--config-file", str(_config(folder)), "run",
               server.url + "/api/v1/openapi.json", "--checks", "all", "--max-examples", str(EXAMPLES),
               "--max-time", str(MAX_TIME), "--workers", "1", "--no-color", "--request-timeout", str(SLOW),
               "--max-response-time", str(SLOW),
               "--report", "json", "--report-json-path", str(report), "--seed", "29"]
    for h in headers:
        command += ["-H", h]
    env = {**os.environ, "REPSPACE_FUZZ_DATA": json.dumps({"dim": dim, "spaces": ["a", "b"], "written": "w", "ids": IDS})}
    done = subprocess.run(command, capture_output=True, env=env, timeout=MAX_TIME + 240, cwd=folder)
    out = done.stdout.decode("utf-8", "replace") + done.stderr.decode("utf-8", "replace")
    return done.returncode, out, json.loads(report.read_text()) if report.exists() else {}


def _warm(server: Server, auth: dict[str, str]) -> None:
    """What a first request pays once (loading the encoder, compiling UMAP's numba code), paid before the run."""
    import httpx

    base = server.url + "/api/v1"
    for path in ("spaces/a/map?method=umap", "spaces/b/map?method=umap", "compare/a/b",
                 "compare/a/b/jaccard?method=umap", "spaces/a/column?name=@map_agreement&method=umap"):
        httpx.get(f"{base}/{path}", headers=auth, timeout=SLOW)
    httpx.post(f"{base}/spaces/a/search", json={"text": "rivers", "hybrid": True}, headers=auth, timeout=SLOW)


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> tuple[Path, int]:
    path = tmp_path_factory.mktemp("fuzz") / "s.db"
    return path, _build(path)


@pytest.fixture(params=["read-only", "writable"])
def served(request, store) -> Iterator[tuple[str, Server, tuple[str, ...]]]:
    """One server at a time (the other's leftover work would slow this one's run)."""
    path, _ = store
    if request.param == "read-only":
        server, headers = Server(path, "--query-timeout", str(SLOW)), ()
    else:
        server = Server(path, "--writable", "--query-timeout", str(SLOW), env={"REPSPACE_TOKEN": TOKEN})
        headers = (f"Authorization: Bearer {TOKEN}",)
    try:
        _warm(server, {k.lower(): v.strip() for k, _, v in (h.partition(":") for h in headers)})
        yield request.param, server, headers
    finally:
        server.stop()


def test_schemathesis_finds_nothing(served, store, tmp_path):
    which, server, headers = served
    start = time.monotonic()
    code, out, report = _run(server, tmp_path, store[1], *headers)
    took = time.monotonic() - start
    summary = out[out.rfind("SUMMARY"):] if "SUMMARY" in out else out[-3000:]
    print(f"\nschemathesis against the {which} server: {_cases(out)} generated cases in {took:.0f} s")
    (tmp_path / "schemathesis.txt").write_text(out, encoding="utf-8")  # the whole output, for a failure
    shown = "\n".join(line if len(line) < 400 else line[:400] + " ..." for line in out.splitlines())
    assert code == 0, shown[shown.find("FAILURES") if "FAILURES" in shown else -12000:][:20000]
    assert f"Tested: {OPERATIONS}" in summary and "Missing test data" not in out, summary
    assert report.get("test_cases", {}).get("generated", 0) > 0, summary


def _cases(out: str) -> str:
    for line in out.splitlines():
        if "generated" in line and "Test cases" not in line:
            return line.strip().split()[0]
    return "?"
