#!/bin/sh
# build-deb.sh [OUTDIR] - builds the Debian packages (libzrecord0,
# libzrecord-dev, zrecordfs, python3-loaderx) with `dpkg-buildpackage -us
# -uc -b` from a copy of this tree (tracked and untracked files, not
# ignored ones), so the tree itself stays clean; then checks each
# package's contents with `dpkg-deb -c` and runs lintian, which must
# report no error.  The .deb files end up in OUTDIR (default: build-deb/
# at the top of the repo).  Needs the build dependencies of
# debian/control (`apt-get build-dep .` or see README.md) and lintian.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/build-deb}
mkdir -p "$out"
out=$(cd "$out" && pwd)
version=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
work=$(mktemp -d "${TMPDIR:-/tmp}/zrecordfs-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
src=$work/zrecordfs-$version

# Copy the sources (not build trees or generated files); an unpacked
# release tarball (make distcheck) is no git checkout of its own (it may
# sit inside one), and holds only sources.
mkdir "$src"
if [ "$(git -C "$top" rev-parse --show-toplevel 2>/dev/null)" = \
	"$(cd "$top" && pwd -P)" ]; then
	(cd "$top" && git ls-files -z --cached --others --exclude-standard |
		xargs -0 tar -cf - --no-recursion) | (cd "$src" && tar -xf -)
else
	(cd "$top" && tar -cf - --exclude='./_build' --exclude='./_inst' .) |
		(cd "$src" && tar -xf -)
fi

# Debian's own tools only: no python3 or compiler from elsewhere in PATH
# (a pyenv or venv python3 lacks the Debian modules pybuild needs).
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
echo "build-deb: dpkg-buildpackage in $src" >&2
# On every core unless DEB_BUILD_OPTIONS says otherwise (dh builds one
# job at a time by default).
case " ${DEB_BUILD_OPTIONS:-} " in
*" parallel="*) ;;
*) DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:+$DEB_BUILD_OPTIONS }parallel=$(nproc)"
	export DEB_BUILD_OPTIONS ;;
