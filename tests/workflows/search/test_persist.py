"""Derived files are written atomically: a reader sees the old file or the new one, and a failed write leaves no trace."""

from __future__ import annotations

import json

import numpy as np
import pytest

from repspace.core.atomic import write_atomic
from repspace.workflows.search.persist import write_json


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "stats.npz"
    write_atomic(path, lambda f: np.savez(f, a=np.arange(3)))
    before = path.read_bytes()

    def half_then_crash(f):
        f.write(b"half a file")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        write_atomic(path, half_then_crash)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stats.npz"]
    with np.load(path) as z:
        assert z["a"].tolist() == [0, 1, 2]


def test_write_json_replaces_and_creates_the_folder(tmp_path):
    path = tmp_path / "new" / "stamp.json"
    write_json(path, {"generation": 1})
    write_json(path, {"generation": 2})
    assert json.loads(path.read_text()) == {"generation": 2}
    assert sorted(p.name for p in path.parent.iterdir()) == ["stamp.json"]
