# scripts/local.mk - benchmark programs (built, never installed or run by
# make check).
noinst_PROGRAMS += scripts/bench_gather
scripts_bench_gather_SOURCES = scripts/bench_gather.c scripts/bench_data.c \
	scripts/bench_time.c scripts/bench.h \
	tests/rmtree.c tests/rmtree.h
scripts_bench_gather_LDADD = src/lib/libzrecord.la -lm

# Positions to record indices: plain and mixture streams against the
# step-based sampler and a table copy.
noinst_PROGRAMS += scripts/bench_positions
scripts_bench_positions_SOURCES = scripts/bench_positions.c \
	scripts/bench_time.c scripts/bench.h
scripts_bench_positions_LDADD = src/lib/libzrecord.la
# A mixture's batches against one store's (zrecord batch, DataLoader).
EXTRA_DIST += scripts/bench_mixture.py
# Encoded-image stores against raw pixels and the decode ceiling.
EXTRA_DIST += scripts/bench_decode
# A store in S3 (the test engine, also 20 ms away) against local disk.
EXTRA_DIST += scripts/bench_object

# The FUSE read ceiling scripts/bench_fs compares raw batch files with.
noinst_PROGRAMS += scripts/bench_fuse_ceiling
scripts_bench_fuse_ceiling_SOURCES = scripts/bench_fuse_ceiling.c
scripts_bench_fuse_ceiling_CFLAGS = $(AM_CFLAGS) $(FUSE_CFLAGS)
scripts_bench_fuse_ceiling_LDADD = $(FUSE_LIBS)

# The Debian packaging and the script that builds and checks it.
EXTRA_DIST += scripts/build-deb.sh \
	debian/changelog debian/control debian/copyright debian/rules \
	debian/source/format debian/libzrecord0.install \
	debian/libzrecord-dev.install \
	debian/zrecordfs.install debian/zrecordfs.links debian/zrecordfs.docs \
	debian/python3-loaderx.docs
# make check builds them too (tests/deb.test; normal builds only).
dist_noinst_SCRIPTS += tests/deb.test
TESTS += tests/deb.test

# Many hosts on a throwaway GlusterFS volume (docs/many-hosts.md): the demo
# and the benchmark, run by hand (root, FUSE, GlusterFS), never by make check.
EXTRA_DIST += scripts/cluster-demo.sh scripts/bench_cluster.py

# `zrecord import` against the loop a user writes and the decode ceiling,
# and what its parts cost on one thread.
EXTRA_DIST += scripts/bench_import.py
noinst_PROGRAMS += scripts/bench_import_floor
scripts_bench_import_floor_SOURCES = scripts/bench_import_floor.c
scripts_bench_import_floor_CFLAGS = $(AM_CFLAGS) $(IMPORT_CFLAGS)
scripts_bench_import_floor_LDADD = $(IMPORT_LIBS)

# The time a trainer waits for its batches: the mount with and without
# prefetch, loaderx and torch DataLoaders (issue 23).
EXTRA_DIST += scripts/bench_stall.py
