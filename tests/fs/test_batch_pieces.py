"""A dense batch file is gathered in pieces of about 1 MiB of rows as
reads reach them (src/fs/batch.c): reads at odd offsets, in any order,
from one process or many threads at once, get exactly the bytes of
a whole gather, and a delete between two reads of an
open file does not change the pieces it had not read yet.  Both with the
page cache and with -o direct_batches, where each read reaches the daemon
at its own offset and size."""
import concurrent.futures
import os

import numpy as np
import pytest

from fsutil import make_store
from test_batch_cache import model_delete, npy_bytes
from test_stalls import write

ROW = (300, 256)        # 300 KiB rows: 3 per piece, pieces end mid-page
N = 40
B = 16                  # 4.7 MiB, 6 pieces, the last one short


def rows(values):
    return np.stack([np.full(ROW, v, dtype="<i4") for v in values])


def store(src):
    make_store(os.path.join(src, "s"), "<i4", shape=ROW, codec="zstd",
               rows=rows(range(N)))


def whole(m, name, values=range(N)):
    """The batch's bytes as np.save writes its rows (which the daemon's
    and `zrecord batch`'s whole gathers equal, test_batch_cache)."""
    idx = np.load(m.path("s", "batch", name + ".indices.npy"))
    return npy_bytes(rows(values)[idx])


def odd_ranges(size):
    """Ranges that start and end off page and piece boundaries, covering
    the file, last first."""
    cuts = sorted({0, size} | {min(size, k * 1048573 + 77)
                               for k in range(size // 1048573 + 1)} |
                  {min(size, k * 300007) for k in range(size // 300007 + 1)})
    return list(reversed(list(zip(cuts, cuts[1:]))))


@pytest.fixture(params=["cached", "direct_batches"])
def batch_mount(request, src, mount):
    store(src)
    opts = ["batch_size=%d" % B]
    if request.param == "direct_batches":
        opts.append("direct_batches")
    return mount(src, *opts)


def test_odd_reads_in_any_order_equal_a_whole_gather(batch_mount):
    m = batch_mount
    for seed in range(3):
        want = whole(m, "%d-5" % seed)
        fd = os.open(m.path("s", "batch", "%d-5.npy" % seed), os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
            assert os.fstat(fd).st_size == len(want)
            for lo, hi in odd_ranges(len(want)):
                assert os.pread(fd, hi - lo, lo) == want[lo:hi], (lo, hi)
        finally:
            os.close(fd)


def test_threads_reading_one_fresh_handle(batch_mount):
    m = batch_mount
    for seed in range(3):
        want = whole(m, "%d-2" % seed)
        fd = os.open(m.path("s", "batch", "%d-2.npy" % seed), os.O_RDONLY)
        try:
            ranges = odd_ranges(len(want))
            with concurrent.futures.ThreadPoolExecutor(8) as pool:
                got = list(pool.map(lambda r: os.pread(fd, r[1] - r[0],
                                                       r[0]), ranges))
        finally:
            os.close(fd)
        for (lo, hi), g in zip(ranges, got):
            assert g == want[lo:hi], (seed, lo, hi)


def test_delete_between_reads_keeps_the_unread_pieces(batch_mount):
    """Read the header and a little of piece 0, delete records the later
    pieces hold, read the rest: the batch of the open, whole."""
    m = batch_mount
    want = whole(m, "9-4")
    idx = np.load(m.path("s", "batch", "9-4.indices.npy"))
    gone = sorted(set(int(i) for i in idx[-4:]) - {N - 1})
    assert gone
    fd = os.open(m.path("s", "batch", "9-4.npy"), os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
        assert os.pread(fd, 200, 0) == want[:200]
        write(m.path("s", "delete"), " ".join(map(str, gone)) + "\n")
        rest = b"".join(os.pread(fd, hi - lo, lo)
                        for lo, hi in reversed(odd_ranges(len(want))))
    finally:
        os.close(fd)
    assert rest == want
    # the name itself shows the batch of the records left
    assert read_all(m.path("s", "batch", "9-4.npy")) == \
        whole(m, "9-4", model_delete(range(N), gone)) != want


def read_all(path):
    with open(path, "rb") as f:
        return f.read()


def test_delete_meets_the_whole_file_gather(src, mount):
    """From the first read on, the open's own thread gathers every piece
    (src/tree/batch_gather.c) while the reads take them: a delete written
    while it runs (an 11-piece batch, read 4 KiB in) waits for or parks
    it, never changes it: the rest read in order is the open's batch, and
    the store's errors file stays empty."""
    store(src)
    m = mount(src, "batch_size=32")
    values = list(range(N))
    for seed in range(3):
        name = "%d-1" % (20 + seed)
        want = whole(m, name, values)
        idx = np.load(m.path("s", "batch", name + ".indices.npy"))
        gone = sorted(set(int(i) for i in idx[-3:]) - {len(values) - 1})
        fd = os.open(m.path("s", "batch", name + ".npy"), os.O_RDONLY)
        try:
            got = [os.pread(fd, 4096, 0)]
            write(m.path("s", "delete"), "%d\n" % gone[0])
            values = model_delete(values, gone[:1])
            while sum(map(len, got)) < len(want):
                got.append(os.pread(fd, 1 << 17, sum(map(len, got))))
        finally:
            os.close(fd)
        assert b"".join(got) == want, name
    assert read_all(m.path("s", "errors")) == b""
