"""One encoder (src/files/encoder.h, statsjson.h): `zrecord get/batch/
stats` and the mount's record, batch and stats files give the same bytes
for the same records, whatever the codec and the sampler's arguments.
Files are written by the real tools (`zrecord ... -o`, `cp`) and compared
with `cmp`."""
import json
import os
import subprocess

import numpy as np
import pytest

from fsutil import batch_args, batch_path, make_store, zrecord

DENSE = np.random.default_rng(3).integers(-9, 9, (50, 2, 3)).astype("<i8")
# ranks 0 to 3, one or two bytes per element, sizes that cross 64 bytes
RAGGED = [np.random.default_rng(i).integers(0, 255, size=(
    (), (i % 7 + 1,), (i % 3 + 1, i % 5 + 1), (2, i % 4 + 1, 3))[i % 4])
    .astype("<u2") for i in range(40)]

# (seed, step, mode, batch size): the default batch first
BATCHES = [(7, 0, None, None), (0, 3, "iid", 5), (11, 2, "cyclic", 8),
           (5, 9, "sequential", 3)]


@pytest.fixture(params=["raw", "zstd"])
def stores(request, src):
    make_store(os.path.join(src, "dense"), "<i8", shape=(2, 3),
               codec=request.param, rows=DENSE)
    make_store(os.path.join(src, "ragged"), "<u2", ragged=True,
               codec=request.param, records=RAGGED)
    return src


def cp(path, dst):
    subprocess.run(["cp", path, str(dst)], check=True)
    return dst


def same_file(a, b):
    return subprocess.run(["cmp", str(a), str(b)]).returncode == 0


def check_batches(m, src, tmp_path, store, ext, world_args=()):
    for seed, step, mode, size in BATCHES:
        for suffix, extra in ((ext, []), ("indices.npy", ["--indices"])):
            mine = tmp_path / "cli.out"
            zrecord("batch", os.path.join(src, store),
                    *batch_args(seed, step, mode, size), *world_args,
                    *extra, "-o", mine)
            served = cp(m.path(store, *batch_path(seed, step, mode, size,
                                                  suffix)),
                        tmp_path / "mount.out")
            assert same_file(mine, served), (store, seed, step, mode, size,
                                             suffix, world_args)
            np.load(mine)  # reads (a dense .npy, an .npz, the indices)


def test_batches_and_records_are_the_same_bytes(stores, mount, tmp_path):
    m = mount(stores, "ro")
    check_batches(m, stores, tmp_path, "dense", "npy")
    check_batches(m, stores, tmp_path, "ragged", "npz")
    for store, want in (("dense", DENSE), ("ragged", RAGGED)):
        for i in (0, 1, 2, 3, 37):
            mine = tmp_path / "cli.npy"
            zrecord("get", os.path.join(stores, store), i, "-o", mine)
            served = cp(m.path(store, "records", "%d.npy" % i),
                        tmp_path / "mount.npy")
            assert same_file(mine, served), (store, i)
            got = np.load(served)
            assert got.shape == want[i].shape and (got == want[i]).all()
            assert (np.load(served, mmap_mode="r") == want[i]).all()


def test_ragged_npz_holds_the_sampled_records(stores, mount, tmp_path):
    m = mount(stores, "ro")
    served = cp(m.path("ragged", "batch", "iid", "6", "4-1.npz"),
                tmp_path / "b.npz")
    idx = np.load(m.path("ragged", "batch", "iid", "6", "4-1.indices.npy"))
    with np.load(served) as z:
        assert z.files == ["arr_%d" % k for k in range(6)]
        for k, i in enumerate(idx):
            assert z["arr_%d" % k].shape == RAGGED[i].shape
            assert (z["arr_%d" % k] == RAGGED[i]).all()


@pytest.mark.parametrize("rank", [0, 1, 2])
def test_rank_slices_are_the_same_bytes(stores, mount, tmp_path, rank):
    m = mount(stores, "ro", "rank=%d" % rank, "world=3")
    world = ("--rank", rank, "--world", 3)
    check_batches(m, stores, tmp_path, "dense", "npy", world)
    check_batches(m, stores, tmp_path, "ragged", "npz", world)


