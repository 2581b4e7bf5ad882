# src/fs/local.mk - zrecordfs, the FUSE daemon, its tests and its benchmark.
# Its mount(8) and umount(8) helpers are in src/mount.
bin_PROGRAMS += src/fs/zrecordfs
src_fs_zrecordfs_SOURCES = \
	src/fs/main.c src/fs/opts.c src/fs/opts.h src/fs/fs.h \
	src/fs/lookup.c src/fs/lookup.h \
	src/fs/ops.c src/fs/ops.h src/fs/readdir.c src/fs/readdir.h src/fs/getattr.c \
	src/fs/file_kinds.h src/fs/kind_table.c src/fs/kind_table.h \
	src/fs/handles.c src/fs/reply.c src/fs/tree_files.c \
	src/fs/record.c src/fs/batch.c src/fs/control.c src/fs/text_kind.c \
	src/fs/append.c \
	src/fs/delete.c src/fs/caller.c \
	src/fs/store_park.c src/fs/store_park.h \
	src/fs/follow.c src/fs/follow.h \
	src/fs/shutdown_signals.c src/fs/shutdown_signals.h \
	src/fs/batch_prefetch.c src/fs/batch_prefetch.h \
	src/fs/info_file.c src/fs/info_file.h
src_fs_zrecordfs_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src/common \
	-I$(top_srcdir)/src/files -I$(top_srcdir)/src/tree -I$(top_srcdir)/src/mount \
	-I$(top_srcdir)/src/prefetch
src_fs_zrecordfs_CFLAGS = $(AM_CFLAGS) $(FUSE_CFLAGS)
src_fs_zrecordfs_LDADD = src/tree/libzrtree.la \
	src/lib/libzrecord.la src/files/libzrfiles.la \
	src/prefetch/libzrpf.la src/mount/libzrmount.la \
	src/common/libzrcommon.la \
	$(FUSE_LIBS)

dist_noinst_SCRIPTS += tests/fs.test scripts/bench_fs
EXTRA_DIST += tests/fs/conftest.py tests/fs/test_mount.py \
	tests/fs/test_read.py tests/fs/test_append.py \
	tests/fs/test_control.py tests/fs/test_concurrency.py \
	tests/fs/test_helper.py tests/fs/fsutil.py tests/fs/helperns.py \
	tests/fs/test_umount.py \
	tests/fs/test_open_files.py tests/fs/test_bounds.py \
	tests/fs/test_tools.py tests/fs/test_stalls.py tests/fs/test_media.py \
	tests/fs/test_messages.py \
	tests/fs/test_copies.py tests/fs/test_refusals.py \
	tests/fs/test_shell.py tests/fs/test_encoder.py tests/fs/test_png.py \
	tests/fs/test_images.py \
	tests/fs/test_ragged_forms.py \
	tests/fs/test_batch_cache.py tests/fs/test_follow.py \
	tests/fs/test_batch_pieces.py tests/fs/test_mixture.py \
	tests/fs/test_prefetch.py tests/fs/test_grow.py \
	tests/fs/test_info_file.py
TESTS += tests/fs.test
