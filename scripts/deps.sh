#!/bin/sh
# deps.sh - installs the Debian 12 packages zrecordfs needs to build, test
# (GlusterFS, sshfs and sshd: the many-hosts suite, tests/cluster) and
# demo, but only those that are missing (apt-get needs root: sudo is used
# when not already root).
#   scripts/deps.sh        what the build and `make check` need (with the
#                          S3 test engine's Ceph packages)
#   scripts/deps.sh ceph   the S3 test engine only (scripts/rgw-local.sh:
#                          Ceph's mon, OSD and radosgw; `make check-rgw`)
#                          and s3fs, which scripts/bench_object compares
#                          against
set -eu
case ${1:-} in
ceph)
	pkgs="ceph-mon ceph-osd radosgw ceph-common curl python3 s3fs" ;;
"")
	pkgs="build-essential autoconf automake libtool pkg-config
libzstd-dev libmsgpack-dev libfuse3-dev fuse3 check zlib1g-dev
python3 python3-numpy python3-cffi python3-msgpack python3-pytest
python3-setuptools python3-pil file squashfs-tools squashfuse valgrind
clang rsync mandoc libclang-rt-14-dev glusterfs-server glusterfs-client
sshfs openssh-server debhelper dh-python pybuild-plugin-pyproject python3-all
lintian fakeroot
libturbojpeg0-dev libjpeg62-turbo-dev libspng-dev libwebp-dev libarchive-dev libhdf5-dev
liblmdb-dev libcurl4-openssl-dev python3-h5py python3-lmdb adwaita-icon-theme
ceph-mon ceph-osd radosgw ceph-common curl s3fs" ;;
*)
	echo "usage: $0 [ceph]" >&2
	exit 2 ;;
esac
missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "deps: installing$missing" >&2
sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
