"""stats, schema, errors and the control files: sync, compact (EBUSY while
files are open), delete (no stale data afterwards), and the store locks a
mount holds."""
import ctypes
import errno
import io
import json
import os
import subprocess
import time

import numpy as np
import pytest

from conftest import IMG, RAGGED
from fsutil import expected_after_delete, npy_bytes, store_stats as stats
from fsutil import ZRECORDFS, zrecord


def test_cat_stats_and_schema(dense_store, ragged_store, src, mount):
    m = mount(src)
    out = subprocess.run(["cat", m.path("img", "stats")], check=True,
                         capture_output=True).stdout
    assert len(out) == os.stat(m.path("img", "stats")).st_size
    s = json.loads(out)
    assert s["records"] == len(IMG) and s["codec"] == "zstd"
    assert s["dtype"] == "|u1" and s["item_shape"] == [3, 8, 8]
    assert s["reclaimable"] == s["data_bytes"] - s["live_bytes"] == 0
    r = stats(m, "rag")
    assert r["records"] == len(RAGGED) and "item_shape" not in r
    with open(m.path("img", "schema")) as f:
        assert json.load(f) == {"dtype": "|u1", "item_shape": [3, 8, 8]}


def read_all(m, store, n):
    return [np.load(m.path(store, "records", "%d.npy" % i))
            for i in range(n)]


@pytest.mark.parametrize("form", ["text", "npy"])
def test_delete_then_read_sees_no_stale_data(dense_store, src, mount, form):
    m = mount(src)
    read_all(m, "img", len(IMG))          # fill the kernel's cache
    deleted = [3, 0, 39, 17, 3]
    with open(m.path("img", "delete"), "wb") as f:
        if form == "text":
            f.write("".join("%d\n" % i for i in deleted).encode())
        else:
            np.save(f, np.array(deleted, dtype="<i8"))
    want = expected_after_delete(list(IMG), deleted)
    assert stats(m, "img")["records"] == len(want)
    got = read_all(m, "img", len(want))
    for g, w in zip(got, want):
        assert (g == w).all()
    for i in range(len(want), len(IMG)):
        assert not os.path.exists(m.path("img", "records", "%d.npy" % i))


def test_delete_ragged_and_bad_input(ragged_store, src, mount):
    m = mount(src)
    read_all(m, "rag", len(RAGGED))
    subprocess.run("echo 1 > %s" % m.path("rag", "delete"), shell=True,
                   check=True)
    want = expected_after_delete(RAGGED, [1])
    got = read_all(m, "rag", len(want))
    assert all(g.shape == w.shape and (g == w).all()
               for g, w in zip(got, want))
    for bad in (b"12x\n", b"%d\n" % len(want), b"-1\n"):
        with pytest.raises(OSError) as e:
            with open(m.path("rag", "delete"), "wb") as f:
                f.write(bad)
        assert e.value.errno in (errno.EINVAL, errno.ERANGE)
        assert stats(m, "rag")["records"] == len(want)


def test_compact_while_files_are_open(dense_store, src, mount):
    """Open record and batch files keep the bytes of their open across a
    compact, which moves every record."""
    m = mount(src)
    with open(m.path("img", "delete"), "w") as f:
        f.write("5\n6\n")
    assert stats(m, "img")["reclaimable"] > 0
    rec = open(m.path("img", "records", "2.npy"), "rb")
    bat = open(m.path("img", "batch", "1-1.npy"), "rb")
    head_rec, head_bat = rec.read(100), bat.read(100)
    with open(m.path("img", "compact"), "w") as c:
        c.write("1\n")
    got_rec = np.load(io.BytesIO(head_rec + rec.read()))
    got_bat = np.load(io.BytesIO(head_bat + bat.read()))
    rec.close()
    bat.close()
    assert (got_rec == IMG[2]).all()
    assert (got_bat == np.load(m.path("img", "batch", "1-1.npy"))).all()
    s = stats(m, "img")
    assert s["reclaimable"] == 0 and s["records"] == len(IMG) - 2
    want = expected_after_delete(list(IMG), [5, 6])
    assert all((g == w).all() for g, w in zip(read_all(m, "img", len(want)),
                                              want))


def test_sync_and_clean_unmount_persist(dense_store, src, mount):
    m = mount(src)
    with open(m.path("img", "append"), "wb") as f:
        np.save(f, IMG[:4])
    with open(m.path("img", "sync"), "w") as f:
        f.write("1\n")
    assert m.stop() == 0
    assert json.loads(zrecord("stats", dense_store).stdout)["records"] == \
        len(IMG) + 4


def test_store_busy_and_shared_readonly(dense_store, src, mount, tmp_path):
    m = mount(src)
    (tmp_path / "second").mkdir()
    r = subprocess.run([ZRECORDFS, src, str(tmp_path / "second"), "-f"],
                       capture_output=True, timeout=20)
    assert r.returncode != 0 and b"store busy" in r.stderr
    assert dense_store.encode() in r.stderr
    assert m.stop() == 0
    a = mount(src, "ro", name="a")
    b = mount(src, "ro", name="b")
    assert os.path.getsize(a.path("img", "records", "0.npy")) == \
        os.path.getsize(b.path("img", "records", "0.npy"))
    zrecord("stats", dense_store)   # a read-only command runs beside them


def test_inotify_gets_no_events_for_new_records(dense_store, src, mount):
    """What zrecordfs(8) says: a watcher of records/ gets no IN_CREATE or
    IN_DELETE when records are appended or deleted (FUSE cannot send
    events for names the kernel did not create); stats is to be polled."""
    libc = ctypes.CDLL(None, use_errno=True)
    m = mount(src)
    fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
    assert fd >= 0, os.strerror(ctypes.get_errno())
    try:
        assert libc.inotify_add_watch(
            fd, os.fsencode(m.path("img", "records")), 0x100 | 0x200) >= 0
        with open(m.path("img", "append"), "wb") as f:
            f.write(npy_bytes(IMG[:3]))
        with open(m.path("img", "delete"), "w") as f:
            f.write("0\n")
        assert stats(m, "img")["records"] == len(IMG) + 2
        assert "%d.npy" % (len(IMG) + 1) in os.listdir(
            m.path("img", "records"))
        time.sleep(0.3)
        with pytest.raises(BlockingIOError):
            os.read(fd, 4096)
    finally:
        os.close(fd)
