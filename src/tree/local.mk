# src/tree/local.mk - a source folder as the tree of files a mount of it
# serves (prefix zrtree_): its stores, datasets and mixture folders, the
# names under them and the bytes and text behind each.  The zrecordfs
# daemon maps FUSE requests onto it; `zrecord cat` reads the same files
# without a mount.  Not part of libzrecord's public API.
noinst_LTLIBRARIES += src/tree/libzrtree.la
src_tree_libzrtree_la_SOURCES = \
	src/tree/tree.h src/tree/tree_build.c \
	src/tree/tree_node.c src/tree/tree_node.h \
	src/tree/tree_url.c src/tree/tree_url.h src/tree/names.c \
	src/tree/listing.c src/tree/run_opts.c src/tree/run_opts.h \
	src/tree/text_files.c src/tree/u64.c src/tree/u64.h \
	src/tree/file_bytes.c src/tree/file_bytes.h \
	src/tree/errors_log.c src/tree/errors_log.h \
	src/tree/mixture.c src/tree/mixture.h \
	src/tree/batch_node.c src/tree/batch_node.h \
	src/tree/batch_gather.c src/tree/batch_gather.h \
	src/tree/open_file.c src/tree/open_file.h \
	src/tree/refresh.c
src_tree_libzrtree_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src/common \
	-I$(top_srcdir)/src/files
