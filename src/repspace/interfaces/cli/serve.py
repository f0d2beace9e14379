"""``repspace serve``: the HTTP service over the store."""

from __future__ import annotations

import json as jsonlib
import os
import sys
from typing import Annotated, Optional

import typer

from repspace.core.errors import InputError
from repspace.interfaces.cli._app import app
from repspace.interfaces.cli._common import note, settings


@app.command("serve")
def serve_cmd(
    host: Annotated[str, typer.Option(help="Address to bind (loopback by default; any other needs a token).")
                    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port (0: any free port).")] = 8765,
    token: Annotated[Optional[str], typer.Option(help="Require 'Authorization: Bearer TOKEN' on every request "
                                                      "(default: $REPSPACE_TOKEN; not empty, no whitespace at "
                                                      "either end).")] = None,
    writable: Annotated[bool, typer.Option("--writable", help="Accept writes (POST .../items; needs a token).")
                        ] = False,
    cors: Annotated[Optional[list[str]], typer.Option(help="A browser origin allowed to call the API "
                                                           "(repeatable; none by default).")] = None,
    query_timeout: Annotated[float, typer.Option(min=0.001, help="Seconds a search may take before it is answered "
                                                                 "408 (its work is not interrupted).")] = 30.0,
    reranker: Annotated[Optional[list[str]], typer.Option(
        "--reranker", help="NAME=PATH: load the reranker model at PATH ('repspace rerank train') under NAME, which a "
                           "search body names as \"rerank\": \"NAME\" (printable ASCII, no space or '='; "
                           "repeatable).")] = None,
    json: Annotated[bool, typer.Option("--json", help="Print {url, explorer, store, writable, token} as one JSON line "
                                                      "on stdout once listening (then serve).")] = False,
) -> None:
    """Serve the store over HTTP: a JSON API under /api/v1 (schema at /api/v1/openapi.json).

    The store is opened read-only unless --writable. Requests naming another Host than
    the bound one are refused (DNS rebinding); with a token every request needs it.

    Examples:

      repspace serve                                   # http://127.0.0.1:8765/api/v1/spaces

      REPSPACE_TOKEN=s3cret repspace serve --writable  # writes need the token

      curl -s localhost:8765/api/v1/spaces/docs/search -d '{"text": "parse dates", "k": 5}' \\
           -H 'content-type: application/json'

      repspace serve --reranker cran=cran-ranker.json  # then {"text": "...", "rerank": "cran"}
    """
    from repspace.core.store import default_store_path
    from repspace.interfaces.server import serve

    if token is None:  # a token given but empty (--token '' or REPSPACE_TOKEN=) is refused by serve, never ignored
        token = os.environ.get("REPSPACE_TOKEN")
    store = settings.store or default_store_path()

    def ready(url: str) -> None:
        if json:  # one line, so that a script (or a test) reads it before the server's first request
            sys.stdout.write(jsonlib.dumps({"url": url + "/api/v1", "explorer": url + "/", "store": str(store),
                                            "writable": writable, "token": bool(token)}) + "\n")
            sys.stdout.flush()
        else:
            note(f"serving {store} on {url}/api/v1 ({'writable' if writable else 'read-only'}"
                 f"{', token required' if token else ''}); Ctrl-C stops")
            note(f"explorer: {url}/{'?token=<your token>' if token else ''}")

    named: dict[str, str] = {}
    for spec in reranker or []:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path or name in named:
            raise InputError(f"--reranker {spec!r}: give NAME=PATH, each NAME once (e.g. cran=cran-ranker.json)")
        named[name] = path
    serve(store, host=host, port=port, token=token, writable=writable, cors=cors, query_timeout=query_timeout,
          on_ready=ready, rerankers=named)
