"""zrecord get and batch: NumPy output checked against the appended data,
and the sampler's documented properties."""
import io
import os
import pty
import subprocess
import sys
import zipfile

import numpy as np
import pytest

from conftest import npy_bytes, write_npys


def test_get_one_dense_record_is_exactly_np_save(zr, dense):
    store, data = dense
    assert zr.ok("get", store, 7) == npy_bytes(data[7])


def test_get_several_dense_records_stacks_them(zr, dense):
    store, data = dense
    idx = [39, 0, 5, 5, 12]
    out = zr.ok("get", store, *idx)
    assert out == npy_bytes(data[idx])


def test_get_to_file(zr, dense, tmp_path):
    store, data = dense
    out = tmp_path / "o.npy"
    assert zr.ok("get", store, 3, 4, "-o", out) == b""
    np.testing.assert_array_equal(np.load(out), data[[3, 4]])


def test_get_scalar_record(zr, tmp_path):
    store = tmp_path / "s"
    zr.ok("create", store, "--dtype", "<i8", "--shape=")
    (tmp_path / "a.npy").write_bytes(npy_bytes(np.arange(5, dtype="<i8")))
    zr.ok("append", store, tmp_path / "a.npy")
    assert zr.ok("get", store, 2) == npy_bytes(np.array(2, dtype="<i8"))


def test_get_ragged_record_and_npz(zr, ragged):
    store, arrays = ragged
    for i in (0, 4, 5):  # ranks 1, 2, 3
        one = zr.ok("get", store, i)
        got = np.load(io.BytesIO(one))
        assert got.dtype == arrays[i].dtype and got.shape == arrays[i].shape
        np.testing.assert_array_equal(got, arrays[i])
        # the header holds the shape prefix's bytes: data start 8-aligned
        assert (len(one) - arrays[i].nbytes) % 8 == 0
        assert (len(one) - 8 - 8 * arrays[i].ndim - arrays[i].nbytes) % 64 \
            == 0
    idx = [29, 3, 3, 0]
    out = zr.ok("get", store, *idx)
    z = zipfile.ZipFile(io.BytesIO(out))
    assert z.testzip() is None  # every CRC-32 checks out
    assert z.namelist() == [f"arr_{i}.npy" for i in range(len(idx))]
    with np.load(io.BytesIO(out)) as npz:
        for k, i in enumerate(idx):
            got = npz[f"arr_{k}"]
            assert got.dtype == arrays[i].dtype
            assert got.shape == arrays[i].shape
            np.testing.assert_array_equal(got, arrays[i])


@pytest.mark.parametrize("bad,code", [("-1", 2), ("x", 2), ("1.5", 2),
                                      ("", 2), ("40", 1),
                                      ("99999999999999999999", 2)])
def test_get_bad_index(zr, dense, bad, code):
    store, _ = dense
    err = zr.fails(code, "get", store, 0, bad)
    assert bad in err
    if code == 1:
        assert err.startswith(f"zrecord: {store}: get: index out of range")


def test_get_refuses_a_terminal(zr, dense):
    store, _ = dense
    master, slave = pty.openpty()
    try:
        r = subprocess.run([zr.binary, "get", str(store), "0"],
                           stdout=slave, stderr=subprocess.PIPE, timeout=60)
    finally:
        os.close(slave)
        os.close(master)
    assert r.returncode == 2
    assert b"terminal" in r.stderr


def indices(zr, store, *args):
    got = zr.load("batch", store, "--indices", *args)
    assert got.dtype == np.dtype("<i8") and got.ndim == 1
    return got


def test_sequential_walks_in_order(zr, dense):
    store, _ = dense
    np.testing.assert_array_equal(
        indices(zr, store, "--seed", 5, "--step", 0, "--mode",
                "sequential", "--batch-size", 16), np.arange(16))
    np.testing.assert_array_equal(
        indices(zr, store, "--seed", 5, "--step", 3, "--mode",
                "sequential", "--batch-size", 16),
        np.arange(48, 64) % 40)


def test_cyclic_covers_each_cycle_without_repeats(zr, dense):
    store, _ = dense
    seen = []
    for step in range(4):  # 40 // 10 = 4 steps per cycle
        b = indices(zr, store, "--seed", 9, "--step", step, "--mode",
                    "cyclic", "--batch-size", 10)
        assert len(set(b.tolist())) == 10
        seen += b.tolist()
    assert sorted(seen) == list(range(40))
    nxt = indices(zr, store, "--seed", 9, "--step", 4, "--mode", "cyclic",
                  "--batch-size", 10)
    assert len(set(nxt.tolist())) == 10 and nxt.max() < 40


