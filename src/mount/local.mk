# src/mount/local.mk - how zrecordfs meets mount(8) and umount(8): the
# helpers mount.zrecordfs (a script; the sed below points it at the
# installed zrecordfs), its link mount.fuse.zrecordfs, and
# umount.fuse.zrecordfs (waits for the daemon to close its stores), and
# libzrmount, what the daemon and that helper share: the mount point lock
# they meet on, the utab entry that makes umount(8) run the helper, the
# mount table check that refuses a mount over a live one, and the check
# that /dev/fuse opens.
#
# The helpers go to $(sbindir), under the prefix like the rest; mount(8)
# only looks in /sbin, so a system install configures
# --with-mount-helper-dir=/sbin.  DESTDIR is honoured by automake's rules.
noinst_LTLIBRARIES += src/mount/libzrmount.la
src_mount_libzrmount_la_SOURCES = \
	src/mount/mount_lock.c src/mount/mount_lock.h \
	src/mount/utab.c src/mount/utab.h \
	src/mount/mountinfo.c src/mount/mountinfo.h \
	src/mount/fuse_dev.c src/mount/fuse_dev.h
src_mount_libzrmount_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src/common

mounthelperexecdir = $(MOUNT_HELPER_DIR)
mounthelperexec_PROGRAMS = src/mount/umount.fuse.zrecordfs
src_mount_umount_fuse_zrecordfs_SOURCES = src/mount/umount_helper.c
src_mount_umount_fuse_zrecordfs_CPPFLAGS = $(AM_CPPFLAGS) \
	-I$(top_srcdir)/src/common
src_mount_umount_fuse_zrecordfs_LDADD = src/mount/libzrmount.la \
	src/common/libzrcommon.la
mounthelperexec_SCRIPTS = src/mount/mount.zrecordfs
EXTRA_DIST += src/mount/mount.zrecordfs.sh
CLEANFILES += src/mount/mount.zrecordfs
src/mount/mount.zrecordfs: $(srcdir)/src/mount/mount.zrecordfs.sh Makefile
	$(AM_V_GEN)$(MKDIR_P) src/mount && \
	sed 's|^BINDIR=$$|BINDIR=$(bindir)|' \
		$(srcdir)/src/mount/mount.zrecordfs.sh > $@.tmp && \
	chmod +x $@.tmp && mv $@.tmp $@
install-exec-hook:
	cd '$(DESTDIR)$(mounthelperexecdir)' && \
		rm -f mount.fuse.zrecordfs && \
		$(LN_S) mount.zrecordfs mount.fuse.zrecordfs
uninstall-hook:
	rm -f '$(DESTDIR)$(mounthelperexecdir)/mount.fuse.zrecordfs'
