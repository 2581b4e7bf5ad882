"""Reading through the mount: record files, batch files, datasets and the
namespace's names, checked against the source arrays and against the
library's own gather (the `zrecord get/batch` commands, which may run
beside a read-only mount)."""
import errno
import io
import json
import os

import numpy as np
import pytest

from conftest import IMG, RAGGED
from fsutil import make_store, zrecord


def read(path):
    with open(path, "rb") as f:
        return f.read()


def cli_bytes(*args):
    return zrecord(*args, "-o", "-").stdout


def test_tree_and_hidden_files(dense_store, src, mount):
    os.makedirs(os.path.join(src, "plain", "deeper"))
    m = mount(src)
    assert sorted(os.listdir(m.mnt)) == [".zrecordfs", "img", "plain"]
    assert os.listdir(m.path("plain")) == ["deeper"]
    assert sorted(os.listdir(m.path("img"))) == sorted(
        ["records", "batch", "append", "stats", "schema", "errors", "sync",
         "compact", "delete"])
    assert not os.path.exists(m.path("img", "meta.zr"))
    assert sorted(os.listdir(m.path("img", "batch"))) == [
        "cyclic", "iid", "sequential"]


def test_dense_records_equal_source_and_library(dense_store, src, mount):
    m = mount(src, "ro")
    names = os.listdir(m.path("img", "records"))
    assert sorted(names, key=lambda s: int(s[:-4])) == [
        "%d.npy" % i for i in range(len(IMG))]
    for i in (0, 1, 17, len(IMG) - 1):
        p = m.path("img", "records", "%d.npy" % i)
        data = read(p)
        assert os.stat(p).st_size == len(data)
        assert data == cli_bytes("get", dense_store, i)
        saved = io.BytesIO()
        np.save(saved, IMG[i])
        assert data == saved.getvalue()     # NumPy's own header, exactly
        a = np.load(p)
        assert a.dtype == np.uint8 and (a == IMG[i]).all()
        mm = np.load(p, mmap_mode="r")
        assert (mm == IMG[i]).all()


def test_ragged_records(ragged_store, src, mount):
    m = mount(src, "ro")
    for i, want in enumerate(RAGGED):
        p = m.path("rag", "records", "%d.npy" % i)
        data = read(p)
        assert os.stat(p).st_size == len(data)
        a = np.load(io.BytesIO(data))
        assert a.shape == want.shape and a.dtype == want.dtype
        assert (a == want).all()
        lib = np.load(io.BytesIO(cli_bytes("get", ragged_store, i)))
        assert (lib == a).all() and lib.shape == a.shape
        assert (np.load(p, mmap_mode="r") == want).all()


@pytest.mark.parametrize("name", ["40.npy", "-1.npy", "01.npy", "1.np",
                                  "x.npy", "1.npy.npy", "99999999999999999999999.npy"])
def test_bad_record_names(dense_store, src, mount, name):
    m = mount(src)
    with pytest.raises(FileNotFoundError):
        os.stat(m.path("img", "records", name))


def test_dense_batches_equal_library(dense_store, src, mount):
    m = mount(src, "ro", "sampler=cyclic", "batch_size=8")
    cases = [("batch/3-5.npy", ["--mode", "cyclic", "--batch-size", 8,
                                 "--seed", 3, "--step", 5]),
             ("batch/iid/16/9-0.npy", ["--mode", "iid", "--batch-size", 16,
                                        "--seed", 9, "--step", 0]),
             ("batch/sequential/7/0-11.npy", ["--mode", "sequential",
                                              "--batch-size", 7, "--seed", 0,
                                              "--step", 11])]
    for rel, args in cases:
        p = m.path("img", *rel.split("/"))
        data = read(p)
        assert os.stat(p).st_size == len(data)
        assert data == cli_bytes("batch", dense_store, *args)
        idx_path = p[:-4] + ".indices.npy"
        idx = np.load(idx_path)
        assert idx.dtype == np.int64
        assert read(idx_path) == cli_bytes("batch", dense_store, *args,
                                           "--indices")
        saved = io.BytesIO()
        np.save(saved, IMG[idx])
        assert data == saved.getvalue()


