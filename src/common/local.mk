# src/common/local.mk - code shared by the zrecord command, the zrecordfs
# daemon and its umount helper (the .npy stream parser; the encoder of
# record, batch and .npz files; the PNG writer; the stats report; waiting
# for a lock, naming a lock's holder); not part of libzrecord's public
# API.  zlib provides the ZIP members' CRC-32 and PNG's checksums.
noinst_LTLIBRARIES += src/common/libzrcommon.la
src_common_libzrcommon_la_SOURCES = \
	src/common/npystream.c src/common/npystream.h \
	src/common/npz.c src/common/npz.h \
	src/common/npyfile.c src/common/npyfill.c src/common/npyflat.c src/common/npyfile.h \
	src/common/npyfile_impl.h \
	src/common/statsjson.c src/common/statsjson.h \
	src/common/png.c src/common/png.h \
	src/common/recpng.c src/common/recpng.h \
	src/common/retry.c src/common/retry.h \
	src/common/lock_holder.c src/common/lock_holder.h
src_common_libzrcommon_la_CFLAGS = $(AM_CFLAGS) $(ZLIB_CFLAGS)
src_common_libzrcommon_la_LIBADD = $(ZLIB_LIBS)
