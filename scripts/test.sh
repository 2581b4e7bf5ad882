#!/bin/sh
# test.sh - the README's test command: installs what is missing, builds, and
# runs every test (`make check`) twice: once in the normal build and once
# with ASan+UBSan (--enable-sanitizers).  Exits non-zero on any failure.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/deps.sh"

check() {
	dir=$1
	shift
	echo "== make check in $dir $*"
	"$top/scripts/build.sh" "$dir" "$@" >/dev/null
	if ! make -C "$dir" -s check -j1 >"$dir/check.out" 2>&1; then
		cat "$dir/check.out"
		find "$dir/tests" -name '*.log' -exec sh -c \
			'grep -q "^FAIL\|^ERROR" "$1" && { echo "--- $1"; tail -n 80 "$1"; }' _ {} \;
		echo "FAILED: make check in $dir"
		return 1
	fi
	# The runners' own closing lines, so a reader sees what ran.
	grep -h -E '^[0-9]+%: Checks|[0-9]+ (passed|failed)' \
		"$dir"/tests/*.log 2>/dev/null || true
	grep -E '^# (TOTAL|PASS|FAIL|ERROR)' "$dir/check.out" || true
}

check "$top/build"
check "$top/build-san" --enable-sanitizers
echo "all tests passed"
