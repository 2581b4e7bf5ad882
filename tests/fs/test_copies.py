"""Copies of a store folder and of a whole mount with the real tools (cp -r,
rsync -a, tar) succeed on read-write and read-only mounts: append and the
control files read as a one-line usage whose size getattr reports."""
import errno
import json
import os
import subprocess

import numpy as np
import pytest

from conftest import IMG, RAGGED

CONTROL = ("append", "sync", "compact", "delete")


def copy(tool, parent, name, out):
    """Copies parent/name to out/name with tool; returns the copy."""
    src, dst = os.path.join(parent, name), os.path.join(out, name)
    os.makedirs(out, exist_ok=True)
    if tool == "cp":
        cmds = [["cp", "-r", src, out]]
    elif tool == "rsync":
        cmds = [["rsync", "-a", src + "/", dst + "/"]]
    else:
        tar = os.path.join(out, name + ".tar")
        cmds = [["tar", "cf", tar, "-C", parent, name],
                ["tar", "xf", tar, "-C", out]]
    for cmd in cmds:
        r = subprocess.run(cmd, capture_output=True, timeout=60)
        assert r.returncode == 0, (cmd, r.returncode, r.stderr.decode())
    return dst


def stats(folder):
    with open(os.path.join(folder, "stats")) as f:
        return json.load(f)


def check_copy(m, store, copied, want):
    assert stats(copied) == stats(m.path(store))
    for name in CONTROL:
        with open(os.path.join(copied, name), "rb") as c, \
                open(m.path(store, name), "rb") as f:
            assert c.read() == f.read()
    assert len(os.listdir(os.path.join(copied, "records"))) == len(want)
    for i, w in enumerate(want):
        got = np.load(os.path.join(copied, "records", "%d.npy" % i))
        assert got.dtype == w.dtype and got.shape == w.shape
        assert (got == w).all()


@pytest.mark.parametrize("ro", [False, True], ids=["rw", "ro"])
@pytest.mark.parametrize("tool", ["cp", "rsync", "tar"])
def test_copy_store_and_mount(dense_store, ragged_store, src, mount,
                              tmp_path, tool, ro):
    m = mount(src, *(["ro"] if ro else []))
    before = {s: stats(m.path(s)) for s in ("img", "rag")}
    img = copy(tool, m.mnt, "img", str(tmp_path / "one"))
    check_copy(m, "img", img, list(IMG))
    whole = copy(tool, os.path.dirname(m.mnt), os.path.basename(m.mnt),
                 str(tmp_path / "all"))
    check_copy(m, "img", os.path.join(whole, "img"), list(IMG))
    check_copy(m, "rag", os.path.join(whole, "rag"), RAGGED)
    # reading the control files acted on nothing
    assert {s: stats(m.path(s)) for s in ("img", "rag")} == before


def test_control_files_read_as_usage(dense_store, src, mount):
    m = mount(src)
    for name in CONTROL:
        path = m.path("img", name)
        st = os.stat(path)
        assert st.st_mode & 0o777 == 0o644
        out = subprocess.run(["cat", path], check=True,
                             capture_output=True).stdout
        assert out.startswith(name.encode() + b": write ")
        assert out.endswith(b"\n") and out.count(b"\n") == 1
        assert len(out) == st.st_size
        # one open never both reads and acts
        with pytest.raises(OSError) as e:
            open(path, "r+b")
        assert e.value.errno == errno.EACCES
    out = subprocess.run(["cat", m.path("img", "append")], check=True,
                         capture_output=True).stdout
    assert out == b"append: write .npy files here to append their records\n"
    # reading a delete or append handle to its end acts on nothing
    with open(m.path("img", "delete"), "rb") as f:
        f.read()
    assert stats(m.path("img"))["records"] == len(IMG)
