"""Batch files through the page cache: they map (np.load mmap_mode='r',
mmap.mmap) and equal a plain read and `zrecord batch`; the kernel keeps
their pages from open to open (a repeated read reaches no daemon); an open
or mapped batch file keeps its bytes across appends and deletes (also when
it had not read anything before them, a dataset's across a delete of one
stream) while its name shows the new batch; an open that a delete overtook
serves the new batch past the page cache; a first read during a compact
parks; processes racing on one batch file get the same bytes."""
import errno
import hashlib
import io
import mmap
import multiprocessing
import os
import time

import numpy as np
import pytest

from fsutil import make_store, zrecord
from test_stalls import background, slow_flush_mount, write

ROW = (32, 64)          # 8 KiB rows: a batch of 16 spans several reads
B = 16


def rows(first, n):
    return np.stack([np.full(ROW, i, dtype="<i4")
                     for i in range(first, first + n)])


def dense(src, n=40):
    path = os.path.join(src, "s")
    make_store(path, "<i4", shape=ROW, codec="zstd", rows=rows(0, n))
    return path


def read(path):
    with open(path, "rb") as f:
        return f.read()


def npy_bytes(a):
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()


def expected(m, name, values):
    """The bytes batch NAME must have when record i holds values[i]: its
    rows (np.save's own bytes) at the indices its .indices.npy names."""
    idx = np.load(m.path("s", "batch", name + ".indices.npy"))
    return npy_bytes(np.stack([np.full(ROW, values[i], dtype="<i4")
                               for i in idx]))


def daemon_writes(m):
    """Bytes the daemon has written (to /dev/fuse: every reply)."""
    with open("/proc/%d/io" % m.proc.pid) as f:
        for line in f:
            if line.startswith("wchar:"):
                return int(line.split()[1])
    raise AssertionError("no wchar in /proc/PID/io")


