"""Followers over S3: a `-o follow` mount of a pushed store, and loaderx's
follow=True, take up a version `zrecord push` publishes after they opened
it -- the new records byte for byte a local mount's, the old ones
unchanged -- within a bounded wait; a version that does not extend the
one they read (another store pushed to the URL, the store shrunk by a
delete, or compacted and grown) is not taken up: the error names the
store and the old records stay.  Real FUSE mounts of the
built daemon; they fail, never skip."""
import os
import time

import numpy as np
import pytest

from conftest import write_npys
from test_s3_mount import Mount

WAIT = 60  # s: a bound on the wait for a push to show, never a sleep


def make_store(zr, path, rows, start=0):
    zr.ok("create", path, "--dtype", "<f4", "--shape", "3,5")
    return append(zr, path, rows, start)


def append(zr, path, rows, start):
    a = np.arange(start * 15, (start + rows) * 15,
                  dtype="<f4").reshape(rows, 3, 5)
    zr.ok("append", path, write_npys(str(path) + f".{start}.npy", a))
    return path


def push(zr, local, url):
    zr.ok("push", local, url, "--part-size", "4096")


def wait_for(what, check):
    end = time.monotonic() + WAIT
    while not check():
        assert time.monotonic() < end, what
        time.sleep(0.05)


def count(m):
    return len(os.listdir(os.path.join(m.mnt, "records")))


def test_a_follow_mount_takes_up_a_push(zr, engine, tmp_path):
    local = make_store(zr, tmp_path / "s", 40)
    url = engine.url("follow/grows")
    push(zr, local, url)
    there = Mount(url, str(tmp_path / "there"), "follow=0.2,batch_size=8")
    try:
        assert count(there) == 40
        old = [there.read("records", f"{i}.npy") for i in range(40)]
        append(zr, local, 300, 40)  # data.zr past one 4 KiB part
        push(zr, local, url)
        wait_for("the push shows in records/", lambda: count(there) == 340)
        here = Mount(local, str(tmp_path / "here"), "ro,batch_size=8")
        try:
            for i in range(340):
                got = there.read("records", f"{i}.npy")
                assert got == here.read("records", f"{i}.npy"), i
                assert i >= 40 or got == old[i], i
            assert there.read("batch", "2-1.npy") == \
                here.read("batch", "2-1.npy")
        finally:
            here.stop()
        assert there.read("errors") == b""
    finally:
        there.stop()


def test_reads_beside_the_take_up_stay_whole(zr, engine, tmp_path):
    """Four threads read the old records over and over while three pushes
    are taken up under them: every read gives the bytes it gave first."""
    import threading
    local = make_store(zr, tmp_path / "s", 40)
    url = engine.url("follow/busy")
    push(zr, local, url)
    there = Mount(url, str(tmp_path / "there"), "follow=0.05,batch_size=8")
    stop, bad = threading.Event(), []

    def reader(old):
        while not stop.is_set():
            for i in range(0, 40, 3):
                if there.read("records", f"{i}.npy") != old[i]:
                    bad.append(i)
    try:
        old = [there.read("records", f"{i}.npy") for i in range(40)]
        threads = [threading.Thread(target=reader, args=(old,))
                   for _ in range(4)]
        for t in threads:
            t.start()
        for k in range(3):
            append(zr, local, 100, 40 + 100 * k)
            push(zr, local, url)
            wait_for("push %d shows" % k,
                     lambda: count(there) == 140 + 100 * k)
        stop.set()
        for t in threads:
            t.join()
        assert bad == [] and there.read("errors") == b""
    finally:
        stop.set()
        there.stop()


def replace(zr, local, tmp_path, how):
    """The store pushed next to the URL, and the words its refusal has."""
    if how == "other":  # another store: more records, other bytes
        return make_store(zr, tmp_path / "o", 90, start=1000), \
            "does not extend"
    zr.ok("delete", local, "3", "7", "11")
    zr.ok("compact", local)
    if how == "shrunk":  # fewer records: the header shrank
        return local, "only appends"
    append(zr, local, 100, 500)  # compacted, then more than before
    return local, "does not extend"


@pytest.mark.parametrize("how", ["other", "shrunk", "compacted"])
def test_a_version_that_does_not_extend_is_not_taken_up(zr, engine,
                                                         tmp_path, how):
    local = make_store(zr, tmp_path / "s", 40)
    url = engine.url(f"follow/replaced-{how}")
    push(zr, local, url)
    there = Mount(url, str(tmp_path / "there"), "follow=0.2,batch_size=8")
    try:
        old = [there.read("records", f"{i}.npy") for i in range(40)]
        src, words = replace(zr, local, tmp_path, how)
        push(zr, src, url)
        wait_for("the follower reports the replaced store",
                 lambda: words.encode() in there.read("errors"))
        assert count(there) == 40
        assert [there.read("records", f"{i}.npy")
                for i in range(40)] == old
    finally:
        there.stop()


def test_loaderx_follow_takes_up_a_push(zr, engine, tmp_path):
    from loaderx import DenseStore
    local = make_store(zr, tmp_path / "s", 10)
    url = engine.url("follow/loaderx")
    push(zr, local, url)
    s = DenseStore.open(url, follow=True)
    try:
        assert len(s) == 10
        append(zr, local, 5, 10)
        push(zr, local, url)
        wait_for("refresh() takes up the push", lambda: s.refresh() == 15)
        want = np.arange(15 * 15, dtype="<f4").reshape(15, 3, 5)
        assert np.array_equal(s[np.arange(15)], want)
    finally:
        s.close()
