# tests/local.mk - the Check runner (unit tests of libzrecord, of the
# record encoder in src/files and of the tree in src/tree) and the
# pytest-driven suites (command, filesystem, Python binding).
check_PROGRAMS += tests/check_zrecord
tests_check_zrecord_SOURCES = tests/check_main.c tests/check_suites.h \
	tests/check_error.c tests/check_dtype.c tests/check_schema.c \
	tests/check_npy.c tests/check_sampler.c tests/check_stream.c \
	tests/check_pool.c tests/check_iopool.c tests/check_cache.c \
	tests/check_store.c tests/check_store_maint.c \
	tests/check_store_malformed.c tests/check_dict.c \
	tests/check_store_crash.c tests/check_store_sigbus.c \
	tests/check_npyfile.c tests/check_npymix.c tests/check_version.c \
	tests/check_store_guard.c tests/check_store_follow.c \
	tests/check_ragged_pack.c tests/check_store_view.c \
	tests/check_store_reserve.c tests/check_prefetch.c \
	tests/check_schedule.c tests/check_idxlist.c \
	tests/check_mixsource.c tests/check_batchfile.c \
	tests/check_store_vfs.c tests/check_resample.c \
	tests/check_manifest.c \
	tests/check_util.c tests/check_util.h \
	tests/rmtree.c tests/rmtree.h \
	tests/check_tree.c tests/check_tree_files.c tests/check_tree_opts.c \
	tests/tree_util.c tests/tree_util.h
tests_check_zrecord_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src/lib \
	-I$(top_srcdir)/src/common -I$(top_srcdir)/src/files \
	-I$(top_srcdir)/src/prefetch -I$(top_srcdir)/src/tree
tests_check_zrecord_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(ZSTD_CFLAGS) \
	$(MSGPACK_CFLAGS)
tests_check_zrecord_LDADD = src/tree/libzrtree.la \
	src/files/libzrfiles.la src/common/libzrcommon.la \
	src/prefetch/libzrpf.la \
	src/lib/libzrecord_core.la $(CHECK_LIBS)
TESTS += tests/check_zrecord
EXTRA_DIST += tests/fixtures/npy_headers.py tests/fixtures/npy_check_load.py \
	tests/fixtures/schema_bytes.py tests/fixtures/sampler_ref.py

# Leaves a store as a compact cut short, for the recovery tests.
check_PROGRAMS += tests/cut_compact
tests_cut_compact_SOURCES = tests/cut_compact.c
tests_cut_compact_LDADD = src/lib/libzrecord.la

# ABI and version checks: libzrecord.so's exports against zrecord.h and
# zrecord.map, the version in the header, configure and the library, and
# loaderx's cffi declarations against the header (compiled).
TESTS += tests/abi.test
dist_noinst_SCRIPTS += tests/abi.test
EXTRA_DIST += tests/abi/conftest.py tests/abi/zrheader.py \
	tests/abi/test_exports.py tests/abi/test_cffi.py