def test_ragged_batch_npz(ragged_store, src, mount):
    m = mount(src, "ro", "batch_size=5", "threads=0")
    p = m.path("rag", "batch", "4-2.npz")
    data = read(p)
    assert os.stat(p).st_size == len(data)
    z = np.load(io.BytesIO(data))
    idx = np.load(m.path("rag", "batch", "4-2.indices.npy"))
    assert z.files == ["arr_%d" % k for k in range(5)]
    lib = np.load(io.BytesIO(cli_bytes("batch", ragged_store, "--seed", 4,
                                       "--step", 2, "--batch-size", 5)))
    for k, i in enumerate(idx):
        assert z["arr_%d" % k].shape == RAGGED[i].shape
        assert (z["arr_%d" % k] == RAGGED[i]).all()
        assert (lib["arr_%d" % k] == RAGGED[i]).all()
    # a ragged store has no .npy batch, a dense one no .npz
    assert not os.path.exists(m.path("rag", "batch", "4-2.npy"))


def test_dataset_batch(src, mount):
    ds = os.path.join(src, "ds")
    labels = np.arange(len(IMG), dtype="<i8") * 3
    make_store(os.path.join(ds, "img"), "u1", shape=(3, 8, 8), rows=IMG)
    make_store(os.path.join(ds, "lab"), "<i8", shape=(), rows=labels)
    make_store(os.path.join(ds, "tok"), "<f4", ragged=True,
               records=RAGGED + RAGGED[:10])
    os.makedirs(os.path.join(ds, "@batch"))  # hidden by the aligned batch
    m = mount(src, "batch_size=6")
    assert sorted(os.listdir(m.path("ds"))) == ["@batch", "img", "lab",
                                                "tok"]
    p = m.path("ds", "@batch", "iid", "6", "5-3.npz")
    data = read(p)
    assert os.stat(p).st_size == len(data)
    z = np.load(io.BytesIO(data))
    idx = np.load(m.path("ds", "@batch", "iid", "6", "5-3.indices.npy"))
    assert sorted(z.files) == sorted(["img", "lab"] +
                                     ["tok/%d" % k for k in range(6)])
    assert (z["img"] == IMG[idx]).all() and (z["lab"] == labels[idx]).all()
    toks = RAGGED + RAGGED[:10]
    for k, i in enumerate(idx):
        assert (z["tok/%d" % k] == toks[i]).all()
    # each stream's own batch draws the same indices
    assert (np.load(m.path("ds", "img", "batch", "iid", "6",
                           "5-3.indices.npy")) == idx).all()


def test_dataset_of_unequal_lengths_batches_the_common_length(src, mount):
    """While one stream is ahead of another, @batch stays and draws over
    the records every stream holds (the shortest stream's length)."""
    ds = os.path.join(src, "ds")
    a = np.arange(10, dtype=np.uint8).reshape(5, 2)
    b = np.arange(100, 112, dtype=np.uint8).reshape(6, 2)
    make_store(os.path.join(ds, "a"), "u1", shape=(2,), rows=a)
    make_store(os.path.join(ds, "b"), "u1", shape=(2,), rows=b)
    m = mount(src)
    assert "@batch" in os.listdir(m.path("ds"))
    seq = m.path("ds", "@batch", "sequential", "5")
    z = np.load(os.path.join(seq, "0-0.npz"))
    assert (z["a"] == a).all() and (z["b"] == b[:5]).all()
    idx = np.load(m.path("ds", "@batch", "iid", "64", "3-2.indices.npy"))
    assert idx.max() < 5 and len(set(idx.tolist())) == 5


def test_bad_batch_names(dense_store, src, mount):
    m = mount(src)
    for rel in ["batch/1.npy", "batch/a-1.npy", "batch/1-1.npz",
                "batch/iid/0/1-1.npy", "batch/iid/x/1-1.npy",
                "batch/nope/8/1-1.npy", "batch/01-1.npy"]:
        with pytest.raises(FileNotFoundError):
            os.stat(m.path("img", *rel.split("/")))
    # cyclic cannot serve a batch larger than the store
    with pytest.raises(OSError) as e:
        os.stat(m.path("img", "batch", "cyclic", "41", "0-0.npy"))
    assert e.value.errno == errno.EINVAL


