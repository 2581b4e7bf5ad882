# scripts/local.mk - benchmark programs (built, never installed or run by
# make check).
noinst_PROGRAMS += scripts/bench_gather
scripts_bench_gather_SOURCES = scripts/bench_gather.c scripts/bench_data.c \
	scripts/bench_time.c scripts/bench.h \
	tests/rmtree.c tests/rmtree.h
scripts_bench_gather_LDADD = src/lib/libzrecord.la -lm
