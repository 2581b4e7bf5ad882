"""zrecord append and the .npy stream parser (src/files/npy_stream) behind
it, fed whole files, stdin, and chunks split at awkward places."""
import subprocess

import numpy as np
import pytest

from conftest import npy_bytes, ragged_arrays, write_npys


def all_records(zr, store):
    n = zr.stats(store)["records"]
    return zr.load("get", store, *range(n))


def test_dense_files_append_in_order(zr, tmp_path):
    store = tmp_path / "s"
    zr.ok("create", store, "--dtype", "<i2", "--shape", "4")
    a = np.arange(20, dtype="<i2").reshape(5, 4)
    b = -np.arange(12, dtype="<i2").reshape(3, 4)
    zr.ok("append", store, write_npys(tmp_path / "a.npy", a),
          write_npys(tmp_path / "b.npy", b))
    assert zr.stats(store)["records"] == 8
    np.testing.assert_array_equal(all_records(zr, store),
                                  np.concatenate([a, b]))


def test_concatenated_stream_on_stdin(zr, tmp_path):
    store = tmp_path / "s"
    zr.ok("create", store, "--dtype", "<f8", "--shape", "2,3")
    parts = [np.random.default_rng(i).random((i + 1, 2, 3)) for i in range(5)]
    stream = b"".join(npy_bytes(p) for p in parts)
    zr.ok("append", store, "-", input=stream)
    np.testing.assert_array_equal(all_records(zr, store),
                                  np.concatenate(parts))


def test_cat_pipe_of_files(zr, tmp_path):
    store = tmp_path / "s"
    zr.ok("create", store, "--dtype", "<u4", "--shape=")
    files = [write_npys(tmp_path / f"{i}.npy", np.arange(i * 10, i * 10 + 7,
                                                         dtype="<u4"))
             for i in range(3)]
    cat = subprocess.Popen(["cat", *map(str, files)], stdout=subprocess.PIPE)
    r = zr.run("append", store, "-", stdin=cat.stdout)
    cat.wait()
    assert r.returncode == 0, r.stderr
    want = np.concatenate([np.arange(i * 10, i * 10 + 7) for i in range(3)])
    np.testing.assert_array_equal(all_records(zr, store), want)


@pytest.mark.parametrize("version", [(1, 0), (2, 0), (3, 0)])
def test_header_versions(zr, tmp_path, version):
    store = tmp_path / "s"
    zr.ok("create", store, "--dtype", "<f4", "--shape", "3")
    a = np.arange(12, dtype="<f4").reshape(4, 3)
    (tmp_path / "a.npy").write_bytes(npy_bytes(a, version))
    zr.ok("append", store, tmp_path / "a.npy")
    np.testing.assert_array_equal(all_records(zr, store), a)


def test_zero_row_array_adds_nothing(zr, tmp_path):
    store = tmp_path / "s"
    zr.ok("create", store, "--dtype", "<f4", "--shape", "3")
    a = np.ones((2, 3), "<f4")
    zr.ok("append", store, write_npys(tmp_path / "a.npy",
                                      np.zeros((0, 3), "<f4"), a,
                                      np.zeros((0, 3), "<f4")))
    np.testing.assert_array_equal(all_records(zr, store), a)


def test_large_file_streams_across_chunks(zr, tmp_path):
    # 60-byte rows never line up with the 8 MiB read size.
    store = tmp_path / "s"
    zr.ok("create", store, "--dtype", "|u1", "--shape", "3,4,5",
          "--codec", "zstd")
    a = np.random.default_rng(1).integers(0, 255, (350_000, 3, 4, 5),
                                          dtype="u1")
    zr.ok("append", store, write_npys(tmp_path / "a.npy", a))
    assert zr.stats(store)["records"] == len(a)
    idx = [0, 139_810, 139_811, 279_620, 349_999]
    np.testing.assert_array_equal(zr.load("get", store, *idx), a[idx])


def test_ragged_each_npy_is_a_record(zr, tmp_path):
    store = tmp_path / "s"
    zr.ok("create", store, "--dtype", "<i4", "--ragged")
    arrays = ragged_arrays(12)
    scalar = np.array(7, dtype="<i4")
    zr.ok("append", store, write_npys(tmp_path / "a.npy", *arrays[:5]),
          write_npys(tmp_path / "b.npy", *arrays[5:], scalar))
    got = zr.load("get", store, *range(13))
    assert len(got) == 13
    for g, w in zip(got, arrays + [scalar]):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


# -- the parser fed directly, in chunks that split everything -------------

CHUNKINGS = ["1", "2", "3", "7", "1,63,2", "10,5,129", "64", "4096",
             "9,1,1,200"]


def feed(driver_bin, store, sizes, path):
    r = subprocess.run([driver_bin, "feed", str(store), sizes, str(path)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=120)
    return r.returncode, r.stdout.decode().strip()


@pytest.mark.parametrize("sizes", CHUNKINGS)
def test_dense_stream_split_anywhere(zr, driver_bin, tmp_path, sizes):
    store = tmp_path / "s"
    zr.ok("create", store, "--dtype", "<i8", "--shape", "3")
    parts = [np.arange(k * 3, dtype="<i8").reshape(k, 3) + 100 * k
             for k in (1, 0, 5, 2)]
    path = tmp_path / "a.npy"
    path.write_bytes(npy_bytes(parts[0], (1, 0)) + npy_bytes(parts[1]) +
                     npy_bytes(parts[2], (2, 0)) +
                     npy_bytes(parts[3], (3, 0)))
    assert feed(driver_bin, store, sizes, path) == (0, "records 8")
    np.testing.assert_array_equal(all_records(zr, store),
                                  np.concatenate(parts))


@pytest.mark.parametrize("sizes", CHUNKINGS)
def test_ragged_stream_split_anywhere(zr, driver_bin, tmp_path, sizes):
    store = tmp_path / "s"
    zr.ok("create", store, "--dtype", "<i4", "--ragged", "--codec", "zstd")
    arrays = ragged_arrays(9, seed=3)
    path = write_npys(tmp_path / "a.npy", *arrays)
    assert feed(driver_bin, store, sizes, path) == (0, "records 9")
    for g, w in zip(zr.load("get", store, *range(9)), arrays):
        assert g.shape == w.shape
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("sizes", ["1", "5", "1000"])
def test_stream_cut_short_is_truncated(zr, driver_bin, tmp_path, sizes):
    store = tmp_path / "s"
    zr.ok("create", store, "--dtype", "<i8", "--shape", "3")
    data = npy_bytes(np.ones((4, 3), "<i8"))
    for cut in (3, 40, len(data) - 1):
        path = tmp_path / "a.npy"
        path.write_bytes(data + data[:cut])
        code, out = feed(driver_bin, store, sizes, path)
        assert code == 1 and out.startswith("error ZR_E_TRUNCATED")
        assert "byte" in out
    assert zr.stats(store)["records"] == 0


def test_stream_error_is_sticky_with_offset(zr, driver_bin, tmp_path):
    store = tmp_path / "s"
    zr.ok("create", store, "--dtype", "<i8", "--shape", "3")
    good = npy_bytes(np.ones((2, 3), "<i8"))
    bad = npy_bytes(np.ones((2, 3), "<f8"))
    path = tmp_path / "a.npy"
    path.write_bytes(good + bad + good)
    code, out = feed(driver_bin, store, "16", path)
    assert code == 1
    assert out.startswith("error ZR_E_DTYPE")
    assert f"byte {len(good)}:" in out
    assert zr.stats(store)["records"] == 0
