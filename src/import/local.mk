# src/import/local.mk - the import layer, prefix zr_imp_ (zrimport.h):
# what `zrecord import` reads (image folders, WebDataset shards, HDF5,
# LMDB, .npy/.npz) through one table of formats (formats.c), decoded on
# its own threads into a new dataset folder.  The decoders it links are
# found by configure (IMPORT_CFLAGS, IMPORT_LIBS).
noinst_LTLIBRARIES += src/import/libzrimport.la
src_import_libzrimport_la_SOURCES = \
	src/import/zrimport.h src/import/import.h \
	src/import/formats.c src/import/import_run.c \
	src/import/dataset.c src/import/dest.c \
	src/import/pipeline.c src/import/progress_line.c src/import/field.c \
	src/import/report.c src/import/image.c src/import/image_xform.c \
	src/import/image_cmyk.c src/import/folder.c src/import/wds.c \
	src/import/wds_read.c src/import/rows.c \
	src/import/hdf5.c src/import/lmdb.c src/import/npy.c
src_import_libzrimport_la_CPPFLAGS = $(AM_CPPFLAGS)
src_import_libzrimport_la_CFLAGS = $(AM_CFLAGS) $(IMPORT_CFLAGS)
src_import_libzrimport_la_LIBADD = $(IMPORT_LIBS) -lm

# The parts of the import that work on buffers, which the fuzz
# harnesses build with their own compiler (tests/rel.mk).
zr_import_fuzz_sources = src/import/report.c src/import/image.c \
	src/import/image_xform.c src/import/image_cmyk.c src/import/field.c \
	src/import/wds_read.c

# The import's design notes and measured figures.
EXTRA_DIST += docs/import.md
