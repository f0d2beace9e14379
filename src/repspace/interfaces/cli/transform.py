"""``repspace transform``: a derived space, the source's vectors through a fitted chain of repairs."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from repspace.interfaces.cli._app import app
from repspace.interfaces.cli._common import note, open_store, print_json, progress_bar


@app.command("transform")
def transform_cmd(
    source: Annotated[str, typer.Argument(help="The space to repair.")],
    new: Annotated[str, typer.Argument(help="The name of the derived space (must not exist).")],
    spec: Annotated[str, typer.Option("--spec", help="Transform chain: center, normalize, whiten[K], abtt[D], "
                                                     "pca[K], tldrK, comma-separated.")],
    metric: Annotated[Optional[str], typer.Option(help="Metric of the new space (default: the source's).")] = None,
    fit_sample: Annotated[Optional[int], typer.Option(help="Fit on this many random rows instead of all.")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the fit sample.")] = 0,
    json: Annotated[bool, typer.Option("--json", help="Print the new space's description as JSON.")] = False,
) -> None:
    """Fit a chain of transforms on a space and store the result as a new space (same ids, texts, metadata).

    The fitted chain is stored with the new space, so text queries and texts
    added later go through it; the provenance records each step.

    Examples:

      repspace transform glove glove-abtt --spec center,abtt3

      repspace transform docs docs-white --spec whiten128,normalize --fit-sample 50000

      repspace diagnose glove-abtt
    """
    from repspace.workflows.transform import derive_space

    store = open_store(create=False)
    with progress_bar(json) as bar:
        space = derive_space(store, source, new, spec, metric=metric, fit_sample=fit_sample, seed=seed,
                             progress=bar)
    info = space.info()
    if json:
        print_json(info.to_dict())
    else:
        note(f"{new}: {info.count:,} items × {info.dim} ({info.metric.value}), "
             f"{source} through {info.provenance['derived_from']['spec']}")
