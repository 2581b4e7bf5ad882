/*
 * codec.c - codec names, thread-cached zstd contexts, and one-frame encode
 * and decode.  Contexts are per thread (one per lane, reused for every
 * record) because creating one costs far more than a small record's
 * decompression; dictionaries are shared read-only by all threads.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <zstd_errors.h>

#include "codec.h"
#include "error.h"

#define ZR__ZSTD_LEVEL 3

int zr_codec_parse(const char *s, zr_codec *out)
{
	static const struct {
		const char *name;
		zr_codec codec;
	} names[] = {
		{ "raw", ZR_CODEC_RAW },
		{ "zstd", ZR_CODEC_ZSTD },
		{ "zstd_dict", ZR_CODEC_ZSTD_DICT },
		{ "zstdict", ZR_CODEC_ZSTD_DICT },
	};

	zr__clear();
	for (size_t i = 0; s && i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(s, names[i].name) == 0) {
			*out = names[i].codec;
			return 0;
		}
	}
	return zr__fail(-EINVAL, "unknown codec '%s' (raw, zstd, zstd_dict)",
			s ? s : "(null)");
}

const char *zr_codec_name(zr_codec codec)
{
	switch (codec) {
	case ZR_CODEC_RAW:
		return "raw";
	case ZR_CODEC_ZSTD:
		return "zstd";
	case ZR_CODEC_ZSTD_DICT:
		return "zstd_dict";
	}
	return "unknown";
}

/* Every thread's contexts are also linked into one list so that they stay
 * reachable when their thread is gone without running its destructor (a
 * forked child inherits none of the parent's other threads). */
struct tls_ctx {
	ZSTD_CCtx *cctx;
	ZSTD_DCtx *dctx;
	struct tls_ctx *prev, *next; /* guarded by all_lock */
};

static pthread_key_t ctx_key;
static pthread_once_t ctx_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t all_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tls_ctx *all_ctx;

static void tls_ctx_free(void *p)
{
	struct tls_ctx *t = p;

	pthread_mutex_lock(&all_lock);
	if (t->prev)
		t->prev->next = t->next;
	else
		all_ctx = t->next;
	if (t->next)
		t->next->prev = t->prev;
	pthread_mutex_unlock(&all_lock);
	ZSTD_freeCCtx(t->cctx);
	ZSTD_freeDCtx(t->dctx);
	free(t);
}

/* A child forked while another thread held all_lock must not inherit it
 * locked. */
static void ctx_atfork_child(void)
{
	pthread_mutex_init(&all_lock, NULL);
}

static void ctx_key_init(void)
{
	pthread_key_create(&ctx_key, tls_ctx_free);
	pthread_atfork(NULL, NULL, ctx_atfork_child);
}

static struct tls_ctx *tls_ctx(void)
{
	struct tls_ctx *t;

	pthread_once(&ctx_once, ctx_key_init);
	t = pthread_getspecific(ctx_key);
	if (t)
		return t;
	t = calloc(1, sizeof(*t));
	if (t && pthread_setspecific(ctx_key, t)) {
		free(t);
		return NULL;
	}
	if (t) {
		pthread_mutex_lock(&all_lock);
		t->next = all_ctx;
		if (all_ctx)
			all_ctx->prev = t;
		all_ctx = t;
		pthread_mutex_unlock(&all_lock);
	}
	return t;
}

ZSTD_CCtx *zr__cctx(void)
{
	struct tls_ctx *t = tls_ctx();

	if (!t)
		return NULL;
	if (!t->cctx)
		t->cctx = ZSTD_createCCtx();
	return t->cctx;
}

ZSTD_DCtx *zr__dctx(void)
{
	struct tls_ctx *t = tls_ctx();

	if (!t)
		return NULL;
	if (!t->dctx)
		t->dctx = ZSTD_createDCtx();
	return t->dctx;
}

static int zfail(size_t rc)
{
	return zr__fail(ZR_E_CODEC, "zstd compression failed: %s",
			ZSTD_getErrorName(rc));
}

/* Parameters are sticky on a cached context: set them all every time. */
static size_t cctx_setup(ZSTD_CCtx *c, const ZSTD_CDict *cdict)
{
	size_t rc = ZSTD_CCtx_reset(c, ZSTD_reset_session_and_parameters);

	if (ZSTD_isError(rc))
		return rc;
	if (cdict)
		return ZSTD_CCtx_refCDict(c, cdict);
	return ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel,
				      ZR__ZSTD_LEVEL);
}

