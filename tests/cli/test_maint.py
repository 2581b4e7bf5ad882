"""delete, compact, sync, verify, train-dict and store locking."""
import fcntl
import os
import struct

import numpy as np
import pytest

from conftest import write_npys


def test_delete_swaps_the_last_record_in(zr, dense):
    store, data = dense
    zr.ok("delete", store, 3, 39)
    assert zr.stats(store)["records"] == 38
    want = list(data[:39])
    want[3] = data[38]
    np.testing.assert_array_equal(zr.load("get", store, *range(38)),
                                  np.stack(want[:38]))


def test_delete_out_of_range_changes_nothing(zr, dense):
    store, data = dense
    before = zr.stats(store)
    err = zr.fails(1, "delete", store, 1, 40)
    assert "out of range" in err and "40" in err
    assert zr.stats(store) == before
    zr.fails(2, "delete", store, "-2")
    zr.fails(2, "delete", store)


def test_compact_reclaims_deleted_space(zr, dense):
    store, data = dense
    zr.ok("delete", store, *range(0, 40, 2))
    st = zr.stats(store)
    assert st["records"] == 20 and st["reclaimable"] == 20 * 60
    before = zr.load("get", store, *range(20))
    zr.ok("compact", store)
    st = zr.stats(store)
    assert st["reclaimable"] == 0
    assert st["data_bytes"] == st["live_bytes"] == 20 * 60
    assert os.path.getsize(store / "data.zr") == 20 * 60
    np.testing.assert_array_equal(zr.load("get", store, *range(20)), before)


def test_sync(zr, dense):
    store, _ = dense
    zr.ok("sync", store)
    assert zr.stats(store)["records"] == 40


def test_verify_good_store(zr, ragged):
    store, _ = ragged
    out = zr.ok("verify", store).decode()
    assert out.strip() == "ok: 30 records"


def record_loc(store, i):
    with open(store / "meta.zr", "rb") as f:
        f.seek(4096 + 16 * i)
        return struct.unpack("<QII", f.read(16))


def test_verify_finds_corrupt_records(zr, tmp_path):
    store = tmp_path / "s"
    zr.ok("create", store, "--dtype", "<u2", "--shape", "64", "--codec",
          "zstd")
    data = (np.arange(50 * 64) % 7).astype("<u2").reshape(50, 64)
    zr.ok("append", store, write_npys(tmp_path / "a.npy", data))
    with open(store / "data.zr", "r+b") as f:
        for i in (7, 31):
            off, phys, logic = record_loc(store, i)
            f.seek(off)
            head = f.read(4)  # the zstd frame magic
            f.seek(off)
            f.write(bytes(b ^ 0xFF for b in head))
    r = zr.run("verify", store)
    assert r.returncode == 1
    out = r.stdout.decode().splitlines()
    assert [line.split(":")[0] for line in out] == ["bad record 7",
                                                    "bad record 31"]
    assert "2 of 50 records bad" in r.stderr.decode()


def test_train_dict_then_zstd_dict_store(zr, tmp_path):
    rng = np.random.default_rng(4)
    base = rng.integers(0, 255, 256, dtype="u1")
    data = np.tile(base, (3000, 1))
    data[:, ::16] = rng.integers(0, 255, (3000, 16), dtype="u1")
    src = tmp_path / "src"
    zr.ok("create", src, "--dtype", "|u1", "--shape", "256")
    files = write_npys(tmp_path / "a.npy", data)
    zr.ok("append", src, files)

    for i, origin in enumerate([src, files]):
        d = tmp_path / f"dict{i}"
        zr.ok("train-dict", origin, "--tier", "fast", "-o", d)
        assert 0 < d.stat().st_size <= 32 * 1024
        store = tmp_path / f"z{i}"
        zr.ok("create", store, "--dtype", "uint8", "--shape", "256",
              "--codec", "zstd_dict", "--dict", d)
        zr.ok("append", store, files)
        st = zr.stats(store)
        assert st["codec"] == "zstd_dict" and st["records"] == 3000
        assert st["live_bytes"] < data.nbytes // 4
        idx = [0, 1234, 2999]
        np.testing.assert_array_equal(zr.load("get", store, *idx),
                                      data[idx])
        assert "ok: 3000" in zr.ok("verify", store).decode()


def test_train_dict_needs_an_output(zr, dense):
    store, _ = dense
    zr.fails(2, "train-dict", store)
    zr.fails(2, "train-dict", store, "--tier", "huge", "-o", "x")


@pytest.fixture
def locked(dense):
    store, _ = dense
    fd = os.open(store / "meta.zr", os.O_RDONLY)
    yield store, fd
    os.close(fd)


def test_exclusive_lock_makes_every_command_busy(zr, locked, tmp_path):
    store, fd = locked
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    f = write_npys(tmp_path / "x.npy", np.zeros((1, 3, 5), "<f4"))
    for args in (["append", store, f], ["get", store, 0], ["stats", store],
                 ["verify", store], ["compact", store]):
        err = zr.fails(1, *args)
        assert err.startswith(f"zrecord: {store}: {args[0]}: store busy")
    fcntl.flock(fd, fcntl.LOCK_UN)
    assert zr.stats(store)["records"] == 40


def test_reader_lock_allows_readers_only(zr, dense, tmp_path):
    """data.zr shared is a read-only handle's lock: no writer gets in."""
    store, _ = dense
    with open(store / "data.zr", "rb") as f:
        fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
        assert zr.stats(store)["records"] == 40
        zr.ok("get", store, 1)
        x = write_npys(tmp_path / "x.npy", np.zeros((1, 3, 5), "<f4"))
        assert "busy" in zr.fails(1, "append", store, x)
        assert "busy" in zr.fails(1, "delete", store, 0)
    assert zr.stats(store)["records"] == 40


def test_follower_lock_keeps_only_maintenance_out(zr, locked, tmp_path):
    """meta.zr shared alone is a follower's lock: readers and one writer
    share the store with it, delete and compact wait for it."""
    store, fd = locked
    fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    zr.ok("get", store, 1)
    x = write_npys(tmp_path / "x.npy", np.zeros((1, 3, 5), "<f4"))
    zr.ok("append", store, x)
    assert "as a follower" in zr.fails(1, "delete", store, 0)
    assert "as a follower" in zr.fails(1, "compact", store)
    assert zr.stats(store)["records"] == 41
