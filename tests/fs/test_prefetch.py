"""Batch files gathered ahead (-o prefetch, src/prefetch): a trainer that
reads steps t, t+1, ... of one sequence is served the next steps from
memory the daemon gathered while it computed.  What it serves is byte for
byte what `zrecord batch` writes (dense zstd and raw, ragged packed and
padded forms and their parts, a dataset's @batch); a delete or compact
between two steps leaves no stale byte, and a compact keeps what was
gathered; many sequences started and abandoned stay within
-o prefetch_mem; random access and -o prefetch=0 gather nothing ahead; an
open of a step still being gathered ahead takes that gather over.  The
daemon's unmount line says how many batches it gathered ahead and served,
and how many it handed over part-way: that is how these tests know the
prefetched path was the one taken."""
import os
import re
import subprocess
import time

import numpy as np
import pytest

from fsutil import (ZRECORDFS, expected_after_delete, make_store,
                    slow_flush_env, zrecord)
from test_stalls import write

COMPUTE = 0.15      # the simulated trainer's step: time to gather ahead


def counts(m):
    """(gathered, served) from the daemon's unmount line, after stop()."""
    got = re.search(r"prefetch: (\d+) batches gathered ahead, (\d+) served",
                    m.stderr)
    return (int(got.group(1)), int(got.group(2))) if got else (0, 0)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def trainer(paths):
    """Reads each file in turn, computing a while after each."""
    out = []
    for p in paths:
        out.append(read(p))
        time.sleep(COMPUTE)
    return out


def cli(store, seed, step, *args):
    return zrecord("batch", store, "--seed", seed, "--step", step, *args,
                   "-o", "-").stdout


def stop_served(m):
    assert m.stop() == 0, m.stderr
    return counts(m)


@pytest.mark.parametrize("codec", ["zstd", "raw"])
def test_dense_steps_equal_the_cli(src, mount, codec):
    rows = np.random.default_rng(3).integers(0, 255, (300, 3, 32, 32),
                                             dtype=np.uint8)
    store = os.path.join(src, "img")
    make_store(store, "u1", shape=(3, 32, 32), codec=codec, rows=rows)
    m = mount(src, "ro", "batch_size=40", "prefetch=3")
    steps = range(8)
    got = trainer([m.path("img", "batch", "5-%d.npy" % t) for t in steps])
    for t, data in zip(steps, got):
        assert data == cli(store, 5, t, "--batch-size", 40), t
    gathered, served = stop_served(m)
    assert served >= 1 and gathered >= served, m.stderr


@pytest.mark.parametrize("suffix", ["packed.npz", "padded.npz",
                                    "packed.npy", "offsets.npy"])
def test_ragged_forms_equal_the_cli(src, mount, suffix):
    rng = np.random.default_rng(5)
    toks = [rng.integers(0, 50000, size=(rng.integers(1, 300),))
            .astype("<i4") for _ in range(400)]
    store = os.path.join(src, "tok")
    make_store(store, "<i4", ragged=True, codec="zstd", records=toks)
    m = mount(src, "ro", "batch_size=32")
    steps = range(7)
    got = trainer([m.path("tok", "batch", "2-%d.%s" % (t, suffix))
                   for t in steps])
    for t, data in zip(steps, got):
        assert data == cli(store, 2, t, "--batch-size", 32, "--form",
                           suffix.replace(".npz", "")), (t, suffix)
    assert stop_served(m)[1] >= 1, m.stderr


def dataset(src):
    ds = os.path.join(src, "ds")
    rng = np.random.default_rng(9)
    make_store(os.path.join(ds, "img"), "u1", shape=(3, 16, 16),
               codec="zstd", rows=rng.integers(0, 255, (200, 3, 16, 16),
                                               dtype=np.uint8))
    make_store(os.path.join(ds, "lab"), "<i8", shape=(),
               rows=np.arange(200, dtype="<i8"))
    make_store(os.path.join(ds, "tok"), "<i4", ragged=True, codec="zstd",
               records=[np.arange(i % 17 + 1, dtype="<i4")
                        for i in range(200)])


