"""``repspace ingest``: files into spaces."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.table import Table

from repspace.core.printable import excerpt
from repspace.interfaces.cli._app import app
from repspace.interfaces.cli._common import comma_list, open_store, out, print_json, progress_bar


def _split(value: str | None) -> list[str] | None:
    return comma_list(value) if value else None


def _layer(value: str | None) -> Any:
    if value is None or value == "all":
        return value
    try:
        return int(value)
    except ValueError:
        from repspace.core.errors import InputError

        raise InputError(f"--layer must be an integer or 'all', not {excerpt(value)}") from None


@app.command("ingest")
def ingest_cmd(
    space: Annotated[str, typer.Argument(help="Space to create or add to.")],
    file: Annotated[Path, typer.Argument(help="JSONL, CSV, Parquet or .npy file; with --backend ray also a folder of "
                                               "them; a shard job folder (holding manifest.json) is ingested.")],
    text_col: Annotated[str, typer.Option(help="Column with the texts.")] = "text",
    id_col: Annotated[str, typer.Option(help="Column with the ids.")] = "id",
    vector_col: Annotated[Optional[str], typer.Option(help="Column with precomputed vectors.")] = None,
    meta_cols: Annotated[Optional[str], typer.Option(help="Comma-separated metadata columns (default: all other).")] = None,
    ids: Annotated[Optional[Path], typer.Option("--ids", help="For .npy: a file with one id per line.")] = None,
    auto_id: Annotated[bool, typer.Option(help="Make ids: content hashes of texts, or row numbers.")] = False,
    encoder: Annotated[Optional[str], typer.Option(help="Encoder spec (default: the space's own, else minilm).")] = None,
    layer: Annotated[Optional[str], typer.Option(help="hf-layers: layer index or 'all' (one space per layer).")] = None,
    pooling: Annotated[Optional[str], typer.Option(help="hf-layers pooling: mean, cls, last or max; landmark "
                                                        "(with --chunk): one vector per document.")] = None,
    normalize: Annotated[Optional[bool], typer.Option("--normalize/--no-normalize", help="hf-layers: L2-normalise.")] = None,
    prompt: Annotated[Optional[str], typer.Option(help="Text prepended to every input before encoding.")] = None,
    metric: Annotated[Optional[str], typer.Option(help="cosine (default), ip, l2 or poincare (vectors in the unit "
                                                       "ball) for a new space.")] = None,
    dtype: Annotated[str, typer.Option(help="Storage type: float32 or float16.")] = "float32",
    batch_size: Annotated[int, typer.Option(min=1, help="Texts per encoder batch.")] = 64,
    commit_every: Annotated[Optional[int], typer.Option(min=1, help="Commit every N items (default: all at once).")] = None,
    on_conflict: Annotated[str, typer.Option(help="upsert (replace existing ids) or error.")] = "upsert",
    backend: Annotated[str, typer.Option(help="local (default) or ray: embed on a Ray cluster in shards.")] = "local",
    ray_address: Annotated[Optional[str], typer.Option(help="Ray cluster: host:port, ray://host:port or auto "
                                                            "(default: $RAY_ADDRESS, else a local Ray).")] = None,
    shard_rows: Annotated[int, typer.Option(min=1, help="ray: records per shard (one transaction each).")] = 10_000,
    workers: Annotated[Optional[int], typer.Option(min=1, help="ray: encoder actors (default: the cluster's CPUs).")] = None,
    shard_dir: Annotated[Optional[Path], typer.Option(help="ray: folder for the shards (shared by every node; "
                                                           "default beside the store).")] = None,
    embed_only: Annotated[bool, typer.Option(help="ray: write the shards and their manifest, ingest nothing.")] = False,
    chunk: Annotated[Optional[int], typer.Option(help="Cut each text into chunks of N tokens, each chunk an item "
                                                      "<id>#<k> with metadata document, chunk, start, end.")] = None,
    late_chunking: Annotated[bool, typer.Option("--late-chunking", help="With --chunk and an hf-layers encoder: "
                                                "embed each whole document once (windows with overlap), then pool "
                                                "each chunk's token states.")] = False,
    window: Annotated[Optional[int], typer.Option(help="--late-chunking: tokens per model input (default: the "
                                                       "length the model was trained at, 256 for MiniLM).")] = None,
    overlap: Annotated[int, typer.Option(help="--late-chunking: tokens shared by neighbouring windows.")] = 64,
    chunk_by: Annotated[Optional[str], typer.Option(help="--chunk: where chunks end: tokens (every N), words or "
                                                         "sentences (the last boundary within N tokens).")] = None,
    indices_col: Annotated[Optional[str], typer.Option(help="Sparse: column with each item's feature ids (with "
                                                            "--values-col).")] = None,
    values_col: Annotated[Optional[str], typer.Option(help="Sparse: column with the weights of those "
                                                           "features.")] = None,
    weights_col: Annotated[Optional[str], typer.Option(help="Sparse: column with a {token: weight} map (the "
                                                            "vocabulary is built from the tokens).")] = None,
    vocab: Annotated[Optional[Path], typer.Option(help="Sparse: feature names, one per line (line i names "
                                                       "feature i - 1).")] = None,
    n_features: Annotated[Optional[int], typer.Option(help="Sparse: the vocabulary's size (without --vocab).")] = None,
    allow_negative: Annotated[bool, typer.Option("--allow-negative", help="Sparse: accept negative "
                                                                          "weights.")] = False,
    mean_col: Annotated[Optional[str], typer.Option(help="Gaussian: column with each item's mean (with "
                                                         "--variance-col); the space is searched by KL.")] = None,
    variance_col: Annotated[Optional[str], typer.Option(help="Gaussian: column with each item's diagonal "
                                                             "variance (numbers > 0).")] = None,
    tokens_col: Annotated[Optional[str], typer.Option(help="Multi-vector: column with each item's token vectors (a "
                                                           "list of vectors).")] = None,
    multivector: Annotated[bool, typer.Option("--multivector", help="Multi-vector: store each text's token vectors "
                                              "(last-layer token states of --encoder, default MiniLM, "
                                              "L2-normalised) for MaxSim search.")] = False,
    json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Embed and store a file's items in a space (created when missing).

    Texts whose content is already in the space are not embedded again.

    Examples:

      repspace ingest docs docs.jsonl --text-col body --id-col doc_id

      repspace ingest glove vectors.npy --ids words.txt --metric cosine

      repspace ingest layers sents.csv --encoder hf-layers:minilm --layer all

      repspace ingest docs corpus/ --backend ray --ray-address head:6379 --shard-rows 20000

      repspace ingest chunks long.jsonl --encoder hf-layers:minilm --chunk 64 --late-chunking

      repspace ingest docs long.jsonl --encoder hf-layers:minilm --chunk 64 --chunk-by sentences --pooling landmark

      repspace ingest splade docs.parquet --indices-col indices --values-col values --vocab vocab.txt

      repspace ingest bow docs.jsonl --weights-col terms --metric cosine

      repspace ingest words gaussians.jsonl --mean-col mean --variance-col var

      repspace ingest colbert docs.jsonl --multivector --encoder hf-layers:minilm

      repspace ingest colbert tokens.parquet --tokens-col tokens
    """
    from repspace.workflows.distributed import check_backend
    from repspace.workflows.ingest import ingest_file

    options = {k: v for k, v in (("layer", _layer(layer)), ("pooling", pooling), ("normalize", normalize),
                                 ("prompt", prompt)) if v is not None}
    if mean_col is not None or variance_col is not None:
        from repspace.core.errors import InputError
        from repspace.workflows.ingest.gaussian import ingest_gaussian_file

        if mean_col is None or variance_col is None:
            raise InputError("a Gaussian ingest needs both --mean-col and --variance-col")
        _report(ingest_gaussian_file(open_store(), space, file, mean_col=mean_col, variance_col=variance_col,
                                     id_col=id_col, text_col=text_col, meta_cols=_split(meta_cols),
                                     auto_id=auto_id), json)
        return
    if tokens_col is not None or multivector:
        _multivector(space, file, id_col, text_col, meta_cols, auto_id, tokens_col, encoder, metric, batch_size,
                     commit_every, on_conflict, json,
                     others={"--vector-col": vector_col, "--layer": layer, "--pooling": pooling,
                             "--normalize/--no-normalize": normalize is not None, "--prompt": prompt, "--chunk": chunk,
                             "--ids": ids, "--backend ray": backend != "local", "--dtype": dtype != "float32",
                             "--indices-col": indices_col, "--values-col": values_col, "--weights-col": weights_col,
                             "--vocab": vocab, "--n-features": n_features is not None,
                             "--allow-negative": allow_negative})
        return
    if indices_col or values_col or weights_col or vocab or n_features is not None or allow_negative:
        _sparse(space, file, id_col, text_col, meta_cols, auto_id, indices_col, values_col, weights_col, vocab,
                n_features, allow_negative, metric, commit_every, on_conflict, json,
                dense={"--vector-col": vector_col, "--encoder": encoder, "--layer": layer, "--pooling": pooling,
                       "--prompt": prompt, "--chunk": chunk, "--ids": ids, "--backend ray": backend != "local",
                       "--dtype": dtype != "float32"})
        return
    store = open_store()
    if file.is_dir() and (file / "manifest.json").is_file():
        from repspace.workflows.distributed import ingest_job

        _show(ingest_job(store, space, file), json)
        return
    if check_backend(backend, ray_address) == "ray":
        if chunk is not None or late_chunking or chunk_by is not None:
            from repspace.core.errors import InputError

            raise InputError("--chunk, --chunk-by and --late-chunking work with the local backend only")
        from repspace.workflows.distributed import ingest_ray

        with progress_bar(json) as bar:
            job = ingest_ray(store, space, file, text_col=text_col, id_col=id_col, meta_cols=_split(meta_cols),
                             auto_id=auto_id, encoder=encoder, encoder_options=options or None, metric=metric,
                             dtype=dtype, batch_size=batch_size, shard_rows=shard_rows, workers=workers,
                             address=ray_address, shard_dir=shard_dir, ingest=not embed_only,
                             on_conflict=on_conflict, progress=bar)
        _show(job, json)
        return
    with progress_bar(json) as bar:
        report = ingest_file(
            store, space, file, text_col=text_col, id_col=id_col, vector_col=vector_col,
            meta_cols=_split(meta_cols), ids_path=ids, auto_id=auto_id, encoder=encoder,
            encoder_options=options or None, metric=metric, dtype=dtype, batch_size=batch_size,
            commit_every=commit_every, on_conflict=on_conflict, progress=bar,
            **({"chunk": chunk, "late_chunking": late_chunking, "window": window, "overlap": overlap,
                "chunk_by": chunk_by} if chunk is not None or late_chunking or chunk_by is not None else {}),
        )
    _report(report, json)


