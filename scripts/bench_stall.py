#!/usr/bin/python3
"""
bench_stall.py - data stalls: how long a trainer waits for its next batch.

A simulated trainer takes a batch, then "computes" (sleeps) a fixed time C,
step after step.  Its wait per step is the time from asking for the batch
to holding it (every byte read).  For each workload it reads:

  mount, prefetch off   batch/iid/B/SEED-t files of a read-only zrecordfs
                        mount with -o prefetch=0 (what main did before)
  mount, prefetch on    the same files of a mount with -o prefetch (default)
  loaderx               loaderx.DataLoader over the same store (2 threads)
  torch, N workers      torch.utils.data.DataLoader (N = 0, 1, 2) over a
                        Dataset whose item is a whole batch gathered with
                        loaderx from the same store (same records, same
                        decode), batch_size=None

Workloads: dense zstd images (B=128 of 3x128x128 uint8), the same dense
raw, ragged zstd tokens read as .packed.npz (int32, 16..512 long), and
decoded JPEGs: an encoded-image store of 224x224 q90 JPEGs served decoded
(B=128 of 224x224x3 uint8; the mounts under -o decode=224, the loaders
with decode=224).

C is 1.5x (--compute) the cold read of a batch: the median time to read
an unpredictable step through the prefetch-off mount, measured first.  Per
setup it reports the median and p95 wait per step (the first two steps,
which arm the prefetch and fill the loaders, are left out), the median
over the cold read ("x cold": the prefetch-off mount's median wait in the
same rounds, where every step is read cold), the stall share
(waits / (waits + compute)), the producer's throughput over the
trainer's consumption (mount: C over the rounds' cold read; a loader:
its own batches per second draining without compute, times C), and for the mounts the
daemon's CPU per step and peak RSS (VmHWM since it mounted: one mount
serves every round and workload); for the loaders their process's CPU per
step and peak RSS (torch: its largest worker added).
Each setup uses its own seed, so nothing it reads is in a cache the
previous one filled; setups run in interleaved rounds (--rounds) and the
waits of all rounds are pooled.

Targets (issue 23), when the producer's throughput is >= 1.3x the
consumption: for the prefetching mount and loaderx, median wait <= 0.1x
the cold read, stall share <= 5%, and a stall share below torch's best;
for the decoded JPEGs (issue 30), median wait <= 0.3x the cold read.

Not a test: numbers depend on the box and its load, printed with them.

  top_builddir=BUILD /usr/bin/python3 scripts/bench_stall.py [--steps N]
      [--rounds R] [--compute X] [--only WORD] [--dir D]
"""
import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "contrib", "python"))
os.environ["PATH"] = "/usr/sbin:/usr/bin:/sbin:/bin"

from loaderx.dataloader import DataLoader  # noqa: E402
from loaderx.zrecord import DenseStore, RaggedStore  # noqa: E402

BUILD = os.environ.get("top_builddir", os.path.join(HERE, ".."))
ZRECORDFS = os.path.join(BUILD, "src", "fs", "zrecordfs")
TICK = os.sysconf("SC_CLK_TCK")
WARM = 2

WORKLOADS = {
    # name: (store folder, batch size, file suffix)
    "dense zstd images": ("img_zstd", 128, ".npy"),
    "dense raw images": ("img_raw", 128, ".npy"),
    "ragged zstd tokens": ("tok_zstd", 512, ".packed.npz"),
    "decoded jpeg images": ("img_jpeg", 128, ".npy"),
}
DECODE = 224  # the output size of the encoded-image store's batches


def decoded(wl):
    """The workload reads an encoded-image store, decoded."""
    return WORKLOADS[wl][0] == "img_jpeg"


def make_jpegs(path, rng, n=1024):
    """224x224 q90 JPEGs of smooth colour fields plus grain."""
    import io
    from PIL import Image
    x = np.linspace(0, 6, DECODE, dtype=np.float32)
    s = RaggedStore.create(path, np.uint8, codec="raw", images=True)
    files = []
    for k in range(n):
        a, b, c = rng.uniform(0.3, 2.0, 3)
        base = np.stack([np.sin(x[None, :] * a + x[:, None] * b) * 90,
                         np.cos(x[None, :] * b - x[:, None] * c) * 80,
                         np.sin(x[None, :] * x[:, None] * c / 6) * 70], -1)
        img = np.clip(base + 128 + rng.normal(0, 12, base.shape), 0, 255)
        buf = io.BytesIO()
        Image.fromarray(img.astype(np.uint8)).save(buf, "JPEG", quality=90)
        files.append(np.frombuffer(buf.getvalue(), np.uint8))
    s.append(files)
    s.close()


