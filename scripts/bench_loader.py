#!/usr/bin/python3
"""
bench_loader.py - one qualitative pass comparing loaderx with the NumPy and
torch baselines a user would otherwise reach for:

  sampler   Sampler.next() vs numpy.random.default_rng().integers,
            IID over a 1M index space, batch 256 / 1024 / 8192
  gather    DenseStore random batch gather from Python (raw fresh and
            with out= reused, zstd with out=) vs NumPy fancy indexing of
            an mmap'd .npy (and np.take with out=): image (2,500 x uint8
            (3,224,224)) and token (200,000 x int32[512]) workloads,
            batch 256; medians of per-batch times taken in interleaved
            rounds, once quiet and once while the script keeps one
            busy-loop process running
  ragged    RaggedStore gather (the list and the packed form; raw and
            zstd) vs the NumPy layout a user would build by hand (every
            record's elements in one mmap'd .npy plus offsets; the
            batch's slices concatenated): tokens int32[16..512] (50,000)
            and uint8 (3, H, W) images with H and W in 64..512 (600)
  loader    DataLoader (ring=1; raw and zstd stores; 1 and 2 prefetch
            threads) vs torch's best here, a batched Dataset over the
            mmap'd .npy with 0 workers (image workload + int64 labels,
            batch 256): median batches/s of 5 rounds of 50 and the peak
            PSS of the process tree in the same pass; for zstd, the decode
            ceiling of the same frames (single-thread ZSTD_decompress
            through ctypes, times the pool's lanes; and as many threads as
            lanes decoding at once) measured in the same child in a round
            before each of the loader's, with the loader parked: the
            ratios are medians of per-round ratios

Every table prints its ratios to the baseline measured in the same run.
Not a test: numbers depend on the box.  Run from the source tree with the
library built (top_builddir=BUILD, or LOADERX_LIB=path/libzrecord.so):

  top_builddir=/path/to/build python3 scripts/bench_loader.py [--dir D]
"""
import argparse
import glob
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "contrib", "python"))

from loaderx._lib import lib  # noqa: E402
from loaderx.dataloader import DataLoader  # noqa: E402
from loaderx.zrecord import DenseStore, RaggedStore  # noqa: E402
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

def busy_loop():
    """One busy-loop process: the "loaded" runs share the CPUs with it."""
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    time.sleep(0.3)  # let it reach the run queue
    return proc


def interleaved(backends, plan, rounds=7, min_round=0.15):
    """Per-batch seconds of every (label, get) backend, timed in rounds that
    take turns, so that drifting background load hits every backend alike."""
    times = {label: [] for label, _ in backends}
    for _ in range(rounds):
        for label, get in backends:
            start = time.perf_counter()
            while time.perf_counter() - start < min_round:
                for idx in plan:
                    t = time.perf_counter()
                    get(idx)
                    times[label].append(time.perf_counter() - t)
    return times


def gather_backends(root, name, mm, stores):
    """The NumPy baselines and the loaderx gathers of one workload, each
    checked against NumPy's bytes: [(label, get)]."""
    shape = (BATCH,) + mm.shape[1:]
    np_out = np.empty(shape, dtype=mm.dtype)
    backends = [
        ("npy fancy index (fresh array)", lambda idx: mm[idx]),
        ("npy take, out= reused",
         lambda idx: np.take(mm, idx, axis=0, out=np_out)),
    ]
    for codec, ds in stores.items():
        out = np.empty(shape, dtype=mm.dtype)
        if codec == "raw":
            backends.append(("loaderx raw (fresh array)", ds.gather))
        backends.append(("loaderx %s, out= reused" % codec,
                         lambda idx, ds=ds, out=out: ds.gather(idx, out=out)))
    return backends


