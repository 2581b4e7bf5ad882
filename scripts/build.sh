#!/bin/sh
# build.sh [DIR [CONFIGURE-ARGS...]] - generates the build system if needed
# and builds out of tree in DIR (default: build/ at the top of the repo).
# A developer build: warnings are errors (--enable-werror).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$top/build}
[ $# -gt 0 ] && shift
[ -x "$top/configure" ] || (cd "$top" && autoreconf -fi >/dev/null 2>&1)
mkdir -p "$dir"
cd "$dir"
[ -f Makefile ] || "$top/configure" -q --enable-werror "$@"
make -s -j"$(nproc)" >/dev/null
echo "$dir"