def test_same_seed_and_step_give_identical_bytes(zr, dense):
    store, _ = dense
    args = ("batch", store, "--seed", 11, "--step", 2, "--batch-size", 8)
    assert zr.ok(*args) == zr.ok(*args)
    other = zr.ok("batch", store, "--seed", 12, "--step", 2,
                  "--batch-size", 8)
    assert other != zr.ok(*args)


def test_default_is_iid_with_256(zr, dense):
    store, _ = dense
    default = indices(zr, store, "--seed", 1, "--step", 0)
    assert default.shape == (256,)
    assert default.min() >= 0 and default.max() < 40
    explicit = indices(zr, store, "--seed", 1, "--step", 0, "--mode", "iid",
                       "--batch-size", 256)
    np.testing.assert_array_equal(default, explicit)


@pytest.mark.parametrize("mode", ["sequential", "iid", "cyclic"])
def test_ranks_split_the_global_batch(zr, dense, mode):
    store, _ = dense
    common = ("--seed", 3, "--step", 1, "--mode", mode)
    whole = indices(zr, store, *common, "--batch-size", 8)
    r0 = indices(zr, store, *common, "--batch-size", 4, "--rank", 0,
                 "--world", 2)
    r1 = indices(zr, store, *common, "--batch-size", 4, "--rank", 1,
                 "--world", 2)
    np.testing.assert_array_equal(np.concatenate([r0, r1]), whole)


@pytest.mark.parametrize("mode", ["sequential", "iid", "cyclic"])
def test_dense_batch_holds_the_sampled_records(zr, dense, tmp_path, mode):
    store, data = dense
    args = ("--seed", 21, "--step", 5, "--mode", mode, "--batch-size", 6)
    idx = indices(zr, store, *args)
    out = tmp_path / "b.npy"
    zr.ok("batch", store, *args, "-o", out)
    got = np.load(out)
    assert got.shape == (6, 3, 5)
    np.testing.assert_array_equal(got, data[idx])


def test_ragged_batch_is_an_npz_in_batch_order(zr, ragged):
    store, arrays = ragged
    args = ("--seed", 2, "--step", 7, "--batch-size", 5)
    idx = indices(zr, store, *args)
    got = zr.load("batch", store, *args)
    assert len(got) == 5
    for g, i in zip(got, idx):
        assert g.shape == arrays[i].shape
        np.testing.assert_array_equal(g, arrays[i])


@pytest.mark.parametrize("args", [
    ["--step", 0],
    ["--seed", 1],
    ["--seed", "x", "--step", 0],
    ["--seed", 1, "--step", -1],
    ["--seed", 1, "--step", 0, "--mode", "random"],
])
def test_bad_batch_lines(zr, dense, args):
    store, _ = dense
    assert "zrecord batch" in zr.fails(2, "batch", store, *args)


def test_batch_the_sampler_cannot_serve(zr, dense):
    store, _ = dense
    # cyclic needs world * batch <= records; rank must be < world
    zr.fails(1, "batch", store, "--seed", 1, "--step", 0, "--mode",
             "cyclic", "--batch-size", 41)
    zr.fails(1, "batch", store, "--seed", 1, "--step", 0, "--rank", 2,
             "--world", 2)


