#!/bin/sh
# run.sh BINDIR CORPUSDIR SECONDS [WORKDIR] - replays every harness's seed
# corpus, then fuzzes each harness for SECONDS (new inputs go to WORKDIR,
# a temporary folder by default, never into the committed corpus).  Prints
# the executions run per harness; exits non-zero on the first crash, with
# the crashing input saved under WORKDIR and its path printed.
set -u
bin=$1
corpus=$2
secs=$3
work=${4:-}
if [ -z "$work" ]; then
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
fi
# A legal record may be 2 GiB, so a buffer that large is no finding by
# itself (it is never touched when the frame is bad); anything larger
# returns NULL as in production, and the harnesses judge the error code.
opts="-rss_limit_mb=3072 -malloc_limit_mb=2200 -timeout=20 -print_final_stats=1"
ASAN_OPTIONS="allocator_may_return_null=1:${ASAN_OPTIONS:-}"
export ASAN_OPTIONS
total=0
for h in npy schema npystream idxlist store mixfile image wds decode; do
	mkdir -p "$work/$h" "$work/crash-$h"
	if ! "$bin/fuzz_$h" $opts -runs=0 "$corpus/$h" >"$work/$h.log" 2>&1; then
		cat "$work/$h.log"
		echo "fuzz_$h: the seed corpus crashes"
		exit 1
	fi
	"$bin/fuzz_$h" $opts -max_total_time="$secs" \
		-artifact_prefix="$work/crash-$h/" "$work/$h" "$corpus/$h" \
		>"$work/$h.log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$h.log")
	echo "fuzz_$h: ${runs:-?} executions in ${secs}s"
	total=$((total + ${runs:-0}))
	if [ "$rc" -ne 0 ]; then
		tail -n 60 "$work/$h.log"
		echo "fuzz_$h: CRASH, reproducer: $(ls "$work/crash-$h"/* 2>/dev/null)"
		exit 1
	fi
done
echo "fuzz: $total executions, no crash"
