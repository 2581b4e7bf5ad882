# src/cli/local.mk - the zrecord command and its pytest suite.
bin_PROGRAMS += src/cli/zrecord
src_cli_zrecord_SOURCES = \
	src/cli/main.c src/cli/cli.h src/cli/util.c src/cli/output.c \
	src/cli/progress_meter.c src/cli/records.c \
	src/cli/create.c src/cli/append.c src/cli/get.c src/cli/batch.c \
	src/cli/batch_write.c src/cli/batch_write.h \
	src/cli/batchmix.c src/cli/batchmix.h \
	src/cli/mixopen.c src/cli/mixopen.h src/cli/mixstats.c \
	src/cli/info.c src/cli/verify.c src/cli/traindict.c src/cli/maint.c \
	src/cli/cat.c \
	$(zr_import_sources)
src_cli_zrecord_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src/common \
	-I$(top_srcdir)/src/files -I$(top_srcdir)/src/cli \
	-I$(top_srcdir)/src/tree -I$(top_srcdir)/src/import
src_cli_zrecord_CFLAGS = $(AM_CFLAGS) $(IMPORT_CFLAGS)
src_cli_zrecord_LDADD = src/tree/libzrtree.la \
	src/files/libzrfiles.la src/common/libzrcommon.la \
	src/lib/libzrecord.la $(IMPORT_LIBS) -lm

# The parts of `zrecord import` that work on buffers, which the fuzz
# harnesses (tests/rel.mk) drive: image decoding and the WebDataset rule.
zr_import_fuzz_sources = src/import/report.c src/import/image.c \
	src/import/image_xform.c src/import/image_cmyk.c src/import/field.c \
	src/import/wds_read.c

# `zrecord import`: its sources and the decoders it links (configure.ac).
zr_import_sources = \
	src/import/import.h src/import/command.c src/import/dataset.c \
	src/import/pipeline.c src/import/progress.c src/import/field.c \
	src/import/report.c src/import/image.c src/import/image_xform.c \
	src/import/image_cmyk.c src/import/folder.c src/import/wds.c \
	src/import/wds_read.c \
	src/import/rows.c \
	src/import/hdf5.c src/import/lmdb.c src/import/npy.c

dist_noinst_SCRIPTS += tests/cli.test
EXTRA_DIST += tests/cli/conftest.py tests/cli/test_create.py \
	tests/cli/test_append.py tests/cli/test_read.py \
	tests/cli/test_maint.py tests/cli/test_errors.py \
	tests/cli/test_npz.py tests/cli/test_wait.py tests/cli/test_mix.py \
	tests/cli/importdata.py tests/cli/test_import_images.py \
	tests/cli/test_import_wds.py tests/cli/test_import_arrays.py \
	tests/cli/test_import_scale.py tests/cli/test_import_mount.py \
	tests/cli/test_recover.py tests/cli/test_delete_from.py \
	tests/cli/test_cat.py
TESTS += tests/cli.test

# A driver that feeds src/files awkward inputs for the suite to check.
check_PROGRAMS += tests/cli/common-driver
tests_cli_common_driver_SOURCES = tests/cli/common_driver.c
tests_cli_common_driver_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src/files
tests_cli_common_driver_LDADD = src/files/libzrfiles.la \
	src/lib/libzrecord.la

# zrecord import's design notes and measured figures.
EXTRA_DIST += docs/import.md
