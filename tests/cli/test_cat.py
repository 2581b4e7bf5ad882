"""test_cat.py - `zrecord cat` and `zrecord ls` read a zrecordfs mount's
files and folders without a mount: for the same SRC and -o options, cat's
bytes are the mounted file's (records as .npy and .png, dense and ragged
batches in every form, a dataset's @batch, a mixture folder's batches and
stats, the text and usage files) and ls prints what os.listdir of the
mount gives.  Bad paths and options are refused with a message naming
them and nothing on stdout; the run options are refused in the mount's
words."""
import errno
import json
import os
import subprocess
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "fs"))
from fsutil import Mount, ZRECORDFS, make_store  # noqa: E402

# 300 uint8 images of 3x64x64: a default batch (256) is 3 MiB, several of
# the mount's 1 MiB pieces; (C,H,W) records are also served as .png
IMG = np.random.default_rng(1).integers(0, 255, (300, 3, 64, 64),
                                        dtype=np.uint8)
RAG = [np.random.default_rng(i).standard_normal((i % 5 + 1, 3)).astype(
    "<f4") for i in range(40)]


def rows_of(base, n):
    return (np.arange(n * 12, dtype="<i4").reshape(n, 3, 4) + base)


@pytest.fixture(scope="module")
def src(tmp_path_factory):
    """SRC: a dense image store, a ragged store, a dataset folder of two
    stores, two small dense stores and a mixture file over them."""
    d = tmp_path_factory.mktemp("cat") / "src"
    d.mkdir()
    make_store(str(d / "img"), "u1", shape=(3, 64, 64), codec="zstd",
               rows=IMG)
    make_store(str(d / "rag"), "<f4", ragged=True, codec="zstd",
               records=RAG)
    (d / "ds").mkdir()
    make_store(str(d / "ds" / "x"), "<i4", shape=(3, 4), rows=rows_of(0, 30))
    make_store(str(d / "ds" / "y"), "<f4", ragged=True, records=RAG[:30])
    make_store(str(d / "a"), "<i4", shape=(3, 4), rows=rows_of(1000, 20))
    make_store(str(d / "b"), "<i4", shape=(3, 4), rows=rows_of(5000, 7))
    with open(d / "mix.mix.json", "w") as f:
        json.dump({"sources": [{"path": "a", "weight": 3},
                               {"path": "b", "weight": 1}]}, f)
    return str(d)


@pytest.fixture
def mounted(tmp_path):
    made = []

    def factory(src, *opts):
        m = Mount(src, str(tmp_path / ("mnt%d" % len(made))), *opts)
        made.append(m)
        return m

    yield factory
    for m in made:
        assert m.stop() == 0, m.stderr


def read(m, path):
    with open(m.path(*path.split("/")), "rb") as f:
        return f.read()


# Every kind of file the mount serves, by the path cat takes.
FILES = [
    "img/records/0.npy", "img/records/299.npy", "img/records/17.png",
    "img/batch/1-0.npy", "img/batch/1-0.indices.npy",
    "img/batch/sequential/100/2-1.npy", "img/batch/cyclic/7/3-5.npy",
    "img/batch/iid/64/4-2.indices.npy",
    "rag/records/3.npy",
    "rag/batch/1-0.npz", "rag/batch/1-0.indices.npy",
    "rag/batch/1-0.packed.npz", "rag/batch/1-0.padded.npz",
    "rag/batch/iid/8/2-3.packed.npz", "rag/batch/sequential/5/0-1.padded.npz",
    "rag/batch/1-0.packed.npy", "rag/batch/1-0.offsets.npy",
    "rag/batch/1-0.shapes.npy", "rag/batch/1-0.padded.npy",
    "rag/batch/1-0.lengths.npy",
    "ds/@batch/iid/8/1-2.npz", "ds/@batch/1-0.npz",
    "ds/@batch/sequential/4/0-3.indices.npy",
    "mix.mix/batch/0-5.npy", "mix.mix/batch/0-5.indices.npy",
    "mix.mix/batch/cyclic/6/2-1.npy", "mix.mix/stats", "mix.mix/errors",
    "img/stats", "img/schema", "img/errors", "rag/stats", "rag/schema",
    "img/append", "img/sync", "img/compact", "img/delete",
    "ds/x/stats", "ds/y/records/29.npy",
]


