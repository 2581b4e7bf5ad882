"""One busy store never stalls the mount: while a compact of one store runs
(slowed down by the libiotrace shim, which delays every flush), requests of
that store park without holding the mount's threads, and the other stores
are served; reads of a store go on while it syncs; -o max_threads works."""
import os
import threading
import time

import numpy as np

from fsutil import make_store, slow_flush_env

DELAY_MS = 1500


def slow_flush_mount(mount, src, monkeypatch, *opts):
    """A mount whose daemon sleeps DELAY_MS in every fsync/fdatasync."""
    with monkeypatch.context() as mp:
        for name, value in slow_flush_env(DELAY_MS).items():
            mp.setenv(name, value)
        return mount(src, *opts)


def stores(src):
    rows = np.arange(300 * 256, dtype="<i4").reshape(300, 256)
    for name in ("a", "b"):
        make_store(os.path.join(src, name), "<i4", shape=(256,),
                   codec="zstd", rows=rows)
    return rows


def background(fn):
    box = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as e:  # reported by the test thread
            box["error"] = e
    t = threading.Thread(target=run)
    t.start()
    return t, box


def write(path, text="1\n"):
    with open(path, "w") as f:
        f.write(text)


def test_compact_of_one_store_does_not_stall_the_others(src, mount,
                                                        monkeypatch):
    rows = stores(src)
    m = slow_flush_mount(mount, src, monkeypatch, "max_threads=2")
    write(m.path("a", "delete"), "0 1 2\n")   # (flushes: slow, but done)
    comp, comp_box = background(lambda: write(m.path("a", "compact")))
    time.sleep(0.3)                            # compact holds store a now
    assert comp.is_alive()
    # More requests of store a than the mount has threads: they park.
    parked = [background(lambda i=i: np.load(
        m.path("a", "records", "%d.npy" % i))) for i in range(3, 19)]
    time.sleep(0.2)
    # Store b is served meanwhile, by the mount's one free thread.
    for i in range(40):
        assert (np.load(m.path("b", "records", "%d.npy" % i)) ==
                rows[i]).all()
    assert np.load(m.path("b", "batch", "3-4.npy")).shape == (256, 256)
    assert comp.is_alive(), "compact ended before store b was read"
    comp.join(120)
    assert "error" not in comp_box, comp_box
    for (t, box), i in zip(parked, range(3, 19)):
        t.join(60)
        assert "error" not in box, box
        # after the delete of 0, 1, 2: 299, 298, 297 moved into 0..2
        assert (box["value"] == rows[i]).all()
    assert m.proc.poll() is None


def test_sync_does_not_block_reads_of_its_store(src, mount, monkeypatch):
    rows = stores(src)
    m = slow_flush_mount(mount, src, monkeypatch)
    sync, box = background(lambda: write(m.path("a", "sync")))
    time.sleep(0.3)
    assert sync.is_alive()
    for i in range(50):
        assert (np.load(m.path("a", "records", "%d.npy" % i)) ==
                rows[i]).all()
    assert np.load(m.path("a", "batch", "1-1.npy")).shape == (256, 256)
    with open(m.path("a", "stats")) as f:
        assert '"records": 300' in f.read()
    assert sync.is_alive(), "sync ended before the reads: nothing shown"
    sync.join(60)
    assert "error" not in box, box


def test_max_threads_is_honoured_quietly(src, mount):
    stores(src)
    m = mount(src, "max_threads=3")
    threads = [background(lambda i=i: np.load(
        m.path("a", "records", "%d.npy" % i))) for i in range(64)]
    for t, box in threads:
        t.join(60)
        assert "error" not in box, box
    # the session's workers never exceed 3 (plus main, the pool and the
    # kept buffers' reaper; the prefetcher's thread names itself zrpf and
    # the signal thread zrsig)
    names = [open("/proc/%d/task/%s/comm" % (m.proc.pid, t)).read()
             for t in os.listdir("/proc/%d/task" % m.proc.pid)]
    named = [n for n in names if n.strip() in ("zrpf", "zrsig")]
    assert len(named) == 2, names
    names = [n for n in names if n.strip() not in ("zrpf", "zrsig")]
    assert len(names) <= 3 + 1 + os.cpu_count() + 1, names
    assert m.stop() == 0
    assert "max threads" not in m.stderr and "Ignoring" not in m.stderr, \
        m.stderr
