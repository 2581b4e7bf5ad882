"""test_follow.py - readers follow a growing store across GlusterFS
clients: host 0 writes (a read-write zrecordfs mount, then `zrecord
append`), hosts 1 and 2 serve it with `-o follow`, and see each synced
append within a bounded delay (the follow interval plus GlusterFS's
one-second client caches) without a remount, never an unsynced one;
delete waits for every follower; a seed-style meta.zr lock on one host
keeps a writer on another out."""
import errno
import fcntl
import json
import os
import time

import numpy as np
import pytest

from fsutil import make_store, npy_bytes, wait_for, zrecord

ROWS = np.arange(40 * 4, dtype="<i8").reshape(40, 4)
INTERVAL = 0.2
# follow interval + md-cache/quick-read timeout (1 s) + slack for a busy box
BOUND = 15


def stats(m):
    with open(m.path("s", "stats")) as f:
        return json.load(f)


def npy(m, *parts):
    return np.load(m.path("s", *parts))


@pytest.fixture
def three(hosts):
    dirs = hosts(3)
    path = os.path.join(dirs[0], "s")
    make_store(path, "<i8", shape=(4,), codec="zstd", rows=ROWS)
    return dirs


def test_followers_on_two_hosts_see_a_third_hosts_appends(three, mount):
    w = mount(three[0], name="w")
    fs = [mount(three[i], "follow=%g" % INTERVAL, name="f%d" % i)
          for i in (1, 2)]
    more = np.arange(1000, 1000 + 6 * 4, dtype="<i8").reshape(6, 4)
    with open(w.path("s", "append"), "wb") as f:
        f.write(npy_bytes(more))
    time.sleep(2)  # past every cache: committed but not synced
    assert [stats(f)["records"] for f in fs] == [40, 40]
    with open(w.path("s", "sync"), "w") as f:
        f.write("1\n")
    t0 = time.monotonic()
    for f in fs:
        wait_for(lambda f=f: stats(f)["records"] == 46, timeout=BOUND,
                 what="a follower to see the synced rows")
    print("followers caught up in %.2f s" % (time.monotonic() - t0))
    want = np.concatenate([ROWS, more])
    for f in fs:
        for i in (0, 39, 40, 45):
            np.testing.assert_array_equal(
                npy(f, "records", "%d.npy" % i), want[i])
        np.testing.assert_array_equal(
            npy(f, "batch", "sequential", "46", "0-0.npy"), want)
        with open(f.path("s", "batch", "3-1.npy"), "rb") as a, \
                open(w.path("s", "batch", "3-1.npy"), "rb") as b:
            assert a.read() == b.read()


def test_zrecord_append_from_another_host_is_followed(three, mount,
                                                      tmp_path):
    f = mount(three[1], "follow=%g" % INTERVAL, name="f1")
    x = str(tmp_path / "x.npy")
    np.save(x, np.full((3, 4), 5, "<i8"))
    zrecord("append", os.path.join(three[0], "s"), x)
    zrecord("append", os.path.join(three[2], "s"), x)
    wait_for(lambda: stats(f)["records"] == 46, timeout=BOUND,
             what="the follower to see both hosts' appends")
    np.testing.assert_array_equal(npy(f, "records", "45.npy"),
                                  np.full(4, 5, "<i8"))


def test_delete_on_the_writer_host_waits_for_followers(three, mount):
    w = mount(three[0], name="w")
    f = mount(three[1], "follow", name="f1")
    with pytest.raises(OSError) as e:
        with open(w.path("s", "delete"), "w") as d:
            d.write("0\n")
    assert e.value.errno == errno.EBUSY
    assert stats(w)["records"] == 40
    f.stop()
    wait_for(lambda: _delete(w), timeout=30,
             what="the stopped follower's lock to go")
    assert stats(w)["records"] == 39


def _delete(w):
    try:
        with open(w.path("s", "delete"), "w") as d:
            d.write("0\n")
        return True
    except OSError as e:
        assert e.errno == errno.EBUSY, e
        return False


