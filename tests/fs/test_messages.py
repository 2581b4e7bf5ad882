"""Start-up messages: every failure names zrecordfs, the cause and the fix,
exits 1 and mounts nothing; a normal start prints nothing."""
import os
import shutil
import stat
import subprocess
import tempfile

import pytest

from fsutil import ZRECORD, ZRECORDFS, unmount


def start(src, mnt, *args, user=None):
    """Runs zrecordfs in daemon mode (as user, if given); returns it."""
    cmd = [ZRECORDFS, str(src), str(mnt), *args]
    if user:
        cmd = ["setpriv", "--reuid=" + user, "--regid=nogroup",
               "--clear-groups", *cmd]
    return subprocess.run(cmd, capture_output=True, timeout=20)


def refused(r, mnt, *words):
    """r failed with one zrecordfs line holding every word (and no line
    of libfuse's); nothing is mounted at mnt."""
    err = r.stderr.decode()
    assert r.returncode == 1, err
    assert err.startswith("zrecordfs: ") and err.count("\n") == 1, err
    for w in words:
        assert w in err, err
    assert not os.path.ismount(str(mnt))
    return err


def test_mount_point_is_a_file(dense_store, src, tmp_path):
    f = tmp_path / "some_file.npy"
    f.write_bytes(b"not a folder")
    refused(start(src, f), f,
            "mount point %s: not a folder" % f)
    assert f.read_bytes() == b"not a folder"


def test_mount_point_missing(dense_store, src, tmp_path):
    mnt = tmp_path / "nope"
    refused(start(src, mnt), mnt,
            "mount point %s: No such file or directory" % mnt)


@pytest.mark.parametrize("opt,why", [
    ("batchsize=10", "unknown option 'batchsize=10' (see zrecordfs --help)"),
    ("ro,nofail", "unknown option 'nofail'"),
    ("kernel_cache", "'kernel_cache' is not supported: only the high-level"),
    ("max_read=4096", "'max_read=4096' is not supported"),
    # a bad value names the valid ones
    ("threads=-1", "bad option 'threads=-1' (threads=N takes 0 to 4096)"),
    ("batch_size=0", "(batch_size=B takes 1 to 16777216)"),
    ("sampler=random", "(sampler=MODE takes sequential, iid or cyclic)"),
    ("max_batch_bytes=1K", "(max_batch_bytes=N takes a byte count of 4096 "
     "or more"),
    ("world=0", "(world=W takes 1 to 4294967295)"),
    ("rank=-1", "(rank=R takes 0 to 4294967294, below world)"),
    # each names its own range (both named max_batch_bytes' once)
    ("start=x", "bad option 'start=x' (start=P[@G] takes a position P "
     "(0 to 2^64-1), then optionally @ and the granule G (1 to 2^64-1))"),
    ("start=5@0", "(start=P[@G] takes a position P"),
    ("start=5@", "(start=P[@G] takes a position P"),
    ("start=5@2,granule=3", "start=P@2 and granule=3 differ"),
    ("granule=0", "(granule=G takes 1 to 18446744073709551615)"),
    ("follow=0", "(follow=SECONDS takes 0.01 to 3600)"),
    ("grow=40", "bad option 'grow=40' (grow=P:N or grow=P:K:N takes "
     "decimals, K below 1024"),
    ("grow=1:2:3:4", "(grow=P:N or grow=P:K:N takes"),
    ("grow=4:1024:9", "(grow=P:N or grow=P:K:N takes"),
    ("length=x", "bad option 'length=x' (length=N[:N...] takes up to 1024 "
     "decimals, one per source)"),
    ("length=5::6", "(length=N[:N...] takes"),
    ("skip=9:3", "(skip=A:B takes positions A < B"),
    ("ro,rw", "-o rw contradicts -o ro: give one of them"),
    ("rw,ro", "-o rw contradicts -o ro"),
    ("follow,rw", "-o rw contradicts -o follow"),
])
def test_unknown_or_unsupported_option(dense_store, src, tmp_path, opt, why):
    refused(start(src, tmp_path, "-o", opt), tmp_path, why)