def make_stores(root):
    rng = np.random.default_rng(0)
    n = 2048
    # smooth images with noise: zstd has something to do, not everything
    base = np.linspace(0, 200, 128, dtype=np.float32)
    for codec in ("zstd", "raw"):
        path = os.path.join(root, "img_" + codec)
        if os.path.exists(path):
            continue
        s = DenseStore.create(path, "u1", (3, 128, 128), codec=codec)
        for lo in range(0, n, 256):
            k = min(256, n - lo)
            img = (base[None, None, None, :] + base[None, None, :, None] / 4
                   + rng.integers(0, 40, (k, 3, 128, 128))).astype("u1")
            s.append(img)
        s.close()
    path = os.path.join(root, "tok_zstd")
    if not os.path.exists(path):
        s = RaggedStore.create(path, "<i4", codec="zstd")
        recs = [rng.integers(0, 32000, rng.integers(16, 513)).astype("<i4")
                for _ in range(60000)]
        s.append(recs)
        s.close()
    path = os.path.join(root, "img_jpeg")
    if not os.path.exists(path):
        make_jpegs(path, rng)


class Mount:
    def __init__(self, src, mnt, *opts):
        os.makedirs(mnt, exist_ok=True)
        self.mnt = mnt
        self.proc = subprocess.Popen(
            [ZRECORDFS, src, mnt, "-f", "-o", ",".join(("ro",) + opts)],
            stderr=subprocess.PIPE)
        end = time.monotonic() + 20
        while not os.path.ismount(mnt):
            if self.proc.poll() is not None or time.monotonic() > end:
                raise SystemExit("zrecordfs did not mount: " +
                                 self.proc.stderr.read().decode())
            time.sleep(0.02)

    def cpu(self):
        with open("/proc/%d/stat" % self.proc.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK

    def hwm(self):
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
        return 0

    def stop(self):
        subprocess.run(["fusermount3", "-u", self.mnt])
        self.proc.wait(timeout=60)
        return self.proc.stderr.read().decode()


def load_file(path):
    """Every byte of a batch file, as a trainer's np.load gets it."""
    if path.endswith(".npz"):
        with np.load(path) as z:
            return [z[k] for k in z.files]
    return np.load(path)


def batch_path(mnt, store, b, suffix, seed, step):
    return os.path.join(mnt, store, "batch", "iid", str(b),
                        "%d-%d%s" % (seed, step, suffix))


def cold_read(mnt, wl, seed, n=15):
    store, b, suffix = WORKLOADS[wl]
    times = []
    for k in range(n):
        p = batch_path(mnt, store, b, suffix, seed, 1000 + 37 * k)
        t0 = time.perf_counter()
        load_file(p)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def trainer(take, steps, compute):
    """Waits per step of a trainer that takes a batch, then computes."""
    waits = []
    for t in range(steps):
        t0 = time.perf_counter()
        take(t)
        waits.append(time.perf_counter() - t0)
        time.sleep(compute)
    return waits[WARM:]


def self_cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime + c.ru_utime + c.ru_stime


def run_mount(m, wl, seed, steps, compute):
    store, b, suffix = WORKLOADS[wl]
    c0 = m.cpu()
    waits = trainer(lambda t: load_file(batch_path(m.mnt, store, b, suffix,
                                                   seed, t)),
                    steps, compute)
    return waits, (m.cpu() - c0) / steps, m.hwm()


def loaderx_iter(root, wl, seed):
    store, b, suffix = WORKLOADS[wl]
    path = os.path.join(root, store)
    if decoded(wl):
        s = RaggedStore.open(path, readonly=True)
        loader = DataLoader({"x": s}, batch_size=b, seed=seed,
                            decode=DECODE)
    elif suffix == ".npy":
        s = DenseStore.open(path, readonly=True)
        loader = DataLoader({"x": s}, batch_size=b, seed=seed)
    else:
        s = RaggedStore.open(path, readonly=True)
        loader = DataLoader({"x": s}, batch_size=b, seed=seed,
                            ragged="packed")
    return iter(loader), lambda: (loader.close(), s.close())


class BatchSet:
    """torch Dataset: item k is a whole batch, gathered with loaderx from
    the store (opened in the process that first needs it)."""

    def __init__(self, path, b, ragged, seed, n, images=False):
        self.path, self.b, self.ragged, self.n = path, b, ragged, n
        self.images = images
        self.rng = np.random.default_rng(seed)
        self.s = None

    def __len__(self):
        return 1 << 30

    def __getitem__(self, k):
        if self.s is None:
            cls = RaggedStore if self.ragged else DenseStore
            self.s = cls.open(self.path, readonly=True)
        idx = np.random.default_rng([k, 7]).integers(0, self.n, self.b)
        if self.images:
            return self.s.gather(idx, decode=DECODE)
        if self.ragged:
            return self.s.gather(idx, form="packed")
        return self.s.gather(idx)


def torch_iter(root, wl, seed, workers):
    import torch
    from torch.utils.data import DataLoader as TorchLoader
    torch.set_num_threads(1)
    store, b, suffix = WORKLOADS[wl]
    path = os.path.join(root, store)
    ragged = suffix != ".npy" or decoded(wl)
    with (RaggedStore if ragged else DenseStore).open(
            path, readonly=True) as s:
        n = len(s)

    class DS(BatchSet, torch.utils.data.Dataset):
        pass

    ds = DS(path, b, suffix != ".npy", seed, n, decoded(wl))
    loader = TorchLoader(ds, batch_size=None, num_workers=workers,
                         sampler=range(seed * 100000, seed * 100000 + 100000))
    it = iter(loader)
    return it, lambda: None


def drain_rate(it, n=8):
    next(it)
    t0 = time.perf_counter()
    for _ in range(n):
        next(it)
    return n / (time.perf_counter() - t0)


def run_loader(make, steps, compute):
    """In a child process: its own CPU and peak RSS.  Returns (waits,
    cpu per step, peak rss, rate)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        # never back into the parent's code (its finally unmounts)
        try:
            os.close(r)
            it, close = make()
            c0 = self_cpu()
            waits = trainer(lambda t: next(it), steps, compute)
            cpu = (self_cpu() - c0) / steps
            rate = drain_rate(it)
            ru = resource.getrusage
            rss = (ru(resource.RUSAGE_SELF).ru_maxrss +
                   ru(resource.RUSAGE_CHILDREN).ru_maxrss) * 1024
            close()
            os.write(w, repr((waits, cpu, rss, rate)).encode())
        except BaseException as e:
            sys.stderr.write("bench_stall: loader child: %r\n" % e)
            os._exit(1)
        os._exit(0)
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 1 << 16)
        if not chunk:
            break
        data += chunk
    os.close(r)
    _, status = os.waitpid(pid, 0)
    if status:
        raise SystemExit("bench_stall: a loader child failed")
    return eval(data.decode())


def p95(xs):
    return float(np.percentile(xs, 95))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--compute", type=float, default=1.5,
                    help="the trainer's step, in cold reads (default 1.5)")
    ap.add_argument("--dir", default=None)
    ap.add_argument("--only", default=None,
                    help="run only the workloads whose name has this word")
    args = ap.parse_args()
    for wl in [w for w in WORKLOADS if args.only and args.only not in w]:
        del WORKLOADS[wl]
    root = args.dir or tempfile.mkdtemp(prefix="bench_stall.")
    src = os.path.join(root, "src")
    os.makedirs(src, exist_ok=True)
    make_stores(src)
    try:
        import torch  # noqa: F401
        has_torch = True
    except ImportError:
        has_torch = False
        print("torch missing (apt-get install python3-torch): torch rows "
              "skipped")
    # decode= serves the encoded-image store decoded, the others as ever
    off = Mount(src, os.path.join(root, "off"), "prefetch=0",
                "decode=%d" % DECODE)
    on = Mount(src, os.path.join(root, "on"), "decode=%d" % DECODE)
    seed = 1
    res = {}
    cold, compute = {}, {}
    try:
        for wl in WORKLOADS:
            cold_read(off.mnt, wl, 999)       # the pool and caches warm
            cold[wl] = cold_read(off.mnt, wl, 998)
            compute[wl] = args.compute * cold[wl]
        for rnd in range(args.rounds):
            for wl in WORKLOADS:
                setups = [("mount, prefetch off", "m", off),
                          ("mount, prefetch on", "m", on),
                          ("loaderx DataLoader", "x", None)]
                if has_torch:
                    setups += [("torch, %d workers" % k, "t", k)
                               for k in (0, 1, 2)]
                if rnd % 2:
                    setups.reverse()
                for name, kind, arg in setups:
                    seed += 1
                    c = compute[wl]
                    if kind == "m":
                        waits, cpu, rss = run_mount(arg, wl, seed,
                                                    args.steps, c)
                        rate = 0.0  # from the rounds' cold reads
                    elif kind == "x":
                        waits, cpu, rss, rate = run_loader(
                            lambda: loaderx_iter(src, wl, seed),
                            args.steps, c)
                        rate *= c
                    else:
                        waits, cpu, rss, rate = run_loader(
                            lambda: torch_iter(src, wl, seed, arg),
                            args.steps, c)
                        rate *= c
                    r = res.setdefault((wl, name), {"w": [], "cpu": [],
                                                    "rss": [], "rate": []})
                    r["w"] += waits
                    r["cpu"].append(cpu)
                    r["rss"].append(rss)
                    r["rate"].append(rate)
    finally:
        print("prefetch off mount: " + (off.stop().strip() or "-"))
        print("prefetch on mount: " + (on.stop().strip() or "-"))
    load = os.getloadavg()
    print("\n%d cores, load average %.2f %.2f %.2f at the end; %d steps x "
          "%d rounds per setup" % (os.cpu_count(), *load, args.steps,
                                   args.rounds))
    for wl in WORKLOADS:
        print("\n%s: cold read %.1f ms before the rounds, compute %.1f ms "
              "per step" % (wl, cold[wl] * 1e3, compute[wl] * 1e3))
        print("  %-20s %9s %9s %8s %7s %8s %6s %9s %8s" % (
            "setup", "median ms", "p95 ms", "x cold", "stall", "thruput",
            "CPU ms", "peak RSS", "targets"))
        torch_best = min((statistics.mean(np.array(r["w"]) /
                                          (np.array(r["w"]) + compute[w]))
                          for (w, n), r in res.items()
                          if w == wl and n.startswith("torch")),
                         default=None)
        # the prefetch-off mount reads every step cold, in the same
        # rounds as the others: the cold read the ratios are to
        cold_med = float(np.median(res[(wl, "mount, prefetch off")]["w"]))
        for (w, name), r in res.items():
            if w != wl:
                continue
            waits = np.array(r["w"])
            med = float(np.median(waits))
            stall = float(waits.sum() / (waits.sum() + compute[wl] *
                                         len(waits)))
            rate = statistics.median(r["rate"])
            if name.startswith("mount"):
                rate = compute[wl] / cold_med  # the daemon's own pace
            verdict = ""
            if name in ("mount, prefetch on", "loaderx DataLoader"):
                ok = med <= 0.1 * cold_med and stall <= 0.05 and (
                    torch_best is None or stall < torch_best)
                if decoded(wl):  # issue 30's target
                    ok = med <= 0.3 * cold_med
                verdict = ("met" if ok else "missed") if rate >= 1.3 \
                    else "n/a (<1.3x)"
            print("  %-20s %9.2f %9.2f %8.2f %6.1f%% %7.2fx %6.1f %7.0fMB "
                  "%8s" % (name, med * 1e3, p95(waits) * 1e3,
                           med / cold_med, stall * 100, rate,
                           statistics.median(r["cpu"]) * 1e3,
                           max(r["rss"]) / 1e6, verdict))
        cpu_off = statistics.median(res[(wl, "mount, prefetch off")]["cpu"])
        cpu_on = statistics.median(res[(wl, "mount, prefetch on")]["cpu"])
        print("  daemon CPU per step, prefetch on / off: %.2fx" % (
            cpu_on / cpu_off if cpu_off else float("nan")))
    if not args.dir:
        shutil.rmtree(root)


if __name__ == "__main__":
    main()