def test_dataset_batch_equals_an_unprefetched_mount(src, mount):
    dataset(src)
    on = mount(src, "ro", "batch_size=16", name="on")
    off = mount(src, "ro", "batch_size=16", "prefetch=0", name="off")
    steps = range(6)
    got = trainer([on.path("ds", "@batch", "1-%d.npz" % t) for t in steps])
    for t, data in zip(steps, got):
        assert data == read(off.path("ds", "@batch", "1-%d.npz" % t)), t
    assert stop_served(on)[1] >= 1, on.stderr
    assert stop_served(off) == (0, 0), off.stderr


def rows_of(values):
    """Rows that say which record they are: row v is all v."""
    return np.stack([np.full((64, 64), v, dtype="<i4") for v in values])


def check_step(m, name, items):
    """The served batch is the model's records at the batch's indices."""
    data = np.load(m.path("s", "batch", name + ".npy"))
    idx = np.load(m.path("s", "batch", name + ".indices.npy"))
    assert (data == rows_of(np.asarray(items)[idx])).all(), name


def test_delete_and_compact_between_steps_leave_no_stale_byte(src, mount):
    """Steps t+1.. are gathered ahead while the trainer computes on t;
    then a delete (or a compact) changes or moves their records: the next
    opens must serve the batches drawn from the store as it is."""
    items = list(range(120))
    make_store(os.path.join(src, "s"), "<i4", shape=(64, 64), codec="zstd",
               rows=rows_of(items))
    m = mount(src, "batch_size=24", "prefetch=3")
    t = 0
    for round_ in range(4):
        for _ in range(3):
            check_step(m, "8-%d" % t, items)
            t += 1
            time.sleep(COMPUTE)
        if round_ % 2 == 0:
            gone = [3 + round_, 50, len(items) - 2]
            write(m.path("s", "delete"), " ".join(map(str, gone)) + "\n")
            items = expected_after_delete(items, gone)
        else:
            write(m.path("s", "compact"), "1\n")
    check_step(m, "8-%d" % t, items)
    assert stop_served(m)[1] >= 1, m.stderr


# ms in every pread of the daemon under test_back_to_back_opens_...
READ_DELAY_MS = 4


def taken_over(m):
    """Steps an open took over part-way, from the unmount line."""
    got = re.search(r"(\d+) taken over part-way", m.stderr)
    return int(got.group(1)) if got else 0


def test_back_to_back_opens_take_over_the_gather_under_way(src, mount,
                                                          monkeypatch):
    """Steps read with little or no compute between: the open of step t+1
    finds the prefetch thread gathering it and goes on with that gather
    (its pieces already in, the rest through the open's own views) rather
    than start again.  Every byte is the batch's.  The pauses before each
    open run from none to longer than a gather, and the daemon's disk is
    slow (READ_DELAY_MS in every pread of a 300 KiB record: about 100 ms a
    gather), so that some open meets a gather part-way whatever the load:
    without the delay a quiet machine gathers a step faster than the test
    opens the next, and a loaded one may never start the prefetch in
    between."""
    row = (300, 256)        # 300 KiB rows, 3 per piece
    rng = np.random.default_rng(7)
    vals = rng.integers(0, 1 << 30, size=(96,) + row, dtype="<i4")
    # raw: records of 64 KiB and more are read with pread, which the
    # shim slows (a compressed one is decoded from the mapping)
    make_store(os.path.join(src, "s"), "<i4", shape=row, codec="raw",
               rows=vals)
    with monkeypatch.context() as mp:
        for name, value in slow_flush_env(READ_DELAY_MS, "READ").items():
            mp.setenv(name, value)
        m = mount(src, "batch_size=48", "prefetch=2")
    for seed, pause in enumerate([0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3]):
        for t in range(5):
            time.sleep(pause)
            name = "%d-%d" % (seed, t)
            data = np.load(m.path("s", "batch", name + ".npy"))
            idx = np.load(m.path("s", "batch", name + ".indices.npy"))
            assert (data == vals[idx]).all(), name
    gathered, served = stop_served(m)
    assert taken_over(m) >= 1, m.stderr
    assert served <= gathered, m.stderr


