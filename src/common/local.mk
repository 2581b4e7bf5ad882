# src/common/local.mk - helpers shared by the zrecord command, the zrecordfs
# daemon and its umount helper: the stats reports, the mixture file
# reader and its sources' resolver, waiting for a lock, naming a lock's
# holder, large buffers kept for reuse, and a batch's schedule.  Not part
# of libzrecord's public API.  The file forms (.npy, .npz, PNG, the append
# stream) and the batch planner are in src/files.
noinst_LTLIBRARIES += src/common/libzrcommon.la
src_common_libzrcommon_la_SOURCES = \
	src/common/statsjson.c src/common/statsjson.h \
	src/common/mixfile.c src/common/mixfile.h src/common/mixfile_read.c \
	src/common/mixsource.c src/common/mixsource.h \
	src/common/retry.c src/common/retry.h \
	src/common/lock_holder.c src/common/lock_holder.h \
	src/common/big_buffers.c src/common/big_buffers.h \
	src/common/schedule.c src/common/schedule.h
