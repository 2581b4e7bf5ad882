"""A gather over S3 reads its batch's ranges at once (src/lib/store_stage.c:
records sorted, neighbours within 256 KiB merged, ranges of at most 8
MiB, read on up to 32 I/O threads): every record comes back as the local
store has it, whatever the order, repeats, gaps and range splits, and
the connections a process opens stay bounded."""
import os

import numpy as np
import pytest

from conftest import write_npys

REC = 64 << 10  # a 64 KiB record: 128 of them span an 8 MiB range


@pytest.fixture(scope="module")
def big(zr, engine, tmp_path_factory):
    """A raw dense store of 384 random 64 KiB records (24 MiB, so a
    batch's ranges split at 8 MiB) and a zstd ragged one, uploaded."""
    tmp = tmp_path_factory.mktemp("big")
    rng = np.random.default_rng(4)
    rows = rng.integers(0, 255, (384, REC), dtype="u1")
    dense = tmp / "dense"
    zr.ok("create", dense, "--dtype", "u1", "--shape", str(REC))
    zr.ok("append", dense, write_npys(tmp / "d.npy", rows))
    recs = [rng.integers(0, 9, int(n), dtype="<i4")
            for n in rng.integers(1, 40000, 300)]
    ragged = tmp / "ragged"
    zr.ok("create", ragged, "--dtype", "<i4", "--ragged", "--codec", "zstd")
    zr.ok("append", ragged, write_npys(tmp / "r.npy", *recs))
    return {"dense": (engine.upload(dense, "big/dense"), rows),
            "ragged": (engine.upload(ragged, "big/ragged"), recs)}


def _plans(n, rng):
    yield np.arange(n)[::-1]                         # all, backwards
    yield rng.integers(0, n, 256)                    # random, repeats
    yield np.array([0, n - 1, 0, n // 2, n - 1])     # far apart, repeats
    yield np.array([n // 3, n // 3 + 1])             # two neighbours


def test_dense_batches_match(big):
    from loaderx import DenseStore
    url, rows = big["dense"]
    rng = np.random.default_rng(1)
    with DenseStore.open(url) as s:
        for idx in _plans(len(rows), rng):
            np.testing.assert_array_equal(s.gather(idx), rows[idx])


def test_ragged_batches_match(big):
    from loaderx import RaggedStore
    url, recs = big["ragged"]
    rng = np.random.default_rng(2)
    with RaggedStore.open(url) as s:
        for idx in _plans(len(recs), rng):
            got = s.gather(idx)
            assert len(got) == len(idx)
            for k, i in enumerate(idx):
                np.testing.assert_array_equal(got[k], recs[i])


def _connections(port):
    """Established TCP connections of this process to port."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            link = os.readlink("/proc/self/fd/" + fd)
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    n = 0
    for table in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        with open(table) as f:
            for line in f.readlines()[1:]:
                cols = line.split()
                if (cols[3] == "01" and cols[9] in inodes and
                        int(cols[2].split(":")[1], 16) == port):
                    n += 1
    return n


def test_connections_stay_bounded(big, engine):
    """Many gathers of scattered records: the I/O threads reuse theirs, at
    most 32 besides the pool lanes' own."""
    from loaderx import DenseStore
    url, rows = big["dense"]
    port = int(engine.endpoint.rsplit(":", 1)[1])
    rng = np.random.default_rng(3)
    with DenseStore.open(url) as s:
        for _ in range(6):
            idx = rng.choice(len(rows), 64, replace=False) // 4 * 4
            np.testing.assert_array_equal(s.gather(idx), rows[idx])
        n = _connections(port)
    assert 1 <= n <= 32 + os.cpu_count(), n


def test_encoded_images_decode_from_the_batch_read(zr, engine, tmp_path):
    """An encoded-image store (JPEG kept) in the bucket: its decoded,
    resized and augmented batches equal the local store's, whole images
    too (the image gather reads its batch the same way)."""
    import io
    from PIL import Image
    from loaderx import RaggedStore
    rng = np.random.default_rng(6)
    local = tmp_path / "img"
    with RaggedStore.create(str(local), np.uint8, images=True) as st:
        files = []
        for i in range(40):
            px = rng.integers(0, 255, (40 + i, 60 + 2 * i, 3), dtype="u1")
            b = io.BytesIO()
            Image.fromarray(px).save(b, "JPEG", quality=85)
            files.append(np.frombuffer(b.getvalue(), np.uint8))
        st.append(files)
    url = engine.upload(local, "big/img")
    idx = rng.integers(0, 40, 32)
    with RaggedStore.open(str(local), readonly=True) as a, \
            RaggedStore.open(url) as b:
        for kw in ({"decode": 32}, {"augment": "rrc,flip", "seed": 3}):
            np.testing.assert_array_equal(b.gather(idx, **kw),
                                          a.gather(idx, **kw))
        got, want = b.gather(idx, decode=True), a.gather(idx, decode=True)
        assert len(got) == 32
        for x, y in zip(got, want):
            np.testing.assert_array_equal(x, y)
