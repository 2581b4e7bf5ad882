"""test_locks.py - the store's flock spans GlusterFS clients: read-only
mounts on two hosts keep a read-write mount and `zrecord append` on a third
host out with "store busy", and a reader killed with SIGKILL lets go."""
import os
import signal

import numpy as np
import pytest

from fsutil import Mount, make_store, unmount, wait_for, zrecord

ROWS = np.arange(20, dtype="<i8")


@pytest.fixture
def three(hosts):
    dirs = hosts(3)
    make_store(os.path.join(dirs[0], "s"), "<i8", shape=(), rows=ROWS)
    return dirs


def append_through(d, tmp_path):
    f = str(tmp_path / "more.npy")
    np.save(f, np.arange(5, dtype="<i8"))
    return zrecord("append", os.path.join(d, "s"), f, check=False)


def test_readers_on_two_hosts_keep_a_third_hosts_writer_out(
        three, mount, tmp_path):
    mount(three[0], "ro", name="r0")
    mount(three[1], "ro", name="r1")
    r = append_through(three[2], tmp_path)
    assert r.returncode != 0
    assert b"store busy" in r.stderr
    with pytest.raises(AssertionError, match="store busy"):
        Mount(three[2], str(tmp_path / "rw"))
    assert "records\": 20" in zrecord(
        "stats", os.path.join(three[2], "s")).stdout.decode()


def test_a_killed_reader_releases_its_lock(three, mount, tmp_path):
    readers = [mount(three[0], "ro", name="r0"), mount(three[1], "ro",
                                                     name="r1")]
    for m in readers:
        m.proc.send_signal(signal.SIGKILL)
        m.proc.wait()
        unmount(m.mnt)
        assert not os.path.ismount(m.mnt)
    # the lock goes with the killed client's file: a liveness bound only
    wait_for(lambda: append_through(three[2], tmp_path).returncode == 0,
             timeout=30, what="the killed readers' locks to go")
    w = mount(three[2], name="rw")
    assert len(os.listdir(w.path("s", "records"))) == 25
