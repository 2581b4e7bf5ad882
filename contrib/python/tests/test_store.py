"""
test_store.py - DenseStore and RaggedStore on real stores: round trips of
every dtype under every codec, every indexing form, append semantics of
both contracts (borrowing, writer queue order and error surfacing),
maintenance, reopen, the on-disk schema bytes, locking, and that library
calls release the GIL.
"""
import errno
import os
import subprocess
import sys
import threading
import time

import cffi
import msgpack
import numpy as np
import pytest

from loaderx import _lib
from loaderx.utils import train_dict
from loaderx.zrecord import DICT_TIERS, DenseStore, RaggedStore, StoreBusy

DTYPES = ["|b1", "|i1", "<i2", ">i4", "<i8", "|u1", "<u2", "<u4", ">u8",
          "<f2", "<f4", ">f8", "<c8", "<c16"]
CODECS = ["raw", "zstd", "zstd_dict"]


def values(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    return np.array(rng.integers(0, 100, size=shape) % 7, dtype=dtype)


def codec_args(codec, sample):
    if codec != "zstd_dict":
        return dict(codec=codec)
    return dict(codec=codec, dict_bytes=train_dict(sample, tier="fast"))


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_dense_round_trip(dtype, codec):
    data = values(dtype, (600, 3, 4))
    with DenseStore.create("s", dtype, (3, 4),
                           **codec_args(codec, data)) as ds:
        ds.append(data[:100])
        ds.append(data[100:])
        assert len(ds) == 600
    with DenseStore.open("s") as ds:
        assert ds.dtype == np.dtype(dtype) and ds.item_shape == (3, 4)
        assert ds.codec == codec
        assert np.array_equal(ds[:], data)


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_ragged_round_trip(dtype, codec):
    rng = np.random.default_rng(3)
    recs = [values(dtype, tuple(rng.integers(1, 5, size=k % 4)), k)
            for k in range(600)]
    with RaggedStore.create("r", dtype, **codec_args(codec, recs)) as rs:
        rs.append(recs)
    with RaggedStore.open("r") as rs:
        got = rs[:]
        assert rs.codec == codec and rs.item_shape == ()
    assert [g.shape for g in got] == [r.shape for r in recs]
    assert all(g.dtype == np.dtype(dtype) for g in got)
    assert all(np.array_equal(g, r) for g, r in zip(got, recs))


def test_ranks_0_to_8():
    for ndim in range(9):
        shape = (2,) * ndim
        data = values("<i4", (5,) + shape)
        with DenseStore.create("d%d" % ndim, np.int32, shape) as ds:
            ds.append(data)
            assert ds[3].shape == shape
            assert np.array_equal(ds[3], data[3])
    recs = [np.full((2,) * k, k, dtype=np.int16) for k in range(9)]
    with RaggedStore.create("r", np.int16) as rs:
        rs.append(recs)
        assert [r.shape for r in rs[:]] == [r.shape for r in recs]
        assert rs[0].shape == () and rs[0] == 0


def test_indexing_forms():
    data = values("<u2", (10, 2))
    with DenseStore.create("s", np.uint16, (2,), codec="raw") as ds:
        ds.append(data)
        assert np.array_equal(ds[4], data[4])
        assert np.array_equal(ds[np.int64(4)], data[4])
        assert np.array_equal(ds[2:8:3], data[2:8:3])
        assert np.array_equal(ds[-3:], data[-3:])
        assert np.array_equal(ds[::-1], data[::-1])
        assert np.array_equal(ds[[9, 0, 9]], data[[9, 0, 9]])
        assert np.array_equal(ds[0, 5, 2], data[[0, 5, 2]])
        assert np.array_equal(ds[np.array([1, 3], dtype=np.uint8)],
                              data[[1, 3]])
        mask = np.arange(10) % 3 == 0
        assert np.array_equal(ds[mask], data[mask])
        assert ds[[]].shape == (0, 2)
        assert ds[5:5].shape == (0, 2)


@pytest.mark.parametrize("key,exc", [
    (10, IndexError), (-1, IndexError), ([0, 10], IndexError),
    ((0, -1), IndexError), (np.array([1, 2, 30]), IndexError),
    (np.ones(3, dtype=bool), IndexError), (1.5, TypeError),
    ("0", TypeError), ([0.5], TypeError), (True, TypeError),
    (np.zeros((2, 2), dtype=np.int64), IndexError),
])
def test_bad_indices(key, exc):
    for cls in (DenseStore, RaggedStore):
        with (cls.create("s", np.int8, (1,)) if cls is DenseStore
              else cls.create("s", np.int8)) as s:
            s.append(np.zeros((10, 1), dtype=np.int8) if cls is DenseStore
                     else [np.zeros(1, dtype=np.int8)] * 10)
            with pytest.raises(exc):
                s[key]
            with pytest.raises(exc):
                s.delete(key)
            assert len(s) == 10
        os.rename("s", "s.done.%s" % cls.__name__)


def test_dense_append_borrows_mmap_and_strided(tmp_path):
    data = values("<f4", (300, 7))
    np.save("a.npy", data)
    mm = np.load("a.npy", mmap_mode="r")
    with DenseStore.create("s", np.float32, (7,)) as ds:
        assert ds.append(mm) is None
        ds.append(data[::2])               # not contiguous: copied
        ds.append(np.asfortranarray(data[:5]))
        ds.append(data[:0])                 # nothing
        assert len(ds) == 300 + 150 + 5
        assert np.array_equal(ds[:], np.concatenate(
            [data, data[::2], data[:5]]))


def test_int_item_shape_is_one_dimension():
    with DenseStore.create("s", np.uint8, 5) as ds:
        assert ds.item_shape == (5,)


def test_scalar_records():
    labels = np.arange(20, dtype=np.int64)
    with DenseStore.create("l", labels.dtype, labels.shape[1:]) as ds:
        ds.append(labels)
        assert ds.item_shape == ()
        assert ds[3] == 3
        assert ds[[3, 4]].tolist() == [3, 4]


def test_ragged_append_any_iterable_in_fifo_order():
    gen = (np.full(i % 5 + 1, i, dtype=np.int32) for i in range(10000))
    with RaggedStore.create("r", np.int32) as rs:
        rs.append(gen)                       # several chunks, one commit
        rs.append([np.array([1, 2], dtype=np.int32)])
        rs.append((np.array([[3]], dtype=np.int32),))
        assert len(rs) == 10002
        got = rs[9998:]
    assert got[0].tolist() == [9998] * 4
    assert got[2].tolist() == [1, 2] and got[3].tolist() == [[3]]


def test_ragged_append_rejects_before_writing():
    with RaggedStore.create("r", np.int32) as rs:
        rs.append([np.arange(3, dtype=np.int32)])
        bad = [np.arange(3, dtype=np.int32), np.arange(3, dtype=np.int64)]
        with pytest.raises(TypeError, match="record 1"):
            rs.append(bad)
        with pytest.raises(ValueError, match="no elements"):
            rs.append([np.arange(3, dtype=np.int32),
                       np.zeros((2, 0), dtype=np.int32)])
        with pytest.raises(TypeError, match="iterable"):
            rs.append(np.arange(3, dtype=np.int32))

        def boom():
            for i in range(5000):      # past the first chunk
                yield np.arange(2, dtype=np.int32)
            raise RuntimeError("source failed")
        with pytest.raises(RuntimeError, match="source failed"):
            rs.append(boom())
        assert len(rs) == 1
        assert rs.stats()["records"] == 1


def test_writer_error_surfaces_at_next_call():
    # A record over 2 GiB (prefix included) is rejected by the library on
    # the writer thread (ZR_E_TOOBIG) before its untouched pages are read:
    # the failing append returns, and the next draining call or append
    # raises; the records of that append are not written, others are.
    big = np.empty(1 << 31, dtype=np.uint8)
    toobig = _lib.lib.zr_errno(_lib.lib.ZR_E_TOOBIG)
    with RaggedStore.create("r", np.uint8, codec="raw") as rs:
        rs.append([np.arange(5, dtype=np.uint8)])
        rs.append([np.arange(3, dtype=np.uint8), big])
        with pytest.raises(OSError) as info:
            rs.sync()
        assert info.value.errno == toobig and "2 GiB" in str(info.value)
        assert len(rs) == 1

        rs.append([np.arange(3, dtype=np.uint8), big])
        rs._writer._queue.join()        # the failure has happened
        with pytest.raises(OSError) as info:
            rs.append([np.arange(2, dtype=np.uint8)])
        assert info.value.errno == toobig
        rs.append([np.arange(4, dtype=np.uint8)])
        assert [r.tolist() for r in rs[:]] == [[0, 1, 2, 3, 4],
                                               [0, 1, 2, 3]]
    del big


def test_dense_append_validation_writes_nothing():
    with DenseStore.create("s", np.float32, (2, 3)) as ds:
        for bad, exc in [(np.zeros((4, 2, 3), dtype=np.float64), TypeError),
                         (np.zeros((4, 3, 2), dtype=np.float32), ValueError),
                         (np.zeros((2, 3), dtype=np.float32), ValueError),
                         (np.float32(1), TypeError),
                         ([[[1.0] * 3] * 2], TypeError),
                         (np.zeros((4, 2, 3), dtype=">f4"), TypeError)]:
            with pytest.raises(exc):
                ds.append(bad)
        assert len(ds) == 0
        assert ds.stats()["data_bytes"] == 0


@pytest.mark.parametrize("dtype", [
    [("a", "<i4"), ("b", "<f4")], "O", "U4", "S3", "V8", "M8[s]",
    "m8[s]", ("<i4", (2,)), np.dtype("<i4", metadata={"x": 1})])
def test_unsupported_dtypes(dtype):
    with pytest.raises(TypeError):
        DenseStore.create("s", dtype, (2,))
    with pytest.raises(TypeError):
        RaggedStore.create("r", dtype)
    assert not os.path.exists("s") and not os.path.exists("r")


@pytest.mark.parametrize("shape,exc", [
    ((0,), ValueError), ((2, -1), ValueError), ((1.5,), TypeError),
    ("ab", TypeError), ((1,) * 33, ValueError), ((1 << 20, 1 << 20),
                                                 ValueError)])
def test_bad_item_shapes(shape, exc):
    with pytest.raises(exc):
        DenseStore.create("s", np.uint8, shape)
    assert not os.path.exists("s")


def test_create_open_errors():
    with pytest.raises(FileNotFoundError):
        DenseStore.open("missing")
    with pytest.raises(FileNotFoundError):
        RaggedStore.open("missing")
    os.mkdir("plain")
    with pytest.raises(FileNotFoundError):
        DenseStore.open("plain")
    DenseStore.create("s", np.int8, (1,)).close()
    before = {f: os.path.getsize(os.path.join("s", f))
              for f in os.listdir("s")}
    with pytest.raises(FileExistsError):
        DenseStore.create("s", np.int8, (1,))
    with pytest.raises(FileExistsError):
        RaggedStore.create("plain", np.int8)
    assert {f: os.path.getsize(os.path.join("s", f))
            for f in os.listdir("s")} == before
    with pytest.raises(TypeError, match="RaggedStore"):
        RaggedStore.open("s")
    with pytest.raises(ValueError):
        DenseStore.create("c", np.int8, (1,), codec="lz4")
    with pytest.raises(ValueError):
        DenseStore.create("c", np.int8, (1,), codec="zstd_dict")
    with pytest.raises(ValueError):
        DenseStore.create("c", np.int8, (1,), codec="zstd",
                          dict_bytes=b"x" * 100)
    assert not os.path.exists("c")


def test_readonly_open_recovers_a_cut_compact():
    """SQLite's hot-journal rule: a read-only open that may write the
    files recovers a compact cut short, and warns of what is left."""
    import subprocess
    from loaderx import RecoveredWarning
    cut = os.path.join(os.environ.get("top_builddir") or os.path.join(
        os.path.dirname(__file__), "..", "..", ".."), "tests", "cut_compact")
    with DenseStore.create("s", np.int8, (4,), codec="raw") as ds:
        ds.append(np.arange(40, dtype=np.int8).reshape(10, 4))
        ds.delete(0)
    subprocess.run([cut, "s"], check=True, timeout=120)
    assert os.path.exists("s/maintenance.zr")
    with pytest.warns(RecoveredWarning, match="4 bytes are still "
                      "reclaimable"):
        ro = DenseStore.open("s", readonly=True)
    with ro:
        assert ro.readonly and len(ro) == 9
        assert ro.stats()["reclaimable"] == 4
        assert sorted(ro[i].tolist()[0] for i in range(9)) == \
            list(range(4, 40, 4))
    assert not os.path.exists("s/maintenance.zr")


def test_unreadable_page_is_eio_not_sigbus(tmp_path):
    """A file truncated behind an open store: the read that reaches the
    gone page raises OSError(EIO), and the process lives on (loaderx
    installs the library's SIGBUS guard at import)."""
    import subprocess
    import sys
    code = (
        "import errno, os, sys\n"
        "import numpy as np\n"
        "from loaderx import DenseStore\n"
        "s = DenseStore.create('t', np.uint8, (4096,), codec='raw')\n"
        "s.append(np.ones((64, 4096), np.uint8))\n"
        "s.sync()\n"
        "os.truncate('t/data.zr', 0)\n"
        "try:\n"
        "    s[63]\n"
        "except OSError as e:\n"
        "    assert e.errno == errno.EIO and 'SIGBUS' in str(e), e\n"
        "    print('eio')\n"
        "os._exit(0)\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=str(tmp_path),
                       capture_output=True, env=dict(
                           os.environ, PYTHONPATH=os.path.dirname(
                               os.path.dirname(_lib.__file__))),
                       timeout=60)
    assert r.returncode == 0 and r.stdout == b"eio\n", \
        (r.returncode, r.stdout, r.stderr.decode())


RANK = """
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from loaderx import DataLoader, DenseStore, RaggedStore
rank = int(sys.argv[2])
ready, go = sys.argv[3], sys.argv[4]
streams = {"x": DenseStore.open("d"), "t": RaggedStore.open("r")}
open(ready + str(rank), "w").close()
import os, time
while not os.path.exists(go):   # every rank holds both stores at once
    time.sleep(0.01)
with DataLoader(streams, batch_size=4, rank=rank, world=4, seed=1) as dl:
    b = next(dl)
print(int(b["x"].sum()), len(b["t"]))
for s in streams.values():
    s.close()
"""


def test_ranks_open_a_store_by_default_at_once(tmp_path):
    """The README's loop run in four processes at once: open() is read only
    unless asked, so every rank shares the stores (no StoreBusy)."""
    with DenseStore.create("d", np.int64, (2,)) as ds:
        ds.append(np.arange(40, dtype=np.int64).reshape(20, 2))
    with RaggedStore.create("r", np.int8) as rs:
        rs.append(np.ones(i % 3 + 1, np.int8) for i in range(20))
    pkg = os.path.dirname(os.path.dirname(_lib.__file__))
    ready, go = str(tmp_path / "ready"), str(tmp_path / "go")
    env = dict(os.environ, PYTHONPATH=pkg)
    ranks = [subprocess.Popen([sys.executable, "-c", RANK, pkg, str(r),
                               ready, go], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=env)
             for r in range(4)]
    deadline = time.monotonic() + 60
    while not all(os.path.exists(ready + str(r)) for r in range(4)):
        assert all(p.poll() is None for p in ranks), \
            [p.communicate()[1].decode() for p in ranks if p.poll()]
        assert time.monotonic() < deadline, "ranks did not open the stores"
        time.sleep(0.01)
    # a writer is the one handle that cannot join them, and says why
    with pytest.raises(StoreBusy, match="readonly=True"):
        DenseStore.open("d", readonly=False)
    open(go, "w").close()
    for p in ranks:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err.decode()
        total, count = map(int, out.split())
        assert count == 4 and 0 <= total < 4 * 80
    with DenseStore.open("d") as d:
        assert d.readonly
        with pytest.raises(OSError, match="readonly=False"):
            d.append(np.zeros((1, 2), np.int64))


def test_busy_and_readonly():
    with DenseStore.create("s", np.int8, (1,)) as ds:
        ds.append(np.ones((3, 1), dtype=np.int8))
        with pytest.raises(StoreBusy) as info:
            DenseStore.open("s")
        assert isinstance(info.value, OSError)
        assert info.value.errno == 16
        assert "open it with readonly=True" in str(info.value)
        with pytest.raises(StoreBusy):
            DenseStore.open("s", readonly=True)
    with DenseStore.open("s", readonly=True) as a, \
            DenseStore.open("s", readonly=True) as b:
        assert a.readonly and len(a) == len(b) == 3
        with pytest.raises(OSError) as info:
            a.append(np.ones((1, 1), dtype=np.int8))
        assert info.value.errno == errno.EROFS
        for call in (a.sync, a.compact, lambda: a.delete(0)):
            with pytest.raises(OSError) as info:
                call()
            assert info.value.errno == errno.EROFS
        assert len(a) == 3
    RaggedStore.create("r", np.int8).close()
    with RaggedStore.open("r", readonly=True) as r:
        with pytest.raises(OSError) as info:
            r.append([np.ones(1, dtype=np.int8)])
        assert info.value.errno == errno.EROFS


def test_closed_store():
    ds = DenseStore.create("s", np.int8, (1,))
    ds.close()
    ds.close()
    for call in (lambda: len(ds), lambda: ds[0], ds.stats, ds.sync,
                 ds.compact, lambda: ds.append(np.ones((1, 1), np.int8))):
        with pytest.raises(ValueError, match="closed"):
            call()
    rs = RaggedStore.create("r", np.int8)
    rs.close()
    with pytest.raises(ValueError, match="closed"):
        rs.append([np.ones(1, np.int8)])


def test_schema_bytes_match_msgpack():
    # meta.zr carries the seed's schema: one MsgPack map written exactly
    # as msgpack.packb writes it.
    DenseStore.create("d", np.float32, (3, 300)).close()
    RaggedStore.create("r", ">i8").close()
    for path, schema in [("d", {"dtype": "<f4", "item_shape": [3, 300]}),
                         ("r", {"dtype": ">i8"})]:
        raw = open(os.path.join(path, "meta.zr"), "rb").read(4096)
        size = int.from_bytes(raw[16:20], "little")
        assert raw[32:32 + size] == msgpack.packb(schema)


def test_delete_compact_stats_and_reopen():
    recs = [np.full(i + 1, i, dtype=np.int16) for i in range(50)]
    with RaggedStore.create("r", np.int16) as rs:
        rs.append(recs)
        full = rs.stats()
        assert full["records"] == 50 and full["reclaimable"] == 0
        rs.delete(np.arange(50) >= 45)        # bool mask: the tail
        rs.delete(0)
        rs.delete(slice(10, 20))
        rs.delete([3, 3, 4])
        left = rs[:]
        assert len(rs) == 50 - 5 - 1 - 10 - 2
        st = rs.stats()
        assert st["reclaimable"] == st["data_bytes"] - st["live_bytes"] > 0
        rs.compact()
        assert rs.stats()["reclaimable"] == 0
        rs.sync()
    kept = sorted(r[0] for r in left)
    expect = sorted(set(range(45)) - {0} - set(range(10, 20)) - {3, 4})
    assert len(kept) == len(expect)
    with RaggedStore.open("r") as rs:
        got = rs[:]
    assert sorted(int(r[0]) for r in got) == sorted(int(k) for k in kept)
    assert all(r.tolist() == [r[0]] * (r[0] + 1) for r in got)


def test_concurrent_gathers_while_appending():
    data = np.arange(4000 * 64, dtype=np.int64).reshape(4000, 64)
    with DenseStore.create("s", np.int64, (64,)) as ds:
        ds.append(data[:1000])
        errors = []

        def reader():
            try:
                for k in range(200):
                    idx = np.random.default_rng(k).integers(0, 1000, 64)
                    assert np.array_equal(ds[idx], data[idx])
            except BaseException as e:
                errors.append(e)
        threads = [threading.Thread(target=reader) for _ in range(3)]
        for t in threads:
            t.start()
        for lo in range(1000, 4000, 500):
            ds.append(data[lo:lo + 500])
        for t in threads:
            t.join(60)
        assert not any(t.is_alive() for t in threads)
        assert errors == []
        assert np.array_equal(ds[:], data)


def _race_deletes(store, read, check, n):
    """Thread 1 reads (read()) while this one deletes one record at a
    time; check(result, gone) judges each read against the ids deleted
    before it began."""
    gone, errors, stop = [], [], threading.Event()
    reads = [0]

    def reader():
        try:
            while not stop.is_set():
                before = list(gone)
                check(read(), set(before))
                reads[0] += 1
        except BaseException as e:
            errors.append(e)
            stop.set()
    t = threading.Thread(target=reader)
    t.start()
    rng = np.random.default_rng(1)
    try:
        while len(store) > n // 4 and not stop.is_set():
            i = int(rng.integers(0, len(store)))
            rid = int(np.asarray(store[i]).ravel()[0])
            store.delete(i)
            gone.append(rid)
    finally:
        stop.set()
        t.join(60)
    assert not t.is_alive()
    assert errors == []
    assert reads[0] > 0 and len(gone) >= n // 2


def test_dense_gather_racing_deletes_reads_one_state():
    # Row id is id repeated: a row torn between two records, a record
    # read twice (a swap seen half done) or one deleted before the read
    # began would show.
    n = 3000
    data = np.repeat(np.arange(n, dtype=np.int64)[:, None], 32, axis=1)
    with DenseStore.create("s", np.int64, (32,), codec="zstd") as ds:
        ds.append(data)

        def check(rows, gone):
            ids = rows[:, 0]
            assert (rows == ids[:, None]).all()
            assert len(set(ids.tolist())) == len(ids)
            assert not gone & set(ids.tolist())
        _race_deletes(ds, lambda: ds[:], check, n)


def test_ragged_gather_racing_deletes_reads_one_state():
    # Sizes, then records, then packing: all from one view, or a delete
    # between the size and the gather would break the call.
    n = 2000
    recs = [np.full(i % 7 + 1, i, dtype=np.int32) for i in range(n)]
    with RaggedStore.create("r", np.int32) as rs:
        rs.append(recs)
        rs.sync()

        # Indices every state has (the deletes stop at n // 4 records),
        # then every record of the state rs[:] reads.
        def read():
            return (rs.gather(np.arange(n // 4 - 1), form="packed"),
                    rs[:])

        def check(got, gone):
            (data, offsets, shapes), every = got
            for recs in ([data[offsets[k]:offsets[k + 1]]
                          for k in range(len(shapes))], every):
                for rec in recs:
                    assert len(rec) == rec[0] % 7 + 1
                    assert (rec == rec[0]).all()
                ids = [int(rec[0]) for rec in recs]
                assert len(set(ids)) == len(ids)
                assert not gone & set(ids)
            assert (shapes[:, 0] == (offsets[1:] - offsets[:-1])).all()
        _race_deletes(rs, read, check, n)


def test_dict_tiers_and_train_dict_sources():
    assert DICT_TIERS == {
        "fast": {"dict_bytes": 32 << 10, "sample_bytes": 4 << 20},
        "balanced": {"dict_bytes": 128 << 10, "sample_bytes": 16 << 20},
        "max": {"dict_bytes": 1024 << 10, "sample_bytes": 64 << 20}}
    data = np.tile(np.arange(200, dtype=np.uint8), (3000, 1))
    data[:, :4] = np.arange(3000 * 4).reshape(3000, 4) % 251
    from_array = train_dict(data, tier="fast")
    from_list = train_dict(list(data), tier="fast")
    with DenseStore.create("s", np.uint8, (200,)) as ds:
        ds.append(data)
        from_store = train_dict(ds, tier="fast")
    for d in (from_array, from_list, from_store):
        assert isinstance(d, bytes) and 0 < len(d) <= 32 << 10
    with pytest.raises(ValueError):
        train_dict(data, tier="huge")
    with pytest.raises(ValueError):
        train_dict([], tier="fast")


def test_error_table_matches_library():
    # _lib's hand-written cdef must agree with the header's codes.
    lib, ffi = _lib.lib, _lib.ffi
    for name in ("BUSY", "EXISTS", "NOSTORE", "CORRUPT", "SCHEMA", "DTYPE",
                 "SHAPE", "RANGE", "EMPTY", "TOOBIG", "CODEC", "NODICT",
                 "NPY", "TRUNCATED", "CHANGED"):
        code = getattr(lib, "ZR_E_" + name)
        assert ffi.string(lib.zr_errname(code)).decode() == "ZR_E_" + name


def test_calls_release_the_gil():
    # cffi releases the GIL around ABI-mode calls: a thread blocked in C
    # read() on a pipe must let this thread run Python and write to it.
    ffi = cffi.FFI()
    ffi.cdef("long read(int fd, void *buf, unsigned long n);")
    libc = ffi.dlopen(None)
    r, w = os.pipe()
    buf = ffi.new("char[]", 1)
    done = []
    t = threading.Thread(target=lambda: done.append(libc.read(r, buf, 1)))
    t.start()
    os.write(w, b"x")
    t.join(30)
    os.close(r)
    os.close(w)
    assert done == [1] and buf[0] == b"x"


def test_rwlock_shared_and_exclusive():
    """Gathers share the store lock; an exclusive holder (close, delete)
    waits for them, and readers that come while it waits queue behind it,
    so gathers cannot starve close."""
    from loaderx._sync import RWLock
    rw, log, release = RWLock(), [], threading.Event()

    def write():
        with rw.exclusive():
            log.append("w")
            release.wait(5)

    def read():
        with rw.shared():
            log.append("r")

    with rw.shared(), rw.shared():            # two holders at once
        writer = threading.Thread(target=write)
        writer.start()
        while not rw._waiting:                 # the writer now waits
            writer.join(0.001)
        reader = threading.Thread(target=read)
        reader.start()
        reader.join(0.05)
        assert log == [] and reader.is_alive()
    while not log:
        writer.join(0.001)
    reader.join(0.05)
    assert log == ["w"] and reader.is_alive()  # behind the writer
    release.set()
    reader.join(5)
    writer.join(5)
    assert log == ["w", "r"] and rw._readers == 0


@pytest.mark.parametrize("codec", CODECS)
def test_ragged_packed_and_padded_forms(codec):
    """gather(form=) on records of rank 2 and 3: packed is the list form's
    elements back to back with their boundaries and shapes; padded pads
    axis 0; ranks or trailing shapes that differ are a ValueError."""
    rng = np.random.default_rng(4)
    rows = [values("<i2", (int(rng.integers(1, 9)), 3), k) for k in range(50)]
    imgs = [values("|u1", (int(rng.integers(1, 6)), int(rng.integers(1, 6)),
                           3), k) for k in range(50)]
    with RaggedStore.create("rows", "<i2", **codec_args(codec, rows)) as rs:
        rs.append(rows)
        idx = np.array([7, 0, 49, 7, 13], dtype=np.uint64)
        data, offsets, shapes = rs.gather(idx, form="packed")
        want = [rows[i] for i in idx]
        assert data.dtype == np.dtype("<i2") and offsets.dtype == np.int64
        assert offsets.tolist() == np.cumsum(
            [0] + [w.size for w in want]).tolist()
        assert shapes.tolist() == [list(w.shape) for w in want]
        assert np.array_equal(data, np.concatenate([w.reshape(-1)
                                                    for w in want]))
        pad, lengths = rs.gather(idx, form="padded", pad=-1)
        longest = max(len(w) for w in want)
        assert pad.shape == (5, longest, 3)
        for k, w in enumerate(want):
            assert lengths[k] == len(w)
            assert np.array_equal(pad[k, :len(w)], w)
            assert (pad[k, len(w):] == -1).all()
        empty = rs.gather(np.zeros(0, np.uint64), form="packed")
        assert [a.shape for a in empty] == [(0,), (1,), (0, 1)]
        rs.append([np.zeros(4, "<i2")])  # a rank-1 record
        with pytest.raises(ValueError, match="record 1 has 1"):
            rs.gather(np.array([0, 50], np.uint64), form="packed")
    with RaggedStore.create("imgs", "|u1", **codec_args(codec, imgs)) as rs:
        rs.append(imgs)
        data, offsets, shapes = rs.gather(np.arange(50), form="packed")
        for k, img in enumerate(imgs):
            assert tuple(shapes[k]) == img.shape
            assert np.array_equal(
                data[offsets[k]:offsets[k + 1]].reshape(img.shape), img)
        with pytest.raises(ValueError, match="differ beyond axis 0"):
            rs.gather(np.arange(50), form="padded")
