"""test_grow.py - a store that grew between runs, served exactly: a mount
with -o length=N0,grow=P:N1 (P:K:N1 for a mixture's source K) serves the
bytes `zrecord batch --length N0 --grow P:N1` writes, before and after
the growth's boundary; a batch whose records the store does not hold
yet does not exist (ENOENT, the errors file says why), and a follower
serves it, the command's bytes, once the store has grown."""
import errno
import json
import os

import numpy as np
import pytest

from fsutil import make_store, wait_for, zrecord

N0, N1, P = 20, 30, 40
ARGS = ("--seed", 5, "--batch-size", 8)


def rows(n, first=0):
    return (first + np.arange(n * 6)).astype("<i4").reshape(n, 2, 3)


def cli(store, tmp_path, step, *extra):
    out = tmp_path / "cli.out"
    zrecord("batch", store, *ARGS, "--step", step, *extra, "-o", out)
    return out.read_bytes()


def read(path):
    with open(path, "rb") as f:
        return f.read()


def grow_flags(source=""):
    return ("--grow", "%d:%s%d" % (P, source, N1))


def test_grown_store_is_the_commands(src, mount, tmp_path):
    a = os.path.join(src, "a")
    make_store(a, "<i4", shape=(2, 3), rows=rows(N1))
    m = mount(src, "ro", "sampler=cyclic", "batch_size=8", "length=%d" % N0,
              "grow=%d:%d" % (P, N1))
    plain = mount(src, "ro", "sampler=cyclic", "batch_size=8",
                  name="plain")
    steps = range(12)  # the boundary comes after position 40 (step 5)
    for t in steps:
        got = read(m.path("a", "batch", "5-%d.npy" % t))
        want = cli(a, tmp_path, t, "--mode", "cyclic", "--length", N0,
                   *grow_flags())
        assert got == want, t
        idx = np.load(m.path("a", "batch", "5-%d.indices.npy" % t))
        assert idx.max() < (N0 if t < P // 8 else N1), t
    # a drawing over all 30 from the start is another stream
    assert any(read(m.path("a", "batch", "5-%d.npy" % t)) !=
               read(plain.path("a", "batch", "5-%d.npy" % t)) for t in steps)


def test_grown_mixture_source_is_the_commands(src, mount, tmp_path):
    make_store(os.path.join(src, "a"), "<i4", shape=(2, 3), rows=rows(N1))
    make_store(os.path.join(src, "b"), "<i4", shape=(2, 3),
               rows=rows(7, 1000))
    mix = os.path.join(src, "w.mix.json")
    with open(mix, "w") as f:
        json.dump({"sources": [{"path": "a", "weight": 2},
                               {"path": "b", "weight": 1}],
                   "schedule": [{"from": P, "weights": [1, 1]}]}, f)
    m = mount(src, "ro", "batch_size=8", "length=%d:7" % N0,
              "grow=%d:0:%d" % (P, N1))
    for t in range(12):
        for ext, flag in (("npy", ()), ("indices.npy", ("--indices",))):
            got = read(m.path("w.mix", "batch", "5-%d.%s" % (t, ext)))
            want = cli(mix, tmp_path, t, "--length", "%d,7" % N0,
                       *grow_flags("0:"), *flag)
            assert got == want, (t, ext)


def test_batch_past_the_store_is_enoent_until_it_grows(src, mount, tmp_path):
    """A follower over a store of N0 records: batches before the growth
    exist, those reaching P need N1 records and are ENOENT (the errors
    file says so) until an append brings the store to N1; then they are
    the command's bytes."""
    a = os.path.join(src, "a")
    make_store(a, "<i4", shape=(2, 3), rows=rows(N0))
    m = mount(src, "follow=0.05", "sampler=cyclic", "batch_size=8",
              "length=%d" % N0,
              "grow=%d:%d" % (P, N1))
    flags = ("--mode", "cyclic", "--length", N0) + grow_flags()
    early = read(m.path("a", "batch", "5-2.npy"))
    late = m.path("a", "batch", "5-6.npy")
    with pytest.raises(OSError) as e:
        read(late)
    assert e.value.errno == errno.ENOENT
    with open(m.path("a", "errors")) as f:
        text = f.read()
    assert "has 20 records, fewer than the 30" in text, text
    r = zrecord("batch", a, *ARGS, "--step", 6, *flags, check=False)
    assert r.returncode == 1 and b"fewer than the 30" in r.stderr
    npy = tmp_path / "more.npy"
    np.save(npy, rows(N1 - N0, 6 * N0))
    zrecord("append", a, npy)
    wait_for(lambda: os.path.exists(late), timeout=20,
             what="the follower to serve the grown batch")
    assert read(late) == cli(a, tmp_path, 6, *flags)
    assert early == cli(a, tmp_path, 2, *flags)


def test_grow_below_the_length_without_a_base_is_einval(src, mount):
    make_store(os.path.join(src, "a"), "<i4", shape=(2, 3), rows=rows(N1))
    m = mount(src, "ro", "batch_size=8", "grow=%d:%d" % (P, N0))
    with pytest.raises(OSError) as e:
        read(m.path("a", "batch", "5-0.npy"))
    assert e.value.errno == errno.EINVAL
