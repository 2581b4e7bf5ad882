"""`zrecord import` of HDF5 files written by h5py, LMDB environments
written by python3-lmdb and .npy/.npz files written by NumPy: every record
compared with what h5py, lmdb and NumPy read back; damaged files."""
import os

import h5py
import lmdb
import numpy as np
import pytest

from importdata import records


def make_h5(path, rows=1000):
    rng = np.random.default_rng(5)
    data = {
        "x": rng.standard_normal((rows, 3, 4)).astype("<f4"),
        "grp/label": rng.integers(-9, 9, rows).astype(">i8"),
        "grp/pix": rng.integers(0, 255, (rows, 40, 40), dtype=np.uint8),
        "w": rng.standard_normal(rows),
    }
    with h5py.File(path, "w") as f:
        for name, a in data.items():
            # chunked and compressed, so the reader goes through filters
            f.create_dataset(name, data=a, chunks=True, compression="gzip")
        f["scalar_attr_holder"] = np.arange(rows, dtype="u2")
        f["a_scalar"] = 3.5  # no rows: left out
    return data


def test_hdf5_every_dataset(zr, tmp_path):
    data = make_h5(tmp_path / "a.h5")
    zr.ok("import", tmp_path / "a.h5", tmp_path / "ds")
    assert sorted(os.listdir(tmp_path / "ds")) == \
        ["grp.label", "grp.pix", "scalar_attr_holder", "w", "x"]
    with h5py.File(tmp_path / "a.h5", "r") as f:
        for name in ("x", "grp/label", "grp/pix", "w", "scalar_attr_holder"):
            want = f[name][()]
            store = tmp_path / "ds" / name.replace("/", ".")
            st = zr.stats(store)
            assert st["ragged"] is False and st["records"] == len(want)
            assert st["dtype"] == want.dtype.str
            got = zr.load("get", store, *range(len(want)))
            assert got.dtype == want.dtype and np.array_equal(got, want)
    assert data


def test_hdf5_named_datasets_two_files(zr, tmp_path):
    a = make_h5(tmp_path / "a.h5", rows=30)
    b = make_h5(tmp_path / "b.h5", rows=20)
    zr.ok("import", "--dataset", "x", "--dataset", "/grp/label",
          tmp_path / "a.h5", tmp_path / "b.h5", tmp_path / "ds")
    assert sorted(os.listdir(tmp_path / "ds")) == ["grp.label", "x"]
    got = zr.load("get", tmp_path / "ds" / "x", *range(50))
    assert np.array_equal(got, np.concatenate([a["x"], b["x"]]))


