#!/bin/sh
# run-pytest.sh DIR - runs one folder of pytest suites against the build
# tree with Debian's /usr/bin/python3.  "No tests collected" is a failure:
# a suite that silently ran nothing must not pass.
set -u
dir=$1
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
: "${PYTHON3:=/usr/bin/python3}"
export top_srcdir top_builddir
cd "$top_srcdir/$dir" || exit 99
PYTHONDONTWRITEBYTECODE=1 "$PYTHON3" -m pytest -q -p no:cacheprovider . 
rc=$?
[ "$rc" -eq 5 ] && { echo "run-pytest: no tests collected in $dir"; exit 1; }
exit "$rc"