def print_gather_table(name, mm, quiet, loaded, extra=()):
    mb = mm[0].nbytes * BATCH / 2**20
    print("\n## Gather from Python: %s, %d x %s %s, batch %d (%.1f MiB "
          "per batch)\n" % (name, len(mm), mm.dtype, mm.shape[1:], BATCH, mb))
    print("| backend | load | median ms | MiB/s | p95 ms | vs npy fancy "
          "| vs npy take out= |")
    print("|---|---|---:|---:|---:|---:|---:|")
    ratios = {}
    for load, times in (("quiet", quiet), ("1 busy process", loaded)):
        med = {k: statistics.median(v) for k, v in times.items()}
        fancy = med["npy fancy index (fresh array)"]
        take = med["npy take, out= reused"]
        for label, m in med.items():
            print("| %s | %s | %.3f | %.0f | %.3f | %.2fx | %.2fx |"
                  % (label, load, m * 1e3, mb / m,
                     np.percentile(times[label], 95) * 1e3, fancy / m,
                     take / m))
            ratios[(label, load)] = fancy / m
    for line in extra:
        print(line)
    return ratios


def bench_gather(root, name, batches=20, target=None):
    """Quiet and loaded, in one run: loaderx's gathers against NumPy fancy
    indexing of the mmap'd .npy, medians of per-batch times."""
    mm = np.load(os.path.join(root, name + ".npy"), mmap_mode="r")
    sampler = Sampler(len(mm), BATCH, Sampler.Mode.IID, seed=7)
    plan = [sampler.batch(step).astype(np.int64) for step in range(batches)]
    stores = {codec: DenseStore.open(os.path.join(root, "%s-%s"
                                                  % (name, codec)),
                                     readonly=True)
              for codec in ("raw", "zstd")}
    try:
        backends = gather_backends(root, name, mm, stores)
        want = mm[plan[0]]
        for label, get in backends:
            assert np.array_equal(get(plan[0]), want), label
        quiet = interleaved(backends, plan)
        busy = busy_loop()
        try:
            loaded = interleaved(backends, plan)
        finally:
            busy.kill()
            busy.wait()
    finally:
        for ds in stores.values():
            ds.close()
    ratios = print_gather_table(name, mm, quiet, loaded)
    if target:
        for load in ("quiet", "1 busy process"):
            r = ratios[("loaderx raw, out= reused", load)]
            print("loaderx raw out= / npy fancy, %s: %.2fx (target >= "
                  "%.1fx: %s)" % (load, r, target,
                                  "met" if r >= target else "NOT met"))
    return ratios


# -- ragged gather -----------------------------------------------------------

def make_ragged_tokens(n, seed=0):
    """int32 token rows of 16..512 ids (Zipf, GPT-2 range)."""
    rng = np.random.default_rng(seed)
    return [(rng.zipf(1.2, size=int(k)) % 50257).astype(np.int32)
            for k in rng.integers(16, 513, n)]


def make_ragged_images(n, seed=0):
    """uint8 (3, H, W) images, H and W in 64..512: the dense images'
    generator cropped, so they compress alike."""
    rng = np.random.default_rng(seed)
    base = make_images(8, seed)
    out = []
    for i in range(n):
        h, w = (int(v) for v in rng.integers(64, 513, 2))
        tile = np.tile(base[i % 8], (1, 3, 3))
        out.append(np.ascontiguousarray(tile[:, :h, :w]))
    return out


def prepare_ragged(root, name, make, n):
    """root/NAME.flat.npy (every record's elements, concatenated), its
    offsets and shapes, and the raw and zstd RaggedStores of the same
    records: the layout a NumPy user would build by hand."""
    flat = os.path.join(root, name + ".flat.npy")
    meta = os.path.join(root, name + ".meta.npz")
    if not os.path.exists(flat):
        print("  generating %s ..." % flat, flush=True)
        recs = make(n)
        sizes = np.array([r.size for r in recs], dtype=np.int64)
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        np.save(flat, np.concatenate([r.reshape(-1) for r in recs]))
        np.savez(meta, offsets=offsets,
                 shapes=np.array([r.shape for r in recs], dtype=np.int64))
        for codec in ("raw", "zstd"):
            path = os.path.join(root, "%s-%s" % (name, codec))
            if os.path.exists(path):
                shutil.rmtree(path)
            with RaggedStore.create(path, recs[0].dtype, codec=codec) as rs:
                for lo in range(0, n, 4096):
                    rs.append(recs[lo:lo + 4096])
    m = np.load(meta)
    return np.load(flat, mmap_mode="r"), m["offsets"], m["shapes"]


