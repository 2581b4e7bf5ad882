#!/usr/bin/python3
"""
bench_mixture.py - a mixture's batches against a plain store's, through
the paths a user reads them by:

  command   `zrecord batch` of a 10-source dense mixture file vs of one
            store holding the same records (the records as one .npy)
  loader    loaderx DataLoader over the Mixture vs over the one store
            (cyclic, batch 256, 2 prefetch threads)
  mount     a zrecordfs -o ro mount of the folder: reading
            m.mix/batch/cyclic/256/SEED-STEP.npy whole vs
            plain/batch/cyclic/256/SEED-STEP.npy (a new seed each round,
            so no read is served from the page cache)

Records: uint8 (3, 64, 64) rows, 20,000 in all, split 10 ways for the
mixture (weights 30, 20, 12, 10, 8, 7, 5, 4, 3, 1).  Rounds alternate the
two sides; each ratio is the median of the rounds' ratios (mixture time /
plain time, so 1.00 is the same speed).  Not a test: numbers depend on the
box.  Run from the source tree with the library built:

  top_builddir=/path/to/build python3 scripts/bench_mixture.py [--dir D]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "contrib", "python"))

from loaderx import DataLoader, DenseStore, Mixture  # noqa: E402

WEIGHTS = [30, 20, 12, 10, 8, 7, 5, 4, 3, 1]
TOTAL = 20000
SHAPE = (3, 64, 64)
BATCH = 256
ROUNDS = 5


def build(d):
    rng = np.random.default_rng(1)
    sizes = [TOTAL * w // sum(WEIGHTS) for w in WEIGHTS]
    sizes[0] += TOTAL - sum(sizes)
    rows = rng.integers(0, 255, (TOTAL,) + SHAPE, dtype=np.uint8)
    plain = DenseStore.create(os.path.join(d, "plain"), "|u1", SHAPE,
                              codec="raw")
    plain.append(rows)
    plain.close()
    at = 0
    for k, n in enumerate(sizes):
        s = DenseStore.create(os.path.join(d, "s%d" % k), "|u1", SHAPE,
                              codec="raw")
        s.append(rows[at:at + n])
        s.close()
        at += n
    path = os.path.join(d, "m.mix.json")
    with open(path, "w") as f:
        json.dump({"sources": [{"path": "s%d" % k, "weight": w}
                               for k, w in enumerate(WEIGHTS)]}, f)
    return os.path.join(d, "plain"), path


def zrecord():
    top = os.environ.get("top_builddir") or os.path.join(HERE, "..")
    return os.path.join(top, "src", "cli", "zrecord")


def time_command(target, steps):
    t0 = time.perf_counter()
    for t in range(steps):
        subprocess.run([zrecord(), "batch", target, "--seed", "1", "--step",
                        str(t), "--batch-size", str(BATCH), "-o",
                        os.devnull], check=True)
    return time.perf_counter() - t0


def time_loader(streams, steps):
    loader = DataLoader(streams, batch_size=BATCH, mode="cyclic", seed=1,
                        workers=2)
    next(loader)
    t0 = time.perf_counter()
    for _ in range(steps):
        next(loader)
    dt = time.perf_counter() - t0
    loader.close()
    return dt


def zrecordfs():
    top = os.environ.get("top_builddir") or os.path.join(HERE, "..")
    return os.path.join(top, "src", "fs", "zrecordfs")


ENV = dict(os.environ, PATH="/usr/sbin:/usr/bin:/sbin:/bin")


def mounted(d, mnt):
    os.makedirs(mnt, exist_ok=True)
    proc = subprocess.Popen([zrecordfs(), d, mnt, "-f", "-o", "ro"],
                            env=ENV)
    end = time.monotonic() + 10
    while not os.path.ismount(mnt):
        if proc.poll() is not None or time.monotonic() > end:
            raise SystemExit("zrecordfs did not mount " + d)
        time.sleep(0.01)
    return proc


def time_mount(folder, seed, steps):
    t0 = time.perf_counter()
    for t in range(steps):
        with open(os.path.join(folder, "batch", "cyclic", str(BATCH),
                               "%d-%d.npy" % (seed, t)), "rb") as f:
            while f.read(1 << 20):
                pass
    return time.perf_counter() - t0


def rounds(mix_fn, plain_fn):
    ratios, mix, plain = [], [], []
    for _ in range(ROUNDS):
        p = plain_fn()
        m = mix_fn()
        plain.append(p)
        mix.append(m)
        ratios.append(m / p)
    return statistics.median(mix), statistics.median(plain), \
        statistics.median(ratios)


def mount_rounds(d):
    mnt = os.path.join(d, "mnt")
    proc = mounted(d, mnt)
    seeds = iter(range(1000, 100000))
    try:
        m, p, r = rounds(
            lambda: time_mount(os.path.join(mnt, "m.mix"), next(seeds), 40),
            lambda: time_mount(os.path.join(mnt, "plain"), next(seeds), 40))
        print("mount, 40 batch files of %.1f MB: mixture %.3f s, plain "
              "%.3f s, mixture/plain x%.2f"
              % (BATCH * np.prod(SHAPE) / 1e6, m, p, r))
    finally:
        subprocess.run(["fusermount3", "-u", mnt], env=ENV)
        proc.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", help="scratch folder (default: a temporary "
                    "one)")
    args = ap.parse_args()
    d = args.dir or tempfile.mkdtemp(prefix="bench_mixture.")
    try:
        plain, mixpath = build(d)
        print("%d CPUs; %d records of uint8 %s, batch %d, %d rounds"
              % (os.cpu_count(), TOTAL, SHAPE, BATCH, ROUNDS))
        m, p, r = rounds(lambda: time_command(mixpath, 20),
                         lambda: time_command(plain, 20))
        print("zrecord batch, 20 steps: mixture %.3f s, plain %.3f s, "
              "mixture/plain x%.2f" % (m, p, r))
        store = DenseStore.open(plain, readonly=True)
        with Mixture(mixpath) as mix:
            m, p, r = rounds(lambda: time_loader(mix, 100),
                             lambda: time_loader({"data": store}, 100))
        store.close()
        print("DataLoader, 100 batches: mixture %.3f s, plain %.3f s, "
              "mixture/plain x%.2f" % (m, p, r))
        mount_rounds(d)
    finally:
        if not args.dir:
            shutil.rmtree(d)


if __name__ == "__main__":
    main()
