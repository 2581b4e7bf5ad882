/*
 * image_gather.c - the gather of an encoded-image store, decoded: the
 * pool's lanes each take a block of records, read one record's bytes
 * (under the SIGBUS guard, into the lane's scratch), and decode it
 * straight into its place in the caller's batch.  The guard covers the
 * read only, so its jump never crosses a decoder's frames.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "error.h"
#include "image.h"
#include "pool.h"
#include "store_stage.h"
#include "store_view.h"

struct igather {
	zr_store *s;
	const uint64_t *idx;
	const zr_image_opts *o;
	uint8_t *dst;
	const uint64_t *offsets; /* size 0: the caller's boundaries */
	size_t each;             /* size S: S * S * 3 */
	struct zr__snap sn;
	const uint8_t **staged;  /* record k's stored bytes, or NULL */
};

/* One record's stored bytes into a scratch buffer grown as needed. */
struct iread {
	const struct igather *g;
	size_t k;		/* the record's place in the batch */
	uint64_t idx;
	uint8_t **buf;
	size_t *cap;
	uint32_t len;
};

static int read_load(void *arg)
{
	struct iread *r = arg;
	const struct igather *g = r->g;
	zr_loc l;
	int err = zr__snap_loc(g->s, &g->sn, r->idx, &l);

	if (err)
		return err;
	if (l.logic_length > *r->cap) {
		uint8_t *n = realloc(*r->buf, l.logic_length);

		if (!n)
			return zr__fail(-ENOMEM, "%s: record %" PRIu64 ": no "
					"memory", g->s->path, r->idx);
		*r->buf = n;
		*r->cap = l.logic_length;
	}
	r->len = l.logic_length;
	if (g->staged)
		return zr__record_from(g->s, r->idx, &l, g->staged[r->k],
				       *r->buf);
	return zr__record_read(g->s, g->sn.data, r->idx, &l, *r->buf);
}

/* The file's bytes within record idx, the batch's k-th (one axis of
 * uint8, as stored). */
static int file_bytes(const struct igather *g, size_t k, uint64_t idx,
		      uint8_t **buf, size_t *cap, const uint8_t **file,
		      size_t *len)
{
	struct iread r = { g, k, idx, buf, cap, 0 };
	uint64_t shape[ZR_MAX_NDIM];
	uint32_t ndim;
	size_t off;
	int err = zr__maps_read(g->s, g->sn.meta, g->sn.data, read_load, &r);

	if (err)
		return err;
	if (zr__ragged_head(*buf, r.len, r.len, 1, &ndim, shape, &off))
		return zr__fail(ZR_E_CORRUPT, "%s/data.zr: record %" PRIu64
				": malformed shape prefix", g->s->path, idx);
	if (ndim != 1)
		return zr__fail(ZR_E_SHAPE, "%s: record %" PRIu64 ": has %u "
				"axes; an image record is one axis of the "
				"file's bytes", g->s->path, idx, ndim);
	*file = *buf + off;
	*len = r.len - off;
	return 0;
}

static int record_fail(const zr_store *s, uint64_t idx, int rc,
		       const char *msg)
{
	char what[4200];

	snprintf(what, sizeof(what), "%s: record %" PRIu64, s->path, idx);
	return zr__image_fail(rc, what, msg);
}

static int decode_block(void *ctx, size_t b, size_t e, unsigned lane)
{
	const struct igather *g = ctx;
	char msg[ZR__IMAGE_MSG];
	uint8_t *buf = NULL;
	size_t cap = 0;
	int err = 0;

	(void)lane;
	for (size_t k = b; !err && k < e; k++) {
		const uint8_t *file;
		size_t len, at, n;

		err = file_bytes(g, k, g->idx[k], &buf, &cap, &file, &len);
		if (err)
			break;
		at = g->offsets ? g->offsets[k] : k * g->each;
		n = g->offsets ? g->offsets[k + 1] - g->offsets[k] : g->each;
		err = zr__image_decode(file, len, g->o, g->o->position + k,
				       g->dst + at, n, msg, sizeof(msg));
		if (err)
			err = record_fail(g->s, g->idx[k], err, msg);
	}
	free(buf);
	return err;
}

/* The size of the batch: S * S * 3 per record, or the caller's offsets
 * (non-decreasing, within dst_cap). */