def numpy_packed(flat, offsets, shapes, idx):
    """The hand-made baseline: the records' slices of the mmap'd flat
    array, concatenated, with their offsets and shapes."""
    lo, hi = offsets[idx], offsets[idx + 1]
    out_off = np.zeros(len(idx) + 1, dtype=np.int64)
    np.cumsum(hi - lo, out=out_off[1:])
    data = np.concatenate([flat[a:b] for a, b in zip(lo, hi)])
    return data, out_off, shapes[idx]


def bench_ragged(root, name, make, n, batches=20):
    """loaderx RaggedStore gathers (list and packed) against the NumPy
    baseline above, quiet, medians of per-batch times."""
    flat, offsets, shapes = prepare_ragged(root, name, make, n)
    sampler = Sampler(n, BATCH, Sampler.Mode.IID, seed=7)
    plan = [sampler.batch(step).astype(np.int64) for step in range(batches)]
    stores = {c: RaggedStore.open(os.path.join(root, "%s-%s" % (name, c)),
                                  readonly=True) for c in ("raw", "zstd")}
    base = "npy mmap slices, concatenated"
    backends = [(base, lambda i: numpy_packed(flat, offsets, shapes, i))]
    for c, rs in stores.items():
        backends.append(("loaderx %s, packed" % c,
                         lambda i, rs=rs: rs.gather(i, form="packed")))
        backends.append(("loaderx %s, list" % c,
                         lambda i, rs=rs: rs.gather(i)))
    try:
        want = numpy_packed(flat, offsets, shapes, plan[0])
        for label, get in backends:
            got = get(plan[0])
            got = got if isinstance(got, tuple) else (
                np.concatenate([r.reshape(-1) for r in got]),)
            assert np.array_equal(got[0], want[0]), label
        times = interleaved(backends, plan)
    finally:
        for rs in stores.values():
            rs.close()
    mb = np.mean([offsets[i + 1].sum() - offsets[i].sum() for i in plan]
                 ) * flat.dtype.itemsize / 2**20
    med = {k: statistics.median(v) for k, v in times.items()}
    print("\n## Ragged gather from Python: %s, %d records of %s, batch %d "
          "(%.1f MiB per batch on average)\n" % (name, n, flat.dtype, BATCH,
                                                  mb))
    print("| backend | median ms | MiB/s | p95 ms | vs npy slices |")
    print("|---|---:|---:|---:|---:|")
    for label, m in med.items():
        print("| %s | %.3f | %.0f | %.3f | %.2fx |" % (
            label, m * 1e3, mb / m, np.percentile(times[label], 95) * 1e3,
            med[base] / m))
    return {k: med[base] / m for k, m in med.items()}


# -- the zstd decode ceiling -----------------------------------------------

def _zstd():
    """libzstd through ctypes: ZSTD_decompressDCtx and ZSTD_createDCtx (a
    ctypes call releases the GIL, so threads decode at once)."""
    import ctypes
    import ctypes.util
    z = ctypes.CDLL(ctypes.util.find_library("zstd") or "libzstd.so.1")
    z.ZSTD_createDCtx.restype = ctypes.c_void_p
    z.ZSTD_decompressDCtx.restype = ctypes.c_size_t
    z.ZSTD_decompressDCtx.argtypes = [ctypes.c_void_p] * 2 + [
        ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t]
    return z.ZSTD_decompressDCtx, z.ZSTD_createDCtx


