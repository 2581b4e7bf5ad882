#!/usr/bin/python3
"""
bench_loader.py - one qualitative pass comparing loaderx with the NumPy and
torch baselines a user would otherwise reach for:

  sampler   Sampler.next() vs numpy.random.default_rng().integers,
            IID over a 1M index space, batch 256 / 1024 / 8192
  gather    DenseStore random batch gather (raw and zstd) vs NumPy fancy
            indexing of an mmap'd .npy: image (2,500 x uint8 (3,224,224))
            and token (200,000 x int32[512]) workloads, batch 256
  loader    DataLoader vs torch.utils.data.DataLoader over an mmap'd .npy
            (image workload + int64 labels), batch 256, 2 workers:
            batches/s, then peak PSS of the process tree in a separate
            steady-state pass

Not a test: numbers depend on the box.  Run from the source tree with the
library built (top_builddir=BUILD, or LOADERX_LIB=path/libzrecord.so):

  top_builddir=/path/to/build python3 scripts/bench_loader.py [--dir D]
"""
import argparse
import glob
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "contrib", "python"))

from loaderx.dataloader import DataLoader  # noqa: E402
from loaderx.zrecord import DenseStore  # noqa: E402
from loaderx.zsampler import Sampler  # noqa: E402

BATCH = 256


def best_rate(fn, min_seconds=1.0):
    """Calls per second of fn: best of 3 rounds, each >= min_seconds/3."""
    rates = []
    for _ in range(3):
        calls, start = 0, time.perf_counter()
        while True:
            fn()
            calls += 1
            elapsed = time.perf_counter() - start
            if elapsed >= min_seconds / 3:
                break
        rates.append(calls / elapsed)
    return max(rates)


# -- sampler ---------------------------------------------------------------

def bench_sampler():
    rows = []
    for b in (256, 1024, 8192):
        s = Sampler(1_000_000, b, Sampler.Mode.IID, seed=1)
        rng = np.random.default_rng(1)
        ours = best_rate(s.next)
        theirs = best_rate(lambda: rng.integers(0, 1_000_000, b))
        rows.append((b, 1e6 / ours, 1e6 / theirs, ours / theirs))
    print("\n## Sampler: IID, 1M index space (us per batch)\n")
    print("| batch | loaderx Sampler | numpy default_rng | ratio |")
    print("|---:|---:|---:|---:|")
    for b, us, np_us, ratio in rows:
        print("| %d | %.2f | %.2f | %.2fx |" % (b, us, np_us, ratio))
    return rows


# -- workloads ---------------------------------------------------------------

def make_images(n, seed=0):
    """Smooth CHW uint8 images with mild noise: compressible like photos,
    not like random bytes."""
    rng = np.random.default_rng(seed)
    y = np.linspace(0, 1, 224, dtype=np.float32)[:, None]
    x = np.linspace(0, 1, 224, dtype=np.float32)[None, :]
    out = np.empty((n, 3, 224, 224), dtype=np.uint8)
    for i in range(n):
        f = rng.uniform(1, 6, size=(3, 2)).astype(np.float32)
        ph = rng.uniform(0, 6.3, size=(3, 2)).astype(np.float32)
        for c in range(3):
            img = (np.sin(f[c, 0] * 3 * y + ph[c, 0])
                   * np.cos(f[c, 1] * 3 * x + ph[c, 1]))
            out[i, c] = (img * 100 + 128).astype(np.uint8)
        out[i] += rng.integers(0, 4, size=(3, 224, 224), dtype=np.uint8)
    return out


def make_tokens(n, seed=0):
    """Zipf-distributed GPT-2-range token ids, int32[512] per record."""
    rng = np.random.default_rng(seed)
    ids = rng.zipf(1.2, size=(n, 512)) % 50257
    return ids.astype(np.int32)


def prepare(root, name, make, n):
    """root/name.npy and the raw and zstd stores holding the same rows."""
    npy = os.path.join(root, name + ".npy")
    if not os.path.exists(npy):
        print("  generating %s ..." % npy, flush=True)
        np.save(npy, make(n))
    data = np.load(npy, mmap_mode="r")
    for codec in ("raw", "zstd"):
        path = os.path.join(root, "%s-%s" % (name, codec))
        if not os.path.exists(path):
            print("  writing %s ..." % path, flush=True)
            t = time.perf_counter()
            with DenseStore.create(path, data.dtype, data.shape[1:],
                                   codec=codec) as ds:
                for lo in range(0, len(data), 8192):
                    ds.append(data[lo:lo + 8192])
            print("    %.1f s" % (time.perf_counter() - t), flush=True)
    return npy


