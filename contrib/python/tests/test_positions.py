"""
test_positions.py - position streams through loaderx and the zrecord
command: start P continues step-based batches, the C library, the command
and loaderx agree byte for byte with the Python reference
(tests/fixtures/sampler_ref.py Stream) for the same (seed, position,
schedule); elastic (world, batch) changes serve each cycle's records
exactly once; mixtures keep shares and per-source cycles; state_dict
resumes; a grown store's length takes effect at the next cycle boundary.
"""
import io
import json
import os
import random
import subprocess

import numpy as np
import pytest

import refsampler
from loaderx import (DataLoader, DenseStore, Mixture, MixtureSampler,
                     RaggedStore, Sampler, Schedule)

ref = refsampler


def zrecord(*args):
    top = os.environ.get("top_builddir")
    assert top, "top_builddir is not set"
    exe = os.path.join(top, "src", "cli", "zrecord")
    out = subprocess.run([exe] + [str(a) for a in args], capture_output=True,
                         check=False)
    assert out.returncode == 0, out.stderr.decode()
    return np.load(io.BytesIO(out.stdout))


def dense(path, n, base=0, width=3):
    s = DenseStore.create(path, "<i8", (width,), codec="raw")
    s.append(base + np.arange(n * width, dtype="<i8").reshape(n, width))
    s.close()
    return DenseStore.open(path, readonly=True)


@pytest.mark.parametrize("mode", ["sequential", "iid", "cyclic"])
def test_start_continues_the_steps(mode):
    for world, b in ((1, 8), (3, 5)):
        for rank in range(world):
            old = Sampler(1000, b, mode, seed=4, rank=rank, world=world)
            new = Sampler(1000, b, mode, seed=4, rank=rank, world=world,
                          start=7 * world * b,
                          schedule=old.schedule.to_dict())
            for t in (0, 1, 30):
                assert np.array_equal(new.batch(t), old.batch(t + 7))
            assert new.position(3) == (7 + 3) * world * b


@pytest.mark.parametrize("mode", ["sequential", "iid", "cyclic"])
def test_plain_stream_matches_reference_and_command(tmp_path, mode):
    store = dense(str(tmp_path / "s"), 97)
    store.close()
    sched = {"lengths": [90], "mode": mode, "granule": 12,
             "skip": [[40, 47]], "grow": [[50, 0, 97]]}
    st = ref.Stream(mode, 31, 90, 12)
    st.grow(50, 0, 97)
    st.skip(40, 47)
    s = Sampler(97, 5, mode, seed=31, rank=1, world=2, start=33,
                schedule=sched)
    for t in range(0, 40, 3):
        want = [i for _, i in st.batch(33, t, 5, rank=1, world=2)]
        assert s.batch(t).tolist() == want
        got = zrecord("batch", tmp_path / "s", "--seed", 31, "--step", t,
                      "--mode", mode, "--batch-size", 5, "--rank", 1,
                      "--world", 2, "--start", 33, "--granule", 12,
                      "--skip", "40:47", "--length", 90, "--grow",
                      "50:97", "--indices")
        assert got.tobytes() == s.batch(t).tobytes()


def test_elastic_changes_serve_each_cycle_once():
    """Random (world, batch) changes over many cycles, resuming each time
    from the position reached with the first run's schedule."""
    rng = random.Random(7)
    n = 211
    first = Sampler(n, 6, "cyclic", seed=2, world=3)
    sched = first.schedule.to_dict()
    length = n // 18 * 18
    pos, seen, cycle = 0, set(), 0
    while cycle < 15:
        world, b = rng.randint(1, 5), rng.randint(1, 20)
        steps = rng.randint(1, 6)
        ranks = [Sampler(n, b, "cyclic", seed=2, rank=r, world=world,
                         start=pos, schedule=sched) for r in range(world)]
        for t in range(steps):
            for r in range(world):
                for i, idx in enumerate(ranks[r].batch(t).tolist()):
                    p = pos + (t * world + r) * b + i
                    if p // length != cycle:
                        assert len(seen) == length
                        seen, cycle = set(), p // length
                    assert idx not in seen, (idx, cycle)
                    seen.add(idx)
        pos = ranks[0].position(steps)


def test_iid_stream_unchanged_by_geometry():
    a = Sampler(500, 12, "iid", seed=5)
    whole = np.concatenate([a.batch(t) for t in range(4)])
    parts = [Sampler(500, 4, "iid", seed=5, rank=r, world=3,
                     schedule=a.schedule).batch(t)
             for t in range(4) for r in range(3)]
    assert np.array_equal(np.concatenate(parts), whole)


def mixfile(tmp_path, sources, schedule=None):
    doc = {"sources": [{"path": p, "weight": w} for p, w in sources]}
    if schedule:
        doc["schedule"] = [{"from": f, "weights": w} for f, w in schedule]
    path = tmp_path / "m.mix.json"
    path.write_text(json.dumps(doc))
    return str(path)


