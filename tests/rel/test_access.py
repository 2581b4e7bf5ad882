"""Access: without allow_other no other user gets into the mount (and with
it, the same command works, so the refusal is the mount's); with -o ro
every write path fails with EROFS while read-only tools still read the
stores; nothing in SRC outside the stores -- plain files, symlinks, the
stores' own meta.zr/data.zr/dict.zr -- is exposed or writable."""
import errno
import os
import shutil
import subprocess
import tempfile

import numpy as np
import pytest

from conftest import cp, npy_bytes, write_file

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
ROWS = np.arange(12, dtype="<f4").reshape(4, 3)


@pytest.fixture
def world(zr):
    """SRC and MNT under a folder every user may traverse (pytest's own
    tmp is private to root, which would hide the mount's own verdict)."""
    base = tempfile.mkdtemp(prefix="zrrel-", dir="/tmp")
    os.chmod(base, 0o755)
    src, mnt = os.path.join(base, "src"), os.path.join(base, "mnt")
    os.makedirs(os.path.join(src, "plain"))
    zr.create(os.path.join(src, "D"), "<f4", (3,))
    zr.append_arrays(os.path.join(src, "D"), [ROWS], base)
    zr.create(os.path.join(src, "plain", "S"), "<f4", (3,))
    write_file(os.path.join(src, "notes.txt"), b"secret\n")
    write_file(os.path.join(src, "plain", "x.npy"), npy_bytes(ROWS))
    write_file(os.path.join(src, "D", "extra.txt"), b"not a store file\n")
    os.symlink("/etc", os.path.join(src, "etc-link"))
    for dirpath, dirs, files in os.walk(src):
        os.chmod(dirpath, 0o755)
        for f in files:
            os.chmod(os.path.join(dirpath, f), 0o644)
    yield src, mnt
    shutil.rmtree(base, ignore_errors=True)


def as_nobody(*argv):
    return subprocess.run(NOBODY + list(argv), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=30)


def test_other_user_locked_out(world, mounter):
    src, mnt = world
    mounter(src, mnt)
    for argv in (["cat", f"{mnt}/D/stats"], ["ls", mnt],
                 ["cat", f"{mnt}/D/records/0.npy"], ["stat", f"{mnt}/D"]):
        r = as_nobody(*argv)
        assert r.returncode != 0, argv
        assert b"Permission denied" in r.stderr, r.stderr
    r = as_nobody("cp", "/dev/null", f"{mnt}/D/append")
    assert r.returncode != 0 and b"Permission denied" in r.stderr


def test_allow_other_lets_them_read(world, mounter):
    """The control: the same reads succeed once the owner allows it."""
    src, mnt = world
    mounter(src, mnt, ["allow_other"])
    r = as_nobody("cat", f"{mnt}/D/stats")
    assert r.returncode == 0, r.stderr
    assert b'"records": 4' in r.stdout


def rw_attempts(mnt, tmp):
    """Every way to change something through the mount."""
    good = os.path.join(tmp, "good.npy")
    write_file(good, npy_bytes(ROWS[:1]))

    def write(rel, data=b"0\n"):
        with open(os.path.join(mnt, rel), "wb") as f:
            f.write(data)

    def cp_append():
        r = cp(good, os.path.join(mnt, "D", "append"))
        assert r.returncode != 0
        raise OSError(errno.EROFS if b"Read-only" in r.stderr else 0,
                      r.stderr.decode())

    return {
        "cp-append": cp_append,
        "write-sync": lambda: write("D/sync", b"1\n"),
        "write-compact": lambda: write("D/compact", b"1\n"),
        "write-delete": lambda: write("D/delete", b"0\n"),
        "create-file": lambda: write("D/new.npy"),
        "create-in-root": lambda: write("new.txt"),
        "mkdir": lambda: os.mkdir(os.path.join(mnt, "newdir")),
        "unlink": lambda: os.unlink(os.path.join(mnt, "D/records/0.npy")),
        "rmdir": lambda: os.rmdir(os.path.join(mnt, "plain")),
        "rename": lambda: os.rename(os.path.join(mnt, "D"),
                                    os.path.join(mnt, "E")),
        "truncate": lambda: os.truncate(os.path.join(mnt, "D/append"), 0),
        "chmod": lambda: os.chmod(os.path.join(mnt, "D/stats"), 0o666),
        "utime": lambda: os.utime(os.path.join(mnt, "D/stats")),
        "symlink": lambda: os.symlink("/etc", os.path.join(mnt, "l")),
    }


def test_ro_mount_refuses_every_write(zr, world, mounter, tmp):
    src, mnt = world
    before = {n: open(os.path.join(src, "D", n), "rb").read()
              for n in ("meta.zr", "data.zr")}
    mounter(src, mnt, ["ro"])
    # A read-only mount takes shared locks: read-only tools still work...
    got = zr.load("get", os.path.join(src, "D"), 0, 1, 2, 3)
    assert np.array_equal(got, ROWS)
    # ...and a writer is refused.
    write_file(os.path.join(tmp, "x.npy"), npy_bytes(ROWS[:1]))
    r = zr.run("append", os.path.join(src, "D"), os.path.join(tmp, "x.npy"))
    assert r.returncode == 1 and b"busy" in r.stderr, r.stderr
    for name, attempt in rw_attempts(mnt, tmp).items():
        with pytest.raises(OSError) as e:
            attempt()
        assert e.value.errno == errno.EROFS, (name, e.value)
    assert np.array_equal(np.load(os.path.join(mnt, "D/records/3.npy")),
                          ROWS[3])
    for n, data in before.items():
        assert open(os.path.join(src, "D", n), "rb").read() == data


def test_only_stores_exposed(world, mounter):
    src, mnt = world
    mounter(src, mnt)
    top = os.listdir(mnt)
    assert "D" in top and "plain" in top
    assert "notes.txt" not in top and "etc-link" not in top
    assert "x.npy" not in os.listdir(os.path.join(mnt, "plain"))
    assert "S" in os.listdir(os.path.join(mnt, "plain"))
    inside = os.listdir(os.path.join(mnt, "D"))
    for hidden in ("meta.zr", "data.zr", "dict.zr", "extra.txt"):
        assert hidden not in inside
    for rel in ("notes.txt", "etc-link", "etc-link/passwd", "plain/x.npy",
                "D/meta.zr", "D/data.zr", "D/extra.txt"):
        with pytest.raises(OSError) as e:
            os.stat(os.path.join(mnt, rel))
        assert e.value.errno == errno.ENOENT, rel
    for rel in ("notes.txt", "plain/x.npy", "D/meta.zr", "D/data.zr"):
        with pytest.raises(OSError) as e:
            with open(os.path.join(mnt, rel), "wb") as f:
                f.write(b"overwritten")
        assert e.value.errno in (errno.ENOENT, errno.EACCES, errno.EPERM,
                                 errno.ENOSYS), rel
    assert open(os.path.join(src, "notes.txt"), "rb").read() == b"secret\n"
    assert np.array_equal(np.load(os.path.join(src, "plain", "x.npy")), ROWS)