class DecodeCeiling:
    """The frames of `batches` (index arrays) of a zstd store, decoded
    with ZSTD_decompress and nothing else: what a gather of those batches
    could reach if decoding were all it did.  Frames are located from
    meta.zr's record table (include/zrecord.h: 16-byte entries from byte
    4096) and decoded from a mapping of data.zr, as the library maps it
    (the loader's PSS is not inflated by a private copy, and the pages are
    the same warm page-cache pages)."""

    def __init__(self, store_path, batches):
        self.decompress, create = _zstd()
        with open(os.path.join(store_path, "meta.zr"), "rb") as f:
            meta = f.read()
        n = int(np.frombuffer(meta, "<u8", 1)[0])
        loc = np.frombuffer(meta, np.dtype([("off", "<u8"), ("phys", "<u4"),
                                            ("logic", "<u4")]), n, 4096)
        self.data = np.memmap(os.path.join(store_path, "data.zr"),
                              np.uint8, "r")
        self.cap = int(loc["logic"].max())
        self.lanes = lib.zr_pool_lanes()
        # One output and one context per thread, reused for every frame.
        self.dst = [np.empty(self.cap, np.uint8) for _ in range(self.lanes)]
        self.dctx = [create() for _ in range(self.lanes)]
        src = self.data.ctypes.data
        self.frames = [(src + int(loc["off"][i]), int(loc["phys"][i]))
                       for idx in batches for i in idx]
        self.batches = len(batches)
        self.path = store_path

    def _decode(self, lane, frames):
        out, cap = self.dst[lane].ctypes.data, self.cap
        for ptr, size in frames:
            if self.decompress(self.dctx[lane], out, cap, ptr,
                               size) != cap:
                raise RuntimeError("%s: frame did not decode" % self.path)

    def single(self):
        """Batches/s of one thread decoding every frame, times the pool's
        lanes: the ceiling issue 13 states (each lane as fast as one
        thread alone on the machine)."""
        t = time.perf_counter()
        self._decode(0, self.frames)
        return self.batches / (time.perf_counter() - t) * self.lanes

    def concurrent(self):
        """Batches/s of as many threads as the pool has lanes, decoding
        every lanes-th frame each, all at once: the same ceiling with the
        lanes sharing the machine's caches, memory and CPUs (with anything
        else that runs) as the loader's lanes do."""
        import threading
        threads = [threading.Thread(target=self._decode,
                                    args=(k, self.frames[k::self.lanes]))
                   for k in range(self.lanes)]
        t = time.perf_counter()
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        return self.batches / (time.perf_counter() - t)


# -- loader (each loader runs in its own child process) --------------------

def child_loaderx(args):
    root = args.dir
    streams = {"data": DenseStore.open(os.path.join(root, "images-"
                                                    + args.codec),
                                       readonly=True),
               "label": DenseStore.open(os.path.join(root, "labels"),
                                        readonly=True)}
    loader = DataLoader(streams, batch_size=BATCH, workers=args.workers,
                        mode="cyclic", seed=0, ring=args.ring or None)
    return loader, loader.close


def child_torch(args):
    """torch's best on this machine: a Dataset that returns a whole batch
    (NumPy fancy indexing of the mmap'd .npy), batch_size=None, in the
    loading process (0 workers)."""
    import torch
    from torch.utils.data import (BatchSampler, DataLoader as TorchLoader,
                                  Dataset, RandomSampler)
    data = np.load(os.path.join(args.dir, "images.npy"), mmap_mode="r")
    label = np.load(os.path.join(args.dir, "labels.npy"), mmap_mode="r")

    class BatchSet(Dataset):
        def __len__(self):
            return len(data)

        def __getitem__(self, idx):
            idx = np.sort(idx)  # sequential reads help the mmap
            return torch.from_numpy(data[idx]), torch.from_numpy(label[idx])

    torch.set_num_threads(1)
    ds = BatchSet()
    loader = TorchLoader(ds, batch_size=None, num_workers=args.workers,
                         sampler=BatchSampler(RandomSampler(ds), BATCH,
                                              drop_last=True))

    def endless():
        while True:
            yield from loader
    return endless(), lambda: None


