"""
test_dataloader.py - DataLoader over dense and ragged streams: batches
equal the sampler's indices in step order and stay aligned across streams,
runs are deterministic whatever the thread count, start_step resumes
exactly, rank/world slices tile the global batch, prefetch stays bounded,
and close() never hangs (early stop, failing transform, closing while the
consumer waits).
"""
import threading
import time

import numpy as np
import pytest

import streams as fx
from loaderx.dataloader import DataLoader
from loaderx.zrecord import DenseStore
from loaderx.zsampler import Sampler

N = 500
MODES = [Sampler.Mode.SEQUENTIAL, Sampler.Mode.IID, Sampler.Mode.CYCLIC]


@pytest.fixture
def stores():
    src = fx.create("ds", N)
    opened = fx.open_all("ds")
    yield src, opened
    fx.close_all(opened)


def take(loader, count):
    return [next(loader) for _ in range(count)]


def same(a, b):
    return (np.array_equal(a["joint"], b["joint"])
            and np.array_equal(a["label"], b["label"])
            and [t.tolist() for t in a["token"]] ==
            [t.tolist() for t in b["token"]])


@pytest.mark.parametrize("mode", MODES)
def test_batches_follow_sampler_and_align(stores, mode):
    src, st = stores
    sampler = Sampler(N, 32, mode, seed=11)
    with DataLoader(st, batch_size=32, mode=mode, seed=11,
                    workers=3) as loader:
        for step, batch in zip(range(40), loader):
            assert sorted(batch) == ["joint", "label", "token"]
            assert batch["joint"].shape == (32, 3, 5)
            fx.check_aligned(batch, src, sampler.batch(step).tolist())
        assert loader.step == 40


def test_deterministic_across_worker_counts(stores):
    _, st = stores
    runs = []
    for workers in (1, 4):
        with DataLoader(st, batch_size=16, seed=3, workers=workers) as dl:
            runs.append(take(dl, 25))
    assert all(same(a, b) for a, b in zip(*runs))
    with DataLoader(st, batch_size=16, seed=4) as dl:
        assert not same(next(dl), runs[0][0])


def test_resume_from_start_step_equals_continuing(stores):
    _, st = stores
    with DataLoader(st, batch_size=8, seed=5, mode="cyclic") as dl:
        whole = take(dl, 150)     # crosses cycle boundaries (62 per cycle)
    with DataLoader(st, batch_size=8, seed=5, mode="cyclic") as dl:
        take(dl, 70)
        resume_at = dl.step
    assert resume_at == 70
    with DataLoader(st, batch_size=8, seed=5, mode="cyclic",
                    start_step=resume_at) as dl:
        rest = take(dl, 80)
    assert all(same(a, b) for a, b in zip(whole[70:], rest))


def test_in_order_with_uneven_transforms(stores):
    src, st = stores

    def jitter(batch):
        # later steps often finish first on the other threads
        time.sleep(0.002 * (int(batch["label"][0]) % 5))
        batch["n"] = len(batch["label"])
        return batch
    sampler = Sampler(N, 4, Sampler.Mode.IID, seed=8)
    with DataLoader(st, batch_size=4, seed=8, workers=4,
                    transform=jitter) as dl:
        for step in range(60):
            batch = next(dl)
            assert batch["n"] == 4
            fx.check_aligned(batch, src, sampler.batch(step).tolist())


@pytest.mark.parametrize("mode", MODES)
def test_rank_world_tile_the_global_batch(stores, mode):
    _, st = stores
    world, b = 3, 10
    with DataLoader(st, batch_size=world * b, mode=mode, seed=2) as dl:
        whole = take(dl, 6)
    parts = []
    for rank in range(world):
        with DataLoader(st, batch_size=b, mode=mode, seed=2, rank=rank,
                        world=world) as dl:
            parts.append(take(dl, 6))
    for step in range(6):
        labels = [p[step]["label"] for p in parts]
        expect = [Sampler(N, b, mode, seed=2, rank=r, world=world)
                  .batch(step) for r in range(world)]
        assert all(np.array_equal(x, y) for x, y in zip(labels, expect))
        if mode != Sampler.Mode.CYCLIC:   # cyclic's P depends on W*B
            assert np.array_equal(np.concatenate(labels),
                                  whole[step]["label"])


def test_prefetch_is_bounded(stores):
    _, st = stores
    claimed = []

    def record(batch):
        claimed.append(int(batch["label"][0]))
        return batch
    dl = DataLoader(st, batch_size=4, mode="sequential", workers=2,
                    prefetch=3, transform=record)
    deadline = time.monotonic() + 30
    while len(claimed) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)           # room for a broken bound to show
    assert len(claimed) == 3
    next(dl)
    deadline = time.monotonic() + 30
    while len(claimed) < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)
    assert len(claimed) == 4
    dl.close()


def closes_within(fn, seconds=30):
    t = threading.Thread(target=fn, daemon=True)
    t.start()
    t.join(seconds)
    return not t.is_alive()


