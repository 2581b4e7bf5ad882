# src/fs/local.mk - zrecordfs, the FUSE daemon, its mount helpers, its tests
# and its benchmark.
bin_PROGRAMS += src/fs/zrecordfs
src_fs_zrecordfs_SOURCES = \
	src/fs/main.c src/fs/opts.c src/fs/opts.h src/fs/fs.h \
	src/fs/static_tree.c src/fs/static_tree.h src/fs/lookup.c src/fs/lookup.h \
	src/fs/ops.c src/fs/ops.h src/fs/readdir.c src/fs/readdir.h src/fs/getattr.c \
	src/fs/file_kinds.h src/fs/kind_table.c src/fs/kind_table.h \
	src/fs/handles.c src/fs/reply.c src/fs/u64.c src/fs/u64.h \
	src/fs/file_bytes.c src/fs/file_bytes.h \
	src/fs/record.c src/fs/batch.c src/fs/control.c src/fs/text.c src/fs/append.c \
	src/fs/delete.c src/fs/caller.c \
	src/fs/errors_log.c src/fs/errors_log.h src/fs/store_park.c src/fs/store_park.h \
	src/fs/mount_lock.c src/fs/mount_lock.h \
	src/fs/follow.c src/fs/follow.h src/fs/utab.c src/fs/utab.h \
	src/fs/buf_cache.c src/fs/buf_cache.h src/fs/dataset.c src/fs/dataset.h \
	src/fs/batch_prefetch.c src/fs/batch_prefetch.h
src_fs_zrecordfs_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src/common \
	-I$(top_srcdir)/src/files -I$(top_srcdir)/src/prefetch
src_fs_zrecordfs_CFLAGS = $(AM_CFLAGS) $(FUSE_CFLAGS)
src_fs_zrecordfs_LDADD = src/lib/libzrecord.la src/files/libzrfiles.la \
	src/prefetch/libzrpf.la \
	src/common/libzrcommon.la \
	$(FUSE_LIBS)

# The mount(8) and umount(8) helpers: mount.zrecordfs (a script; the
# sed below points it at the installed zrecordfs), its link
# mount.fuse.zrecordfs, and umount.fuse.zrecordfs (waits for the daemon to
# close its stores).  They go to $(sbindir), under the prefix like the
# rest; mount(8) only looks in /sbin, so a system install configures
# --with-mount-helper-dir=/sbin.  DESTDIR is honoured by automake's rules.
mounthelperexecdir = $(MOUNT_HELPER_DIR)
mounthelperexec_PROGRAMS = src/fs/umount.fuse.zrecordfs
src_fs_umount_fuse_zrecordfs_SOURCES = src/fs/umount_helper.c \
	src/fs/mount_lock.c src/fs/mount_lock.h
src_fs_umount_fuse_zrecordfs_CPPFLAGS = $(AM_CPPFLAGS) \
	-I$(top_srcdir)/src/common
src_fs_umount_fuse_zrecordfs_LDADD = src/common/libzrcommon.la
mounthelperexec_SCRIPTS = src/fs/mount.zrecordfs
EXTRA_DIST += contrib/mount.zrecordfs
CLEANFILES += src/fs/mount.zrecordfs
src/fs/mount.zrecordfs: $(srcdir)/contrib/mount.zrecordfs Makefile
	$(AM_V_GEN)$(MKDIR_P) src/fs && \
	sed 's|^BINDIR=$$|BINDIR=$(bindir)|' \
		$(srcdir)/contrib/mount.zrecordfs > $@.tmp && \
	chmod +x $@.tmp && mv $@.tmp $@
install-exec-hook:
	cd '$(DESTDIR)$(mounthelperexecdir)' && \
		rm -f mount.fuse.zrecordfs && \
		$(LN_S) mount.zrecordfs mount.fuse.zrecordfs
uninstall-hook:
	rm -f '$(DESTDIR)$(mounthelperexecdir)/mount.fuse.zrecordfs'

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
	tests/fs/test_ragged_forms.py \
	tests/fs/test_batch_cache.py tests/fs/test_follow.py \
	tests/fs/test_batch_pieces.py tests/fs/test_prefetch.py
TESTS += tests/fs.test