def child_ceiling(args):
    """The decode ceiling of the batches this child's loader delivers
    (zstd stores only, else None)."""
    if args.child == "torch" or args.codec != "zstd":
        return None
    sampler = Sampler(2500, BATCH, Sampler.Mode.CYCLIC, seed=0)
    return DecodeCeiling(os.path.join(args.dir, "images-zstd"),
                         [sampler.batch(t) for t in range(args.batches)])


def settle(loader):
    """Waits until the loader's prefetch threads have parked (every step
    they may claim is ready), so that nothing of the loader runs beside a
    ceiling round."""
    with loader._cond:
        loader._cond.wait_for(lambda: len(loader._ready) >= loader.depth,
                              timeout=60)


def ceiling_round(it, ceiling, rates):
    """One round of both ceilings, between two of the loader's: the same
    load drifts over both.  The batches the parked threads made meanwhile
    are taken before the next timed round, which starts, as every later
    batch does, with the threads busy and nothing ready."""
    settle(it)
    rates["single"].append(ceiling.single())
    rates["concurrent"].append(ceiling.concurrent())
    for _ in range(it.depth):
        next(it)


def run_child(args):
    """Rounds of the loader; for zstd, each after a round of the ceilings
    (a ceiling measured only before and after the loader, best of its
    rounds against the loader's median, drifted with the load apart from
    it: 31.4 before and after one loader, 36.0 around the next)."""
    make = child_torch if args.child == "torch" else child_loaderx
    ceiling = child_ceiling(args)
    it, close = make(args)
    for _ in range(5):                         # warm up
        next(it)
    print("READY", flush=True)
    rates = {"loader": [], "single": [], "concurrent": []}
    for _ in range(args.rounds):
        if ceiling:
            ceiling_round(it, ceiling, rates)
        t = time.perf_counter()
        for _ in range(args.batches):
            next(it)
        rates["loader"].append(args.batches / (time.perf_counter() - t))
    close()
    print(json.dumps(rates), flush=True)


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


def spawn(cfg, root, batches, rounds):
    kind, codec, workers, ring = cfg
    return subprocess.Popen(
        [sys.executable, __file__, "--child", kind, "--codec", codec,
         "--dir", root, "--workers", str(workers), "--ring", str(ring),
         "--batches", str(batches), "--rounds", str(rounds)],
        stdout=subprocess.PIPE, text=True)


def per_round(res, ceiling):
    """The zstd loader's median rate to `ceiling`'s, round by round, and
    that ceiling's median batches/s; None without ceiling rounds."""
    if not res[ceiling]:
        return None
    return (statistics.median(a / b for a, b in zip(res["loader"],
                                                     res[ceiling])),
            statistics.median(res[ceiling]))


def measure_loader(cfg, root):
    """(median batches/s of 5 rounds, peak PSS sampled from outside,
    {ceiling: (median per-round ratio, median batches/s)} for zstd)."""
    proc = spawn(cfg, root, 50, 5)
    assert proc.stdout.readline().strip() == "READY"
    peak = [0, 0, 0, 0]
    while proc.poll() is None:
        pss = tree_pss(proc.pid)
        if pss[0] > peak[0]:
            peak = pss
        time.sleep(0.02)
    res = json.loads(proc.communicate()[0].splitlines()[-1])
    ceilings = {k: per_round(res, k) for k in ("single", "concurrent")}
    return (statistics.median(res["loader"]), peak,
            ceilings if ceilings["single"] else None)


LOADERS = (  # label, (kind, codec, workers, ring), storage
    ("loaderx, 1 worker, ring=1", ("loaderx", "raw", 1, 1), "zrecord raw"),
    ("loaderx, 2 workers, ring=1", ("loaderx", "raw", 2, 1), "zrecord raw"),
    ("loaderx, 1 worker, ring=1", ("loaderx", "zstd", 1, 1),
     "zrecord zstd"),
    ("loaderx, 2 workers, ring=1", ("loaderx", "zstd", 2, 1),
     "zrecord zstd"),
    ("torch batched Dataset, 0 workers", ("torch", "npy", 0, 0),
     "npy mmap"),
)