def test_close_after_early_stop_never_hangs(stores):
    _, st = stores
    for workers in (1, 2, 8):
        dl = DataLoader(st, batch_size=64, workers=workers, prefetch=2)
        next(dl)
        assert closes_within(dl.close)
        assert dl.closed
        with pytest.raises(StopIteration):
            next(dl)
        assert closes_within(dl.close)          # idempotent
    with DataLoader(st, batch_size=64) as dl:
        for i, _ in enumerate(dl):
            if i == 2:
                break
    assert dl.closed


def test_transform_error_reaches_consumer(stores):
    _, st = stores

    def fail_at_3(batch):
        if int(batch["label"][0]) == 3 * 5:
            raise KeyError("bad batch")
        return batch
    dl = DataLoader(st, batch_size=5, mode="sequential", workers=3,
                    transform=fail_at_3)
    assert [int(next(dl)["label"][0]) for _ in range(3)] == [0, 5, 10]
    with pytest.raises(KeyError, match="bad batch"):
        next(dl)
    assert dl.closed
    with pytest.raises(StopIteration):
        next(dl)
    assert closes_within(dl.close)


def test_close_from_another_thread_wakes_consumer(stores):
    _, st = stores
    gate = threading.Event()

    def wait_for_gate(batch):
        gate.wait()
        return batch
    dl = DataLoader(st, batch_size=5, transform=wait_for_gate)
    result = []
    consumer = threading.Thread(
        target=lambda: result.append(next(dl, "stopped")), daemon=True)
    consumer.start()
    closer = threading.Thread(target=dl.close, daemon=True)
    closer.start()
    consumer.join(30)
    assert result == ["stopped"]
    gate.set()                     # lets the running transforms finish
    closer.join(30)
    assert not closer.is_alive()


def test_stream_checks(stores):
    _, st = stores
    with DenseStore.create("short", np.int8, ()) as short:
        short.append(np.zeros(N - 1, dtype=np.int8))
        with pytest.raises(ValueError, match="length"):
            DataLoader({"label": st["label"], "short": short})
    with pytest.raises(TypeError):
        DataLoader({})
    with pytest.raises(TypeError):
        DataLoader({"x": np.zeros(3)})
    with pytest.raises(ValueError):
        DataLoader(st, batch_size=N + 1, mode="cyclic")
    with pytest.raises(ValueError):
        DataLoader(st, workers=0)


def test_ragged_forms_and_torch_ready_arrays(stores):
    """packed and padded give arrays (what torch.from_numpy takes) equal
    to the list form's records."""
    src, st = stores
    with DataLoader(st, batch_size=16, seed=5, workers=2) as dl:
        want = take(dl, 3)
    with DataLoader(st, batch_size=16, seed=5, workers=2,
                    ragged="packed") as dl:
        for w, b in zip(want, take(dl, 3)):
            data, offsets, shapes = b["token"]
            assert isinstance(data, np.ndarray) and data.ndim == 1
            assert offsets[0] == 0 and len(offsets) == 17
            for k, t in enumerate(w["token"]):
                assert tuple(shapes[k]) == t.shape
                assert (data[offsets[k]:offsets[k + 1]] ==
                        t.reshape(-1)).all()
            assert np.array_equal(b["joint"], w["joint"])
    with DataLoader(st, batch_size=16, seed=5, workers=2, ragged="padded",
                    pad=-7) as dl:
        for w, b in zip(want, take(dl, 3)):
            data, lengths = b["token"]
            longest = max(len(t) for t in w["token"])
            assert data.shape[:2] == (16, longest)
            for k, t in enumerate(w["token"]):
                assert lengths[k] == len(t)
                assert (data[k, :len(t)] == t).all()
                assert (data[k, len(t):] == -7).all()
    with pytest.raises(ValueError):
        DataLoader(st, ragged="ragged")


def test_ring_reuses_buffers_for_the_documented_lifetime(stores):
    """ring=N: a batch stays intact until N more are taken; afterwards
    the loader reuses its arrays (no fresh allocation per batch)."""
    _, st = stores
    with DataLoader(st, batch_size=8, seed=9, workers=2) as dl:
        want = take(dl, 30)
    ring = 2
    with DataLoader(st, batch_size=8, seed=9, workers=2, prefetch=3,
                    ring=ring) as dl:
        held, ids = [], set()
        for step in range(30):
            b = next(dl)
            held.append((step, b, b["joint"].copy()))
            ids.add(id(b["joint"]))
            for s, old, snap in held[-ring:]:
                # taken fewer than ring batches ago: still intact
                assert np.array_equal(old["joint"], snap), (s, step)
            assert np.array_equal(b["joint"], want[step]["joint"])
            assert same(b, want[step])
        assert len(ids) <= dl.depth + ring
    with pytest.raises(ValueError):
        DataLoader(st, ring=0)


def test_dense_gather_into_out(stores):
    _, st = stores
    idx = np.array([3, 1, 4, 1, 5], dtype=np.int64)
    want = st["joint"].gather(idx)
    out = np.zeros_like(want)
    got = st["joint"].gather(idx, out=out)
    assert got is out and np.array_equal(out, want)
    for bad in (np.zeros((4,) + want.shape[1:], want.dtype),
                np.zeros(want.shape, np.float64),
                np.zeros(want.shape, want.dtype)[:, ::1][::-1]):
        with pytest.raises(ValueError):
            st["joint"].gather(idx, out=bad)
