# src/fs/local.mk - zrecordfs, the FUSE daemon, its mount helper, its tests
# and its benchmark.
bin_PROGRAMS += src/fs/zrecordfs
src_fs_zrecordfs_SOURCES = \
	src/fs/main.c src/fs/opts.c src/fs/opts.h src/fs/fs.h \
	src/fs/tree.c src/fs/tree.h src/fs/ns.c src/fs/ns.h \
	src/fs/ops.c src/fs/ops.h src/fs/readdir.c src/fs/attr.c \
	src/fs/files.h src/fs/fh.c src/fs/layout.c src/fs/layout.h \
	src/fs/record.c src/fs/batch.c src/fs/control.c src/fs/append.c \
	src/fs/elog.c src/fs/elog.h src/fs/stlock.c src/fs/stlock.h \
	src/fs/dlog.c src/fs/dlog.h
src_fs_zrecordfs_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src/common
src_fs_zrecordfs_CFLAGS = $(AM_CFLAGS) $(FUSE_CFLAGS)
src_fs_zrecordfs_LDADD = src/lib/libzrecord.la src/common/libzrcommon.la \
	$(FUSE_LIBS)

# The mount(8) helper.  util-linux looks for helpers in /sbin, whatever the
# prefix; override with `make install MOUNT_HELPER_DIR=...`.
MOUNT_HELPER_DIR = /sbin
dist_noinst_SCRIPTS += contrib/mount.zrecordfs
install-exec-local: install-mount-helper
uninstall-local: uninstall-mount-helper
install-mount-helper:
	$(MKDIR_P) '$(DESTDIR)$(MOUNT_HELPER_DIR)'
	sed 's|^BINDIR=$$|BINDIR=$(bindir)|' \
		$(srcdir)/contrib/mount.zrecordfs > mount.zrecordfs.tmp
	$(INSTALL_SCRIPT) mount.zrecordfs.tmp \
		'$(DESTDIR)$(MOUNT_HELPER_DIR)/mount.zrecordfs'
	rm -f mount.zrecordfs.tmp
	ln -sf mount.zrecordfs \
		'$(DESTDIR)$(MOUNT_HELPER_DIR)/mount.fuse.zrecordfs'
uninstall-mount-helper:
	rm -f '$(DESTDIR)$(MOUNT_HELPER_DIR)/mount.zrecordfs' \
		'$(DESTDIR)$(MOUNT_HELPER_DIR)/mount.fuse.zrecordfs'
.PHONY: install-mount-helper uninstall-mount-helper

dist_noinst_SCRIPTS += tests/fs.test scripts/bench_fs
EXTRA_DIST += tests/fs/conftest.py tests/fs/test_mount.py \
	tests/fs/test_read.py tests/fs/test_append.py \
	tests/fs/test_control.py tests/fs/test_concurrency.py \
	tests/fs/test_helper.py tests/fs/fsutil.py \
	tests/fs/test_open_files.py tests/fs/test_bounds.py \
	tests/fs/test_tools.py tests/fs/test_stalls.py tests/fs/test_media.py \
	tests/fs/test_messages.py \
	tests/fs/test_copies.py tests/fs/test_refusals.py \
	tests/fs/test_batch_cache.py
TESTS += tests/fs.test
