"""helperns.py - runs a bash script the way an administrator would use
mount(8) and umount(8) with zrecordfs installed, without touching the
host: inside a private mount namespace (`unshare -m --propagation
private`) whose /sbin -- where mount(8) and umount(8) look for helpers,
whatever the install prefix -- also holds mount.zrecordfs (pointed at the
build's zrecordfs, as `make install` points it at $(bindir)),
mount.fuse.zrecordfs and the build's umount.fuse.zrecordfs.

/sbin is usr/sbin on a merged-/usr system: the folder it resolves to is
covered by a bind mount of a folder of symlinks to each of its entries
(reached through a second bind mount of the real folder) plus the
helpers.  /run/mount gets a private tmpfs, so the utab entries the
helpers write stay in the namespace too.  On exit the script lazily
unmounts every zrecordfs mount left under its temporary folder, so a
failing test leaves no daemon behind."""
import os
import subprocess
import sys

from fsutil import HELPER, UMOUNT_HELPER, ZRECORD, ZRECORDFS

PRELUDE = r'''
set -eu
cleanup() {
	findmnt -rn -t fuse.zrecordfs -o TARGET | while read -r t; do
		case $t in "$ZT"/*) umount -i -l "$t" ;; esac
	done
}
trap cleanup EXIT
sbin=$(readlink -f /sbin)
mkdir -p "$ZT/helpers/real" "$ZT/helpers/sbin"
mount --bind "$sbin" "$ZT/helpers/real"
for f in "$ZT"/helpers/real/* "$ZT"/helpers/real/.[!.]*; do
	[ -e "$f" ] || [ -L "$f" ] || continue
	ln -s "$f" "$ZT/helpers/sbin/"
done
sed "s|^BINDIR=\$|BINDIR=$ZBINDIR|" "$ZHELPER" > "$ZT/helpers/mount.zrecordfs"
chmod 755 "$ZT/helpers/mount.zrecordfs"
ln -sf "$ZT/helpers/mount.zrecordfs" "$ZT/helpers/sbin/mount.zrecordfs"
ln -sf mount.zrecordfs "$ZT/helpers/sbin/mount.fuse.zrecordfs"
ln -sf "$ZUMOUNT" "$ZT/helpers/sbin/umount.fuse.zrecordfs"
mount --bind "$ZT/helpers/sbin" "$sbin"
mkdir -p /run/mount
mount -t tmpfs -o mode=0755 zrtest-utab /run/mount
'''


def run(tmp_path, script, *args, env=None):
    """Runs PRELUDE + script under bash in a fresh private namespace, with
    $1... = args, $ZT = tmp_path, $ZR = the build's zrecord and $PY = this
    Python (the one with NumPy).  env adds
    variables (ZRECORDFS is removed unless env sets it: the helper must
    find the daemon through BINDIR).  Returns the CompletedProcess (text
    output)."""
    full = {k: v for k, v in os.environ.items()
            if k not in ("ZRECORDFS", "ZRECORDFS_NO_UTAB")}
    full.update(ZT=str(tmp_path), ZR=ZRECORD, PY=sys.executable,
                ZHELPER=HELPER,
                ZUMOUNT=UMOUNT_HELPER, ZBINDIR=os.path.dirname(ZRECORDFS))
    full.update(env or {})
    assert os.access(UMOUNT_HELPER, os.X_OK), "build " + UMOUNT_HELPER
    return subprocess.run(
        ["unshare", "-m", "--propagation", "private", "bash", "-c",
         PRELUDE + script, "bash", *map(str, args)],
        env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        timeout=300)


def host_helpers():
    """The zrecordfs helpers in the host's /sbin (the tests must leave
    them as they were)."""
    return sorted(n for n in os.listdir("/sbin") if "zrecordfs" in n)
