"""Atomic writes: the umask decides the mode, a failure leaves the old file, stamped .npz files are trusted only
for what they describe."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from repspace.core.atomic import read_npz, write_atomic, write_npz


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600)])
def test_the_umask_decides_the_mode(tmp_path, umask, mode):
    path = tmp_path / "f.bin"
    code = (f"import os; os.umask({umask}); from repspace.core.atomic import write_atomic; "
            f"write_atomic({str(path)!r}, lambda f: f.write(b'x'), durable=True)")
    subprocess.run([sys.executable, "-c", code], check=True)  # a child process: the umask is process-wide
    assert path.read_bytes() == b"x" and os.stat(path).st_mode & 0o777 == mode


def test_a_failed_write_leaves_the_old_file(tmp_path):
    path = tmp_path / "f.bin"
    write_atomic(path, lambda f: f.write(b"old"))

    def crash(f):
        f.write(b"half")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        write_atomic(path, crash)
    assert path.read_bytes() == b"old" and os.listdir(tmp_path) == ["f.bin"]


def test_stamped_npz_is_read_only_for_its_description(tmp_path):
    path = tmp_path / "d" / "a.npz"
    write_npz(path, {"state": ["u", 3], "path": ["a"]}, {"x": np.arange(4), "s": np.array(["é", "b"])})
    got = read_npz(path, {"path": ["a"], "state": ["u", 3]})  # key order does not matter
    assert got["x"].tolist() == [0, 1, 2, 3] and got["s"].tolist() == ["é", "b"]
    assert read_npz(path, {"state": ["u", 4], "path": ["a"]}) is None
    assert read_npz(tmp_path / "absent.npz", {}) is None
    path.write_bytes(b"PK\x03\x04 damaged")
    assert read_npz(path, {"state": ["u", 3], "path": ["a"]}) is None
