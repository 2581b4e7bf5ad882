# src/lib/local.mk - libzrecord.  Every source goes into a convenience
# library that the tests link directly (to reach zr__ internals); the
# installed library wraps it and exports only ZR_API symbols.
noinst_LTLIBRARIES += src/lib/libzrecord_core.la
src_lib_libzrecord_core_la_SOURCES = \
	src/lib/error.c src/lib/error.h
src_lib_libzrecord_core_la_CPPFLAGS = $(AM_CPPFLAGS) -DZR_BUILDING_LIBRARY
src_lib_libzrecord_core_la_CFLAGS = $(AM_CFLAGS) $(ZSTD_CFLAGS) $(MSGPACK_CFLAGS) \
	$(IMAGE_CFLAGS) $(CURL_CFLAGS)
src_lib_libzrecord_core_la_LIBADD = $(ZSTD_LIBS) $(MSGPACK_LIBS) $(IMAGE_LIBS) \
	$(CURL_LIBS) -lm

lib_LTLIBRARIES += src/lib/libzrecord.la
src_lib_libzrecord_la_SOURCES =
src_lib_libzrecord_la_LIBADD = src/lib/libzrecord_core.la
# -version-info CURRENT:REVISION:AGE (libtool's rules; the soname is
# libzrecord.so.(CURRENT - AGE), which must equal ZR_VERSION_MAJOR):
#  - any change to the source of a release: REVISION += 1;
#  - a public function or struct member added: CURRENT += 1, REVISION = 0,
#    AGE += 1 (and a new node in zrecord.map);
#  - anything removed or changed incompatibly: CURRENT += 1, REVISION = 0,
#    AGE = 0, and ZR_VERSION_MAJOR becomes CURRENT.
# These numbers are not the package version; CONTRIBUTING.md has the
# release checklist.
src_lib_libzrecord_la_LDFLAGS = $(AM_LDFLAGS) -version-info 0:0:0 \
	-Wl,--version-script=$(srcdir)/src/lib/zrecord.map
EXTRA_src_lib_libzrecord_la_DEPENDENCIES = src/lib/zrecord.map
EXTRA_DIST += src/lib/zrecord.map
# dtype, schema, .npy headers, sampler (the pure modules), version
src_lib_libzrecord_core_la_SOURCES += src/lib/version.c src/lib/dtype.c src/lib/schema.c \
	src/lib/npy.c src/lib/sampler.c src/lib/sampler.h \
	src/lib/stream.c src/lib/stream.h src/lib/stream_map.c \
	src/lib/text_builder.c src/lib/text_builder.h \
	src/lib/mpcheck.c src/lib/mpcheck.h
# store engine, codecs, worker pool, dictionary training
src_lib_libzrecord_core_la_SOURCES += src/lib/pool.c src/lib/pool.h \
	src/lib/iopool.c src/lib/iopool.h \
	src/lib/store_stage.c src/lib/store_stage.h \
	src/lib/codec.c src/lib/codec.h src/lib/store.h src/lib/store_io.h src/lib/store_view.h src/lib/store_open.c \
	src/lib/store_create.c src/lib/store_io.c src/lib/store_append.c \
	src/lib/append.h src/lib/store_reserve.c \
	src/lib/store_gather.c src/lib/store_maint.c src/lib/store_view.c \
	src/lib/store_changes.c \
	src/lib/dict.c \
	src/lib/journal.c src/lib/journal.h src/lib/journal_fmt.h \
	src/lib/journal_recover.c \
	src/lib/sigbus.c src/lib/sigbus.h src/lib/store_guard.c \
	src/lib/store_scope.c src/lib/store_lock.c src/lib/store_follow.c \
	src/lib/ragged_forms.c \
	src/lib/vfs.c src/lib/vfs.h src/lib/vfs_posix.c
# the read-only S3 backend: s3:// URLs over libcurl; push and pull
src_lib_libzrecord_core_la_SOURCES += src/lib/vfs_s3.c src/lib/s3.h \
	src/lib/s3_conf.c src/lib/s3_http.c \
	src/lib/s3_manifest.c src/lib/s3_manifest.h \
	src/lib/sha256.c src/lib/sha256.h \
	src/lib/s3_push.c src/lib/s3_pull.c \
	src/lib/s3_cache.c src/lib/s3_cache.h src/lib/s3_cache_conf.c \
	src/lib/s3_cache_evict.c \
	src/lib/s3_cache_map.c \
	src/lib/s3_list.c src/lib/store_list.c src/lib/s3_follow.c
# encoded-image records: the mark, the decoders, the decoded gather
src_lib_libzrecord_core_la_SOURCES += src/lib/store_content.c \
	src/lib/image.h src/lib/image_box.c src/lib/image_resample.c \
	src/lib/image_jpeg.c src/lib/image_png.c src/lib/image_decode.c \
	src/lib/image_gather.c
