#!/bin/sh
# run-pytest.sh DIR [PYTEST-ARGS...] - runs one folder of pytest suites
# against the build tree with Debian's /usr/bin/python3.  Extra arguments
# go to pytest (-x, -k EXPR, a file of DIR; paths are relative to DIR).
# "No tests collected" is a failure: a suite that silently ran nothing
# must not pass.
set -u
dir=$1
shift
[ $# -gt 0 ] || set -- .
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
: "${PYTHON3:=/usr/bin/python3}"
export top_srcdir top_builddir
if [ "${ZR_SANITIZERS:-0}" = 1 ]; then
	# An ASan-built libzrecord inside CPython needs the runtime loaded
	# first; CPython itself is not leak-clean, so leak checks stay with
	# the C suites and valgrind.
	LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
	ASAN_OPTIONS=detect_leaks=0
	export LD_PRELOAD ASAN_OPTIONS
fi
cd "$top_srcdir/$dir" || exit 99
PYTHONDONTWRITEBYTECODE=1 "$PYTHON3" -m pytest -q -p no:cacheprovider "$@"
rc=$?
[ "$rc" -eq 5 ] && { echo "run-pytest: no tests collected in $dir"; exit 1; }
exit "$rc"