@pytest.mark.parametrize("rank", [0, 1])
def test_start_serves_the_runs_positions(stores, mount, tmp_path, rank):
    """-o start=P@G: the batches of a run that began at position P of a
    stream of granule G, the bytes of `zrecord batch --start P@G` and,
    for P a multiple of the global batch G, those of a mount without it
    at a later step."""
    m = mount(stores, "ro", "rank=%d" % rank, "world=2", "start=12@6",
              name="s%d" % rank)
    args = ("--rank", rank, "--world", 2, "--start", "12@6")
    check_batches(m, stores, tmp_path, "dense", "npy", args)
    check_batches(m, stores, tmp_path, "ragged", "npz", args)
    plain = mount(stores, "ro", "rank=%d" % rank, "world=2",
                  name="p%d" % rank)
    for mode in ("iid", "cyclic", "sequential"):
        later = np.load(plain.path("dense", "batch", mode, "3", "5-3.npy"))
        here = np.load(m.path("dense", "batch", mode, "3", "5-1.npy"))
        assert (later == here).all(), mode


def test_granule_resumes_a_run_on_another_world(stores, mount, tmp_path):
    """A run of world 1, batch 8 stopped at position 16; four ranks of
    batch 4 continue it with -o start=16,granule=8: the bytes of zrecord
    batch with the same options, and one cycle (50 // 8 * 8 = 48 records)
    served once across both runs."""
    one = mount(stores, "ro", name="w1")
    first = [np.load(one.path("dense", "batch", "cyclic", "8",
                              "4-%d.indices.npy" % t)) for t in range(2)]
    seen = list(np.concatenate(first))
    for r in range(4):
        m = mount(stores, "ro", "rank=%d" % r, "world=4", "start=16",
                  "granule=8", name="g%d" % r)
        args = ("--rank", r, "--world", 4, "--start", 16, "--granule", 8)
        for t in range(2):
            mine = tmp_path / "cli.npy"
            zrecord("batch", os.path.join(stores, "dense"),
                    *batch_args(4, t, "cyclic", 4), *args, "--indices",
                    "-o", mine)
            served = m.path("dense", "batch", "cyclic", "4",
                            "4-%d.indices.npy" % t)
            assert same_file(mine, cp(served, tmp_path / "m.npy"))
            seen += list(np.load(served))
    # 16 + 2 steps * 4 ranks * 4 = 48 positions: the whole first cycle.
    assert len(seen) == 48 and len(set(int(i) for i in seen)) == 48


def test_a_resume_names_its_granule(stores, mount, tmp_path):
    """-o start=P with P > 0 and no granule: a cyclic or iid batch would
    take this mount's W*B for the stream's granule (records repeat within
    a cycle when W*B changed), so its name is refused with EINVAL and the
    store's errors file says how to give it; start=P@G serves the bytes
    of -o start=P,granule=G."""
    import errno
    bare = mount(stores, "ro", "world=4", "start=16", name="bare")
    for mode in ("cyclic", "iid"):
        with pytest.raises(OSError) as e:
            os.stat(bare.path("dense", "batch", mode, "4", "4-0.npy"))
        assert e.value.errno == errno.EINVAL, mode
    # sequential has no cycles to keep
    assert np.load(bare.path("dense", "batch", "sequential", "4",
                             "4-0.npy")).shape == (4, 2, 3)
    with open(bare.path("dense", "errors")) as f:
        text = f.read()
    assert "start 16 has no granule: a cyclic stream resumed past 0" in text
    assert "an iid stream" in text and "start=P@G" in text, text
    at = mount(stores, "ro", "world=4", "start=16@8", name="at")
    both = mount(stores, "ro", "world=4", "start=16", "granule=8",
                 name="both")
    for mode in ("cyclic", "iid"):
        name = ("dense", "batch", mode, "4", "4-1.npy")
        assert same_file(cp(at.path(*name), tmp_path / "a.npy"),
                         cp(both.path(*name), tmp_path / "b.npy")), mode


def test_stats_are_the_same_report(stores, mount):
    m = mount(stores, "ro")
    for store in ("dense", "ragged"):
        mine = zrecord("stats", os.path.join(stores, store)).stdout
        served = subprocess.run(["cat", m.path(store, "stats")], check=True,
                                capture_output=True).stdout
        assert mine == served
        a, b = json.loads(mine), json.loads(served)
        assert list(a.items()) == list(b.items())
        keys = ["records", "live_bytes", "data_bytes", "reclaimable",
                "codec", "ragged", "dtype"]
        assert list(a) == keys + ([] if store == "ragged" else
                                  ["item_shape"])
        assert a["records"] == (len(RAGGED) if store == "ragged" else
                                len(DENSE))
        assert a["ragged"] is (store == "ragged")