def test_mixture_matches_reference_and_command(tmp_path):
    lens, w = [13, 200, 5], [5, 2, 3]
    for k, n in enumerate(lens):
        dense(str(tmp_path / ("s%d" % k)), n, base=1000 * k).close()
    path = mixfile(tmp_path, [("s0", 5), ("s1", 2), ("s2", 3)],
                   [(25, [1, 1, 1])])
    st = ref.Stream(seed=9, mixture=(lens, w))
    st.weights(25, [1, 1, 1])
    st.skip(30, 34)
    sched = Schedule(lens, weights=w, changes=[(25, [1, 1, 1])],
                     skip=[(30, 34)])
    for rank in range(2):
        s = MixtureSampler(lens, w, 4, seed=9, rank=rank, world=2,
                           start=3, schedule=sched)
        for t in range(8):
            src, idx = s.batch(t)
            want = st.batch(3, t, 4, rank=rank, world=2)
            assert list(zip(src.tolist(), idx.tolist())) == want
            got = zrecord("batch", path, "--seed", 9, "--step", t,
                          "--batch-size", 4, "--rank", rank, "--world", 2,
                          "--start", 3, "--skip", "30:34", "--indices")
            assert got.dtype == np.int64 and got.shape == (4, 2)
            assert got.tobytes() == np.stack([src, idx], 1).tobytes()
            rows = zrecord("batch", path, "--seed", 9, "--step", t,
                           "--batch-size", 4, "--rank", rank, "--world", 2,
                           "--start", 3, "--skip", "30:34")
            assert rows[:, 0].tolist() == [1000 * k + 3 * i for k, i in
                                           zip(src.tolist(), idx.tolist())]


def test_mixture_shares_and_source_cycles():
    lens, w = [3, 50, 7, 1, 20], [7, 2, 1, 4, 6]
    s = MixtureSampler(lens, w, 20, seed=1)
    seen = [set() for _ in lens]
    counts = [0] * len(lens)
    for t in range(30):  # a period is 20 positions: one batch
        src, idx = s.batch(t)
        assert np.bincount(src, minlength=5).tolist() == w
        for k, i in zip(src.tolist(), idx.tolist()):
            if counts[k] % lens[k] == 0:
                seen[k] = set()
            assert i not in seen[k]
            seen[k].add(i)
            counts[k] += 1


def test_dataloader_over_a_mixture_and_its_state(tmp_path):
    for k, n in enumerate([30, 11]):
        dense(str(tmp_path / ("d%d" % k) / "x"), n, base=100 * k).close()
        r = RaggedStore.create(str(tmp_path / ("d%d" % k) / "y"), "<i4",
                               codec="raw")
        r.append([np.full(i % 4 + 1, 100 * k + i, "<i4") for i in range(n)])
        r.close()
    path = mixfile(tmp_path, [("d0", 3), ("d1", 1)])
    with Mixture(path) as mix:
        assert mix.lengths == [30, 11] and set(mix.fields) == {"x", "y"}
        loader = DataLoader(mix, batch_size=8, seed=3, workers=2)
        got = [next(loader) for _ in range(5)]
        state = loader.state_dict()
        loader.close()
        assert state["position"] == 40
        json.dumps(state)  # plain data
        s = MixtureSampler([30, 11], [3, 1], 8, seed=3)
        for t, batch in enumerate(got):
            src, idx = s.batch(t)
            assert batch["x"][:, 0].tolist() == (100 * src + 3 * idx).tolist()
            assert [int(a[0]) for a in batch["y"]] == (100 * src +
                                                        idx).tolist()
        # resume with world 2, batch 4: positions 40.. split over ranks.
        nxt = []
        for r in range(2):
            b = DataLoader(mix, batch_size=4, seed=0, world=2, rank=r)
            b.load_state_dict(state)
            nxt.append(next(b)["x"][:, 0])
            assert b.position == 48
            b.close()
        cont = DataLoader(mix, batch_size=8, seed=3, start=40)
        assert np.array_equal(np.concatenate(nxt), next(cont)["x"][:, 0])
        cont.close()


