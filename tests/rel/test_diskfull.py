"""Disk full: a store on an 8 MiB tmpfs.  An append that does not fit fails
with ENOSPC -- through the library (`zrecord append`) and through `cp` into
a zrecordfs mount -- the store keeps serving every earlier record byte for
byte, and once space is freed the next append works."""
import os

import numpy as np

from conftest import cp, npy_bytes, tmpfs, write_file

ROW = 4096
FILLER = 3 << 20


def rows(n, seed):
    """Incompressible rows, so zstd cannot make them fit."""
    return np.random.default_rng(seed).integers(0, 256, (n, ROW), "|u1")


def ragged(n, seed):
    rng = np.random.default_rng(seed)
    return [rng.integers(-2**31, 2**31, int(rng.integers(200, 2000)), "<i4")
            for _ in range(n)]


def fill(path):
    write_file(path, os.urandom(FILLER))


def test_library_append_enospc(zr, tmp):
    with tmpfs(os.path.join(tmp, "small"), "8m") as small:
        store = os.path.join(small, "D")
        zr.create(store, "|u1", (ROW,), codec="zstd")
        first = rows(256, 1)
        zr.append_arrays(store, [first], tmp)
        fill(os.path.join(small, "filler"))
        stats = zr.stats(store)

        big = os.path.join(tmp, "big.npy")
        write_file(big, npy_bytes(rows(2048, 2)))  # 8 MiB: cannot fit
        r = zr.run("append", store, big)
        assert r.returncode == 1
        assert "No space left on device" in r.stderr.decode(), r.stderr

        assert zr.stats(store) == stats
        assert zr.run("verify", store).returncode == 0
        got = zr.load("get", store, *range(256))
        assert np.array_equal(got, first)

        os.remove(os.path.join(small, "filler"))
        more = rows(300, 3)
        zr.append_arrays(store, [more], tmp)
        assert zr.stats(store)["records"] == 556
        got = zr.load("get", store, *range(556))
        assert np.array_equal(got, np.concatenate([first, more]))
        assert zr.run("verify", store).returncode == 0


def test_mount_cp_enospc(zr, tmp, mounter):
    with tmpfs(os.path.join(tmp, "small"), "8m") as small:
        src, mnt = os.path.join(small, "src"), os.path.join(tmp, "mnt")
        store = os.path.join(src, "R")
        zr.create(store, "<i4", codec="zstd")
        first = ragged(100, 4)
        zr.append_arrays(store, first, tmp)
        fill(os.path.join(small, "filler"))
        m = mounter(src, mnt)
        with open(os.path.join(mnt, "R", "stats")) as f:
            stats = f.read()

        big = os.path.join(tmp, "big.npy")
        with open(big, "wb") as f:
            for a in ragged(3000, 5):  # ~12 MiB of records
                f.write(npy_bytes(a))
        r = cp(big, os.path.join(mnt, "R", "append"))
        assert r.returncode != 0
        assert "No space left on device" in r.stderr.decode(), r.stderr

        with open(os.path.join(mnt, "R", "stats")) as f:
            assert f.read() == stats
        for i, a in enumerate(first):
            got = np.load(os.path.join(mnt, "R", "records", f"{i}.npy"))
            assert got.dtype == a.dtype and np.array_equal(got, a)
        assert not os.path.exists(os.path.join(mnt, "R", "records",
                                               f"{len(first)}.npy"))

        os.remove(os.path.join(small, "filler"))
        more = ragged(50, 6)
        with open(big, "wb") as f:
            for a in more:
                f.write(npy_bytes(a))
        r = cp(big, os.path.join(mnt, "R", "append"))
        assert r.returncode == 0, r.stderr
        for i, a in enumerate(first + more):
            got = np.load(os.path.join(mnt, "R", "records", f"{i}.npy"))
            assert np.array_equal(got, a)
        assert m.close() == 0
        assert zr.run("verify", store).returncode == 0
        assert zr.stats(store)["records"] == 150
