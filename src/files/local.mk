# src/files/local.mk - the file forms, in one place with one prefix
# (zrfile_): the encoder of record, batch, .npz and PNG files and the
# parsers of the .npy append stream and of record-index lists, which the
# zrecord command and the zrecordfs daemon share so that the same records
# give the same bytes and the same input means the same thing.
# Not part of libzrecord's public API (see encoder.h for why); zlib
# provides the ZIP members' CRC-32 and PNG's checksums.
noinst_LTLIBRARIES += src/files/libzrfiles.la
src_files_libzrfiles_la_SOURCES = \
	src/files/form_table.c src/files/form_table.h \
	src/files/encoder.h src/files/source.c src/files/source.h \
	src/files/npy_parts.c src/files/npy_parts.h \
	src/files/form_npy.c src/files/form_npz.c src/files/form_indices.c \
	src/files/form_ragged.c src/files/form_png.c src/files/form_png.h \
	src/files/form_image.c \
	src/files/npy_mix.c src/files/npy_mix.h \
	src/files/npz.c src/files/npz.h \
	src/files/png.c src/files/png.h \
	src/files/npy_stream.c src/files/npy_stream.h \
	src/files/index_list.c src/files/index_list.h \
	src/files/index_set.c src/files/index_set.h \
	src/files/shape_cache.c src/files/shape_cache.h \
	src/files/batch_file.c src/files/batch_file.h src/files/batch_spec.h \
	src/files/batch_draw.c src/files/batch_draw.h \
	src/files/batch_mix.c src/files/batch_mix.h \
	src/files/batch_stream.c src/files/batch_stream.h
src_files_libzrfiles_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src/common
src_files_libzrfiles_la_CFLAGS = $(AM_CFLAGS) $(ZLIB_CFLAGS)
src_files_libzrfiles_la_LIBADD = $(ZLIB_LIBS)