static int plan(struct igather *g, size_t count, size_t dst_cap)
{
	const zr_image_opts *o = g->o;
	uint32_t side = o->size ? o->size
				: (o->flags & ZR_IMAGE_RRC) ? 224 : 0;

	if (side) {
		g->each = (size_t)side * side * 3;
		g->offsets = NULL;
		if (count > dst_cap / g->each)
			return zr__fail(-EINVAL, "%s: %zu images of %ux%ux3 "
					"need more than dst_cap %zu",
					g->s->path, count, side, side,
					dst_cap);
		return 0;
	}
	if (!g->offsets)
		return zr__fail(-EINVAL, "%s: a gather of whole images needs "
				"offsets (zr_view_image_shape)", g->s->path);
	for (size_t k = 0; k < count; k++)
		if (g->offsets[k + 1] < g->offsets[k])
			return zr__fail(-EINVAL, "%s: offsets decrease at %zu",
					g->s->path, k);
	if (g->offsets[count] > dst_cap)
		return zr__fail(-EINVAL, "%s: offsets reach past dst_cap %zu",
				g->s->path, dst_cap);
	return 0;
}

static int check_store(zr_store *s, const zr_image_opts *o)
{
	if (!zr_store_images(s))
		return zr__fail(-EINVAL, "%s: not an encoded-image store "
				"(`zrecord import --encoded` makes one; "
				"zr_store_mark_images marks one)", s->path);
	return zr__image_opts_check(o);
}

/* The store's rw lock shared and its snapshot: view v's, or now (v
 * NULL).  The caller unlocks. */
static int begin(zr_store *s, const zr_view *v, struct zr__snap *sn)
{
	int err = zr__view_rdlock(s, v);

	if (err)
		return err;
	if (v)
		zr__view_snap(v, sn);
	else
		zr__snap_now(s, sn);
	return 0;
}

static int gather(zr_store *s, const zr_view *v, const uint64_t *idx,
		  size_t count, const zr_image_opts *o, void *dst,
		  size_t dst_cap, const uint64_t *offsets)
{
	struct igather g = { .s = s, .idx = idx, .o = o, .dst = dst,
			     .offsets = offsets };
	struct zr__stage st = { 0 };
	int err;

	zr__clear();
	err = check_store(s, o);
	if (err || count == 0)
		return err;
	if (!idx || !dst)
		return zr__fail(-EINVAL, "%s: gather: NULL idx or dst",
				s->path);
	err = plan(&g, count, dst_cap);
	if (err)
		return err;
	err = begin(s, v, &g.sn);
	if (err)
		return err;
	/* A backend without map: the batch's bytes first, all at once. */
	err = zr__stage_fetch(s, &g.sn, idx, count, &st);
	g.staged = st.src;
	/* An image is a job of its own: one record is worth a lane. */
	if (!err)
		err = zr__pool_run(decode_block, &g, count, 1);
	pthread_rwlock_unlock(&s->rw);
	zr__stage_free(&st);
	return err;
}

int zr_store_gather_images(zr_store *s, const uint64_t *idx, size_t count,
			   const zr_image_opts *o, void *dst, size_t dst_cap,
			   const uint64_t *offsets)
{
	return gather(s, NULL, idx, count, o, dst, dst_cap, offsets);
}

int zr_view_gather_images(zr_view *v, const uint64_t *idx, size_t count,
			  const zr_image_opts *o, void *dst, size_t dst_cap,
			  const uint64_t *offsets)
{
	return gather(v->s, v, idx, count, o, dst, dst_cap, offsets);
}

int zr_view_image_shape(zr_view *v, uint64_t idx, const zr_image_opts *o,
			uint32_t *h, uint32_t *w)
{
	zr_store *s = v->s;
	struct igather g = { .s = s, .o = o };
	char msg[ZR__IMAGE_MSG];
	const uint8_t *file;
	uint8_t *buf = NULL;
	size_t cap = 0, len;
	uint32_t oh, ow;
	int err;

	zr__clear();
	err = check_store(s, o);
	if (err)
		return err;
	err = begin(s, v, &g.sn);
	if (err)
		return err;
	err = file_bytes(&g, 0, idx, &buf, &cap, &file, &len);
	pthread_rwlock_unlock(&s->rw);
	if (!err) {
		err = zr__image_shape(file, len, o, &oh, &ow, msg,
				      sizeof(msg));
		if (err)
			err = record_fail(s, idx, err, msg);
	}
	free(buf);
	if (!err) {
		*h = oh;
		*w = ow;
	}
	return err;
}
