"""Mount lifetime: daemon mode returns with the mount live, unmounting
while a reader holds a file open, SIGTERM/SIGINT unmount and sync."""
import json
import os
import signal
import subprocess

import numpy as np
import pytest

from conftest import IMG
from fsutil import TOP_BUILD, ZRECORDFS, store_unlocked, unmount, wait_for, zrecord


def test_daemon_mode_returns_with_mount_live(dense_store, src, tmp_path):
    mnt = str(tmp_path / "d")
    os.mkdir(mnt)
    try:
        r = subprocess.run([ZRECORDFS, src, mnt, "-o", "ro"],
                           capture_output=True, timeout=20)
        assert r.returncode == 0, r.stderr
        assert os.path.ismount(mnt)     # no waiting: live on return
        assert (np.load(os.path.join(mnt, "img", "records", "1.npy")) ==
                IMG[1]).all()
        with open("/proc/self/mountinfo") as f:
            line = [ln for ln in f if " %s " % mnt in ln][0]
        assert "fuse.zrecordfs" in line and src in line
    finally:
        unmount(mnt)
    wait_for(lambda: store_unlocked(dense_store), what="daemon exit")


def test_daemon_mode_reports_failure(dense_store, src, tmp_path):
    r = subprocess.run([ZRECORDFS, src, str(tmp_path), "-o", "sampler=bogus"],
                       capture_output=True, timeout=20)
    assert r.returncode != 0 and b"sampler=bogus" in r.stderr


def test_umount_with_reader_open(dense_store, src, mount):
    m = mount(src)
    f = open(m.path("img", "records", "3.npy"), "rb")
    try:
        r = subprocess.run(["umount", m.mnt], capture_output=True)
        assert r.returncode != 0 and os.path.ismount(m.mnt)
        assert (np.load(f) == IMG[3]).all()     # the reader is unharmed
        # a lazy unmount detaches now and serves the open file until close
        subprocess.run(["umount", "-l", m.mnt], check=True)
        assert not os.path.ismount(m.mnt)
        f.seek(0)
        assert (np.load(f) == IMG[3]).all()
        assert m.proc.poll() is None
    finally:
        f.close()
    rc = m.proc.wait(timeout=20)
    assert rc == 0, m.proc.stderr.read().decode()
    assert store_unlocked(dense_store)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_unmounts_and_syncs(dense_store, src, mount, sig):
    m = mount(src)
    with open(m.path("img", "append"), "wb") as f:
        np.save(f, IMG[:3])
    m.proc.send_signal(sig)
    assert m.proc.wait(timeout=20) == 0
    assert not os.path.ismount(m.mnt)
    assert json.loads(zrecord("stats", dense_store).stdout)["records"] == \
        len(IMG) + 3


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT,
                                 signal.SIGHUP])
def test_signal_before_the_loops_wait_still_ends_it(dense_store, src, mount,
                                                    tmp_path, monkeypatch,
                                                    sig):
    """libfuse 3.14's handler only marks the session exited: a signal
    between the loop's check and its sem_wait() left an idle daemon
    serving. zrecordfs takes the signals in its own thread and wakes the
    loop until it returns. The latewait shim holds the loop in that
    window."""
    shim = os.path.join(TOP_BUILD, "tests", "shim", ".libs",
                        "liblatewait.so")
    assert os.path.exists(shim), shim + " is not built (make check)"
    mark = tmp_path / "in_window"
    monkeypatch.setenv("ZR_LATEWAIT_MARK", str(mark))
    preload = os.environ.get("LD_PRELOAD")
    monkeypatch.setenv("LD_PRELOAD", " ".join(p for p in (
        preload, shim) if p))
    # an ASan build wants its runtime first; the shim only wraps libfuse
    monkeypatch.setenv("ASAN_OPTIONS", ":".join(p for p in (
        os.environ.get("ASAN_OPTIONS", ""), "verify_asan_link_order=0") if p))
    m = mount(src)
    if preload:
        monkeypatch.setenv("LD_PRELOAD", preload)
    else:
        monkeypatch.delenv("LD_PRELOAD")
    wait_for(mark.exists, what="the loop in its check-to-wait window")
    m.proc.send_signal(sig)
    # nothing touches the mount from here on: no request may wake the loop
    assert m.proc.wait(timeout=15) == 0, m.proc.stderr.read().decode()
    assert not os.path.ismount(m.mnt)
    assert store_unlocked(dense_store)


def test_malformed_store_fails_the_mount(dense_store, src, tmp_path):
    with open(os.path.join(dense_store, "meta.zr"), "r+b") as f:
        f.truncate(100)
    mnt = tmp_path / "bad"
    mnt.mkdir()
    r = subprocess.run([ZRECORDFS, src, str(mnt), "-f"],
                       capture_output=True, timeout=20)
    assert r.returncode == 1
    assert b"cannot open store " + dense_store.encode() in r.stderr
    assert not os.path.ismount(str(mnt))


def test_df_reports_the_store_files_size(dense_store, ragged_store, src,
                                         mount):
    """statfs (df MNT): the size is that of the stores' files, all used,
    and f_files counts the stores; it follows an append."""
    def files_bytes():
        return sum(os.path.getsize(os.path.join(s, f))
                   for s in (dense_store, ragged_store)
                   for f in ("meta.zr", "data.zr")
                   if os.path.exists(os.path.join(s, f)))
    m = mount(src)
    sv = os.statvfs(m.mnt)
    assert sv.f_frsize == 4096 and sv.f_bfree == sv.f_bavail == 0
    assert sv.f_blocks == (files_bytes() + 4095) // 4096 > 0
    assert sv.f_files == 2
    with open(m.path("img", "append"), "wb") as f:
        np.save(f, np.zeros((400, 3, 8, 8), np.uint8))
    grown = os.statvfs(m.mnt).f_blocks
    assert grown == (files_bytes() + 4095) // 4096 > sv.f_blocks
    r = subprocess.run(["df", "-B1", "--output=size", m.mnt],
                       capture_output=True, text=True, check=True)
    assert int(r.stdout.split()[-1]) == grown * 4096


def _rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS for %d" % pid)


def test_idle_daemon_gives_batch_buffers_back(src, mount, monkeypatch):
    """After serving a 200 MiB batch file, a daemon left idle hands the
    buffer back within seconds (big_buffers.h): its RSS falls to near what
    it was before the read."""
    from fsutil import make_store, wait_for
    # an ASan build would keep the freed buffer in its quarantine
    monkeypatch.setenv("ASAN_OPTIONS", ":".join(p for p in (
        os.environ.get("ASAN_OPTIONS", ""),
        "quarantine_size_mb=0:thread_local_quarantine_size_kb=0") if p))
    make_store(os.path.join(src, "big"), "u1", shape=(1024, 1024),
               rows=np.random.default_rng(1).integers(
                   0, 255, (10, 1024, 1024), dtype=np.uint8))
    m = mount(src, "direct_batches")
    before = _rss_kib(m.proc.pid)
    with open(m.path("big", "batch", "iid", "200", "0-0.npy"), "rb") as f:
        while f.read(1 << 20):
            pass
    assert _rss_kib(m.proc.pid) > before + 150 * 1024
    wait_for(lambda: _rss_kib(m.proc.pid) < before + 64 * 1024,
             timeout=30, what="the idle daemon's RSS to shrink")
