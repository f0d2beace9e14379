"""``repspace ingest --backend ray``: the same space as the local ingest, each shard once, faults survived.

Real data: the Cranfield collection (1,400 abstracts, JSONL) and STS-B sentences (CSV)
from ../shared/data; the encoders are the bundled static model (fast) and MiniLM.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from _cli_process import run

from repspace import Store
from repspace.core.errors import BackendError, ConflictError
from repspace.workflows.distributed import ingest_job, ingest_ray, read_shard
from repspace.workflows.ingest import ingest_file


#: Cranfield's documents with a text: two of its 1,400 (ids 471 and 995) are empty, and an empty text is refused
#: (it embeds to no direction in a cosine space).
DOCS = 1398


@pytest.fixture()
def cranfield(shared_data: Path, tmp_path: Path) -> Path:
    """The Cranfield corpus without its two empty documents."""
    lines = (shared_data / "cranfield-beir" / "corpus.jsonl").read_text().splitlines(keepends=True)
    path = tmp_path / "cranfield.jsonl"
    path.write_text("".join(line for line in lines if json.loads(line)["text"].strip()))
    return path


def _by_id(space) -> dict[str, tuple[np.ndarray, str | None, dict]]:
    items, vectors = space.dump()
    return {it.id: (vectors[i], it.text, it.metadata) for i, it in enumerate(items)}


def _assert_same_space(a, b, atol: float = 1e-5) -> None:
    da, db = _by_id(a), _by_id(b)
    assert sorted(da) == sorted(db)
    worst = max(float(np.abs(da[k][0] - db[k][0]).max()) for k in da)
    assert worst <= atol, worst
    assert all(da[k][1:] == db[k][1:] for k in da)
    assert a.provenance == b.provenance


@pytest.mark.numerics
def test_ray_ingest_equals_local(ray_local, store, cranfield, capsys):
    local = ingest_file(store, "local", cranfield, id_col="_id", encoder="static")
    code, out, _ = run(capsys, "--store", str(store.path), "ingest", "ray", str(cranfield), "--id-col", "_id",
                       "--encoder", "static", "--backend", "ray", "--shard-rows", "300", "--json")
    job = json.loads(out)
    assert code == 0 and job["backend"] == "ray"
    assert (job["shards"], job["embedded_shards"], job["ingested_shards"], job["added"]) == \
        (5, 5, 5, local.added) == (5, 5, 5, DOCS)
    assert job["encoded"] + job["reused"] == job["read"] == DOCS
    _assert_same_space(store.space("local"), store.space("ray"))
    ledger = store.space("ray").shards()
    assert sorted(e.name for e in ledger.values()) == [f"shard-0000{i}" for i in range(5)]
    assert sum(e.n_rows for e in ledger.values()) == DOCS
    # A shard is what the manifest says: its checksum, its rows, a fixed-size list of float32.
    manifest = json.loads((Path(job["job_dir"]) / "manifest.json").read_text())
    first = manifest["shards"]["shard-00000"]
    schema = pq.read_schema(Path(job["job_dir"]) / first["file"])
    vector = schema.field("vector").type
    assert pa.types.is_fixed_size_list(vector) and vector.value_type == pa.float32()
    assert vector.list_size == store.space("ray").dim
    assert read_shard(Path(job["job_dir"]) / first["file"]).ids[:2] == ["1", "2"]


@pytest.mark.numerics
@pytest.mark.slow
def test_ray_minilm_equals_local_within_1e5(ray_local, store, shared_data, tmp_path):
    rows = (shared_data / "stsb" / "stsb-en-test.csv").read_text().splitlines()[:400]
    sentences = sorted({r.split(",")[0] for r in rows})
    path = tmp_path / "sentences.jsonl"
    path.write_text("".join(json.dumps({"id": f"s{i}", "text": t}) + "\n" for i, t in enumerate(sentences)))
    ingest_file(store, "local", path, encoder="minilm")
    job = ingest_ray(store, "ray", path, encoder="minilm", shard_rows=150)
    assert job.added == len(sentences) > 300 and job.shards == -(-len(sentences) // 150)
    _assert_same_space(store.space("local"), store.space("ray"), atol=1e-5)


def test_folder_of_formats_equals_local_files(ray_local, store, shared_data, tmp_path):
    rows = (shared_data / "stsb" / "stsb-en-test.csv").read_text().splitlines()[:600]
    firsts = [r.rsplit(",", 1)[0].split(",")[0] for r in rows]
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.jsonl").write_text("".join(json.dumps({"id": f"j{i}", "text": t, "part": "jsonl"}) + "\n"
                                            for i, t in enumerate(firsts[:200])))
    with (folder / "b.csv").open("w") as f:
        f.write("id,text,part\n")
        f.writelines(f'c{i},"{t.replace(chr(34), chr(34) * 2)}",csv\n' for i, t in enumerate(firsts[200:400]))
    pq.write_table(pa.table({"id": [f"p{i}" for i in range(200)], "text": firsts[400:600], "part": ["pq"] * 200}),
                   folder / "c.parquet", row_group_size=64)
    for name in ("a.jsonl", "b.csv", "c.parquet"):
        ingest_file(store, "local", folder / name, encoder="static")
    job = ingest_ray(store, "ray", folder, encoder="static", shard_rows=70)
    assert job.shards == 3 * 3 and job.added == 600
    _assert_same_space(store.space("local"), store.space("ray"))


def test_texts_already_stored_are_not_embedded_again(ray_local, store, cranfield, tmp_path):
    half = tmp_path / "half.jsonl"
    half.write_text("".join(cranfield.read_text().splitlines(keepends=True)[:700]))
    ingest_ray(store, "docs", half, id_col="_id", encoder="static", shard_rows=350)
    job = ingest_ray(store, "docs", cranfield, id_col="_id", shard_rows=350)
    # The first 700 texts are in the space: their vectors are reused, not embedded (nor are the later
    # documents whose text repeats one of them); a shard embeds each of its new texts once.
    texts = [json.loads(line)["text"] for line in cranfield.read_text().splitlines()]
    known = set(texts[:700])
    new = sum(len(set(texts[lo:lo + 350]) - known) for lo in (700, 1050))
    assert 690 < new <= DOCS - 700 and (job.read, job.encoded) == (DOCS, new)
    assert job.reused == sum(t in known for t in texts)
    assert (job.added, job.unchanged) == (DOCS - 700, 700)
    assert len(store.space("docs")) == DOCS


def test_embed_only_then_resume_then_nothing_twice(ray_local, store, cranfield):
    first = ingest_ray(store, "docs", cranfield, id_col="_id", encoder="static", shard_rows=400, ingest=False)
    assert (first.embedded_shards, first.ingested_shards) == (4, 0) and len(store.space("docs")) == 0
    second = ingest_ray(store, "docs", cranfield, id_col="_id", shard_rows=400)
    assert (second.job, second.embedded_shards, second.ingested_shards, second.added) == (first.job, 0, 4, DOCS)
    generation = store.space("docs").info().generation
    third = ingest_ray(store, "docs", cranfield, id_col="_id", shard_rows=400)
    assert (third.embedded_shards, third.ingested_shards, third.skipped_shards) == (0, 0, 4)
    assert store.space("docs").info().generation == generation and len(store.space("docs")) == DOCS


def test_bad_shards_are_refused_whole(ray_local, store, cranfield, capsys):
    job = ingest_ray(store, "docs", cranfield, id_col="_id", encoder="static", shard_rows=500, ingest=False)
    # A recipe other than the space's: refused, nothing ingested.
    from repspace.engines.encoders import get_encoder

    other = get_encoder("static", normalize=False)
    store.create_space("other", other.dim, provenance=other.provenance())
    with pytest.raises(ConflictError, match="was embedded with recipe .* nothing ingested from it"):
        ingest_job(store, "other", job.job_dir)
    code, _, err = run(capsys, "--store", str(store.path), "ingest", "other", job.job_dir)
    assert code == ConflictError.exit_code and err.count("\n") == 1
    assert len(store.space("other")) == 0 and store.space("other").shards() == {}
    # A shard whose bytes are not those the job wrote: refused, the shard before it is ingested.
    bad = Path(job.job_dir) / "shard-00001.parquet"
    data = bytearray(bad.read_bytes())
    data[len(data) // 2] ^= 0xFF
    bad.write_bytes(bytes(data))
    code, out, err = run(capsys, "--store", str(store.path), "ingest", "docs", job.job_dir)
    assert code == BackendError.exit_code and out == ""
    assert err.count("\n") == 1 and "shard-00001: checksum mismatch" in err
    space = store.space("docs")
    assert [e.name for e in space.shards().values()] == ["shard-00000"] and len(space) == 500


def test_unreachable_address_is_one_line_and_stores_nothing(store, cranfield, capsys):
    t0 = time.perf_counter()
    code, out, err = run(capsys, "--store", str(store.path), "ingest", "docs", str(cranfield), "--id-col", "_id",
                         "--encoder", "static", "--backend", "ray", "--ray-address", "127.0.0.1:1")
    assert code == BackendError.exit_code and out == ""
    assert err.count("\n") == 1 and "cannot reach a Ray cluster at 127.0.0.1:1" in err
    assert store.spaces() == [] and time.perf_counter() - t0 < 30
    code, _, err = run(capsys, "--store", str(store.path), "ingest", "docs", str(cranfield), "--backend", "spark")
    assert code == 2 and "the backend must be one of local, ray, not 'spark'" in err


def test_two_nodes_both_embed_and_a_lost_node_is_survived(ray_two_nodes, store, cranfield):
    ray, cluster, nodes = ray_two_nodes
    # Ray Data starts an actor pool's actors asynchronously: the first one up may embed all 14 small shards
    # before the second has loaded its encoder. Waiting for both makes "both nodes embed" a property, not a race.
    context = ray.data.DataContext.get_current()
    before, context.wait_for_min_actors_s = context.wait_for_min_actors_s, 300
    try:
        job = ingest_ray(store, "docs", cranfield, id_col="_id", encoder="static", shard_rows=100, workers=2)
    finally:
        context.wait_for_min_actors_s = before
    assert set(job.nodes) == {n.node_id for n in nodes} and sum(job.nodes.values()) == 14

    removed = []

    def remove_second_node(phase: str, done: int, total: int) -> None:
        if done == 2 and not removed:
            cluster.remove_node(nodes[1])
            removed.append(done)

    lost = ingest_ray(store, "again", cranfield, id_col="_id", shard_rows=100, workers=2,
                      encoder="static", progress=remove_second_node)
    assert removed and lost.ingested_shards == 14
    space = store.space("again")
    assert len(space) == DOCS and sorted(space.ids()) == sorted(store.space("docs").ids())
    assert sum(e.n_rows for e in space.shards().values()) == DOCS
    _assert_same_space(store.space("docs"), store.space("again"))


def _ledger(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as c:
            return c.execute("SELECT count(*) FROM shards").fetchone()[0]
    except sqlite3.Error:
        return 0


@pytest.mark.slow
def test_driver_killed_between_shards_then_rerun_ingests_each_shard_once(tmp_path, cranfield):
    db = tmp_path / "s.db"
    head = tmp_path / "head.jsonl"
    head.write_text("".join(cranfield.read_text().splitlines(keepends=True)[:300]))
    cmd = [str(Path(sys.executable).with_name("repspace")), "--store", str(db), "ingest", "docs", str(head),
           "--id-col", "_id", "--encoder", "minilm", "--backend", "ray", "--shard-rows", "25", "--workers", "1",
           "--json"]
    env = {**os.environ, "RAY_DATA_DISABLE_PROGRESS_BARS": "1"}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 240
    while _ledger(db) < 2 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    landed = _ledger(db)
    os.killpg(proc.pid, signal.SIGKILL)  # the driver and the local Ray it started
    proc.wait(timeout=30)
    assert 2 <= landed < 12, f"the kill came after {landed} of 12 shards"
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["skipped_shards"] + report["ingested_shards"] == 12 and report["skipped_shards"] >= landed
    # Shards written but not ingested when the driver died are ingested without embedding them again.
    assert report["embedded_shards"] <= 12 - report["skipped_shards"]
    with Store(db) as store:
        space = store.space("docs")
        assert len(space) == 300 and sorted(e.name for e in space.shards().values()) == \
            [f"shard-{i:05d}" for i in range(12)]
        assert space.info().dead_rows == 0  # no item was written twice
