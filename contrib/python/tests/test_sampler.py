"""
test_sampler.py - loaderx.zsampler.Sampler: the library's batches equal
the documented algorithm (transcribed in refsampler.py) for every mode,
seeking, iteration, rank/world slicing and argument checking.
"""
import numpy as np
import pytest

import refsampler
from loaderx.zsampler import Sampler

MODES = [Sampler.Mode.SEQUENTIAL, Sampler.Mode.IID, Sampler.Mode.CYCLIC]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n,b", [(1, 1), (5, 2), (10, 4), (1000, 7),
                                 (1_000_000, 256), (3 << 40, 5)])
def test_matches_spec(mode, n, b):
    s = Sampler(n, b, mode, seed=1234)
    for step in (0, 1, 2, 7, 1000, 123456789):
        got = s.batch(step)
        assert got.dtype == np.int64 and got.shape == (b,)
        assert got.tolist() == refsampler.batch(int(mode), 1234, n, b, step)


def test_next_iter_and_seek():
    s = Sampler(1000, 16, Sampler.Mode.IID, seed=42)
    first = [s.next() for _ in range(3)]
    assert s.step == 3
    s.seek(1)
    assert np.array_equal(next(s), first[1])
    it = iter(Sampler(1000, 16, Sampler.Mode.IID, seed=42, step=2))
    assert np.array_equal(next(it), first[2])
    assert not np.array_equal(first[0], first[1])


def test_seeds_differ_and_mode_names():
    a = Sampler(10**6, 64, "iid", seed=1).batch(0)
    b = Sampler(10**6, 64, Sampler.Mode.IID, seed=2).batch(0)
    assert not np.array_equal(a, b)
    assert Sampler(10, 2, "cyclic").mode is Sampler.Mode.CYCLIC


def test_sequential_wraps():
    s = Sampler(10, 4, Sampler.Mode.SEQUENTIAL)
    assert s.batch(2).tolist() == [8, 9, 0, 1]


def test_cyclic_is_a_permutation_per_cycle():
    s = Sampler(100, 10, Sampler.Mode.CYCLIC, seed=9)
    seen = np.concatenate([s.batch(t) for t in range(10)])
    assert sorted(seen.tolist()) == list(range(100))
    nxt = np.concatenate([s.batch(t) for t in range(10, 20)])
    assert sorted(nxt.tolist()) == list(range(100))
    assert not np.array_equal(seen, nxt)


@pytest.mark.parametrize("mode", MODES)
def test_rank_slices_concatenate_to_global_batch(mode):
    world, b = 4, 8
    whole = Sampler(1000, world * b, mode, seed=5)
    for step in (0, 3, 17):
        parts = [Sampler(1000, b, mode, seed=5, rank=r, world=world)
                 .batch(step) for r in range(world)]
        if mode != Sampler.Mode.CYCLIC:
            assert np.array_equal(np.concatenate(parts), whole.batch(step))
        assert [p.tolist() for p in parts] == [
            refsampler.batch(int(mode), 5, 1000, b, step, r, world)
            for r in range(world)]


@pytest.mark.parametrize("args", [
    dict(length=0, batch_size=1), dict(length=10, batch_size=0),
    dict(length=-1, batch_size=1), dict(length=10, batch_size=4, rank=2,
                                        world=2),
    dict(length=10, batch_size=11, mode=Sampler.Mode.CYCLIC),
    dict(length=10, batch_size=2, mode="shuffle"),
    dict(length=10, batch_size=2, mode=7),
])
def test_bad_config(args):
    with pytest.raises(ValueError):
        Sampler(**args)


def test_bad_step():
    s = Sampler(10, 2)
    with pytest.raises(ValueError):
        s.batch(-1)
    with pytest.raises(ValueError):
        s.seek(1 << 64)
