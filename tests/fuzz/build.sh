#!/bin/sh
# build.sh OUTDIR SRCDIR SOURCE... - builds the libFuzzer harnesses with
# clang outside automake's compile (the normal build never needs clang).
# The library, src/files and src/common SOURCES are compiled once with coverage and
# ASan+UBSan into OUTDIR/libfuzzzr.a, then each harness links against it.
# Without clang it leaves OUTDIR/no-clang, and the fuzz test skips.
# Environment: FUZZ_CC, FUZZ_CPPFLAGS, FUZZ_LIBS (set by tests/rel.mk).
set -eu
out=$1
src=$2
shift 2
cc=${FUZZ_CC:-clang}
mkdir -p "$out/obj"
rm -f "$out/no-clang" "$out/built"
if ! command -v "$cc" >/dev/null 2>&1; then
	echo "fuzz: $cc not found; the fuzz test will be skipped" >&2
	: >"$out/no-clang"
	exit 0
fi
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
cflags="-std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer $san"
cflags="$cflags -I$src/include -I$src/src/lib -I$src/src/common -I$src/src/files"
cflags="$cflags -I$src/src/import -I$src/tests/fuzz ${FUZZ_CPPFLAGS:-}"

# One object per library source, named after its path (no clashes), two
# compilers at a time.
rm -f "$out"/obj/*.o
pids=
n=0
failed=0
reap() {
	for p in $pids; do
		wait "$p" || failed=1
	done
	pids=
}
for f in "$@"; do
	case $f in
	*.c) ;;
	*) continue ;;
	esac
	o=$(echo "$f" | tr / _)
	$cc -c $cflags -fsanitize=fuzzer-no-link -o "$out/obj/${o%.c}.o" \
		"$src/$f" &
	pids="$pids $!"
	n=$((n + 1))
	[ $((n % 2)) -eq 0 ] && reap
done
reap
[ "$failed" -eq 0 ] || { echo "fuzz: compiling the library failed" >&2; exit 1; }
rm -f "$out/libfuzzzr.a"
ar rcs "$out/libfuzzzr.a" "$out"/obj/*.o

for h in npy schema npystream idxlist store mixfile image wds decode; do
	$cc $cflags -fsanitize=fuzzer -o "$out/fuzz_$h" \
		"$src/tests/fuzz/fuzz_$h.c" "$src/tests/fuzz/fuzz_util.c" \
		"$src/tests/rmtree.c" \
		"$out/libfuzzzr.a" ${FUZZ_LIBS:-} -lz -lm -pthread
done
: >"$out/built"