def test_mount_over_a_live_mount_is_refused(dense_store, src, mount,
                                            tmp_path):
    """A second zrecordfs over a live mount would hide the first (whose
    stores stay locked): refused, naming both and the way out."""
    m = mount(src)
    err = refused_over(start(src, m.mnt), m.mnt)
    assert "%s is a live zrecordfs mount (of %s)" % (m.mnt, src) in err
    assert "umount %s" % m.mnt in err
    assert os.listdir(m.path("img"))          # the first still serves
    assert m.stop() == 0


def refused_over(r, mnt):
    err = r.stderr.decode()
    assert r.returncode == 1, err
    assert err.startswith("zrecordfs: ") and err.count("\n") == 1, err
    assert open("/proc/self/mountinfo").read().count(" %s " % mnt) == 1
    return err


def test_unknown_flag_and_extra_argument(dense_store, src, tmp_path):
    refused(start(src, tmp_path, "-x"), tmp_path, "unknown option '-x'")
    refused(start(src, tmp_path, "extra"), tmp_path,
            "unexpected argument 'extra'")


def test_passed_through_options_mount(dense_store, src, mount):
    m = mount(src, "threads=0", "noatime", "nosuid", "nodev", "max_threads=4",
              "allow_other", "auto_unmount")
    assert os.listdir(m.path("img"))
    assert m.stop() == 0 and m.stderr == ""


@pytest.fixture
def fuse_dev_0600():
    """/dev/fuse at mode 0600 for the test, restored afterwards."""
    old = stat.S_IMODE(os.stat("/dev/fuse").st_mode)
    os.chmod("/dev/fuse", 0o600)
    try:
        yield
    finally:
        os.chmod("/dev/fuse", old)


def test_fuse_device_not_accessible(fuse_dev_0600):
    # nobody must reach SRC and the mount point to get as far as the device
    top = tempfile.mkdtemp(prefix="zrmsg.")
    try:
        os.chmod(top, 0o755)
        src, mnt = os.path.join(top, "src"), os.path.join(top, "mnt")
        os.mkdir(src)
        os.mkdir(mnt)
        refused(start(src, mnt, user="nobody"), mnt,
                "zrecordfs: cannot open /dev/fuse: Permission denied",
                "mode 0600 owned by root:", "run as root",
                "chmod 0666 /dev/fuse")
    finally:
        shutil.rmtree(top)


def test_src_without_stores_warns_and_mounts(src, tmp_path):
    os.mkdir(os.path.join(src, "plain"))
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    try:
        r = start(src, mnt)
        assert r.returncode == 0, r.stderr
        assert r.stderr.decode() == (
            "zrecordfs: warning: SRC %s has no stores (a store is a "
            "folder holding meta.zr)\n" % src)
        assert os.path.ismount(str(mnt))
        assert sorted(os.listdir(str(mnt))) == [".zrecordfs", "plain"]
    finally:
        unmount(str(mnt))


def test_normal_start_is_silent(dense_store, src, mount, tmp_path):
    m = mount(src)
    assert m.stop() == 0 and m.stderr == ""
    mnt = tmp_path / "d"
    mnt.mkdir()
    try:
        r = start(src, mnt, "-o", "ro")
        assert r.returncode == 0 and r.stderr == b"" and r.stdout == b""
    finally:
        unmount(str(mnt))


def test_zrecord_next_to_a_read_write_mount(dense_store, src, mount):
    m = mount(src)
    r = subprocess.run([ZRECORD, "get", dense_store, "0"],
                       capture_output=True)
    err = r.stderr.decode()
    assert r.returncode == 1 and r.stdout == b""
    assert err.count("store busy") == 1 and err.count("\n") == 1, err
    assert err.startswith("zrecord: %s: get: store busy: process %d "
                          "(zrecordfs) holds its lock for writing" %
                          (dense_store, m.proc.pid)), err
    assert "-o ro" in err
