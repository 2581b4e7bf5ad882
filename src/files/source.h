/*
 * source.h - a stream the encoder reads records from: a store, through
 * its view if it has one, or a mixture's field, whose records come from
 * several stores of one schema named by keys (source, index; npy_mix.h
 * makes them).  Every form reads its records through these, so a
 * mixture's batch is laid out and filled by the code that makes a
 * store's.
 */
#ifndef ZRFILE_SOURCE_H
#define ZRFILE_SOURCE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "zrecord.h"

/* Keys: the index in the low 54 bits, the source (< 1024) above. */
#define ZRFILE_MIX_SHIFT 54
#define ZRFILE_MIX_KEY(src, idx) ((uint64_t)(src) << ZRFILE_MIX_SHIFT | (idx))
#define ZRFILE_MIX_SRC(key) ((uint32_t)((key) >> ZRFILE_MIX_SHIFT))
#define ZRFILE_MIX_IDX(key) ((key) & ((1ull << ZRFILE_MIX_SHIFT) - 1))

/* A store and its name in an .npz: a dense stream NAME is one member
 * NAME.npy of shape (B, *item_shape), a ragged one is members NAME/k.npy,
 * k = 0 ... B-1.  With name NULL (a file of one stream) they are named as
 * np.savez names its arguments: arr_0.npy, or arr_k.npy per record. */
typedef struct zrfile_source {
	zr_store *zs;
	const char *name;
	/* A view of zs (zrecord.h) every read of the file goes through, so
	 * its size and its bytes come from one state of the store; NULL: the
	 * store as each read finds it. */
	zr_view *view;
	/* A mixture's field (npy_mix.h): its records come from several
	 * stores of one schema (zs is the first), named by keys; NULL: a
	 * plain stream. */
	const struct zrfile_mix *mix;
} zrfile_source;

/* A mixture's field: source s's stream is src[s]. */
struct zrfile_mix {
	uint32_t k;
	const zrfile_source *src; /* the field's stream of each source */
};

/* A mixture stream's reads (source.c), by keys (ZRFILE_MIX_KEY). */
int zrfile_mix_gather(const struct zrfile_mix *m, const uint64_t *key,
		      size_t n, void *dst, size_t cap, uint64_t *off);
int zrfile_mix_gather_size(const struct zrfile_mix *m, const uint64_t *key,
			   size_t n, uint64_t *out);
int zrfile_mix_loc(const struct zrfile_mix *m, uint64_t key, zr_loc *out);
int zrfile_mix_shape(const struct zrfile_mix *m, uint64_t key,
		     uint32_t *ndim, uint64_t *shape);

/* The encoder's reads of a stream: through its view, if it has one. */
static inline int zrfile_source_gather(const zrfile_source *s,
				       const uint64_t *idx, size_t n,
				       void *dst, size_t cap, uint64_t *off)
{
	if (s->mix)
		return zrfile_mix_gather(s->mix, idx, n, dst, cap, off);
	if (s->view)
		return zr_view_gather(s->view, idx, n, dst, cap, off);
	return zr_store_gather(s->zs, idx, n, dst, cap, off);
}

static inline int zrfile_source_gather_size(const zrfile_source *s,
					    const uint64_t *idx, size_t n,
					    uint64_t *out)
{
	if (s->mix)
		return zrfile_mix_gather_size(s->mix, idx, n, out);
	if (s->view)
		return zr_view_gather_size(s->view, idx, n, out);
	return zr_store_gather_size(s->zs, idx, n, out);
}

static inline int zrfile_source_loc(const zrfile_source *s, uint64_t idx,
				    zr_loc *out)
{
	if (s->mix)
		return zrfile_mix_loc(s->mix, idx, out);
	if (s->view)
		return zr_view_loc(s->view, idx, out);
	return zr_store_loc(s->zs, idx, out);
}

static inline int zrfile_source_shape(const zrfile_source *s,
				      uint64_t idx, uint32_t *ndim,
				      uint64_t *shape)
{
	if (s->mix)
		return zrfile_mix_shape(s->mix, idx, ndim, shape);
	if (s->view)
		return zr_view_ragged_shape(s->view, idx, ndim, shape);
	return zr_ragged_shape(s->zs, idx, ndim, shape);
}

/* An encoded-image store's records decoded (zrecord.h, "Encoded
 * images"): only through a store's view (-EINVAL for a mixture's field
 * or a stream without one). */
static inline int zrfile_source_image_shape(const zrfile_source *s,
					    uint64_t idx,
					    const zr_image_opts *o,
					    uint32_t *h, uint32_t *w)
{
	if (s->mix || !s->view)
		return -EINVAL;
	return zr_view_image_shape(s->view, idx, o, h, w);
}

static inline int zrfile_source_gather_images(const zrfile_source *s,
					      const uint64_t *idx, size_t n,
					      const zr_image_opts *o,
					      void *dst, size_t cap,
					      const uint64_t *off)
{
	if (s->mix || !s->view)
		return -EINVAL;
	return zr_view_gather_images(s->view, idx, n, o, dst, cap, off);
}

#endif