def test_dataloader_state_resumes_plain_streams_elastically(tmp_path):
    store = dense(str(tmp_path / "s"), 100)
    a = DataLoader({"x": store}, batch_size=10, mode="cyclic", seed=6,
                   world=2, workers=1)
    first = [next(a)["x"][:, 0] // 3 for _ in range(3)]  # 60 positions
    state = a.state_dict()
    a.close()
    assert state["position"] == 60 and state["schedule"]["granule"] == 20
    rest = []
    for r in range(4):
        b = DataLoader({"x": store}, batch_size=5, mode="cyclic", seed=0,
                       world=4, rank=r, workers=1)
        b.load_state_dict(state)
        rest.append(next(b)["x"][:, 0] // 3)
        rest.append(next(b)["x"][:, 0] // 3)
        b.close()
    # rank 0 of the old run took positions 0-9, 20-29, 40-49; together
    # with the other rank and the 40 new positions one cycle of 100
    # records, each once.
    other = [Sampler(100, 10, "cyclic", seed=6, rank=1, world=2).batch(t)
             for t in range(3)]
    cycle = np.concatenate(first + other + rest)
    assert sorted(cycle.tolist()) == list(range(100))
    store.close()


def test_grown_store_takes_its_length_at_the_next_cycle(tmp_path):
    path = str(tmp_path / "s")
    dense(path, 40).close()
    with DenseStore.open(path, readonly=True) as s:
        a = DataLoader({"x": s}, batch_size=8, mode="cyclic", seed=1,
                       workers=1)
        for _ in range(2):
            next(a)
        state = a.state_dict()  # position 16 of cycle 0 (40 positions)
        a.close()
    w = DenseStore.open(path, readonly=False)
    w.append(np.zeros((24, 3), "<i8") - 1)
    w.close()
    with DenseStore.open(path, readonly=True) as s:
        b = DataLoader({"x": s}, batch_size=8, mode="cyclic", seed=0,
                       workers=1)
        b.load_state_dict(state)
        rest = [next(b)["x"][:, 0] for _ in range(3)]  # 16..39
        after = [next(b)["x"][:, 0] for _ in range(8)]  # cycle 1: 64
        sched = b.state_dict()["schedule"]
        b.close()
    assert sched["grow"] == [[16, 0, 64]]
    assert all((r >= 0).all() for r in rest)
    assert (np.concatenate(after) == -1).sum() == 24
    got = zrecord("batch", path, "--seed", 1, "--step", 2, "--mode",
                  "cyclic", "--batch-size", 8, "--granule", 8, "--start", 16,
                  "--length", 40, "--grow", "16:64", "--indices")
    assert got.tolist() == Sampler(64, 8, "cyclic", seed=1, start=16,
                                   schedule=sched).batch(2).tolist()


def test_a_resume_needs_its_schedule(tmp_path):
    """start > 0 of a cyclic or iid stream without the schedule that holds
    its granule is refused, by Sampler and DataLoader alike: the new
    world * batch_size would repeat records within a cycle."""
    for mode in ("cyclic", "iid"):
        with pytest.raises(ValueError, match="start=16: a %s stream "
                           "resumed past 0 needs the schedule" % mode):
            Sampler(100, 4, mode, seed=1, start=16)
    store = dense(str(tmp_path / "s"), 100)
    with pytest.raises(ValueError, match="state_dict"):
        DataLoader({"x": store}, batch_size=4, mode="cyclic", start=16)
    first = DataLoader({"x": store}, batch_size=8, mode="cyclic", seed=1)
    a, b = next(first)["x"], next(first)["x"]
    state = first.state_dict()
    first.close()
    # the state's schedule keeps granule 8 under a new batch size
    cont = DataLoader({"x": store}, batch_size=4, mode="cyclic", seed=1,
                      start=state["position"], schedule=state["schedule"])
    seen = [r[0] for r in np.concatenate([a, b])]
    for _ in range(18):  # 16 + 72 = 88 positions: the cycle of 96 minus 8
        seen += [r[0] for r in next(cont)["x"]]
    cont.close()
    assert len(seen) == 88 and len(set(seen)) == 88
    # sequential has no granule; position 0 no past
    assert Sampler(100, 4, "sequential", start=16).batch(0).tolist() == \
        [16, 17, 18, 19]
    Sampler(100, 4, "cyclic", start=0)
    store.close()


def test_bad_schedules_and_mixtures(tmp_path):
    with pytest.raises(ValueError):
        Sampler(10, 2, "cyclic", schedule={"lengths": [12], "mode": "cyclic",
                                           "granule": 2})  # shrank
    with pytest.raises(ValueError):
        Sampler(10, 2, "iid", schedule={"lengths": [10], "mode": "cyclic",
                                        "granule": 2})
    with pytest.raises(ValueError):
        Schedule([5, 5], weights=[0, 0])
    with pytest.raises(ValueError):
        Schedule([5], mode="cyclic", granule=6)
    with pytest.raises(ValueError):
        Schedule([5], skip=[(3, 3)])
    (tmp_path / "bad.mix.json").write_text('{"sources": [{"path": "a", '
                                           '"weight": 1.5}]}')
    with pytest.raises(ValueError):
        Mixture(str(tmp_path / "bad.mix.json"))
    # nothing to draw: refused when the file is opened, as zrecord and the
    # mount refuse it
    dense(str(tmp_path / "a"), 4).close()
    for doc, msg in (('{"sources": [{"path": "a", "weight": 0}]}',
                      "bad.mix.json: every weight is 0"),
                     ('{"sources": [{"path": "a", "weight": 1}], "schedule":'
                      ' [{"from": 2, "weights": [0]}]}',
                      "schedule entry 0: every weight is 0")):
        (tmp_path / "bad.mix.json").write_text(doc)
        with pytest.raises(ValueError, match=msg):
            Mixture(str(tmp_path / "bad.mix.json"))
    loader = DataLoader({"x": dense(str(tmp_path / "s"), 10)}, batch_size=2)
    with pytest.raises(ValueError):
        loader.load_state_dict({"seed": 1})
    loader.close()
