"""The tail every eval command prints after ``--save`` (and ``--output-dir``): one wording, the count of what the
store really holds afterwards, nothing when nothing was recorded."""

from __future__ import annotations

from pathlib import Path

import pytest
from _cli_process import run
from _data_subsets import sts_head
from _sentiment_data import pang_lee_split

from repspace import Store

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "senteval-probing"


def _tail(err: str) -> list[str]:
    """The tail's lines of a command's stderr."""
    return [line for line in err.splitlines() if line.startswith(("recorded ", "wrote "))]


@pytest.fixture()
def commands(tmp_path: Path, shared_data: Path) -> dict[str, list[str]]:
    """One cheap run of each eval command with its own ``--save`` code path (static encoder, small real data)."""
    sts = sts_head(shared_data, tmp_path / "stsb-small-test.csv", 60)
    train, test = pang_lee_split(tmp_path)
    return {
        "sts": ["eval", "sts", str(sts), "--encoder", "static", "--bootstrap", "0"],
        "evalrank": ["eval", "evalrank", str(sts), "--encoder", "static", "--bootstrap", "0"],
        "fewshot": ["eval", "fewshot", str(test), "--train", str(train), "--encoder", "static", "--shots", "1",
                    "--draws", "2", "--bootstrap", "0"],
        "probing": ["eval", "probing", str(SAMPLE / "past_present.txt"), "--encoder", "static", "--bootstrap", "0"],
    }


def test_each_command_words_the_tail_alike_and_counts_what_the_store_holds(capsys, tmp_path, commands):
    db = tmp_path / "store.db"
    before = 0
    for name, args in commands.items():
        r = run(capsys, "--store", str(db), *args, "--save")
        assert r.code == 0, (name, r.err)
        with Store(db, create=False) as store:
            now = len(store.results())
        n = now - before
        assert n >= 1, name
        assert _tail(r.err) == [f"recorded {n} result{'s' if n != 1 else ''} in {db}"], (name, r.err)
        before = now


def test_no_tail_without_save_and_the_mteb_line_with_output_dir(capsys, tmp_path, commands):
    for name, args in commands.items():
        r = run(capsys, *args)
        assert r.code == 0 and _tail(r.err) == [], (name, r.err)
    out_dir = tmp_path / "mteb"
    r = run(capsys, *commands["sts"], "--output-dir", str(out_dir))
    assert r.code == 0 and _tail(r.err) == [f"wrote 1 MTEB result file under {out_dir}"], r.err
