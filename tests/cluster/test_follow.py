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
