# src/prefetch/local.mk - the prefetcher (prefix zrpf_): a sequence's next
# steps gathered ahead on a low-priority thread, through a callback, into
# buffers an open takes over.  It knows nothing of stores or FUSE; the
# daemon's side is src/fs/batch_prefetch.c.
noinst_LTLIBRARIES += src/prefetch/libzrpf.la
src_prefetch_libzrpf_la_SOURCES = \
	src/prefetch/prefetch.c src/prefetch/prefetch.h