CEILINGS = (  # key, label
    ("single", "1-thread ZSTD_decompress x %d lanes"),
    ("concurrent", "%d threads of ZSTD_decompress at once"),
)


def print_loader(rows):
    print("\n## Loader: image workload + int64 labels, batch %d\n" % BATCH)
    print("| loader | storage | batches/s | peak PSS MiB | anon | file "
          "| shmem |")
    print("|---|---|---:|---:|---:|---:|---:|")
    lanes = lib.zr_pool_lanes()
    for label, storage, rate, pss, ceiling in rows:
        print("| %s | %s | %.1f | %s |" % (
            label, storage, rate,
            " | ".join("%.0f" % (p / 2**20) for p in pss)))
        for key, what in CEILINGS if ceiling else ():
            print("| zstd decode ceiling (%s, same frames, rounds between "
                  "the loader's) | | %.1f | | | | |"
                  % (what % lanes, ceiling[key][1]))
    print()
    torch = [r for r in rows if r[1] == "npy mmap"]
    for label, storage, rate, pss, ceiling in rows:
        if ceiling:
            r, c = ceiling["single"][0], ceiling["concurrent"][0]
            print("%s, zstd / decode ceiling (median of per-round ratios): "
                  "%.2fx (target >= 0.9x: %s); / the lanes decoding at "
                  "once: %.2fx" % (label, r, "met" if r >= 0.9
                                   else "NOT met", c))
        elif torch and storage != "npy mmap":
            r, m = rate / torch[0][2], pss[0] / torch[0][3][0]
            print("%s, raw / torch: %.2fx batches/s at %.2fx the PSS "
                  "(target >= 1.3x at <= 0.5x: %s)"
                  % (label, r, m, "met" if r >= 1.3 and m <= 0.5
                     else "NOT met"))


def bench_loader(root):
    labels = np.arange(2500, dtype=np.int64) % 1000
    np.save(os.path.join(root, "labels.npy"), labels)
    path = os.path.join(root, "labels")
    if not os.path.exists(path):
        with DenseStore.create(path, labels.dtype, (), codec="raw") as ds:
            ds.append(labels)
    rows = []
    for label, cfg, storage in LOADERS:
        if cfg[0] == "torch" and importlib.util.find_spec("torch") is None:
            print("torch missing (apt-get install python3-torch): "
                  "torch row skipped")
            continue
        rows.append((label, storage) + measure_loader(cfg, root))
    print_loader(rows)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--dir", default="/tmp/bench-loader")
    ap.add_argument("--only", default="sampler,gather,ragged,loader")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--codec", help=argparse.SUPPRESS)
    ap.add_argument("--workers", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--ring", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--batches", type=int, default=100,
                    help=argparse.SUPPRESS)
    ap.add_argument("--rounds", type=int, default=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return run_child(args)
    os.makedirs(args.dir, exist_ok=True)
    only = args.only.split(",")
    from loaderx import LIB_PATH
    print("# bench_loader: %d CPUs, %d gather lanes, load average %.1f, "
          "numpy %s, %s" % (os.cpu_count(), lib.zr_pool_lanes(),
                            os.getloadavg()[0], np.__version__, LIB_PATH))
    if "sampler" in only:
        bench_sampler()
    if "gather" in only or "loader" in only:
        prepare(args.dir, "images", lambda n: make_images(n), 2500)
    if "gather" in only:
        prepare(args.dir, "tokens", lambda n: make_tokens(n), 200_000)
        bench_gather(args.dir, "images", target=1.5)
        bench_gather(args.dir, "tokens", target=1.2)
    if "ragged" in only:
        bench_ragged(args.dir, "rtokens", make_ragged_tokens, 50_000)
        bench_ragged(args.dir, "rimages", make_ragged_images, 600)
    if "loader" in only:
        bench_loader(args.dir)


if __name__ == "__main__":
    main()