def test_files_are_the_mounts(zr, src, mounted):
    m = mounted(src, "ro")
    for path in FILES:
        want = read(m, path)
        assert len(want) > 0 or path.endswith("errors"), path
        assert zr.ok("cat", src, path) == want, path
    # several paths: their bytes one after the other, as cat(1)
    assert zr.ok("cat", src, "img/stats", "img/records/0.npy",
                 "mix.mix/stats") == (read(m, "img/stats") +
                                      read(m, "img/records/0.npy") +
                                      read(m, "mix.mix/stats"))
    # a path walks as the kernel walks it: "." and ".." too
    assert zr.ok("cat", src, "./img/../rag/batch/iid/../1-0.npz") == \
        read(m, "rag/batch/1-0.npz")
    # the batch really is the records: a dense one is IMG's rows
    idx = np.load(m.path("img", "batch", "1-0.indices.npy"))
    got = np.load(m.path("img", "batch", "1-0.npy"))
    assert got.shape == (256, 3, 64, 64) and np.array_equal(got, IMG[idx])


def test_run_options_are_the_mounts(zr, src, mounted):
    opts = ["rank=1", "world=2", "start=5", "skip=10:20", "batch_size=16",
            "sampler=sequential", "granule=64"]
    m = mounted(src, "ro", *opts)
    args = ("-o", ",".join(opts[:4]), "-o", ",".join(opts[4:]))
    for path in ("img/batch/1-0.npy", "img/batch/1-3.indices.npy",
                 "img/batch/iid/8/2-1.npy", "rag/batch/0-2.packed.npz",
                 "rag/batch/0-2.npz", "ds/@batch/3-1.npz",
                 "mix.mix/batch/0-5.npy", "mix.mix/batch/1-2.indices.npy"):
        want = read(m, path)
        assert zr.ok("cat", src, path, *args) == want, path
        # the options change the batch: without them it differs
        assert zr.ok("cat", src, path) != want, path
    # rank 1's slice of a global batch of 2 * 16
    assert len(np.load(m.path("img", "batch", "1-0.indices.npy"))) == 16


def test_ls_is_the_mounts_listing(zr, src, mounted):
    m = mounted(src, "ro")
    for path in ("", "img", "img/records", "img/batch", "rag", "ds",
                 "ds/@batch", "ds/x", "mix.mix", "mix.mix/batch",
                 "img/batch/iid", "img/batch/iid/64"):
        # the mount's own .zrecordfs is no file of SRC's
        want = os.listdir(m.path(*path.split("/"))) if path else \
            [n for n in os.listdir(m.mnt) if n != ".zrecordfs"]
        args = ("ls", src, path) if path else ("ls", src)
        got = zr.ok(*args).decode().splitlines()
        assert got == want, path
    assert zr.ok("ls", src, "img/records").decode().splitlines() == \
        ["%d.npy" % i for i in range(300)]
    assert zr.ok("ls", src, "img/batch").decode().split() == [
        "sequential", "iid", "cyclic"]


@pytest.mark.parametrize("path", [
    "nope", "img/nope", "img/records/300.npy", "img/records/x.npy",
    "rag/records/0.png", "img/batch/1-0.npz", "img/batch/iid/0/1-0.npy",
    "mix.mix/batch/1-0.npz", "img/stats/x", "img/records/0.npy/.."])
def test_missing_paths(zr, src, path):
    r = zr.run("cat", src, path)
    err = r.stderr.decode()
    assert r.returncode == 1 and r.stdout == b"", err
    assert path in err and "does not exist in " + src in err, err


def test_folders_and_files_refused(zr, src):
    for path in ("img", "img/records", "img/batch/iid/8", "ds/@batch", ""):
        r = zr.run("cat", src, path)
        assert r.returncode == 1 and r.stdout == b"", path
        assert "%s is a folder: zrecord ls lists it" % path in \
            r.stderr.decode()
    err = zr.fails(1, "ls", src, "img/stats")
    assert "img/stats is a file: zrecord cat reads it" in err
    err = zr.fails(1, "ls", src, "img/nope")
    assert "img/nope does not exist in " + src in err
    # the good paths are still written, the bad one is named
    r = zr.run("cat", src, "img/stats", "img/nope", "rag/schema")
    assert r.returncode == 1
    assert r.stdout == zr.ok("cat", src, "img/stats", "rag/schema")
    assert "img/nope" in r.stderr.decode()


