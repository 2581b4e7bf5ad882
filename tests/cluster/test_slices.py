"""test_slices.py - rank/world training across simulated hosts: each host
has its own GlusterFS client mount and its own read-only zrecordfs with
rank=R,world=W.  The ranks' batch files joined in rank order must be
`zrecord batch --batch-size W*B`, with the source's bytes, and a
multi-stream `@batch` must stay aligned on every rank."""
import io
import os

import numpy as np
import pytest

from conftest import LONG
from fsutil import make_store, zrecord

N = 47        # not a multiple of any W*B: cyclic steps straddle cycles
B = 5
WORLDS = (2, 4, 8) if LONG else (2, 4)
STEPS = range(12) if LONG else (0, 2, 4)
IMG = np.random.default_rng(3).integers(0, 255, (N, 2, 4, 4), np.uint8)
LAB = np.arange(N, dtype="<i8") * 7
RAG = [np.full((i % 3 + 1,), i, "<f4") for i in range(N)]


def cycle_crossed(world, steps):
    """True if some step's global batch straddles a cycle boundary."""
    g = world * B
    return any((t * g) // N != (t * g + g - 1) // N for t in steps)


def reference(store, mode, world, seed, step, indices):
    args = [store, "--seed", seed, "--step", step, "--mode", mode,
            "--batch-size", world * B]
    if indices:
        args.append("--indices")
    return np.load(io.BytesIO(zrecord("batch", *args).stdout))


def rank_mounts(mount, dirs, world, mode):
    return [mount(dirs[r], "ro", "sampler=" + mode, "batch_size=%d" % B,
                 "rank=%d" % r, "world=%d" % world, name="w%dr%d" % (world, r))
            for r in range(world)]


@pytest.mark.parametrize("world", WORLDS)
@pytest.mark.parametrize("mode", ["cyclic", "iid"])
def test_rank_slices_join_to_the_global_batch(hosts, mount, world, mode):
    dirs = hosts(world)
    make_store(os.path.join(dirs[0], "img"), "u1", shape=(2, 4, 4),
               codec="zstd", rows=IMG)
    if mode == "cyclic":
        assert cycle_crossed(world, STEPS)
    ms = rank_mounts(mount, dirs, world, mode)
    for step in STEPS:
        name = "9-%d" % step
        idx = [np.load(m.path("img", "batch", name + ".indices.npy"))
               for m in ms]
        rows = [np.load(m.path("img", "batch", name + ".npy")) for m in ms]
        assert all(len(i) == B for i in idx)
        want = reference(os.path.join(dirs[0], "img"), mode, world, 9,
                         step, True)
        assert (np.concatenate(idx) == want).all()
        assert (np.concatenate(rows) == IMG[want]).all()
        assert (np.concatenate(rows) ==
                reference(os.path.join(dirs[0], "img"), mode, world, 9,
                          step, False)).all()
    if mode == "cyclic":
        # one cycle is a permutation: every record exactly once
        per_cycle = N // (world * B) * world * B
        got = np.concatenate([
            np.load(m.path("img", "batch", "9-%d.indices.npy" % t))
            for t in range(per_cycle // (world * B)) for m in ms])
        assert len(set(got.tolist())) == len(got)


@pytest.mark.parametrize("world", WORLDS)
def test_multi_stream_batch_stays_aligned(hosts, mount, world):
    dirs = hosts(world)
    make_store(os.path.join(dirs[0], "img"), "u1", shape=(2, 4, 4),
               rows=IMG)
    make_store(os.path.join(dirs[0], "lab"), "<i8", shape=(), rows=LAB)
    make_store(os.path.join(dirs[0], "rag"), "<f4", ragged=True,
               codec="zstd", records=RAG)
    ms = rank_mounts(mount, dirs, world, "cyclic")
    for step in STEPS:
        name = "cyclic/%d/4-%d" % (B, step)
        joined = []
        for m in ms:
            idx = np.load(m.path("@batch", *(name + ".indices.npy").split(
                "/")))
            z = np.load(m.path("@batch", *(name + ".npz").split("/")))
            assert (z["img"] == IMG[idx]).all()
            assert (z["lab"] == LAB[idx]).all()
            for k, i in enumerate(idx):
                assert (z["rag/%d" % k] == RAG[i]).all()
            joined.append(idx)
        want = reference(os.path.join(dirs[0], "lab"), "cyclic", world, 4,
                         step, True)
        assert (np.concatenate(joined) == want).all()
