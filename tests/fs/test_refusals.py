"""Names are neither made, removed nor renamed on a mount: rm, mv, mkdir,
touch, ln, ln -s, mkfifo and cp to a new name fail with EPERM on a
read-write mount and EROFS on a read-only one (never ENOSYS), and change
nothing.  New times of a file nobody may write fail with EPERM."""
import errno
import json
import os
import subprocess

import numpy as np
import pytest

EPERM_MSG = os.strerror(errno.EPERM)    # "Operation not permitted"
EROFS_MSG = os.strerror(errno.EROFS)    # "Read-only file system"


def commands(m, spare):
    p = m.path
    return [
        ["rm", p("img", "stats")],
        ["rm", "-f", p("img", "records", "0.npy")],
        ["rm", "-r", p("img", "batch")],
        ["rmdir", p("img", "batch", "iid")],
        ["mv", p("img", "stats"), p("img", "stats2")],
        ["mv", p("img", "records", "1.npy"), p("rag", "records", "1.npy")],
        ["mkdir", p("img", "d")],
        ["mkdir", p("new")],
        ["touch", p("img", "new")],
        ["ln", p("img", "stats"), p("img", "l")],
        ["ln", "-s", "stats", p("img", "s")],
        ["cp", spare, p("img", "newfile")],
        ["mkfifo", p("img", "fifo")],
    ]


def snapshot(m, src):
    """What a refused command must not change."""
    tree = {}
    for d in ("", "img", "rag", "img/records", "img/batch", "rag/records"):
        tree[d] = sorted(os.listdir(m.path(d)))
    for s in ("img", "rag"):
        with open(m.path(s, "stats")) as f:
            tree[s + "/stats"] = json.load(f)
    tree["src"] = sorted(os.walk(src))
    return tree


@pytest.mark.parametrize("ro", [False, True], ids=["rw", "ro"])
def test_namespace_changes_are_refused(dense_store, ragged_store, src,
                                       mount, tmp_path, ro):
    m = mount(src, *(["ro"] if ro else []))
    spare = str(tmp_path / "spare.npy")
    np.save(spare, np.zeros((3, 8, 8), "u1"))
    want = EROFS_MSG if ro else EPERM_MSG
    before = snapshot(m, src)
    for cmd in commands(m, spare):
        r = subprocess.run(cmd, capture_output=True, timeout=30)
        err = r.stderr.decode()
        assert r.returncode != 0, cmd
        assert want in err and "not implemented" not in err, (cmd, err)
    assert snapshot(m, src) == before


@pytest.mark.parametrize("ro", [False, True], ids=["rw", "ro"])
def test_new_times_of_readonly_files_fail(dense_store, src, mount, ro):
    m = mount(src, *(["ro"] if ro else []))
    want = errno.EROFS if ro else errno.EPERM
    for path in (m.path("img", "records", "0.npy"), m.path("img", "stats"),
                 m.path("img", "records"), m.path("img")):
        with pytest.raises(OSError) as e:
            os.utime(path)
        assert e.value.errno == want, path
        # touch opens for writing first: that fails EACCES (EROFS), and
        # then the new times fail too
        r = subprocess.run(["touch", path], capture_output=True)
        assert r.returncode != 0, path
        assert "not implemented" not in r.stderr.decode()
    if ro:
        return
    # writable files take new times (changing nothing) and `>` still works
    os.utime(m.path("img", "append"))
    subprocess.run("touch %s && : > %s" % (m.path("img", "sync"),
                                            m.path("img", "delete")),
                   shell=True, check=True)
    with open(m.path("img", "stats")) as f:
        assert json.load(f)["records"] == 40