def _sparse(space: str, file: Path, id_col: str, text_col: str, meta_cols: str | None, auto_id: bool,
            indices_col: str | None, values_col: str | None, weights_col: str | None, vocab: Path | None,
            n_features: int | None, allow_negative: bool, metric: str | None, commit_every: int | None,
            on_conflict: str, json: bool, dense: dict[str, Any]) -> None:
    """``ingest`` of sparse vectors (any of the sparse options given)."""
    from repspace.core.errors import InputError
    from repspace.workflows.ingest import ingest_sparse_file

    given = [name for name, value in dense.items() if value]
    if given:
        raise InputError(f"{given[0]} does not apply to sparse vectors (--indices-col/--values-col or --weights-col)")
    store = open_store()
    with progress_bar(json) as bar:
        report = ingest_sparse_file(store, space, file, id_col=id_col, text_col=text_col, meta_cols=_split(meta_cols),
                                    auto_id=auto_id, indices_col=indices_col, values_col=values_col,
                                    weights_col=weights_col, vocab=vocab, n_features=n_features, metric=metric,
                                    allow_negative=allow_negative, commit_every=commit_every,
                                    on_conflict=on_conflict, progress=bar)
    _report(report, json)


def _multivector(space: str, file: Path, id_col: str, text_col: str, meta_cols: str | None, auto_id: bool,
                 tokens_col: str | None, encoder: str | None, metric: str | None, batch_size: int,
                 commit_every: int | None, on_conflict: str, json: bool, others: dict[str, Any]) -> None:
    """``ingest`` of token vectors (--tokens-col, or --multivector from the texts)."""
    from repspace.core.errors import InputError
    from repspace.workflows.ingest import ingest_multivector_file

    given = [name for name, value in others.items() if value]
    if given:
        raise InputError(f"{given[0]} does not apply to token vectors (--tokens-col or --multivector)")
    if metric is not None and metric != "ip":
        raise InputError(f"a multi-vector space is searched by MaxSim over inner products (--metric ip), not "
                         f"{excerpt(metric)}")
    store = open_store()
    with progress_bar(json) as bar:
        report = ingest_multivector_file(store, space, file, id_col=id_col, text_col=text_col,
                                         meta_cols=_split(meta_cols), auto_id=auto_id, tokens_col=tokens_col,
                                         encoder=encoder, batch_size=batch_size, commit_every=commit_every,
                                         on_conflict=on_conflict, progress=bar)
    _report(report, json)


def _report(report: Any, json: bool) -> None:
    if json:
        print_json(report.to_dict())
        return
    table = Table("spaces", "read", "encoded", "reused", "added", "replaced", "updated", "unchanged", "seconds")
    table.add_row(", ".join(report.spaces), *(str(getattr(report, k)) for k in
                  ("read", "encoded", "reused", "added", "replaced", "updated", "unchanged")),
                  f"{report.seconds:.1f}")
    out.print(table)


def _show(job: Any, as_json: bool) -> None:
    if as_json:
        print_json(job.to_dict())
        return
    table = Table("space", "job", "shards", "embedded", "ingested", "skipped", "encoded", "added", "seconds")
    table.add_row(job.space, job.job, *(str(getattr(job, k)) for k in
                  ("shards", "embedded_shards", "ingested_shards", "skipped_shards", "encoded", "added")),
                  f"{job.seconds:.1f}")
    out.print(table)
