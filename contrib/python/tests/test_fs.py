"""
test_fs.py - a batch from the Python API equals the same batch read
through a zrecordfs mount: dense batch files, ragged .npz batches, the
batch's indices, and rank/world slices.  A mount that fails is a test
failure, never a skip; every mount is unmounted in teardown.
"""
import os
import subprocess
import time

import numpy as np
import pytest

import streams as fx
from loaderx.dataloader import DataLoader
from loaderx.zsampler import Sampler

N, B = 300, 16
# Mounts here must not leave entries in the host's /run/mount/utab
# (a root daemon records itself there: zrecordfs(8)).
os.environ.setdefault("ZRECORDFS_NO_UTAB", "1")


def daemon():
    top = os.environ.get("top_builddir") or os.path.join(
        os.path.dirname(__file__), "..", "..", "..")
    return os.path.join(top, "src", "fs", "zrecordfs")


def unmount(mnt):
    if subprocess.run(["fusermount3", "-u", mnt],
                      capture_output=True).returncode:
        subprocess.run(["umount", "-l", mnt], capture_output=True)


def mount(src, mnt, options):
    """Mounts src on mnt (the daemon returns once the mount is live)."""
    os.makedirs(mnt, exist_ok=True)
    assert os.access(daemon(), os.X_OK), "zrecordfs is not built: " + \
        daemon()
    proc = subprocess.run([daemon(), src, mnt, "-o", options],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, "zrecordfs failed: " + proc.stderr
    assert os.path.ismount(mnt), "zrecordfs returned but %s is not " \
        "mounted" % mnt


@pytest.fixture
def mounted(tmp_path):
    """mount(options) -> mount point; unmounts everything at the end."""
    src = str(tmp_path / "src")
    made = fx.create(src + "/ds", N)
    points = []

    def do(options):
        mnt = str(tmp_path / ("mnt%d" % len(points)))
        points.append(mnt)
        mount(src, mnt, options)
        return mnt
    expected = expected_batches(src + "/ds")
    yield made, expected, do
    for mnt in points:
        unmount(mnt)
    deadline = time.monotonic() + 10
    while any(os.path.ismount(m) for m in points) and \
            time.monotonic() < deadline:
        time.sleep(0.05)


CASES = [(7, 0, 0, 1), (7, 3, 0, 1), (123, 11, 0, 1), (7, 3, 1, 2),
         (7, 3, 0, 2)]


def expected_batches(root):
    """The Python API's batches, computed before the daemon takes the
    stores' locks: {(seed, step, rank, world): batch}."""
    out = {}
    opened = fx.open_all(root)
    try:
        for seed, step, rank, world in CASES:
            with DataLoader(opened, batch_size=B, seed=seed,
                            start_step=step, rank=rank, world=world,
                            mode="iid") as dl:
                out[seed, step, rank, world] = next(dl)
    finally:
        fx.close_all(opened)
    return out


def read_batch(mnt, seed, step):
    base = os.path.join(mnt, "ds")
    name = "%d-%d" % (seed, step)
    got = {}
    for stream in ("joint", "label"):
        got[stream] = np.load(os.path.join(base, stream, "batch",
                                           name + ".npy"))
    with np.load(os.path.join(base, "token", "batch", name + ".npz")) as z:
        got["token"] = [z["arr_%d" % k] for k in range(len(z.files))]
    got["indices"] = np.load(os.path.join(base, "label", "batch",
                                          name + ".indices.npy"))
    return got


def assert_same(fs, api):
    assert fs["joint"].dtype == api["joint"].dtype
    assert np.array_equal(fs["joint"], api["joint"])
    assert np.array_equal(fs["label"], api["label"])
    assert np.array_equal(fs["indices"], api["label"])
    assert len(fs["token"]) == len(api["token"]) == B
    for a, b in zip(fs["token"], api["token"]):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert np.array_equal(a, b)


def test_batches_equal_mounted_batches(mounted):
    src, expected, do = mounted
    mnt = do("sampler=iid,batch_size=%d" % B)
    for seed, step, rank, world in CASES:
        if world != 1:
            continue
        api = expected[seed, step, rank, world]
        fx.check_aligned(api, src, Sampler(N, B, "iid", seed=seed)
                         .batch(step).tolist())
        assert_same(read_batch(mnt, seed, step), api)


def test_rank_slices_equal_mounted_rank_slices(mounted):
    _, expected, do = mounted
    for rank in (0, 1):
        mnt = do("ro,sampler=iid,batch_size=%d,rank=%d,world=2"
                 % (B, rank))
        assert_same(read_batch(mnt, 7, 3), expected[7, 3, rank, 2])


def test_dataset_batch_equals_loader_batch(mounted):
    # A folder of equal-length stores serves the DataLoader's whole batch
    # dict as one .npz: dense members by stream name, ragged ones as
    # "<stream>/<k>".
    _, expected, do = mounted
    mnt = do("sampler=iid,batch_size=%d" % B)
    api = expected[7, 3, 0, 1]
    with np.load(os.path.join(mnt, "ds", "@batch", "7-3.npz")) as z:
        assert sorted(z.files) == sorted(
            ["joint", "label"] + ["token/%d" % k for k in range(B)])
        fs = {"joint": z["joint"], "label": z["label"],
              "token": [z["token/%d" % k] for k in range(B)]}
    fs["indices"] = np.load(os.path.join(mnt, "ds", "label", "batch",
                                         "7-3.indices.npy"))
    assert_same(fs, api)