def evict(path):
    """Drops the file's unmapped pages from the page cache."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def cli_batch(store, *args):
    return zrecord("batch", store, *args, "-o", "-").stdout


def test_mmap_equals_read_and_cli(src, mount):
    store = dense(src)
    rag = os.path.join(src, "r")
    make_store(rag, "<f4", ragged=True, codec="zstd",
               records=[np.arange(1 + i * 300, dtype="<f4")
                        for i in range(30)])
    m = mount(src, "ro", "batch_size=%d" % B)
    cases = [("s/batch/3-5.npy", store, ["--seed", 3, "--step", 5,
                                         "--batch-size", B]),
             ("s/batch/cyclic/8/1-2.npy", store,
              ["--mode", "cyclic", "--batch-size", 8, "--seed", 1,
               "--step", 2]),
             ("r/batch/4-1.npz", rag, ["--seed", 4, "--step", 1,
                                       "--batch-size", B])]
    for rel, st, args in cases:
        path = m.path(*rel.split("/"))
        idx_path = path[:-4] + ".indices.npy"
        for p, w in ((path, cli_batch(st, *args)),
                     (idx_path, cli_batch(st, *args, "--indices"))):
            with open(p, "rb") as f, mmap.mmap(f.fileno(), 0,
                                               access=mmap.ACCESS_READ) as mm:
                got = mm[:]
            assert got == read(p), p
            if p.endswith(".npz"):
                # the mount pads ragged members' headers: same arrays
                with np.load(io.BytesIO(got)) as a, \
                        np.load(io.BytesIO(w)) as b:
                    assert sorted(a.files) == sorted(b.files)
                    for k in a.files:
                        assert (a[k] == b[k]).all(), (p, k)
                continue
            assert got == w, p
            mapped = np.load(p, mmap_mode="r")
            assert isinstance(mapped, np.memmap)
            assert (mapped == np.load(io.BytesIO(w))).all(), p
            assert npy_bytes(np.asarray(mapped)) == w, p
            del mapped


def test_pages_are_kept_across_opens(src, mount):
    dense(src)
    m = mount(src, "batch_size=%d" % B)
    path = m.path("s", "batch", "7-3.npy")
    size = os.stat(path).st_size
    assert size > 4 * 4096
    first = read(path)
    w0 = daemon_writes(m)
    for _ in range(3):
        assert read(path) == first
    # lookups, opens and releases only: no READ reply carried the bytes
    assert daemon_writes(m) - w0 < size // 4
    # the measure can fail: without the pages, the daemon sends the file
    evict(path)
    w1 = daemon_writes(m)
    assert read(path) == first
    assert daemon_writes(m) - w1 >= size


def test_append_keeps_open_and_mapped_files(src, mount):
    dense(src)
    m = mount(src, "batch_size=%d" % B)
    path = m.path("s", "batch", "5-0.npy")
    old = expected(m, "5-0", range(40))
    ino = os.stat(path).st_ino
    with open(path, "rb") as f:
        mapped = np.load(path, mmap_mode="r")
        assert f.read() == old
        with open(m.path("s", "append"), "wb") as a:
            np.save(a, rows(40, 200))
        # the name shows the batch of 240 records, under a new inode
        new = expected(m, "5-0", range(240))
        assert new != old
        assert read(path) == new
        assert os.stat(path).st_ino != ino
        # the open file and the mapping keep the old batch, also when the
        # kernel has to ask the daemon again
        evict(path)
        f.seek(0)
        assert f.read() == old
        assert npy_bytes(np.asarray(mapped)) == old
        assert os.fstat(f.fileno()).st_size == len(old)
        del mapped


def model_delete(values, idx):
    """What a delete of idx leaves: the last record fills each hole,
    highest hole first."""
    values = list(values)
    for i in sorted(idx, reverse=True):
        values[i] = values[-1]
        values.pop()
    return values


def test_delete_keeps_unread_open_and_mapped_files(src, mount):
    """Handles opened, not yet read, before a delete that changes their
    batch still serve the batch of their open."""
    dense(src)
    m = mount(src, "batch_size=%d" % B)
    name = "9-4"
    path = m.path("s", "batch", name + ".npy")
    old = expected(m, name, range(40))
    gone = sorted(set(np.load(m.path("s", "batch", name +
                                     ".indices.npy"))[:3]) | {39})
    f = open(path, "rb")
    g = open(path, "rb")
    mm = mmap.mmap(g.fileno(), 0, access=mmap.ACCESS_READ)
    with f, g, mm:
        write(m.path("s", "delete"), " ".join(map(str, gone)) + "\n")
        values = model_delete(range(40), gone)
        assert read(path) == expected(m, name, values) != old
        assert mm[:] == old
        assert f.read() == old
        evict(path)
        f.seek(0)
        assert f.read() == old


def test_dataset_batch_open_across_delete_of_one_stream(src, mount):
    """A dataset's batch file opened, not read, before a delete of one of
    its streams serves the batch of its open: the delete makes it gather
    first, from both streams."""
    ds = os.path.join(src, "ds")
    for name in ("a", "b"):
        make_store(os.path.join(ds, name), "<i4", shape=ROW, codec="zstd",
                   rows=rows(0, 40))
    m = mount(src, "batch_size=%d" % B)
    path = m.path("ds", "@batch", "3-1.npz")
    old = read(path)
    with open(path, "rb") as f:
        write(m.path("ds", "a", "delete"), "0 5\n")
        # unequal lengths: the name draws over the common length now
        assert read(path) != old
        os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
        w0 = daemon_writes(m)
        assert f.read() == old
        assert daemon_writes(m) - w0 >= len(old)   # from f's own handle


def test_open_overtaken_by_delete_serves_the_new_batch(src, mount):
    """An open of an inode looked up before a delete (through an O_PATH
    descriptor, which skips the lookup) gets the batch drawn anew, past
    the page cache: it cannot be mapped shared."""
    dense(src)
    m = mount(src, "batch_size=%d" % B)
    path = m.path("s", "batch", "2-6.npy")
    old = read(path)
    held = os.open(path, os.O_PATH)
    try:
        write(m.path("s", "delete"), "0 1 2\n")
        new = expected(m, "2-6", model_delete(range(40), [0, 1, 2]))
        assert new != old
        with open("/proc/self/fd/%d" % held, "rb") as f:
            assert f.read() == new
            with pytest.raises(OSError):
                mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        assert read(path) == new
    finally:
        os.close(held)


def test_first_read_during_compact_parks(src, mount, monkeypatch):
    """Batch files opened before a (slow) compact of their store: their
    first reads park until it is done, and the other store is served
    meanwhile by the mount's two threads."""
    for name in ("s", "t"):
        make_store(os.path.join(src, name), "<i4", shape=ROW,
                   codec="zstd", rows=rows(0, 40))
    m = slow_flush_mount(mount, src, monkeypatch, "max_threads=2",
                         "batch_size=%d" % B)
    write(m.path("s", "delete"), "39\n")
    values = range(39)
    names = ["%d-0" % seed for seed in range(4)]
    want = {n: expected(m, n, values) for n in names}
    files = {n: open(m.path("s", "batch", n + ".npy"), "rb")
             for n in names}
    comp, comp_box = background(lambda: write(m.path("s", "compact")))
    try:
        time.sleep(0.3)                        # compact holds store s
        assert comp.is_alive()
        readers = {n: background(f.read) for n, f in files.items()}
        time.sleep(0.2)
        for i in range(10):
            assert (np.load(m.path("t", "records", "%d.npy" % i)) ==
                    i).all()
        assert comp.is_alive(), "compact ended before store t was read"
        comp.join(120)
        assert "error" not in comp_box, comp_box
        for n, (t, box) in readers.items():
            t.join(60)
            assert box.get("value") == want[n], n
    finally:
        for f in files.values():
            f.close()


def digest_reads(path, times):
    out = []
    for _ in range(times):
        with open(path, "rb") as f:
            out.append(hashlib.sha256(f.read()).hexdigest())
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0,
                                              access=mmap.ACCESS_READ) as mm:
            out.append(hashlib.sha256(mm[:]).hexdigest())
    return out


def test_processes_racing_on_one_batch_file(src, mount):
    dense(src)
    m = mount(src, "batch_size=%d" % B)
    ctx = multiprocessing.get_context("fork")
    for seed in range(3):
        path = m.path("s", "batch", "%d-1.npy" % seed)
        with ctx.Pool(4) as pool:
            got = pool.starmap(digest_reads, [(path, 3)] * 8)
        want = hashlib.sha256(expected(m, "%d-1" % seed,
                                       range(40))).hexdigest()
        assert {d for run in got for d in run} == {want}


def test_direct_batches_bypass_the_page_cache(src, mount):
    """-o direct_batches: the same bytes, each read served by the daemon
    (no page cache), and mapping is refused (ENODEV)."""
    store = dense(src)
    m = mount(src, "ro", "batch_size=%d" % B, "direct_batches")
    path = m.path("s", "batch", "7-3.npy")
    want = cli_batch(store, "--seed", 7, "--step", 3, "--batch-size", B)
    size = os.stat(path).st_size
    assert size == len(want)
    w0 = daemon_writes(m)
    for _ in range(2):
        assert read(path) == want
    assert daemon_writes(m) - w0 >= 2 * size
    with pytest.raises(OSError) as e:
        np.load(path, mmap_mode="r")
    assert e.value.errno == errno.ENODEV
