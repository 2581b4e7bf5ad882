"""Crash consistency: kill -9 at random points, 20 kills in all, of
(a) a process appending + syncing through the library, and `zrecord append`
of a large file; (b) the zrecordfs daemon during a cp into append, a sync,
a delete and a compact.  After every kill the store opens (an interrupted
delete/compact is recovered by the first open that may write the files,
a read-only one included), every record a completed sync covered reads
back byte for byte, no half-written record is visible, and a delete or
compact is all or nothing.

Every record is self-describing (row k holds k*256 + arange(256)), so "no
half-written record" and "no wrong bytes" are checked on the whole store:
every row is a valid row, no row appears twice, and the set of rows is
exactly what the operations before the kill allow."""
import os
import random
import shutil
import signal
import subprocess
import threading
import time

import numpy as np
import pytest

from conftest import Mount, binary, is_mounted, npy_bytes, write_file

COLS = 256
RNG = random.Random(20240521)


def rows(first, n):
    return (np.arange(first, first + n, dtype="<u8")[:, None] * COLS +
            np.arange(COLS)).astype("<u4")


def read_store(zr, store):
    """The row numbers the store holds, in index order, after checking
    every byte.  An interrupted delete or compact is recovered by the
    read-only stats itself, which says so."""
    r = zr.run("stats", store)
    msg = r.stderr.decode()
    assert r.returncode == 0, msg
    assert not msg or "interrupted" in msg, msg
    n = zr.stats(store)["records"]
    assert zr.run("verify", store).returncode == 0
    if n == 0:
        return []
    got = zr.load("get", store, *range(n))
    ks = got[:, 0].astype("<u8") // COLS
    assert np.array_equal(got, rows(0, 1)[0] + (ks[:, None] * COLS)
                          .astype("<u4")), "a row holds wrong bytes"
    assert len(set(ks.tolist())) == n, "a row is visible twice"
    return ks.tolist()


# -- (a) processes using the library --------------------------------------
@pytest.mark.parametrize("kill", range(6))
def test_kill_library_writer(zr, tmp, kill):
    store = os.path.join(tmp, "S")
    proc = subprocess.Popen([binary("tests", "rel", "crash_writer"), store,
                             str(RNG.choice([1, 7, 64, 300]))],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    synced, started = [0], threading.Event()

    def follow():
        for line in proc.stdout:
            synced.append(int(line))
            if len(synced) > 2:
                started.set()
        started.set()
    t = threading.Thread(target=follow)
    t.start()
    # Kill at a random point once it is well under way (however slow the
    # machine is today).
    started.wait(timeout=60)
    time.sleep(RNG.uniform(0.0, 0.4))
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    t.join()
    assert len(synced) > 2, proc.stderr.read()
    ks = read_store(zr, store)
    # The store is at a synced header: the last one printed, or the one
    # whose sync had written it when the kill came.
    assert len(ks) >= synced[-1]
    assert ks == list(range(len(ks)))


@pytest.mark.parametrize("kill", range(2))
def test_kill_zrecord_append(zr, tmp, kill):
    store = os.path.join(tmp, "S")
    zr.create(store, "<u4", (COLS,), codec="zstd")
    zr.append_arrays(store, [rows(0, 100)], tmp)
    big = os.path.join(tmp, "big.npy")
    write_file(big, npy_bytes(rows(100, 60000)))  # 60 MiB
    proc = subprocess.Popen([zr.binary, "append", store, big])
    time.sleep(RNG.uniform(0.05, 0.3))
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    ks = read_store(zr, store)
    # One session is all or nothing; killed, it is nothing (or, if it
    # had already closed the store, everything).
    assert ks == list(range(100)) or ks == list(range(60100))


# -- (b) the daemon --------------------------------------------------------
N0 = 8000


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """A raw store of N0 1 KiB rows, copied fresh for every kill."""
    from conftest import Zr
    zr, base = Zr(), str(tmp_path_factory.mktemp("crash"))
    store = os.path.join(base, "S")
    zr.create(store, "<u4", (COLS,), codec="raw")
    zr.append_arrays(store, [rows(0, N0)], base)
    return store


def kill_daemon(m):
    m.proc.send_signal(signal.SIGKILL)
    m.proc.wait()
    subprocess.run(["fusermount3", "-u", "-z", m.mnt])
    assert not is_mounted(m.mnt)


def ctl(mnt, name, text):
    with open(os.path.join(mnt, "S", name), "w") as f:
        f.write(text)


def run_then_kill(m, op, delay):
    """Runs op in a thread, kills the daemon after delay seconds; op may
    fail once the daemon is gone."""
    done = threading.Event()

    def target():
        try:
            op()
        except OSError:
            pass
        finally:
            done.set()
    t = threading.Thread(target=target)
    t.start()
    time.sleep(delay)
    kill_daemon(m)
    t.join(timeout=60)
    assert done.is_set(), "the operation hangs after the daemon died"


def fresh(template, tmp):
    src, mnt = os.path.join(tmp, "src"), os.path.join(tmp, "mnt")
    shutil.copytree(template, os.path.join(src, "S"))
    return src, mnt, os.path.join(src, "S")


OPS = ["append", "sync", "delete", "compact"]


@pytest.mark.parametrize("op,kill", [(op, k) for op in OPS
                                     for k in range(3)])
def test_kill_daemon(zr, template, tmp, op, kill):
    src, mnt, store = fresh(template, tmp)
    m = Mount(src, mnt)
    try:
        # A committed and synced append: durable whatever comes next.
        more = os.path.join(tmp, "more.npy")
        write_file(more, npy_bytes(rows(N0, 500)))
        assert subprocess.run(["cp", more, f"{mnt}/S/append"]).returncode == 0
        ctl(mnt, "sync", "1\n")
        synced = list(range(N0 + 500))
        deleted = set(RNG.sample(synced, 2000))
        if op in ("sync", "compact"):
            # Work for the sync to flush / the compact to reclaim.
            write_file(more, npy_bytes(rows(N0 + 500, 3000)))
            assert subprocess.run(["cp", more, f"{mnt}/S/append"]) \
                .returncode == 0
        if op == "compact":
            ctl(mnt, "delete", "".join(f"{i}\n" for i in deleted))
            ctl(mnt, "sync", "1\n")
        big = os.path.join(tmp, "big.npy")
        write_file(big, npy_bytes(rows(N0 + 500, 40000)))
        action = {
            "append": lambda: subprocess.run(["cp", big, f"{mnt}/S/append"],
                                             stderr=subprocess.DEVNULL),
            "sync": lambda: ctl(mnt, "sync", "1\n"),
            "delete": lambda: ctl(mnt, "delete",
                                  "".join(f"{i}\n" for i in deleted)),
            "compact": lambda: ctl(mnt, "compact", "1\n"),
        }[op]
        # Delays on the scale of each operation, so kills land before,
        # inside and after it.
        reach = {"append": 0.3, "sync": 0.005, "delete": 0.01,
                 "compact": 0.04}[op]
        run_then_kill(m, action, RNG.uniform(0.0, reach))
    finally:
        m.close()
    ks = read_store(zr, store)
    got = set(ks)
    if op == "append":
        # Nothing of an unfinished cp (a finished one is not durable
        # before a sync); the synced records all there.
        assert ks == synced
    elif op == "sync":
        # The sync either completed (the later cp is durable) or not.
        assert ks in (synced, list(range(N0 + 3500)))
    elif op == "delete":
        # Before or after the whole delete: never a mix.
        assert got in (set(synced), set(synced) - deleted)
    else:
        # Compaction moves records, never changes which are live.
        assert got == set(range(N0 + 3500)) - deleted