esac
(cd "$src" && dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1 || {
	tail -n 60 "$work/build.log" >&2
	echo "build-deb: dpkg-buildpackage failed (log above)" >&2
	exit 1
}

fail=0
# has DEB PATTERN...: each grep pattern must match a path in the package.
has() {
	deb=$1
	shift
	for pat in "$@"; do
		if ! dpkg-deb -c "$deb" | awk '{ print $6 }' | grep -q -- "$pat"
		then
			echo "build-deb: $(basename "$deb") lacks $pat" >&2
			fail=1
		fi
	done
}
lacks() {
	deb=$1
	shift
	for pat in "$@"; do
		if dpkg-deb -c "$deb" | awk '{ print $6 }' | grep -q -- "$pat"
		then
			echo "build-deb: $(basename "$deb") should not hold $pat" >&2
			fail=1
		fi
	done
}
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
lib=$work/libzrecord0_${version}_$arch.deb
dev=$work/libzrecord-dev_${version}_$arch.deb
fs=$work/zrecordfs_${version}_$arch.deb
py=$work/python3-loaderx_${version}_all.deb
for deb in "$lib" "$dev" "$fs" "$py"; do
	[ -f "$deb" ] || { echo "build-deb: no $(basename "$deb")" >&2; exit 1; }
done
has "$lib" '/usr/lib/[^/]*/libzrecord\.so\.0$' \
	'/usr/lib/[^/]*/libzrecord\.so\.0\.' \
	'/usr/share/doc/libzrecord0/copyright$'
lacks "$lib" '\.la$' '/usr/include/' '/usr/bin/'
has "$dev" '/usr/include/zrecord\.h$' '/usr/lib/[^/]*/libzrecord\.so$' \
	'/usr/lib/[^/]*/libzrecord\.a$' '/usr/lib/[^/]*/pkgconfig/zrecord\.pc$'
lacks "$dev" '\.la$' 'libzrecord\.so\.0'
has "$fs" '/usr/bin/zrecord$' '/usr/bin/zrecordfs$' \
	'/sbin/mount\.zrecordfs$' '/sbin/mount\.fuse\.zrecordfs$' \
	'/sbin/umount\.fuse\.zrecordfs$' \
	'/usr/share/man/man1/zrecord\.1\.gz$' \
	'/usr/share/man/man5/zrecord\.5\.gz$' \
	'/usr/share/man/man8/zrecordfs\.8\.gz$' \
	'/usr/share/man/man8/mount\.zrecordfs\.8\.gz$' \
	'/usr/share/doc/zrecordfs/copyright$' \
	'/usr/share/doc/zrecordfs/README\.md$' \
	'/usr/share/doc/zrecordfs/docs/mount\.md$'
lacks "$fs" 'libzrecord\.so' '/usr/include/' '/doc/.*local\.mk$'
has "$py" '/usr/lib/python3/dist-packages/loaderx/__init__\.py$' \
	'/usr/lib/python3/dist-packages/loaderx/dataloader\.py$' \
	'/usr/lib/python3/dist-packages/loaderx-[^/]*\.dist-info/' \
	'/usr/share/doc/python3-loaderx/copyright$'
lacks "$py" '/tests/' '\.so$'
# The mount helper must run the packaged daemon.
if ! dpkg-deb --fsys-tarfile "$fs" | tar -xOf - --wildcards \
	'*sbin/mount.zrecordfs' | grep -q '^BINDIR=/usr/bin$'; then
	echo "build-deb: mount.zrecordfs does not run /usr/bin/zrecordfs" >&2
	fail=1
fi

# Smoke test of the packaged files, unpacked (nothing is installed): the
# command round-trips a record, loaderx imports against the packaged
# library, and the man pages render.
root=$work/root
for deb in "$lib" "$fs" "$py"; do
	dpkg-deb -x "$deb" "$root"
done
libdir=$(dirname "$(find "$root/usr/lib" -name 'libzrecord.so.0')")
# A script of its own, run by a new shell: `set -e` does not hold inside
# a compound command whose status `if` tests.
cat >"$work/smoke.sh" <<'EOF'
set -eu
root=$1 libdir=$2
export LD_LIBRARY_PATH="$libdir"
z=$root/usr/bin/zrecord
printf '\223NUMPY\001\000v\000' >one.npy
printf "%-117s\n" "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 3), }" >>one.npy
printf 'abcdef' >>one.npy
"$z" create st --dtype u1 --shape 3
"$z" append st one.npy
"$z" get st 1 -o rec.npy
tail -c 3 rec.npy | grep -q '^def$'
"$root/usr/bin/zrecordfs" --version | grep -q '^zrecordfs '
LOADERX_LIB=$libdir/libzrecord.so.0 \
PYTHONPATH=$root/usr/lib/python3/dist-packages /usr/bin/python3 -c '
from loaderx.zrecord import DenseStore
s = DenseStore.open("st", readonly=True)
assert bytes(s[0]) == b"abc"'
for m in "$root"/usr/share/man/man*/*.gz; do
	[ -L "$m" ] && continue
	zcat "$m" | mandoc -Tlint -W warning
done
EOF
if ! (cd "$work" && sh "$work/smoke.sh" "$root" "$libdir") \
	>"$work/smoke.log" 2>&1; then
	cat "$work/smoke.log" >&2
	echo "build-deb: smoke test of the packaged files failed" >&2
	fail=1
fi

echo "build-deb: lintian" >&2
lintian --fail-on error "$work"/*.changes >"$work/lintian.log" 2>&1 || {
	echo "build-deb: lintian reports errors" >&2
	fail=1
}
grep -v '^running with root' "$work/lintian.log" >&2 || true

cp "$work"/*.deb "$work/build.log" "$work/lintian.log" "$out"/
ls -1 "$out"/*.deb
[ "$fail" -eq 0 ] || { echo "build-deb: FAILED" >&2; exit 1; }
echo "build-deb: ok" >&2
