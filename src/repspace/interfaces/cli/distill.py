"""``repspace distill``: make a model2vec static model from a local transformer model."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from repspace.interfaces.cli._app import app
from repspace.interfaces.cli._common import out, print_json, progress_bar


@app.command("distill")
def distill_cmd(
    source: Annotated[str, typer.Argument(
        metavar="SOURCE", help="'minilm', or a local sentence-transformers / transformers folder (./minilm for a folder so named).")],
    target: Annotated[Path, typer.Argument(metavar="OUT", help="Folder to write the model2vec model to.")],
    pca_dims: Annotated[Optional[int], typer.Option(
        "--pca-dims", help="Dimension of the static vectors, by PCA (default 256).")] = 256,
    no_pca: Annotated[bool, typer.Option("--no-pca", help="Keep the model's own dimension, without PCA.")] = False,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace OUT if it exists and is not empty.")] = False,
    json: Annotated[bool, typer.Option("--json", help="Print the record of the distilled model as JSON.")] = False,
) -> None:
    """Distil a fast static (model2vec) model from a local transformer model, offline.

    Every token of the model's vocabulary is embedded once; the result encodes
    thousands of texts per second on one CPU core. All-MiniLM-L6-v2 takes
    about a minute on one core.

    Examples:

      repspace distill minilm ./minilm-m2v-256

      repspace distill ./my-st-model ./my-m2v --pca-dims 128 --overwrite

      repspace ingest docs docs.jsonl --text-col body --encoder model2vec:./minilm-m2v-256
    """
    from repspace.engines.encoders.distill import distill_static, read_distill_record

    with progress_bar(json) as bar:
        folder = distill_static(source, target, pca_dims=None if no_pca else pca_dims, overwrite=overwrite,
                                progress=bar)
    record = read_distill_record(folder)
    if json:
        print_json({"folder": str(folder), "encoder": f"model2vec:{folder}", **record})
        return
    out.print(f"wrote {folder}: {record['dim']}-d, {record['vocab_size']:,} tokens, "
              f"{record['seconds']:.1f} s (from {record['source_folder']})", highlight=False)
    out.print(f"use it with: --encoder model2vec:{folder}", highlight=False)
