"""Everyday tools on a mount, many at once: `ls | xargs -P4 cat`, tar, and
Python forks opening, reading and closing small record files in a tight
loop while others stat, list and append.  The daemon must stay up and every
byte must be right."""
import multiprocessing
import os
import subprocess

import numpy as np

from fsutil import make_store

N = 20000
HDR = 128               # .npy header of one int64 scalar record


def big(src):
    make_store(os.path.join(src, "big"), "<i8", shape=(), codec="raw",
               rows=np.arange(N, dtype="<i8"))


def sh(cmd, **kw):
    return subprocess.run(["bash", "-c", "set -o pipefail; " + cmd],
                          capture_output=True, check=True, timeout=300,
                          **kw).stdout


def drop_caches():
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def test_xargs_cat_and_tar_of_many_small_records(src, mount):
    big(src)
    m = mount(src, "ro")
    recs = m.path("big", "records")
    for rnd in range(4):
        if rnd % 2:
            drop_caches()
        out = sh("ls | xargs -P4 -n500 cat | wc -c", cwd=recs)
        assert int(out) == N * (HDR + 8)
        out = sh("tar cf - -C %s big/records | wc -c" % m.mnt)
        assert int(out) > N * (HDR + 8)
    assert m.proc.poll() is None, "zrecordfs died"
    # every record, read by four cats at once, is its index
    out = sh("ls | sort -n | sed -n 1,3000p | xargs -P4 -n100 cat",
             cwd=recs)
    vals = np.frombuffer(out, "u1").reshape(3000, HDR + 8)[:, HDR:]
    assert sorted(vals.copy().view("<i8").ravel()) == list(range(3000))


def reader(args):
    """One forked process: open, read (in two pieces), close, again."""
    mnt, seed, rounds = args
    rng = np.random.default_rng(seed)
    bad = 0
    for _ in range(rounds):
        i = int(rng.integers(0, N))
        with open(os.path.join(mnt, "big", "records", "%d.npy" % i),
                  "rb") as f:
            b = f.read(int(rng.integers(1, HDR + 8))) + f.read()
        bad += np.frombuffer(b[HDR:], "<i8")[0] != i or len(b) != HDR + 8
    return bad


def churn(mnt, stop):
    """stat, list and append while the readers run."""
    path = os.path.join(mnt, "big")
    k = 0
    while not stop.is_set():
        os.stat(os.path.join(path, "records", "%d.npy" % (k % N)))
        if k % 50 == 0:
            assert len(os.listdir(os.path.join(path, "records"))) >= N
            with open(os.path.join(path, "append"), "wb") as f:
                np.save(f, np.arange(N + k, N + k + 4, dtype="<i8"))
        k += 1


def test_forked_readers_with_stat_list_append(src, mount):
    big(src)
    m = mount(src)
    ctx = multiprocessing.get_context("fork")
    stop = ctx.Event()
    side = ctx.Process(target=churn, args=(m.mnt, stop))
    side.start()
    try:
        with ctx.Pool(8) as pool:
            bad = pool.map(reader, [(m.mnt, s, 400) for s in range(16)])
    finally:
        stop.set()
        side.join(60)
    assert side.exitcode == 0
    assert sum(bad) == 0
    assert m.proc.poll() is None, "zrecordfs died"