def test_hdf5_unequal_rows_and_damage(zr, tmp_path):
    with h5py.File(tmp_path / "u.h5", "w") as f:
        f["a"] = np.arange(5)
        f["b"] = np.arange(6)
    err = zr.fails(1, "import", tmp_path / "u.h5", tmp_path / "ds")
    assert "u.h5" in err and "rows" in err
    make_h5(tmp_path / "t.h5")
    data = (tmp_path / "t.h5").read_bytes()
    (tmp_path / "t.h5").write_bytes(data[:len(data) // 2])
    err = zr.fails(1, "import", tmp_path / "t.h5", tmp_path / "ds")
    assert "t.h5" in err
    (tmp_path / "junk.h5").write_bytes(b"\x89HDF\r\n\x1a\n" + os.urandom(900))
    err = zr.fails(1, "import", tmp_path / "junk.h5", tmp_path / "ds")
    assert "junk.h5" in err and "HDF5" in err
    assert sorted(os.listdir(tmp_path)) == ["junk.h5", "t.h5", "u.h5"]


def make_lmdb(path, n=300):
    env = lmdb.open(str(path), map_size=1 << 26)
    rng = np.random.default_rng(3)
    with env.begin(write=True) as txn:
        for i in rng.permutation(n):
            txn.put(f"key-{i:05d}".encode(),
                    bytes(rng.integers(0, 255, 1 + i % 50, dtype=np.uint8)))
    env.close()


def test_lmdb_values_and_keys_in_key_order(zr, tmp_path):
    make_lmdb(tmp_path / "db")
    zr.ok("import", "--keys", tmp_path / "db", tmp_path / "ds")
    env = lmdb.open(str(tmp_path / "db"), readonly=True, lock=False)
    with env.begin() as txn:
        want = list(txn.cursor())
    vals = records(zr, tmp_path / "ds" / "value")
    keys = records(zr, tmp_path / "ds" / "key")
    assert [k.tobytes() for k in keys] == [k for k, _ in want]
    assert [v.tobytes() for v in vals] == [v for _, v in want]
    zr.ok("import", tmp_path / "db", tmp_path / "ds2")
    assert os.listdir(tmp_path / "ds2") == ["value"]


def test_lmdb_damaged(zr, tmp_path):
    make_lmdb(tmp_path / "db", n=3000)
    mdb = tmp_path / "db" / "data.mdb"
    data = mdb.read_bytes()
    mdb.write_bytes(data[:len(data) // 3])
    err = zr.fails(1, "import", tmp_path / "db", tmp_path / "ds")
    assert "db" in err
    mdb.write_bytes(os.urandom(8192))
    err = zr.fails(1, "import", tmp_path / "db", tmp_path / "ds")
    assert "LMDB" in err
    assert sorted(os.listdir(tmp_path)) == ["db"]


def test_npy_rows_and_per_file(zr, tmp_path):
    a = np.arange(30, dtype="<i4").reshape(10, 3)
    b = np.arange(15, dtype="<i4").reshape(5, 3) * 7
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    zr.ok("import", tmp_path / "a.npy", tmp_path / "b.npy", tmp_path / "ds")
    got = zr.load("get", tmp_path / "ds" / "data", *range(15))
    assert np.array_equal(got, np.concatenate([a, b]))
    zr.ok("import", "--per-file", tmp_path / "a.npy", tmp_path / "b.npy",
          tmp_path / "pf")
    got = records(zr, tmp_path / "pf" / "data")
    assert len(got) == 2 and np.array_equal(got[0], a) and \
        np.array_equal(got[1], b)


@pytest.mark.parametrize("compressed", [False, True])
def test_npz_members_side_by_side(zr, tmp_path, compressed):
    img = np.random.default_rng(1).integers(0, 255, (40, 8, 8),
                                             dtype=np.uint8)
    lab = np.arange(40, dtype=np.int64)
    save = np.savez_compressed if compressed else np.savez
    save(tmp_path / "s.npz", image=img, label=lab)
    zr.ok("import", tmp_path / "s.npz", tmp_path / "ds")
    assert sorted(os.listdir(tmp_path / "ds")) == ["image", "label"]
    assert np.array_equal(zr.load("get", tmp_path / "ds" / "image",
                                  *range(40)), img)
    assert np.array_equal(zr.load("get", tmp_path / "ds" / "label",
                                  *range(40)), lab)
    zr.ok("import", "--per-file", tmp_path / "s.npz", tmp_path / "s.npz",
          tmp_path / "pf")
    got = records(zr, tmp_path / "pf" / "image")
    assert len(got) == 2 and np.array_equal(got[1], img)


def test_npy_damaged(zr, tmp_path):
    np.save(tmp_path / "a.npy", np.arange(1000, dtype="<f8"))
    data = (tmp_path / "a.npy").read_bytes()
    (tmp_path / "a.npy").write_bytes(data[:700])
    err = zr.fails(1, "import", tmp_path / "a.npy", tmp_path / "ds")
    assert "a.npy" in err and "ends inside" in err
    (tmp_path / "a.npy").write_bytes(b"\x93NUMPY\x01\x00" + b"x" * 40)
    err = zr.fails(1, "import", tmp_path / "a.npy", tmp_path / "ds")
    assert "a.npy" in err
    np.savez(tmp_path / "z.npz", a=np.arange(10), b=np.arange(11))
    err = zr.fails(1, "import", tmp_path / "z.npz", tmp_path / "ds")
    assert "as many rows" in err
    assert sorted(os.listdir(tmp_path)) == ["a.npy", "z.npz"]


def test_skip_bad_leaves_out_the_broken_file(zr, tmp_path):
    good = make_h5(tmp_path / "a.h5", rows=25)
    make_h5(tmp_path / "b.h5", rows=25)
    data = (tmp_path / "b.h5").read_bytes()
    (tmp_path / "b.h5").write_bytes(data[:len(data) // 2])
    srcs = [tmp_path / "a.h5", tmp_path / "b.h5"]
    zr.fails(1, "import", *srcs, tmp_path / "ds")
    r = zr.run("import", "--skip-bad", *srcs, tmp_path / "ds")
    assert r.returncode == 0, r.stderr
    assert b"skipped 1 bad input" in r.stderr and b"b.h5" in r.stderr
    got = zr.load("get", tmp_path / "ds" / "x", *range(25))
    assert np.array_equal(got, good["x"])
    assert zr.stats(tmp_path / "ds" / "x")["records"] == 25

    np.save(tmp_path / "r1.npy", np.arange(8).reshape(4, 2))
    (tmp_path / "r2.npy").write_bytes(b"\x93NUMPY\x01\x00" + b"x" * 40)
    np.save(tmp_path / "r3.npy", np.arange(6).reshape(3, 2))
    srcs = [tmp_path / f"r{i}.npy" for i in (1, 2, 3)]
    r = zr.run("import", "--skip-bad", *srcs, tmp_path / "n")
    assert r.returncode == 0, r.stderr
    got = zr.load("get", tmp_path / "n" / "data", *range(7))
    assert np.array_equal(got, np.concatenate([np.arange(8).reshape(4, 2),
                                               np.arange(6).reshape(3, 2)]))


def test_lmdb_empty_value_skipped(zr, tmp_path):
    env = lmdb.open(str(tmp_path / "db"), map_size=1 << 22)
    with env.begin(write=True) as txn:
        txn.put(b"a", b"1")
        txn.put(b"b", b"")
        txn.put(b"c", b"333")
    env.close()
    err = zr.fails(1, "import", tmp_path / "db", tmp_path / "ds")
    assert "entry 1" in err and "empty" in err
    r = zr.run("import", "--skip-bad", tmp_path / "db", tmp_path / "ds")
    assert r.returncode == 0, r.stderr
    assert [v.tobytes() for v in records(zr, tmp_path / "ds" / "value")] \
        == [b"1", b"333"]
