#!/bin/sh
# mount.zrecordfs - the mount(8) helper for zrecordfs (also installed as
# mount.fuse.zrecordfs).  mount(8) runs it as
#     mount.zrecordfs SRC MNT [-n] [-s] [-v] [-o opts]
# It drops the options that only mean something to mount(8) or systemd
# (libfuse rejects them), sets fsname=SRC and subtype=zrecordfs, and runs
# zrecordfs in daemon mode, which returns only once the mount is live.
#
# The daemon itself, as root, records the mount in /run/mount/utab with
# helper=fuse.zrecordfs (mount(8) leaves that to its helpers, and
# umount(8) finds umount.fuse.zrecordfs, which waits for the daemon to
# close its stores, only through it); -n turns that off
# (ZRECORDFS_NO_UTAB).
set -eu
PATH=${PATH:-/usr/sbin:/usr/bin:/sbin:/bin}

# Set by `make install`; empty in the source tree.
BINDIR=

usage() {
	cat <<EOF
usage: mount.zrecordfs SRC MOUNTPOINT [-n] [-s] [-v] [-o opts]
       mount.zrecordfs --help | --version

The mount(8) helper of zrecordfs: \`mount -t fuse.zrecordfs SRC MNT\` and
an fstab line run it.  It drops the options only mount(8) and systemd
mean (nofail, _netdev, noauto, x-systemd.*, ...), sets fsname=SRC and
subtype=zrecordfs, and starts zrecordfs in daemon mode, which returns once
the mount is live.  -n: no utab entry; -s and -v are ignored.  The
options zrecordfs takes are in \`zrecordfs --help\` and mount.zrecordfs(8).
ZRECORDFS=PATH names the zrecordfs to run.
EOF
}

# The zrecordfs to run: $ZRECORDFS, the installed one, else PATH's.
find_exe() {
	exe=${ZRECORDFS:-}
	if [ -z "$exe" ] && [ -n "$BINDIR" ] && [ -x "$BINDIR/zrecordfs" ]; then
		exe=$BINDIR/zrecordfs
	fi
	if [ -z "$exe" ]; then
		exe=$(command -v zrecordfs || true)
	fi
	if [ -z "$exe" ]; then
		echo "mount.zrecordfs: zrecordfs not found (set ZRECORDFS)" >&2
		exit 1
	fi
}

src= mnt= opts= nomtab=
while [ $# -gt 0 ]; do
	case $1 in
	-h|--help) usage; exit 0 ;;
	-V|--version)
	    find_exe
	    printf 'mount.zrecordfs: '
	    exec "$exe" --version ;;
	-o) if [ $# -lt 2 ]; then
		echo "mount.zrecordfs: -o needs a value" >&2
		exit 1
	    fi
	    opts=${opts:+$opts,}$2; shift 2 ;;
	-o*) opts=${opts:+$opts,}${1#-o}; shift ;;
	-n) nomtab=1; shift ;;
	-s|-v) shift ;;
	-*) echo "mount.zrecordfs: unknown flag $1 (see mount.zrecordfs --help)" >&2
	    exit 1 ;;
	*) if [ -z "$src" ]; then src=$1
	   elif [ -z "$mnt" ]; then mnt=$1
	   else echo "mount.zrecordfs: too many arguments" >&2; exit 1
	   fi
	   shift ;;
	esac
done
if [ -z "$src" ] || [ -z "$mnt" ]; then
	echo "usage: mount.zrecordfs SRC MOUNTPOINT [-o opts]" >&2
	exit 1
fi

keep=
oldifs=$IFS
IFS=,
for o in $opts; do
	case $o in
	''|nofail|_netdev|noauto|auto|user|users|nouser|owner|group|\
	defaults|x-systemd.*|x-*|comment=*|fsname=*|subtype=*) ;;
	*) keep=${keep:+$keep,}$o ;;
	esac
done
IFS=$oldifs

# A comma inside SRC would split the option list: escape it for libfuse.
fsname=$(printf '%s' "$src" | sed 's/\\/\\\\/g; s/,/\\,/g')
keep=${keep:+$keep,}fsname=$fsname,subtype=zrecordfs

find_exe
if [ -n "$nomtab" ]; then
	ZRECORDFS_NO_UTAB=1
	export ZRECORDFS_NO_UTAB
fi
exec "$exe" "$src" "$mnt" -o "$keep"
