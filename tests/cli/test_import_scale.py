"""`zrecord import` at scale and under failure: a folder of 100,000 tiny
PNGs (memory stays bounded, the progress line shows), big images whose
decoded total is far above the peak RSS, kill -9 in the middle, and a
disk that fills up."""
import contextlib
import io
import os
import signal
import subprocess
import time

import numpy as np
import pytest
from PIL import Image

from importdata import icons, records


# ASan keeps freed memory in quarantine and shadows the rest: its builds
# get a small quarantine and twice the room.
SAN = os.environ.get("ZR_SANITIZERS") == "1"
SAN_ENV = dict(os.environ, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") +
               ":quarantine_size_mb=4:thread_local_quarantine_size_kb=64")
# ThreadSanitizer's shadow memory needs the same room.
ROOM = 2 if SAN or os.environ.get("ZR_TSAN") == "1" else 1


def peak_rss_kib(argv, stop_when=None):
    """Runs argv, polling /proc/PID/status; returns (proc, VmHWM KiB,
    stderr).  stop_when: kill -9 it once that returns true."""
    p = subprocess.Popen([str(a) for a in argv], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE,
                         env=SAN_ENV if SAN else None)
    peak = 0
    while p.poll() is None:
        try:
            with open(f"/proc/{p.pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        peak = max(peak, int(line.split()[1]))
        except OSError:
            pass
        if stop_when is not None and stop_when():
            p.send_signal(signal.SIGKILL)
            stop_when = None
        time.sleep(0.01)
    _, err = p.communicate()
    return p, peak, err.decode()


def tiny_pngs(folder, n):
    folder.mkdir()
    for i in range(n):
        a = np.array([[[i & 255, (i >> 8) & 255, i % 7]]], dtype=np.uint8)
        buf = io.BytesIO()
        Image.fromarray(a).save(buf, "PNG")
        (folder / f"{i:06d}.png").write_bytes(buf.getvalue())


def test_100k_tiny_files(zr, tmp_path):
    n = 100_000
    tiny_pngs(tmp_path / "src", n)
    p, peak, err = peak_rss_kib([zr.binary, "import", "--progress",
                                 tmp_path / "src", tmp_path / "ds"])
    assert p.returncode == 0, err
    # The walk keeps ~100 bytes a file (16 MiB here with the allocator's
    # share); the batches are a few MiB: far below one copy of the input.
    assert peak < 96 * 1024 * ROOM, peak
    assert "samples" in err and "MiB/s" in err and f"{n}/{n}" in err
    got = zr.stats(tmp_path / "ds" / "image")
    assert got["records"] == n
    some = [0, 1, 255, 256, 65_535, n - 1]
    recs = zr.load("get", tmp_path / "ds" / "image", *some)
    for i, rec in zip(some, recs):
        assert rec.tolist() == [[[i & 255, (i >> 8) & 255, i % 7]]]


def big_jpegs(folder, n, side):
    folder.mkdir()
    base = Image.open(icons(1, size=48)[0]).convert("RGB")
    for i in range(n):
        im = base.rotate(i * 7).resize((side, side), Image.BILINEAR)
        im.save(folder / f"{i:03d}.jpg", "JPEG", quality=70)


def test_big_images_bounded_memory(zr, tmp_path):
    n, side = 40, 1500
    big_jpegs(tmp_path / "src", n, side)
    p, peak, err = peak_rss_kib([zr.binary, "import", "--threads", "2",
                                 tmp_path / "src", tmp_path / "ds"])
    assert p.returncode == 0, err
    decoded = n * side * side * 3
    assert decoded > 250 << 20
    # two batches of a lane's worth of 6.4 MiB images each, plus buffers
    assert peak < 120 * 1024 * ROOM, (peak, decoded >> 10)
    assert zr.stats(tmp_path / "ds" / "image")["records"] == n


def test_kill_9_leaves_no_dest_and_rerun_works(zr, tmp_path):
    big_jpegs(tmp_path / "src", 120, 1000)

    def appending():
        """Some record of the unfinished import is on disk."""
        for d in os.listdir(tmp_path):
            data = tmp_path / d / "image" / "data.zr"
            if d.startswith("ds.tmp-") and data.exists() and \
                    data.stat().st_size > 0:
                return True
        return False

    p, _, _ = peak_rss_kib([zr.binary, "import", tmp_path / "src",
                            tmp_path / "ds"], stop_when=appending)
    assert p.returncode == -signal.SIGKILL
    assert not (tmp_path / "ds").exists()
    left = [d for d in os.listdir(tmp_path) if d.startswith("ds.tmp-")]
    assert len(left) == 1
    # What was left is plain stores that open without repair, beside
    # the owner file (and files.txt as far as it got).
    stores = [s for s in os.listdir(tmp_path / left[0])
              if os.path.isdir(tmp_path / left[0] / s)]
    assert stores == ["image"]
    assert (tmp_path / left[0] / ".zrecord-import").exists()
    for store in stores:
        st = zr.stats(tmp_path / left[0] / store)
        assert st["records"] == 0
        assert zr.run("verify", tmp_path / left[0] / store).returncode == 0
    r = zr.run("import", tmp_path / "src", tmp_path / "ds")
    assert r.returncode == 0, r.stderr
    # the rerun removed what the killed import left
    assert f"removed {tmp_path / left[0]}".encode() in r.stderr
    assert not (tmp_path / left[0]).exists()
    assert zr.stats(tmp_path / "ds" / "image")["records"] == 120


@contextlib.contextmanager
def small_disk(path, size):
    os.makedirs(path)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs",
                    str(path)], check=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=True)


# Dense (a fixed size): from the third batch on the decode threads put
# the rows themselves, and the full disk reaches them there.
@pytest.mark.parametrize("size", [[], ["--center-crop", "600"]])
def test_disk_full_leaves_nothing(zr, tmp_path, size):
    big_jpegs(tmp_path / "src", 30, 600)   # 30 MiB decoded
    with small_disk(tmp_path / "small", "8m") as small:
        err = zr.fails(1, "import", *size, tmp_path / "src", small / "ds")
        assert "No space left on device" in err
        assert os.listdir(small) == []
        zr.ok("import", "--encoded", tmp_path / "src", small / "ds")
        got = records(zr, small / "ds" / "image")
        assert len(got) == 30
        assert got[3].tobytes() == (tmp_path / "src" / "003.jpg").read_bytes()
