"""`mount -t zrecordfs`, `mount -t fuse.zrecordfs` and an fstab line, all
through contrib/mount.zrecordfs.  mount(8) looks for helpers in /sbin and
runs them with a fixed PATH, so the test does what `make install` does:
a copy of the helper with BINDIR pointing at the build tree, linked into
/sbin for the test's duration only."""
import os
import subprocess

import numpy as np
import pytest

from conftest import IMG
from fsutil import HELPER, ZRECORDFS, store_unlocked, unmount, wait_for

LINKS = ["/sbin/mount.zrecordfs", "/sbin/mount.fuse.zrecordfs"]


@pytest.fixture
def helper(tmp_path, monkeypatch):
    saved = []
    script = tmp_path / "mount.zrecordfs"
    with open(HELPER) as f:
        text = f.read()
    assert "\nBINDIR=\n" in text
    script.write_text(text.replace("\nBINDIR=\n", "\nBINDIR=%s\n" %
                                   os.path.dirname(ZRECORDFS)))
    script.chmod(0o755)
    for link in LINKS:
        if os.path.lexists(link):
            os.rename(link, link + ".zrtest-saved")
            saved.append(link)
        os.symlink(script, link)
    monkeypatch.delenv("ZRECORDFS", raising=False)
    mounts = []
    yield mounts
    for mnt in mounts:
        unmount(mnt)
    for link in LINKS:
        os.unlink(link)
    for link in saved:
        os.rename(link + ".zrtest-saved", link)


def findmnt(mnt, col):
    return subprocess.run(["findmnt", "-n", "-o", col, mnt],
                          capture_output=True, text=True).stdout.strip()


def check_and_unmount(mnt, src, store, batch):
    assert os.path.ismount(mnt)
    assert findmnt(mnt, "SOURCE") == src
    assert findmnt(mnt, "FSTYPE") == "fuse.zrecordfs"
    b = np.load(os.path.join(mnt, "img", "batch", "0-1.npy"))
    assert b.shape == (batch, 3, 8, 8)
    subprocess.run(["umount", mnt], check=True)
    wait_for(lambda: store_unlocked(store), what="daemon exit")


def test_mount_t_zrecordfs(dense_store, src, tmp_path, helper):
    mnt = str(tmp_path / "m")
    os.mkdir(mnt)
    helper.append(mnt)
    subprocess.run(["mount", "-t", "zrecordfs", "-o",
                    "nofail,_netdev,x-systemd.automount,comment=zr,"
                    "batch_size=4,sampler=sequential", src, mnt],
                   check=True)
    check_and_unmount(mnt, src, dense_store, 4)
    subprocess.run(["mount", "-t", "fuse.zrecordfs", "-o", "ro", src, mnt],
                   check=True)
    assert "ro" in findmnt(mnt, "OPTIONS").split(",")
    check_and_unmount(mnt, src, dense_store, 256)


def test_fstab_line(dense_store, src, tmp_path, helper):
    mnt = str(tmp_path / "f")
    os.mkdir(mnt)
    helper.append(mnt)
    fstab = tmp_path / "fstab"
    fstab.write_text("%s %s zrecordfs nofail,_netdev,noauto,"
                     "x-systemd.requires=/,defaults,batch_size=3 0 0\n"
                     % (src, mnt))
    subprocess.run(["mount", "-T", str(fstab), mnt], check=True)
    check_and_unmount(mnt, src, dense_store, 3)
    assert (IMG.shape[0]) == 40
