#!/usr/bin/python3
"""
bench_import.py - one pass timing `zrecord import` of a folder of
224x224 JPEGs in class folders (made here from the installed icon themes'
PNGs, upscaled, so the files are real JPEGs of a trainer's size) against:

  by hand   the loop a user writes without the command: PIL decode of
            each file (convert("RGB")), rows stacked 256 at a time into a
            loaderx DenseStore, labels into a second one
  ceiling   the decode ceiling: single-thread tjDecompress2 (libjpeg-turbo
            through ctypes, the files already in memory) of the same
            files, times the CPUs this process may use (the lanes)
  write     the write floor: the same number of decoded rows pwritten one
            by one from one buffer into a new file under --dir, single
            thread; (decode + write) / lanes is what the import would take
            if the lanes did nothing else, so ceiling / that is the most
            the import's ratio to the ceiling can be while every pixel goes
            through write() into the page cache
  baseline  with --baseline BUILD: `zrecord import` of another build (the
            one before a change), timed in the same rounds

They are timed in turn, --rounds times (default 3), and the table shows
each one's median; the ratios are medians of the per-round ratios.  Each
round prints its figures and the load average when it ran (other work
on the machine slows the import more than the ceiling, which is one
thread); the imports' CPU time (user + sys, of the child) is shown too,
and the single-thread decode's CPU time over it, a ratio that load skews
less than the wall clock's.
The stores are written under --dir (default: the system's temporary
folder); on a disk the import's and the loop's final syncs wait for the
device, so a tmpfs (--dir /dev/shm) measures the CPU work alone.

Both stores are dense uint8 (224, 224, 3), raw codec; the import runs with
--center-crop 224 (a no-op crop of a 224x224 image) to make its store
dense too.  Every figure is from this one run on the same files, after a
warm-up read of all of them (page cache); ratios > 1 mean the import is
faster.  Not a test: numbers depend on the box.

  top_builddir=/path/to/build python3 scripts/bench_import.py [--files N]
"""
import argparse
import ctypes
import ctypes.util
import glob
import io
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "contrib", "python"))
from loaderx.zrecord import DenseStore  # noqa: E402

SIDE = 224


def make_jpegs(root, n):
    icons = sorted(glob.glob("/usr/share/icons/*/**/*.png", recursive=True))
    icons = [p for p in icons if "symbolic" not in p][:max(n, 1)]
    if not icons:
        sys.exit("bench_import: no PNG icons under /usr/share/icons "
                 "(install adwaita-icon-theme)")
    paths = []
    for i in range(n):
        cls = os.path.join(root, f"class{i % 10}")
        os.makedirs(cls, exist_ok=True)
        im = Image.open(icons[i % len(icons)]).convert("RGBA")
        bg = Image.new("RGBA", im.size, ((i * 37) % 256, 128, 200, 255))
        im = Image.alpha_composite(bg, im).convert("RGB")
        im = im.resize((SIDE, SIDE), Image.BICUBIC)
        p = os.path.join(cls, f"{i:06d}.jpg")
        im.save(p, "JPEG", quality=90)
        paths.append(p)
    return sorted(paths, key=lambda s: s.encode())


def by_hand(paths, dest):
    os.makedirs(dest)
    images = DenseStore.create(os.path.join(dest, "image"), "uint8",
                               (SIDE, SIDE, 3), codec="raw")
    labels = DenseStore.create(os.path.join(dest, "label"), "int64", (),
                               codec="raw")
    classes = sorted({os.path.basename(os.path.dirname(p)) for p in paths})
    rows, labs = [], []
    for p in paths:
        rows.append(np.asarray(Image.open(p).convert("RGB")))
        labs.append(classes.index(os.path.basename(os.path.dirname(p))))
        if len(rows) == 256:
            images.append(np.stack(rows))
            labels.append(np.array(labs, dtype=np.int64))
            rows, labs = [], []
    if rows:
        images.append(np.stack(rows))
        labels.append(np.array(labs, dtype=np.int64))
    images.close()
    labels.close()


def ceiling_single(datas):
    name = ctypes.util.find_library("turbojpeg") or "libturbojpeg.so.0"
    tj = ctypes.CDLL(name)
    tj.tjInitDecompress.restype = ctypes.c_void_p
    tj.tjDecompress2.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                 ctypes.c_ulong, ctypes.c_void_p,
                                 ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                 ctypes.c_int, ctypes.c_int]
    tj.tjDestroy.argtypes = [ctypes.c_void_p]
    h = tj.tjInitDecompress()
    out = np.empty((SIDE, SIDE, 3), np.uint8)
    ptr = out.ctypes.data
    t = time.perf_counter()
    for d in datas:
        if tj.tjDecompress2(h, d, len(d), ptr, SIDE, 0, SIDE, 0, 0) != 0:
            sys.exit("bench_import: tjDecompress2 failed")
    t = time.perf_counter() - t
    tj.tjDestroy(h)
    return t


