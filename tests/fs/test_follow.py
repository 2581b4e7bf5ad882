"""`-o follow`: a read-only mount that shares its stores with one writer
(here a read-write mount of the same SRC, or `zrecord append`) and shows
what the writer has synced within the follow interval, never before:
new record files, listings, stats and batches drawn over the new length.
Delete and compact wait for every follower; a plain read-only mount
still keeps writers out; a store that shrinks under a follower is
reported in its errors file and the mount keeps serving."""
import errno
import json
import os
import subprocess
import time

import numpy as np
import pytest

from conftest import IMG
from fsutil import ZRECORDFS, npy_bytes, wait_for, zrecord

X = np.full((3, 3, 8, 8), 7, np.uint8)
INTERVAL = 0.1


def stats(m):
    with open(m.path("img", "stats")) as f:
        return json.load(f)


def read(m, *parts):
    with open(m.path("img", *parts), "rb") as f:
        return f.read()


def append(m, rows):
    with open(m.path("img", "append"), "wb") as f:
        f.write(npy_bytes(rows))


def sync(m):
    with open(m.path("img", "sync"), "w") as f:
        f.write("1\n")


def test_follower_shows_synced_records_only(src, dense_store, mount):
    w = mount(src, name="w")
    f = mount(src, "follow=%g" % INTERVAL, name="f")
    append(w, X)
    assert stats(w)["records"] == 43
    time.sleep(10 * INTERVAL)  # committed, not synced: not durable yet
    assert stats(f)["records"] == 40
    assert not os.path.exists(f.path("img", "records", "40.npy"))
    sync(w)
    wait_for(lambda: stats(f)["records"] == 43, timeout=10,
             what="the follower to see the synced rows")
    for i in range(43):
        want = X[i - 40] if i >= 40 else IMG[i]
        got = np.load(f.path("img", "records", "%d.npy" % i))
        np.testing.assert_array_equal(got, want)
    names = os.listdir(f.path("img", "records"))
    assert "42.npy" in names and "43.npy" not in names
    # batches are drawn over the new length, as the writer draws them
    seq = np.load(f.path("img", "batch", "sequential", "43", "0-0.npy"))
    np.testing.assert_array_equal(seq, np.concatenate([IMG, X]))
    for name in ("5-3.npy", "5-3.indices.npy"):
        assert read(f, "batch", name) == read(w, "batch", name)


def test_zrecord_appends_beside_a_follower(src, dense_store, mount,
                                           tmp_path):
    f = mount(src, "follow=%g" % INTERVAL, name="f")
    x = tmp_path / "x.npy"
    np.save(x, X)
    zrecord("append", dense_store, str(x))
    wait_for(lambda: stats(f)["records"] == 43, timeout=10,
             what="the follower to see zrecord's rows")
    np.testing.assert_array_equal(
        np.load(f.path("img", "records", "41.npy")), X[1])
    # a plain read-only mount keeps writers out, as before
    r = mount(src, "ro", name="r")
    p = zrecord("append", dense_store, str(x), check=False)
    assert p.returncode == 1 and b"store busy" in p.stderr
    assert stats(r)["records"] == 43


def test_delete_and_compact_wait_for_followers(src, dense_store, mount):
    w = mount(src, name="w")
    f = mount(src, "follow", name="f")
    for name in ("delete", "compact"):
        # the refusal comes at the commit, which close() reports
        with pytest.raises(OSError) as e:
            with open(w.path("img", name), "w") as c:
                c.write("0\n")
        assert e.value.errno == errno.EBUSY, (name, e.value)
    assert stats(w)["records"] == 40 and stats(f)["records"] == 40
    assert "follower" in read(w, "errors").decode()
    f.stop()
    with open(w.path("img", "delete"), "w") as d:
        d.write("0\n")
    assert stats(w)["records"] == 39


def test_follow_mount_is_read_only(src, dense_store, mount):
    f = mount(src, "follow=0.5", name="f")
    with pytest.raises(OSError):
        append(f, X)
    assert stats(f)["records"] == 40
    assert os.statvfs(f.mnt).f_flag & os.ST_RDONLY


@pytest.mark.parametrize("value", ["0", "-1", "x", "0.001", "3601", ""])
def test_follow_refuses_bad_intervals(src, dense_store, tmp_path, value):
    mnt = tmp_path / "m"
    mnt.mkdir()
    p = subprocess.run([ZRECORDFS, src, str(mnt), "-f", "-o",
                        "follow=" + value], capture_output=True, timeout=20)
    assert p.returncode != 0
    assert b"follow=" in p.stderr, p.stderr
    assert not os.path.ismount(mnt)


def test_shrunk_store_is_reported_once(src, dense_store, mount):
    f = mount(src, "follow=%g" % INTERVAL, name="f")
    with open(os.path.join(dense_store, "meta.zr"), "r+b") as m:
        head = m.read(16)
        m.seek(0)
        m.write((30).to_bytes(8, "little") + head[8:])
    wait_for(lambda: "follow:" in read(f, "errors").decode(), timeout=10,
             what="the refresh error in errors")
    time.sleep(10 * INTERVAL)
    errors = read(f, "errors").decode()
    assert errors.count("follow:") == 1, errors
    assert "only appends" in errors
    assert stats(f)["records"] == 40
    np.testing.assert_array_equal(
        np.load(f.path("img", "records", "39.npy")), IMG[39])


@pytest.mark.parametrize("opt", ["ro", "follow=0.2"])
def test_read_only_mount_recovers_a_cut_compact(src, dense_store, mount,
                                                opt):
    """SQLite's hot-journal rule on a read-only mount: it recovers the
    compact cut short, serves every record, and its errors say what is
    still reclaimable."""
    from fsutil import TOP_BUILD
    zrecord("delete", dense_store, 3)
    subprocess.run([os.path.join(TOP_BUILD, "tests", "cut_compact"),
                    dense_store], check=True, timeout=120)
    assert os.path.exists(os.path.join(dense_store, "maintenance.zr"))
    m = mount(src, opt)
    with open(m.path("img", "errors")) as f:
        log = f.read()
    assert "recovered an interrupted compact" in log, log
    assert "still reclaimable" in log and "zrecord compact" in log, log
    assert stats(m)["records"] == 39 and stats(m)["reclaimable"] > 0
    want = list(IMG[:39])
    want[3] = IMG[39]
    for i in range(39):
        np.testing.assert_array_equal(
            np.load(m.path("img", "records", "%d.npy" % i)), want[i])
    assert not os.path.exists(os.path.join(dense_store, "maintenance.zr"))