def disk_bytes(path):
    return sum(os.stat(f).st_blocks * 512
               for f in glob.glob(os.path.join(path, "*")))


# -- gather ----------------------------------------------------------------

def bench_gather(root, name, batches=50):
    npy = os.path.join(root, name + ".npy")
    mm = np.load(npy, mmap_mode="r")
    n = len(mm)
    rng = np.random.default_rng(7)
    plan = [np.sort(rng.integers(0, n, BATCH)) for _ in range(batches)]
    rows = []
    mb = mm[0].nbytes * BATCH / 2**20

    def run(get):
        times = []
        start = time.perf_counter()
        while time.perf_counter() - start < 2 or len(times) < batches:
            for idx in plan:
                t = time.perf_counter()
                get(idx)
                times.append(time.perf_counter() - t)
        return len(times) / sum(times), np.percentile(times, 95) * 1e3

    base_rate, base_p95 = run(lambda idx: mm[idx])
    rows.append(("npy-mmap (fancy index)", base_rate, base_p95,
                 os.stat(npy).st_blocks * 512, 1.0))
    for codec in ("raw", "zstd"):
        path = os.path.join(root, "%s-%s" % (name, codec))
        with DenseStore.open(path, readonly=True) as ds:
            sample = ds.gather(plan[0])
            assert np.array_equal(sample, mm[plan[0]])  # same bytes back
            rate, p95 = run(ds.gather)
        rows.append(("zrecord-" + codec, rate, p95, disk_bytes(path),
                     rate / base_rate))
    print("\n## Gather: %s, %d x %s %s, batch %d (%.1f MiB per batch)\n"
          % (name, n, mm.dtype, mm.shape[1:], BATCH, mb))
    print("| store | batches/s | MiB/s | p95 ms | disk MiB | vs npy |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, rate, p95, disk, ratio in rows:
        print("| %s | %.1f | %.0f | %.2f | %.0f | %.2fx |"
              % (label, rate, rate * mb, p95, disk / 2**20, ratio))
    return rows


# -- loader (each loader runs in its own child process) --------------------

def child_loaderx(root, codec, workers):
    streams = {"data": DenseStore.open(os.path.join(root, "images-" + codec),
                                       readonly=True),
               "label": DenseStore.open(os.path.join(root, "labels"),
                                        readonly=True)}
    loader = DataLoader(streams, batch_size=BATCH, workers=workers,
                        mode="cyclic", seed=0)
    return loader, loader.close


def child_torch(root, codec, workers):
    import torch
    from torch.utils.data import DataLoader as TorchLoader, Dataset

    class MmapSet(Dataset):
        def __init__(self):
            self.data = self.label = None

        def __len__(self):
            return 2500

        def __getitem__(self, i):
            if self.data is None:   # opened lazily in each worker
                self.data = np.load(os.path.join(root, "images.npy"),
                                    mmap_mode="r")
                self.label = np.load(os.path.join(root, "labels.npy"),
                                     mmap_mode="r")
            return torch.from_numpy(np.array(self.data[i])), \
                int(self.label[i])

    torch.set_num_threads(1)
    loader = TorchLoader(MmapSet(), batch_size=BATCH, shuffle=True,
                         num_workers=workers, persistent_workers=True,
                         drop_last=True)

    def endless():
        while True:
            yield from loader
    return endless(), lambda: None


def run_child(args):
    kind, _, codec = args.child.partition("-")
    make = child_torch if kind == "torch" else child_loaderx
    it, close = make(args.dir, codec, args.workers)
    for _ in range(5):                         # warm up
        next(it)
    print("READY", flush=True)
    rounds = []
    for _ in range(args.rounds):
        t = time.perf_counter()
        for _ in range(args.batches):
            next(it)
        rounds.append(args.batches / (time.perf_counter() - t))
    close()
    print(json.dumps({"rates": rounds}), flush=True)


def tree_pss(pid):
    """Summed Pss, Pss_Anon, Pss_File and Pss_Shmem (bytes) of pid and all
    its descendants."""
    children = {}
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(stat) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(
                int(stat.split("/")[2]))
        except (OSError, IndexError, ValueError):
            continue
    keys = ("Pss:", "Pss_Anon:", "Pss_File:", "Pss_Shmem:")
    total, todo = [0, 0, 0, 0], [pid]
    while todo:
        p = todo.pop()
        todo.extend(children.get(p, []))
        try:
            with open("/proc/%d/smaps_rollup" % p) as f:
                for line in f:
                    for k, key in enumerate(keys):
                        if line.startswith(key):
                            total[k] += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


def spawn(kind, root, workers, batches, rounds):
    return subprocess.Popen(
        [sys.executable, __file__, "--child", kind, "--dir", root,
         "--workers", str(workers), "--batches", str(batches),
         "--rounds", str(rounds)], stdout=subprocess.PIPE, text=True)


def measure_loader(kind, root, workers):
    # Pass 1: throughput, nothing else running.
    proc = spawn(kind, root, workers, 100, 3)
    out = proc.communicate()[0].splitlines()
    rate = statistics.median(json.loads(out[-1])["rates"])
    # Pass 2: peak PSS while it runs steadily, sampled from outside.
    proc = spawn(kind, root, workers, 100, 2)
    assert proc.stdout.readline().strip() == "READY"
    peak = [0, 0, 0, 0]
    while proc.poll() is None:
        pss = tree_pss(proc.pid)
        if pss[0] > peak[0]:
            peak = pss
        time.sleep(0.05)
    proc.communicate()
    return rate, peak


def bench_loader(root, workers):
    labels = np.arange(2500, dtype=np.int64) % 1000
    np.save(os.path.join(root, "labels.npy"), labels)
    path = os.path.join(root, "labels")
    if not os.path.exists(path):
        with DenseStore.create(path, labels.dtype, (), codec="raw") as ds:
            ds.append(labels)
    rows = []
    for kind in ("loaderx-raw", "loaderx-zstd", "torch"):
        if kind == "torch":
            if importlib.util.find_spec("torch") is None:
                print("torch missing (apt-get install python3-torch): "
                      "torch row skipped")
                continue
        rate, pss = measure_loader(kind, root, workers)
        rows.append((kind, rate, pss))
    print("\n## Loader: image workload, batch %d, %d workers\n"
          % (BATCH, workers))
    print("| loader | storage | batches/s | peak PSS MiB | anon | file "
          "| shmem |")
    print("|---|---|---:|---:|---:|---:|---:|")
    storage = {"loaderx-raw": "zrecord raw", "loaderx-zstd": "zrecord zstd",
               "torch": "npy mmap"}
    for kind, rate, pss in rows:
        print("| %s | %s | %.1f | %s |" % (
            kind, storage[kind], rate,
            " | ".join("%.0f" % (p / 2**20) for p in pss)))
    if rows and rows[-1][0] == "torch":
        print()
        for kind, rate, pss in rows[:-1]:
            print("%s / torch: %.2fx batches/s at %.2fx the PSS"
                  % (kind, rate / rows[-1][1], pss[0] / rows[-1][2][0]))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--dir", default="/tmp/bench-loader")
    ap.add_argument("--only", default="sampler,gather,loader")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--batches", type=int, default=100,
                    help=argparse.SUPPRESS)
    ap.add_argument("--rounds", type=int, default=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return run_child(args)
    os.makedirs(args.dir, exist_ok=True)
    only = args.only.split(",")
    from loaderx import LIB_PATH
    from loaderx._lib import lib
    print("# bench_loader: %d CPUs, %d gather lanes, load average %.1f, "
          "numpy %s, %s" % (os.cpu_count(), lib.zr_pool_lanes(),
                            os.getloadavg()[0], np.__version__, LIB_PATH))
    if "sampler" in only:
        bench_sampler()
    if "gather" in only or "loader" in only:
        prepare(args.dir, "images", lambda n: make_images(n), 2500)
    if "gather" in only:
        prepare(args.dir, "tokens", lambda n: make_tokens(n), 200_000)
        bench_gather(args.dir, "images")
        bench_gather(args.dir, "tokens")
    if "loader" in only:
        bench_loader(args.dir, args.workers)


if __name__ == "__main__":
    main()