def write_floor(n, where):
    row = bytes(SIDE * SIDE * 3)
    path = os.path.join(where, "write_floor.bin")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        t = time.perf_counter()
        for i in range(n):
            os.pwrite(fd, row, i * len(row))
        t = time.perf_counter() - t
    finally:
        os.close(fd)
        os.unlink(path)
    return t


def run_import(top, src, dest, env):
    zrecord = os.path.join(top, "src", "cli", "zrecord")
    before = os.times()
    t = time.perf_counter()
    subprocess.run([zrecord, "import", "--no-progress", "--center-crop",
                    str(SIDE), src, dest], check=True, env=env,
                   stderr=subprocess.DEVNULL)
    t = time.perf_counter() - t
    after = os.times()
    cpu = (after.children_user - before.children_user +
           after.children_system - before.children_system)
    shutil.rmtree(dest)
    return t, cpu


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--files", type=int, default=3000)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--baseline", metavar="BUILD", default=None,
                    help="also time the import of this build folder")
    args = ap.parse_args()
    top = os.environ.get("top_builddir", os.path.join(HERE, ".."))
    lanes = len(os.sched_getaffinity(0))
    work = tempfile.mkdtemp(prefix="bench_import.", dir=args.dir)
    try:
        src = os.path.join(work, "src")
        paths = make_jpegs(src, args.files)
        datas = []
        for p in paths:
            with open(p, "rb") as f:
                datas.append(f.read())
        mib = sum(map(len, datas)) / 2**20

        env = dict(os.environ, PATH="/usr/sbin:/usr/bin:/sbin:/bin")
        n = len(paths)
        rounds = []
        print(f"{n} JPEGs of {SIDE}x{SIDE} ({mib:.1f} MiB), {lanes} cores, "
              f"stores under {work}")
        print("round | import s (cpu) | baseline s (cpu) | by hand s | "
              "1-thread decode s (cpu) | write s | load 1 min")
        for r in range(args.rounds):
            t = time.perf_counter()
            by_hand(paths, os.path.join(work, f"hand{r}"))
            t_hand = time.perf_counter() - t
            shutil.rmtree(os.path.join(work, f"hand{r}"))
            t_imp, c_imp = run_import(top, src, os.path.join(work, "imp"),
                                      env)
            t_base, c_base = (run_import(args.baseline, src,
                                         os.path.join(work, "base"), env)
                              if args.baseline else (float("nan"),) * 2)
            c0 = time.process_time()
            t_one = ceiling_single(datas)
            c_one = time.process_time() - c0
            t_write = write_floor(n, work)
            load = os.getloadavg()[0]
            print(f"{r} | {t_imp:.3f} ({c_imp:.2f}) | {t_base:.3f} "
                  f"({c_base:.2f}) | {t_hand:.3f} | {t_one:.3f} "
                  f"({c_one:.2f}) | {t_write:.3f} | {load:.1f}")
            rounds.append(dict(imp=t_imp, base=t_base, hand=t_hand,
                               ceil=t_one / lanes,
                               bound=(t_one + t_write) / lanes,
                               cpu=c_one / c_imp, base_cpu=c_base / c_imp,
                               load=load))
        med = {k: statistics.median(x[k] for x in rounds)
               for k in rounds[0]}
        ratio = {k: statistics.median(f(x) for x in rounds) for k, f in (
            ("hand", lambda x: x["hand"] / x["imp"]),
            ("ceil", lambda x: x["ceil"] / x["imp"]),
            ("bound", lambda x: x["ceil"] / x["bound"]),
            ("base", lambda x: x["base"] / x["imp"]))}

        print(f"medians of {args.rounds} rounds, load average "
              f"{min(x['load'] for x in rounds):.1f} to "
              f"{max(x['load'] for x in rounds):.1f}")
        print("| way | seconds | files/s | import's ratio |")
        print("| --- | --- | --- | --- |")
        print(f"| zrecord import | {med['imp']:.3f} | {n / med['imp']:.0f} "
              f"| 1 |")
        if args.baseline:
            print(f"| baseline import | {med['base']:.3f} | "
                  f"{n / med['base']:.0f} | {ratio['base']:.2f}x faster "
                  f"(cpu: {med['base_cpu']:.2f}x less) |")
        print(f"| by hand (PIL + loaderx) | {med['hand']:.3f} | "
              f"{n / med['hand']:.0f} | {ratio['hand']:.2f}x faster |")
        print(f"| decode ceiling (1-thread tjDecompress2 / {lanes}) | "
              f"{med['ceil']:.3f} | {n / med['ceil']:.0f} | "
              f"{ratio['ceil']:.2f}x of it (cpu: {med['cpu']:.2f}x) |")
        print(f"| decode + write floor / {lanes} | {med['bound']:.3f} | "
              f"{n / med['bound']:.0f} | ceiling is {ratio['bound']:.2f}x "
              f"of it |")
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
