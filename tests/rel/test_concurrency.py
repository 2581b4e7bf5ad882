"""Concurrency: many readers -- threads and processes, through the library
and through a zrecordfs mount -- while one writer appends, for a bounded
time; every byte checked, no error, no deadlock.  Then the daemon is told
to stop (SIGTERM) while the readers are still reading: the unmount
completes, and every committed record is on disk."""
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np

import mount_reader as mr
from conftest import binary, is_mounted, npy_bytes

SECONDS = 6


def test_library_gather_while_appending(tmp):
    r = subprocess.run([binary("tests", "rel", "stress_gather"), tmp,
                        str(SECONDS), "4"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    fields = dict(kv.split("=") for kv in r.stdout.decode().split())
    assert int(fields["reads"]) > 0 and int(fields["appends"]) > 0


class Writer(threading.Thread):
    """Appends batches of 64 D rows and 64 R records through the mount."""

    def __init__(self, mnt, stopfile):
        super().__init__()
        self.mnt, self.stopfile = mnt, stopfile
        self.committed, self.error = 64, None
        self.halt = threading.Event()

    def append(self, store, data):
        with open(os.path.join(self.mnt, store, "append"), "wb") as f:
            f.write(data)

    def run(self):
        try:
            while not self.halt.is_set():
                n = self.committed
                self.append("D", npy_bytes(mr.dense_rows(n, 64)))
                self.append("R", b"".join(npy_bytes(mr.ragged_rec(i))
                                          for i in range(n, n + 64)))
                self.committed = n + 64
        except OSError as e:
            if not (os.path.exists(self.stopfile) and e.errno in mr.GONE):
                self.error = e
        except Exception as e:  # a wrong byte is a failure too
            self.error = e


class Reader(threading.Thread):
    def __init__(self, mnt, stopfile, seed):
        super().__init__()
        self.args, self.done, self.error = (mnt, 60, stopfile, seed), 0, None

    def run(self):
        try:
            self.done = mr.read_loop(*self.args)
        except Exception as e:
            self.error = e


def make_stores(zr, src, tmp):
    zr.create(os.path.join(src, "D"), "<u4", (mr.COLS,))
    zr.append_arrays(os.path.join(src, "D"), [mr.dense_rows(0, 64)], tmp)
    zr.create(os.path.join(src, "R"), "<u2", codec="raw")
    zr.append_arrays(os.path.join(src, "R"),
                     [mr.ragged_rec(i) for i in range(64)], tmp)


def test_mount_readers_writer_then_unmount(zr, tmp, mounter):
    src, mnt = os.path.join(tmp, "src"), os.path.join(tmp, "mnt")
    stopfile = os.path.join(tmp, "stopping")
    make_stores(zr, src, tmp)
    m = mounter(src, mnt)
    writer = Writer(mnt, stopfile)
    readers = [Reader(mnt, stopfile, s) for s in range(3)]
    procs = [subprocess.Popen(
        [sys.executable, mr.__file__, mnt, "60", stopfile],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    for t in [writer] + readers:
        t.start()
    time.sleep(SECONDS)
    # Under full load: stop the daemon the way an init system does.
    with open(stopfile, "w"):
        pass
    writer.halt.set()
    m.proc.send_signal(signal.SIGTERM)
    try:
        rc = m.proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        rc = "timeout"
    for t in [writer] + readers:
        t.join(timeout=60)
        assert not t.is_alive(), "a reader or the writer hangs"
    outs = [p.communicate(timeout=60) for p in procs]
    assert rc == 0, ("daemon did not exit cleanly", rc, m.output())
    assert not is_mounted(mnt)

    assert writer.error is None, writer.error
    for t in readers:
        assert t.error is None, t.error
        assert t.done > 0
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err.decode()
        assert int(out) > 0

    # Every append whose close succeeded is on disk, and nothing else
    # (the one in flight at SIGTERM may or may not have made it).
    n = zr.stats(os.path.join(src, "D"))["records"]
    assert writer.committed <= n <= writer.committed + 64
    assert zr.run("verify", os.path.join(src, "D")).returncode == 0
    assert zr.run("verify", os.path.join(src, "R")).returncode == 0
    got = zr.load("get", os.path.join(src, "D"), *range(n))
    assert np.array_equal(got, mr.dense_rows(0, n))
    nr = zr.stats(os.path.join(src, "R"))["records"]
    assert writer.committed <= nr <= writer.committed + 64
    # Loading tens of thousands of .npz members is slow: check the tail
    # and a random sample (verify above decoded them all).
    idx = sorted(set(range(max(0, nr - 128), nr)) |
                 set(np.random.default_rng(0).integers(0, nr, 1000).tolist()))
    for i, a in zip(idx, zr.load("get", os.path.join(src, "R"), *idx)):
        assert np.array_equal(a, mr.ragged_rec(i)), i


def test_ro_mount_with_command_readers(zr, tmp, mounter):
    """Shared locks: `zrecord get` / `batch` processes and readers of a
    read-only mount work on the same stores at once, every byte checked."""
    src, mnt = os.path.join(tmp, "src"), os.path.join(tmp, "mnt")
    stopfile = os.path.join(tmp, "never")
    make_stores(zr, src, tmp)
    mounter(src, mnt, ["ro"])
    readers = [Reader(mnt, stopfile, s) for s in range(2)]
    for t in readers:
        t.args = (mnt, 3, stopfile, t.args[3])
        t.start()
    rng = np.random.default_rng(1)
    deadline = time.monotonic() + 3
    rounds = 0
    while time.monotonic() < deadline:
        idx = rng.integers(0, 64, 8).tolist()
        got = zr.load("get", os.path.join(src, "D"), *idx)
        assert np.array_equal(got, mr.dense_rows(0, 64)[idx])
        for i, a in zip(idx, zr.load("get", os.path.join(src, "R"), *idx)):
            assert np.array_equal(a, mr.ragged_rec(i))
        b = zr.load("batch", os.path.join(src, "D"), "--seed", rounds,
                    "--step", 3, "--batch-size", 8)
        ks = b[:, 0] // mr.COLS
        assert np.array_equal(b, mr.dense_rows(0, 64)[ks])
        rounds += 1
    for t in readers:
        t.join(timeout=60)
        assert not t.is_alive()
        assert t.error is None, t.error
        assert t.done > 0
    assert rounds > 0
