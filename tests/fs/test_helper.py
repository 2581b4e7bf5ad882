"""`mount -t zrecordfs`, `mount -t fuse.zrecordfs` and an fstab line, all
through src/mount/mount.zrecordfs.sh, and `umount` through
umount.fuse.zrecordfs: real mount(8) and umount(8), which find the helpers
in /sbin -- of a private mount namespace (helperns.py), so the host's
/sbin is never changed.  After umount returns the daemon has closed the
store: an exclusive flock on its meta.zr succeeds at once."""
import subprocess

import pytest

import helperns
from fsutil import HELPER, UMOUNT_HELPER, ZRECORDFS

# Mounts $1 at $2 with `mount "$@"` past $3, checks the mount and umounts:
# prints what the test asserts, one KEY=VALUE a line.
MOUNT_UMOUNT = r'''
src=$1 mnt=$2 store=$3; shift 3
mkdir -p "$mnt"
mount "$@"
echo "SOURCE=$(findmnt -n -o SOURCE "$mnt")"
echo "FSTYPE=$(findmnt -n -o FSTYPE "$mnt")"
echo "OPTIONS=$(findmnt -n -o OPTIONS "$mnt")"
echo "UTAB=$(cat /run/mount/utab)"
"$PY" -c 'import numpy, sys; print("BATCH=%d" % len(numpy.load(sys.argv[1])))' \
	"$mnt/img/batch/0-1.npy"
echo "UMOUNT=$(umount -v "$mnt")"
flock -n -x "$store/meta.zr" true && echo UNLOCKED=yes
echo "UTAB_AFTER=$(cat /run/mount/utab)"
'''


def mount_umount(tmp_path, src, store, *mount_args):
    before = helperns.host_helpers()
    r = helperns.run(tmp_path, MOUNT_UMOUNT, src, tmp_path / "m", store,
                     *mount_args)
    assert helperns.host_helpers() == before
    assert r.returncode == 0, r.stderr
    out = dict(line.split("=", 1) for line in r.stdout.splitlines())
    assert out["SOURCE"] == src
    assert out["FSTYPE"] == "fuse.zrecordfs"
    assert "helper=fuse.zrecordfs" in out["UTAB"], out
    # umount ran the helper (it passes -v on to it), which waited.
    assert out["UMOUNT"].startswith("umount.fuse.zrecordfs: waiting for "
                                    "zrecordfs to close the stores of "), out
    assert out["UNLOCKED"] == "yes"
    assert out["UTAB_AFTER"] == ""
    return out


@pytest.mark.parametrize("fstype", ["zrecordfs", "fuse.zrecordfs"])
def test_mount_t_and_umount(dense_store, src, tmp_path, fstype):
    mnt = str(tmp_path / "m")
    out = mount_umount(tmp_path, src, dense_store, "-t", fstype, "-o",
                       "nofail,_netdev,x-systemd.automount,comment=zr,"
                       "batch_size=4,sampler=sequential", src, mnt)
    assert out["BATCH"] == "4"
    assert "ro" not in out["OPTIONS"].split(",")


def test_mount_read_only(dense_store, src, tmp_path):
    mnt = str(tmp_path / "m")
    out = mount_umount(tmp_path, src, dense_store, "-t", "fuse.zrecordfs",
                       "-o", "ro", src, mnt)
    assert "ro" in out["OPTIONS"].split(",")
    assert out["BATCH"] == "256"


def test_fstab_line(dense_store, src, tmp_path):
    mnt = str(tmp_path / "m")
    fstab = tmp_path / "fstab"
    fstab.write_text("%s %s zrecordfs nofail,_netdev,noauto,"
                     "x-systemd.requires=/,defaults,batch_size=3 0 0\n"
                     % (src, mnt))
    out = mount_umount(tmp_path, src, dense_store, "-T", str(fstab), mnt)
    assert out["BATCH"] == "3"


def test_helpers_say_their_usage_and_version():
    """--help and --version of both helpers answer on stdout with status
    0, and mount.zrecordfs's version is the zrecordfs it would run."""
    env = {"ZRECORDFS": ZRECORDFS, "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
    fs = subprocess.run([ZRECORDFS, "--version"], capture_output=True,
                        text=True).stdout.strip()
    for argv, want in ((["sh", HELPER, "--help"], "usage: mount.zrecordfs"),
                       (["sh", HELPER, "--version"],
                        "mount.zrecordfs: " + fs),
                       ([UMOUNT_HELPER, "--help"],
                        "Usage: umount.fuse.zrecordfs"),
                       ([UMOUNT_HELPER, "--version"],
                        "umount.fuse.zrecordfs (zrecordfs) 0.")):
        r = subprocess.run(argv, capture_output=True, text=True, env=env,
                           timeout=30)
        assert r.returncode == 0 and r.stdout.startswith(want), (argv, r)
        assert r.stderr == "", (argv, r.stderr)
    r = subprocess.run(["sh", HELPER, "--bogus"], capture_output=True,
                       text=True, env=env, timeout=30)
    assert r.returncode == 1 and "see mount.zrecordfs --help" in r.stderr
