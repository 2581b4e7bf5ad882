#!/bin/sh
# test.sh - the README's test command: installs what is missing, builds, and
# runs every test (`make check`) twice: once in the normal build and once
# with ASan+UBSan (--enable-sanitizers); then the concurrency tests under
# ThreadSanitizer (`make check-tsan`, --enable-tsan).  Exits non-zero on
# any failure.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/deps.sh"

# check TARGET DIR [CONFIGURE-ARGS...]
check() {
	target=$1
	dir=$2
	shift 2
	echo "== make $target in $dir $*"
	start=$(date +%s)
	"$top/scripts/build.sh" "$dir" "$@" >/dev/null
	built=$(date +%s)
	if ! make -C "$dir" -s "$target" -j1 >"$dir/check.out" 2>&1; then
		cat "$dir/check.out"
		find "$dir/tests" -name '*.log' -exec sh -c \
			'grep -q "^FAIL\|^ERROR" "$1" && { echo "--- $1"; tail -n 80 "$1"; }' _ {} \;
		echo "FAILED: make $target in $dir"
		return 1
	fi
	# The runners' own closing lines, so a reader sees what ran.
	grep -h -E '^[0-9]+%: Checks|[0-9]+ (passed|failed)' \
		"$dir"/tests/*.log 2>/dev/null || true
	grep -E '^# (TOTAL|PASS|FAIL|ERROR)' "$dir/check.out" || true
	echo "== built in $((built - start)) s, tested in $(($(date +%s) - built)) s"
}

check check "$top/build"
check check "$top/build-san" --enable-sanitizers
check check-tsan "$top/build-tsan" --enable-tsan
echo "all tests passed"