def test_a_seed_lock_on_one_host_keeps_every_handle_out(three, tmp_path):
    x = str(tmp_path / "x.npy")
    np.save(x, np.zeros((1, 4), "<i8"))
    with open(os.path.join(three[1], "s", "meta.zr"), "rb") as m:
        fcntl.flock(m, fcntl.LOCK_EX | fcntl.LOCK_NB)
        for args in (["stats"], ["get", "0"], ["append", x]):
            r = zrecord(args[0], os.path.join(three[2], "s"), *args[1:],
                        check=False)
            assert r.returncode == 1 and b"store busy" in r.stderr, args


LOADERX_FOLLOWER = r"""
import os, sys, time
sys.path.insert(0, os.path.join(os.environ["top_srcdir"], "contrib", "python"))
import numpy as np
from loaderx import DenseStore
ds, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
stores = [DenseStore.open(os.path.join(ds, s), follow=True)
          for s in ("img", "lbl")]
print("ready", flush=True)
end = time.monotonic() + float(sys.argv[4])
while any(len(s) < n for s in stores) and time.monotonic() < end:
    time.sleep(0.05)
    for s in stores:
        s.refresh()
old = n - 100
np.savez(out, img=np.stack([stores[0][i] for i in range(old, len(stores[0]))]),
         lbl=np.stack([stores[1][i] for i in range(old, len(stores[1]))]))
"""


def test_dataset_followed_by_a_mount_and_loaderx_while_a_third_host_appends(
        hosts, mount, tmp_path):
    """Issue 22's shape: a dataset folder ds (img u1 (3,16,16) zstd, 3,040
    records; lbl int64 raw), a -o follow mount on h1 and a loaderx
    follower on h2, 100 rows appended to each store on h3 and synced
    store by store: both followers read every new record, right after
    the header moved, with the bytes h3 wrote."""
    import subprocess
    import sys
    h = hosts(4)
    rng = np.random.default_rng(22)
    img = rng.integers(0, 4, (3040, 3, 16, 16), dtype=np.uint8)
    lbl = np.arange(3040, dtype="<i8")
    os.makedirs(os.path.join(h[0], "ds"))
    make_store(os.path.join(h[0], "ds", "img"), "u1", shape=(3, 16, 16),
               codec="zstd", rows=img)
    make_store(os.path.join(h[0], "ds", "lbl"), "<i8", shape=(), rows=lbl)
    f = mount(h[1], "follow=%g" % INTERVAL, name="f1")
    assert os.path.exists(f.path("ds", "img", "records", "3039.npy"))
    out = str(tmp_path / "lx.npz")
    lx = subprocess.Popen(
        [sys.executable, "-c", LOADERX_FOLLOWER, os.path.join(h[2], "ds"),
         "3140", out, str(BOUND)], stdout=subprocess.PIPE,
        env=dict(os.environ))
    assert lx.stdout.readline() == b"ready\n"
    new_img = rng.integers(0, 4, (100, 3, 16, 16), dtype=np.uint8)
    new_lbl = np.arange(3040, 3140, dtype="<i8")
    for name, rows in (("img", new_img), ("lbl", new_lbl)):
        x = str(tmp_path / (name + ".npy"))
        np.save(x, rows)
        zrecord("append", os.path.join(h[3], "ds", name), x)
        zrecord("sync", os.path.join(h[3], "ds", name))
    wait_for(lambda: all(
        json.load(open(f.path("ds", s, "stats")))["records"] == 3140
        for s in ("img", "lbl")), timeout=BOUND,
        what="the mount follower to see both stores' appends")
    for i in range(3040, 3140):
        np.testing.assert_array_equal(
            np.load(f.path("ds", "img", "records", "%d.npy" % i)),
            new_img[i - 3040])
        np.testing.assert_array_equal(
            np.load(f.path("ds", "lbl", "records", "%d.npy" % i)),
            new_lbl[i - 3040])
    with open(f.path("ds", "img", "errors")) as e:
        assert e.read() == ""
    assert lx.wait(timeout=BOUND + 30) == 0
    got = np.load(out)
    np.testing.assert_array_equal(got["img"], new_img)
    np.testing.assert_array_equal(got["lbl"], new_lbl)