def test_a_compact_keeps_the_steps_gathered_ahead(src, mount):
    """A compact moves records but changes no file's content (the stores'
    delete epochs, the batch's version, stay): the steps gathered ahead
    before it are served after it, and are the store's batches."""
    items = list(range(120))
    make_store(os.path.join(src, "s"), "<i4", shape=(64, 64), codec="zstd",
               rows=rows_of(items))
    m = mount(src, "batch_size=24", "prefetch=3")
    gone = [5, 60, 61]
    write(m.path("s", "delete"), " ".join(map(str, gone)) + "\n")
    items = expected_after_delete(items, gone)
    for t in range(2):      # arms the sequence: steps 2..4 are gathered
        check_step(m, "3-%d" % t, items)
    time.sleep(4 * COMPUTE)
    write(m.path("s", "compact"), "1\n")
    for t in range(2, 5):
        check_step(m, "3-%d" % t, items)
    assert stop_served(m)[1] >= 1, m.stderr


def vm(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no %s in /proc/%d/status" % (field, pid))


def test_memory_budget_holds_with_many_abandoned_sequences(src, mount):
    """40 sequences are armed (two consecutive steps each) and abandoned:
    without a budget each would hold 4 steps ahead (16 tracked: 96 MiB;
    measured: 103 MiB over the baseline with prefetch_mem=1G); the
    daemon's peak stays within the budget, the buffer cache's 4, the
    open handles' and a margin."""
    batch = 32 * 3 * 128 * 128
    rows = np.random.default_rng(1).integers(0, 255, (256, 3, 128, 128),
                                             dtype=np.uint8)
    make_store(os.path.join(src, "img"), "u1", shape=(3, 128, 128),
               rows=rows)
    budget = 8 << 20
    m = mount(src, "ro", "batch_size=32", "prefetch=4",
              "prefetch_mem=%d" % budget)
    pid = m.proc.pid
    read(m.path("img", "batch", "0-0.npy"))
    base = vm(pid, "VmRSS")
    for seed in range(40):
        for t in range(2):
            read(m.path("img", "batch", "%d-%d.npy" % (seed, t)))
        time.sleep(0.05)
    time.sleep(1)
    peak = vm(pid, "VmHWM")
    gathered, _ = stop_served(m)
    assert gathered >= 8, m.stderr     # the budget was used, and refilled
    # TSan keeps shadow memory of about 4 bytes per byte the daemon
    # touches: the same bound, scaled
    shadow = 5 if os.environ.get("ZR_TSAN") == "1" else 1
    assert peak - base <= shadow * (budget + 6 * batch + (24 << 20)), \
        (peak - base, budget)


def test_random_steps_gather_nothing_ahead(src, mount):
    rows = np.zeros((100, 8), dtype="<i4")
    make_store(os.path.join(src, "s"), "<i4", shape=(8,), rows=rows)
    m = mount(src, "ro", "batch_size=10")
    trainer([m.path("s", "batch", "1-%d.npy" % t) for t in (5, 2, 9, 0, 7,
                                                            7, 3)])
    assert stop_served(m) == (0, 0), m.stderr


def test_prefetch_off_is_todays_mount(src, mount):
    rows = np.random.default_rng(2).integers(0, 255, (100, 3, 8, 8),
                                             dtype=np.uint8)
    store = os.path.join(src, "img")
    make_store(store, "u1", shape=(3, 8, 8), codec="zstd", rows=rows)
    m = mount(src, "ro", "batch_size=10", "prefetch=0")
    got = trainer([m.path("img", "batch", "4-%d.npy" % t) for t in range(5)])
    for t, data in enumerate(got):
        assert data == cli(store, 4, t, "--batch-size", 10), t
    assert m.stop() == 0 and "prefetch" not in m.stderr, m.stderr


@pytest.mark.parametrize("opt", ["prefetch=17", "prefetch=x",
                                 "prefetch_mem=100", "prefetch_mem=1T"])
def test_bad_prefetch_options_are_named(src, tmp_path, opt):
    r = subprocess.run([ZRECORDFS, src, str(tmp_path), "-o", opt],
                       capture_output=True, text=True)
    assert r.returncode != 0
    assert "bad option '%s'" % opt in r.stderr and "takes" in r.stderr, \
        r.stderr
