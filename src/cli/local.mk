# src/cli/local.mk - the zrecord command and its pytest suite.
bin_PROGRAMS += src/cli/zrecord
src_cli_zrecord_SOURCES = \
	src/cli/main.c src/cli/cli.h src/cli/util.c src/cli/output.c \
	src/cli/cache_opts.c \
	src/cli/progress_meter.c src/cli/records.c \
	src/cli/create.c src/cli/append.c src/cli/get.c src/cli/batch.c \
	src/cli/batch_write.c src/cli/batch_write.h \
	src/cli/batchmix.c src/cli/batchmix.h \
	src/cli/mixopen.c src/cli/mixopen.h src/cli/mixstats.c \
	src/cli/info.c src/cli/verify.c src/cli/traindict.c src/cli/maint.c src/cli/publish.c \
	src/cli/cat.c src/cli/import.c src/cli/images.c
src_cli_zrecord_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src/common \
	-I$(top_srcdir)/src/files -I$(top_srcdir)/src/cli \
	-I$(top_srcdir)/src/tree -I$(top_srcdir)/src/import
src_cli_zrecord_LDADD = src/import/libzrimport.la src/tree/libzrtree.la \
	src/files/libzrfiles.la src/common/libzrcommon.la \
	src/lib/libzrecord.la -lm

dist_noinst_SCRIPTS += tests/cli.test
EXTRA_DIST += tests/cli/conftest.py tests/cli/test_create.py \
	tests/cli/test_append.py tests/cli/test_read.py \
	tests/cli/test_maint.py tests/cli/test_errors.py \
	tests/cli/test_npz.py tests/cli/test_wait.py tests/cli/test_mix.py \
	tests/cli/importdata.py tests/cli/test_import_images.py \
	tests/cli/test_images.py \
	tests/cli/test_import_wds.py tests/cli/test_import_arrays.py \
	tests/cli/test_import_scale.py tests/cli/test_import_mount.py \
	tests/cli/test_import_edges.py \
	tests/cli/test_recover.py tests/cli/test_delete_from.py \
	tests/cli/test_cat.py
TESTS += tests/cli.test

# A driver that feeds src/files awkward inputs for the suite to check.
check_PROGRAMS += tests/cli/common-driver
tests_cli_common_driver_SOURCES = tests/cli/common_driver.c
tests_cli_common_driver_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src/files
tests_cli_common_driver_LDADD = src/files/libzrfiles.la \
	src/lib/libzrecord.la