static size_t stream_two(ZSTD_CCtx *c, const void *head, size_t head_len,
			 const void *body, size_t body_len, void *dst,
			 size_t cap)
{
	ZSTD_outBuffer out = { dst, cap, 0 };
	ZSTD_inBuffer in = { head, head_len, 0 };
	size_t rc = ZSTD_CCtx_setPledgedSrcSize(c, head_len + body_len);

	if (ZSTD_isError(rc))
		return rc;
	while (in.pos < in.size) {
		rc = ZSTD_compressStream2(c, &out, &in, ZSTD_e_continue);
		if (ZSTD_isError(rc))
			return rc;
	}
	in = (ZSTD_inBuffer){ body, body_len, 0 };
	do {
		rc = ZSTD_compressStream2(c, &out, &in, ZSTD_e_end);
		if (ZSTD_isError(rc))
			return rc;
		if (rc && out.pos == out.size)
			return (size_t)-ZSTD_error_dstSize_tooSmall;
	} while (rc);
	return out.pos;
}

int zr__encode(const ZSTD_CDict *cdict, const void *head, size_t head_len,
	       const void *body, size_t body_len, void *dst, size_t cap,
	       size_t *out)
{
	ZSTD_CCtx *c = zr__cctx();
	size_t rc;

	if (!c)
		return zr__fail(-ENOMEM, "no memory for a zstd context");
	rc = cctx_setup(c, cdict);
	if (!ZSTD_isError(rc)) {
		if (head_len)
			rc = stream_two(c, head, head_len, body, body_len, dst,
					cap);
		else
			rc = ZSTD_compress2(c, dst, cap, body, body_len);
	}
	if (ZSTD_isError(rc))
		return zfail(rc);
	*out = rc;
	return 0;
}

int zr__frame_check(const void *src, size_t phys, size_t logic,
		    const char *path, uint64_t idx)
{
	unsigned long long size = ZSTD_getFrameContentSize(src, phys);

	/* A frame may omit its size (other writers); decoding bounds it. */
	if (size == logic || size == ZSTD_CONTENTSIZE_UNKNOWN)
		return 0;
	if (size == ZSTD_CONTENTSIZE_ERROR)
		return zr__fail(ZR_E_CODEC, "%s/data.zr record %" PRIu64
				": not a zstd frame", path, idx);
	return zr__fail(ZR_E_CORRUPT, "%s/data.zr record %" PRIu64 ": frame "
			"declares %llu bytes, logic_length is %zu", path, idx,
			size, logic);
}

int zr__decode(const ZSTD_DDict *ddict, const void *src, size_t phys,
	       void *dst, size_t logic, const char *path, uint64_t idx)
{
	ZSTD_DCtx *d = zr__dctx();
	size_t rc;

	if (!d)
		return zr__fail(-ENOMEM, "no memory for a zstd context");
	if (ddict)
		rc = ZSTD_decompress_usingDDict(d, dst, logic, src, phys,
						ddict);
	else
		rc = ZSTD_decompressDCtx(d, dst, logic, src, phys);
	if (rc == logic)
		return 0;
	if (ZSTD_isError(rc) &&
	    ZSTD_getErrorCode(rc) == ZSTD_error_dstSize_tooSmall)
		return zr__fail(ZR_E_CORRUPT, "%s/data.zr record %" PRIu64
				": frame decodes to more than its "
				"logic_length %zu", path, idx, logic);
	if (ZSTD_isError(rc))
		return zr__fail(ZR_E_CODEC, "%s/data.zr record %" PRIu64
				": zstd: %s", path, idx,
				ZSTD_getErrorName(rc));
	return zr__fail(ZR_E_CORRUPT, "%s/data.zr record %" PRIu64 ": frame "
			"decodes to %zu bytes, logic_length is %zu", path, idx,
			rc, logic);
}

int zr__decode_head(const ZSTD_DDict *ddict, const void *src, size_t phys,
		    void *dst, size_t want, const char *what)
{
	ZSTD_DCtx *d = zr__dctx();
	ZSTD_inBuffer in = { src, phys, 0 };
	ZSTD_outBuffer out = { dst, want, 0 };
	size_t rc = 0;

	if (!d)
		return zr__fail(-ENOMEM, "no memory for a zstd context");
	if (ddict)
		rc = ZSTD_DCtx_refDDict(d, ddict);
	while (!ZSTD_isError(rc) && out.pos < want) {
		size_t before_in = in.pos, before_out = out.pos;

		rc = ZSTD_decompressStream(d, &out, &in);
		if (!ZSTD_isError(rc) &&
		    (rc == 0 || (in.pos == before_in && out.pos == before_out)))
			break;
	}
	/* Drop the dictionary and the half-read frame: the context is
	 * shared by every store this thread touches. */
	ZSTD_DCtx_reset(d, ZSTD_reset_session_and_parameters);
	if (ZSTD_isError(rc))
		return zr__fail(ZR_E_CODEC, "%s: zstd: %s", what,
				ZSTD_getErrorName(rc));
	if (out.pos < want)
		return zr__fail(ZR_E_CORRUPT,
				"%s: frame ends after %zu of %zu bytes", what,
				out.pos, want);
	return 0;
}
