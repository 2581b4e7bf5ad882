#!/bin/sh
# version.sh [HEADER] - prints the package version, MAJOR.MINOR.PATCH, from
# the ZR_VERSION_* lines of include/zrecord.h (the one place it is
# written).  configure.ac's AC_INIT runs it when autoconf makes configure.
set -eu
h=${1:-$(dirname "$0")/../include/zrecord.h}
v=$(sed -n 's/^#define ZR_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9][0-9]*\)$/\2/p' "$h")
set -- $v
if [ $# -ne 3 ]; then
	echo "version.sh: no ZR_VERSION_MAJOR/MINOR/PATCH lines in $h" >&2
	exit 1
fi
printf '%s.%s.%s' "$1" "$2" "$3"
