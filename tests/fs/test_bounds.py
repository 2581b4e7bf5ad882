"""A name is untrusted input: a batch name whose file would be too large
fails with EFBIG at lookup, at once and without the daemon allocating it,
every refused batch name leaves its reason in the errors file, and a batch
is planned once per open, not per stat."""
import errno
import os
import time

import numpy as np
import pytest

from fsutil import make_store


def rss_peak(pid):
    """The daemon's peak resident set, in bytes (VmHWM)."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM for pid %d" % pid)


def stores(src):
    make_store(os.path.join(src, "rag"), "<f4", ragged=True, codec="zstd",
               records=[np.ones(i % 7 + 1, "<f4") for i in range(150)])
    make_store(os.path.join(src, "tok"), "<i4", shape=(512,), codec="raw",
               rows=np.zeros((64, 512), "<i4"))


def efbig(path):
    with pytest.raises(OSError) as e:
        os.stat(path)
    assert e.value.errno == errno.EFBIG, e.value
    with pytest.raises(OSError) as e:
        with open(path, "rb") as f:
            f.read()
    assert e.value.errno == errno.EFBIG, e.value


def test_huge_batches_fail_at_lookup_without_memory(src, mount):
    stores(src)
    m = mount(src)
    before = rss_peak(m.proc.pid)
    # 2^24 ragged members: over the .npz member limit
    efbig(m.path("rag", "batch", "iid", "16777216", "0-0.npz"))
    # 2^24 rows of 2 KiB: 32 GiB, over the default cap (<= 1 GiB)
    efbig(m.path("tok", "batch", "iid", "16777216", "0-0.npy"))
    efbig(m.path("tok", "batch", "sequential", "16777216", "5-3.npy"))
    # repeated lookups stay cheap too
    for step in range(50):
        efbig(m.path("tok", "batch", "iid", "16777216", "0-%d.npy" % step))
    grew = rss_peak(m.proc.pid) - before
    assert grew < 64 << 20, "daemon peak RSS grew by %d bytes" % grew
    with open(m.path("tok", "errors")) as f:
        assert "max_batch_bytes" in f.read()


def lookup_errno(path):
    with pytest.raises(OSError) as e:
        os.stat(path)
    return e.value.errno


def test_refused_batch_names_leave_their_reason(src, mount):
    """A cyclic batch of W*B records over a store of fewer is EINVAL, and
    the store's errors file says why (as it does for EFBIG)."""
    stores(src)
    make_store(os.path.join(src, "ten"), "<i4", shape=(2,),
               rows=np.zeros((10, 2), "<i4"))
    m = mount(src, "world=2")
    assert lookup_errno(m.path("ten", "batch", "cyclic", "6",
                               "0-0.npy")) == errno.EINVAL
    # the packed form of a ragged store, whose own EINVAL names the form
    assert lookup_errno(m.path("rag", "batch", "cyclic", "100",
                               "0-0.packed.npz")) == errno.EINVAL
    # a batch that fits is served
    assert np.load(m.path("ten", "batch", "cyclic", "5", "0-0.npy")).shape \
        == (5, 2)
    with open(m.path("ten", "errors")) as f:
        text = f.read()
    assert "batch of 6: sampler: cyclic needs world * batch size (12) <= " \
        "length (10) (EINVAL)" in text, text
    with open(m.path("rag", "errors")) as f:
        text = f.read()
    assert "(200) <= length (150) (EINVAL)" in text, text
    assert ".npz form holds any records" not in text, text


def test_max_batch_bytes_option(src, mount):
    stores(src)
    row = 512 * 4
    m = mount(src, "max_batch_bytes=64K")
    # 31 rows + header fit in 64 KiB, 32 rows do not
    ok = m.path("tok", "batch", "iid", "31", "1-2.npy")
    assert np.load(ok).shape == (31, 512)
    assert os.stat(ok).st_size <= 64 << 10 < 32 * row + 128
    efbig(m.path("tok", "batch", "iid", "32", "1-2.npy"))
    # a ragged batch is checked against its exact planned size as well
    assert len(np.load(m.path("rag", "batch", "iid", "8", "0-0.npz"))) == 8
    efbig(m.path("rag", "batch", "iid", "1000", "0-0.npz"))
    # indices are 8 bytes a row
    assert len(np.load(m.path("tok", "batch", "iid", "8000",
                              "0-0.indices.npy"))) == 8000
    efbig(m.path("tok", "batch", "iid", "8192", "0-0.indices.npy"))


def test_bad_max_batch_bytes_is_refused(src, tmp_path):
    from fsutil import ZRECORDFS
    import subprocess
    stores(src)
    mnt = tmp_path / "m"
    mnt.mkdir()
    for bad in ("max_batch_bytes=0", "max_batch_bytes=12X",
                "max_batch_bytes=1K", "max_batch_bytes="):
        r = subprocess.run([ZRECORDFS, src, str(mnt), "-f", "-o", bad],
                           capture_output=True, timeout=20)
        assert r.returncode != 0 and b"bad option" in r.stderr, bad
        assert not os.path.ismount(mnt)


def test_stat_of_ragged_batch_does_not_replan(src, mount):
    """getattr answers from the node: thousands of stats of one batch file
    cost far less than as many plans of a large batch would."""
    stores(src)
    m = mount(src)
    path = m.path("rag", "batch", "iid", "65535", "0-0.npz")
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        t = time.process_time()
        for _ in range(2000):
            assert os.fstat(f.fileno()).st_size == size
        assert time.process_time() - t >= 0  # (timing is the bench's job)
    stat = open("/proc/%d/stat" % m.proc.pid).read().split()
    # utime + stime of the daemon, in clock ticks: 2000 plans of 65535
    # records would take many seconds of CPU
    assert int(stat[13]) + int(stat[14]) < 20 * os.sysconf("SC_CLK_TCK")