def test_rank_world_slices(dense_store, src, mount):
    whole = mount(src, "ro", "sampler=iid", "batch_size=12", name="w")
    r0 = mount(src, "ro", "sampler=iid", "batch_size=6", "rank=0",
               "world=2", name="r0")
    r1 = mount(src, "ro", "sampler=iid", "batch_size=6", "rank=1",
               "world=2", name="r1")
    g = np.load(whole.path("img", "batch", "2-9.indices.npy"))
    a = np.load(r0.path("img", "batch", "2-9.indices.npy"))
    b = np.load(r1.path("img", "batch", "2-9.indices.npy"))
    assert (np.concatenate([a, b]) == g).all()
    assert (np.load(r1.path("img", "batch", "2-9.npy")) == IMG[b]).all()


def test_listing_a_large_store_streams(src, mount):
    n = 300000
    make_store(os.path.join(src, "big"), "u1", shape=(),
               rows=np.arange(n, dtype=np.uint64).astype(np.uint8))
    m = mount(src, "ro")
    count = 0
    with os.scandir(m.path("big", "records")) as it:
        for e in it:
            count += 1
    assert count == n
    assert np.load(m.path("big", "records", "%d.npy" % (n - 1))) == \
        (n - 1) % 256


def test_empty_store(src, mount):
    make_store(os.path.join(src, "empty"), "<f4", shape=(2,))
    m = mount(src)
    assert os.listdir(m.path("empty", "records")) == []
    with pytest.raises(FileNotFoundError):
        os.stat(m.path("empty", "batch", "0-0.npy"))
    with pytest.raises(FileNotFoundError):
        os.stat(m.path("empty", "records", "0.npy"))
    with open(m.path("empty", "append"), "wb") as f:
        np.save(f, np.ones((3, 2), "<f4"))
    assert np.load(m.path("empty", "batch", "sequential", "2",
                          "0-0.npy")).shape == (2, 2)


def test_dataset_batch_does_not_flicker_under_appends(src, mount):
    """Appends to img, then to lbl, 60 times over, while `find` lists the
    dataset folder and reads its @batch: every listing holds @batch, no
    find fails ("No such file"), and each batch read holds rows both
    streams had (the common length)."""
    import subprocess
    import threading
    ds = os.path.join(src, "ds")
    make_store(os.path.join(ds, "img"), "u1", shape=(4,),
               rows=np.zeros((8, 4), np.uint8))
    make_store(os.path.join(ds, "lbl"), "<i8", shape=(),
               rows=np.arange(8, dtype="<i8"))
    m = mount(src)
    done = threading.Event()

    def appends():
        try:
            for i in range(60):
                for name, row in (("img", np.full((1, 4), i, np.uint8)),
                                  ("lbl", np.array([8 + i], "<i8"))):
                    buf = io.BytesIO()
                    np.save(buf, row)
                    with open(m.path("ds", name, "append"), "wb") as f:
                        f.write(buf.getvalue())
        finally:
            done.set()
    t = threading.Thread(target=appends)
    t.start()
    runs = bad = 0
    while not done.is_set() or runs < 5:
        r = subprocess.run(["find", m.path("ds"), "-maxdepth", "2"],
                           capture_output=True, text=True)
        runs += 1
        listed = r.stdout.split()
        if r.returncode or m.path("ds", "@batch") not in listed:
            bad += 1
        z = np.load(m.path("ds", "@batch", "sequential", "8", "0-0.npz"))
        assert (z["lbl"] == np.arange(8)).all()
    t.join()
    assert bad == 0, "%d of %d find runs lost @batch" % (bad, runs)
    with open(m.path("ds", "lbl", "stats")) as f:
        assert json.load(f)["records"] == 68
