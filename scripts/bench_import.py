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

The three are timed in turn, --rounds times (default 3), and the table
shows each one's median; the ratios are medians of the per-round ratios.
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--files", type=int, default=3000)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    top = os.environ.get("top_builddir", os.path.join(HERE, ".."))
    zrecord = os.path.join(top, "src", "cli", "zrecord")
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
        rounds = []
        for r in range(args.rounds):
            t = time.perf_counter()
            by_hand(paths, os.path.join(work, f"hand{r}"))
            t_hand = time.perf_counter() - t
            shutil.rmtree(os.path.join(work, f"hand{r}"))
            t = time.perf_counter()
            subprocess.run([zrecord, "import", "--no-progress",
                            "--center-crop", str(SIDE), src,
                            os.path.join(work, f"imp{r}")], check=True,
                           env=env, stderr=subprocess.DEVNULL)
            t_imp = time.perf_counter() - t
            shutil.rmtree(os.path.join(work, f"imp{r}"))
            t_ceiling = ceiling_single(datas) / lanes
            rounds.append((t_imp, t_hand, t_ceiling))
        med = [statistics.median(x) for x in zip(*rounds)]
        hand_ratio = statistics.median(h / i for i, h, _ in rounds)
        ceil_ratio = statistics.median(c / i for i, _, c in rounds)
        t_imp, t_hand, t_ceiling = med

        n = len(paths)
        print(f"{n} JPEGs of {SIDE}x{SIDE} ({mib:.1f} MiB), {lanes} cores, "
              f"medians of {args.rounds} rounds")
        print("| way | seconds | files/s | import's ratio |")
        print("| --- | --- | --- | --- |")
        print(f"| zrecord import | {t_imp:.3f} | {n / t_imp:.0f} | 1 |")
        print(f"| by hand (PIL + loaderx) | {t_hand:.3f} | "
              f"{n / t_hand:.0f} | {hand_ratio:.2f}x faster |")
        print(f"| decode ceiling (1-thread tjDecompress2 x {lanes}) | "
              f"{t_ceiling:.3f} | {n / t_ceiling:.0f} | "
              f"{ceil_ratio:.2f}x of it |")
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