def fs_refusal(tmp_path, opt):
    """What zrecordfs says of -o opt, before it mounts anything."""
    mnt = tmp_path / "never"
    mnt.mkdir(exist_ok=True)
    r = subprocess.run([ZRECORDFS, str(tmp_path), str(mnt), "-o", opt],
                       capture_output=True, timeout=60)
    assert r.returncode != 0 and not os.path.ismount(mnt)
    return r.stderr.decode().strip()


@pytest.mark.parametrize("opt", [
    "sampler=random", "batch_size=0", "batch_size=16777217", "rank=-1",
    "world=0", "start=x", "granule=0", "skip=5:3", "grow=1", "length=a",
    "max_batch_bytes=1K", "max_batch_bytes=12Q"])
def test_bad_run_options_in_the_mounts_words(zr, src, tmp_path, opt):
    err = zr.fails(2, "cat", src, "img/stats", "-o", "batch_size=8," + opt)
    fs = fs_refusal(tmp_path, opt)
    # "zrecordfs: bad option 'OPT' (WHAT IT TAKES)"
    assert fs.startswith("zrecordfs: bad option '%s' (" % opt), fs
    assert fs[len("zrecordfs: "):] in err, (fs, err)
    assert opt.split("=")[0] + "=" in fs


def test_rank_needs_a_larger_world_in_both(zr, src, tmp_path):
    err = zr.fails(2, "cat", src, "img/stats", "-o", "rank=2,world=2")
    fs = fs_refusal(tmp_path, "rank=2,world=2")
    assert fs == "zrecordfs: rank=2 needs world > 2"
    assert "zrecord: cat: rank=2 needs world > 2" in err
    zr.fails(2, "cat", src, "img/stats", "-o", "rank=1")


def test_other_options_refused(zr, src):
    for opt in ("ro", "prefetch=2", "sampler"):
        err = zr.fails(2, "cat", src, "img/stats", "-o", opt)
        assert "unknown option '%s'" % opt in err, err
    err = zr.fails(2, "cat", src)
    assert "expected SRC and PATH" in err
    err = zr.fails(2, "ls", src, "a", "b")
    assert "expected SRC [PATH]" in err
    err = zr.fails(1, "cat", str(src) + "/none", "img/stats")
    assert "none" in err


def test_help_lists_the_run_options(zr):
    out = zr.ok("cat", "--help").decode()
    for name in ("sampler=MODE", "batch_size=B", "rank=R", "world=W",
                 "start=P", "granule=G", "skip=A:B", "grow=P[:K]:N",
                 "length=N[:N...]", "max_batch_bytes=N[K|M|G]"):
        assert "    -o " + name in out, name
    fs = subprocess.run([ZRECORDFS, "--help"], capture_output=True,
                        text=True).stdout
    # the same rows as zrecordfs --help
    rows = out[out.index("    -o sampler=MODE"):]
    for line in rows.splitlines():
        assert line in fs.splitlines(), line


def test_max_batch_bytes_as_the_mount(zr, src, mounted):
    m = mounted(src, "ro", "max_batch_bytes=4K")
    with pytest.raises(OSError) as e:
        open(m.path("rag", "batch", "1-0.npz"), "rb")
    assert e.value.errno == errno.EFBIG
    r = zr.run("cat", src, "rag/batch/1-0.npz", "-o", "max_batch_bytes=4K")
    err = r.stderr.decode()
    assert r.returncode == 1 and r.stdout == b"", err
    assert "rag/batch/1-0.npz" in err and "File too large" in err, err
    # a batch under the cap is served, the same bytes
    small = "rag/batch/sequential/2/0-0.npz"
    assert zr.ok("cat", src, small, "-o", "max_batch_bytes=4K") == \
        read(m, small)
