"""Mount lifetime: daemon mode returns with the mount live, unmounting
while a reader holds a file open, SIGTERM/SIGINT unmount and sync."""
import json
import os
import signal
import subprocess

import numpy as np
import pytest

from conftest import IMG
from fsutil import ZRECORDFS, store_unlocked, unmount, wait_for, zrecord


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