def test_resume_carries_its_granule(zr, tmp_path):
    """A cyclic run over 997 records changes its batch size twice (32, 50,
    20), each time resuming from the position reached.  With the first
    run's granule (--start P@32) every cycle of 992 positions serves each
    record once; a bare --start P once took the new W*B as the granule
    (79 repeats in the second cycle), and is now refused."""
    store = tmp_path / "s"
    zr.ok("create", store, "--dtype", "<i4", "--shape", "1")
    zr.ok("append", store, write_npys(tmp_path / "r.npy",
                                      np.arange(997, dtype="<i4")[:, None]))
    seen, pos = [], 0
    for b, steps in ((32, 40), (50, 20), (20, 30)):
        for t in range(steps):
            seen += indices(zr, store, "--mode", "cyclic", "--seed", 3,
                            "--step", t, "--batch-size", b,
                            "--start", "%d@32" % pos).tolist()
        pos += b * steps
    assert pos == 2880
    for c in range(0, 2 * 992, 992):
        assert len(set(seen[c:c + 992])) == 992, c
    # the same batch through --granule
    assert indices(zr, store, "--mode", "cyclic", "--seed", 3, "--step", 2,
                   "--batch-size", 20, "--start", 2280, "--granule",
                   32).tolist() == seen[2280 + 40:2280 + 60]
    for mode in ("cyclic", "iid"):
        err = zr.fails(1, "batch", store, "--mode", mode, "--seed", 3,
                       "--step", 0, "--batch-size", 50, "--start", 1280)
        assert "start 1280 has no granule" in err and "--start P@G" in err \
            and "--granule G" in err, err
    # sequential has no cycles to keep, and position 0 no past
    zr.ok("batch", store, "--mode", "sequential", "--seed", 3, "--step", 0,
          "--start", 1280)
    zr.ok("batch", store, "--mode", "cyclic", "--seed", 3, "--step", 0,
          "--start", 0)
    for bad in ("5@0", "5@", "@5", "5@6@7", "x"):
        assert "bad --start" in zr.fails(2, "batch", store, "--seed", 1,
                                         "--step", 0, "--start", bad)
    assert "differ" in zr.fails(2, "batch", store, "--seed", 1, "--step", 0,
                                "--start", "5@4", "--granule", 8)


# An ASan build holds freed memory in its quarantine (256 MiB): measure
# what the program keeps, not what ASan does (no effect on other builds).
NO_QUARANTINE = ":".join(p for p in (
    os.environ.get("ASAN_OPTIONS", ""),
    "quarantine_size_mb=0:thread_local_quarantine_size_kb=0") if p)


# A child's ru_maxrss starts from the RSS of the process that forked it
# (Linux keeps the high-water mark across fork and exec), and pytest's own
# process is large in an ASan build: fork the command from a small one.
LAUNCH = """import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def _peak_rss_kib(argv, tmp_path):
    """Runs argv to completion; its exit status and its own peak RSS."""
    report = tmp_path / "maxrss"
    p = subprocess.run([sys.executable, "-c", LAUNCH, str(report),
                        *[str(a) for a in argv]],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       env=dict(os.environ, ASAN_OPTIONS=NO_QUARANTINE))
    return p.returncode, int(report.read_text()), p.stderr.decode()


def test_dense_batch_streams_in_bounded_memory(zr, tmp_path):
    """A 400 MiB batch of a 10 MiB store (iid draws repeat records) is
    written piece by piece: the command's peak RSS stays far below the
    file's size (it held the whole file before), and the bytes are the
    sampled records."""
    rows = np.random.default_rng(5).integers(0, 255, (10, 1024, 1024),
                                             dtype=np.uint8)
    store = tmp_path / "d"
    zr.ok("create", store, "--dtype", "u1", "--shape", "1024,1024")
    np.save(tmp_path / "rows.npy", rows)
    zr.ok("append", store, tmp_path / "rows.npy")
    out = tmp_path / "b.npy"
    args = ["batch", store, "--seed", 4, "--step", 0, "--batch-size", 400]
    rc, peak, err = _peak_rss_kib([zr.binary, *args, "-o", out], tmp_path)
    assert rc == 0, err
    assert peak < 200 * 1024, "peak RSS %d KiB for a 400 MiB batch" % peak
    idx = zr.load(*args, "--indices")
    got = np.load(out, mmap_mode="r")
    assert got.shape == (400, 1024, 1024)
    for k in (0, 1, 199, 399):
        np.testing.assert_array_equal(got[k], rows[idx[k]])


def test_ragged_batch_over_the_bound_says_why(zr, tmp_path):
    """A form built whole in memory (a ragged .npz) over 1 GiB (or an
    eighth of the RAM) is refused before anything is gathered, with the
    mount's reason and the way out; no output file is left."""
    store = tmp_path / "r"
    zr.ok("create", store, "--dtype", "u1", "--ragged")
    files = []
    for i in range(4):
        files.append(tmp_path / ("r%d.npy" % i))
        np.save(files[-1], np.full(1 << 20, i, np.uint8))
    zr.ok("append", store, *files)
    out = tmp_path / "big.npz"
    err = zr.fails(1, "batch", store, "--seed", 0, "--step", 0,
                   "--batch-size", 1100, "-o", out)
    assert "File too large" in err and "built whole in memory" in err, err
    assert "max_batch_bytes" in err and "fewer records" in err, err
    assert not out.exists()
