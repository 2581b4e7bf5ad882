/*
 * control.c - the text files (stats, schema, errors) and the control files
 * (sync, compact, delete) of a store folder.  A delete invalidates, after
 * the fact, every record file the kernel may cache whose contents changed.
 * Reading a control file (append too) shows a one-line usage: copies of a
 * store folder (cp -r, rsync, tar) read every file and must not fail.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"
#include "ns.h"
#include "ops.h"
#include "statsjson.h"
#include "stlock.h"

#define DELETE_INPUT_MAX (256u << 20)

static int stats_json(struct zr__fstore *st, char **out, size_t *len)
{
	zr_stats s;
	int err;

	/* The library's stats would wait for a compact: park instead. */
	err = zr__st_rdlock(st);
	if (err)
		return err;
	err = zr_store_stats(st->zs, &s);
	zr__st_unlock(st);
	return err ? err : zr_stats_json(st->zs, &s, out, len);
}

static int schema_json(struct zr__fstore *st, char **out, size_t *len)
{
	char *buf = malloc(ZR_SCHEMA_MAX * 4 + 2);
	int err;

	if (!buf)
		return -ENOMEM;
	err = zr_schema_json(zr_store_schema(st->zs), buf, ZR_SCHEMA_MAX * 4);
	if (err) {
		free(buf);
		return err;
	}
	strcat(buf, "\n");
	*out = buf;
	*len = strlen(buf);
	return 0;
}

int zr__text_make(struct zr__fs *fs, const struct zr__node *n, char **out,
		  size_t *len)
{
	(void)fs;
	switch (n->kind) {
	case ZR__K_STATS:
		return stats_json(n->st, out, len);
	case ZR__K_SCHEMA:
		return schema_json(n->st, out, len);
	case ZR__K_ERRORS:
		return zr__elog_text(&n->st->log, out, len);
	default:
		return -EINVAL;
	}
}

static const char *const usage[] = {
	[ZR__K_APPEND] = "append: write .npy files here to append their "
			 "records\n",
	[ZR__K_SYNC] = "sync: write anything here to make the store "
		       "durable\n",
	[ZR__K_COMPACT] = "compact: write anything here to compact the "
			  "store in place\n",
	[ZR__K_DELETE] = "delete: write record indices here (text or an "
			 "integer .npy) to delete them\n",
};

size_t zr__usage_len(enum zr__kind kind)
{
	return strlen(usage[kind]);
}

void zr__usage_read(fuse_req_t req, enum zr__kind kind, size_t size,
		    off_t off)
{
	zr__reply_slice(req, usage[kind], zr__usage_len(kind), size, off);
}

/* Open files keep their bytes (see Contents in fs.h), so compact need not
 * wait for them; it moves every record, so every record node is stale. */
static int compact(struct zr__fs *fs, struct zr__fstore *st)
{
	int err;

	zr__st_wrlock(st);
	err = zr_store_compact(st->zs, NULL, NULL);
	st->gen++;
	zr__st_wrunlock(st);
	zr__ops_replay(fs, st);
	return err;
}

int zr__control_write(struct zr__fs *fs, struct zr__fh *fh, const char *buf,
		      size_t size)
{
	struct zr__fstore *st = fh->node->st;
	int err = 0;

	(void)fs;
	switch (fh->node->kind) {
	case ZR__K_SYNC:
		/* the library orders it against appends, deletes, compacts */
		err = zr_store_sync(st->zs);
		break;
	case ZR__K_COMPACT:
		err = compact(fs, st);
		break;
	case ZR__K_DELETE:
		pthread_mutex_lock(&fh->mu);
		if (size > DELETE_INPUT_MAX - fh->len) {
			err = -EFBIG;
		} else if (fh->len + size > fh->cap) {
			size_t cap = 2 * (fh->len + size);
			char *p = realloc(fh->buf, cap + 1);

			if (!p)
				err = -ENOMEM;
			else {
				fh->buf = p;
				fh->cap = cap;
			}
		}
		if (!err) {
			memcpy(fh->buf + fh->len, buf, size);
			fh->len += size;
		}
		pthread_mutex_unlock(&fh->mu);
		return err;
	default:
		return -EBADF;
	}
	if (err)
		zr__elog_add(&st->log, st->path, "%s: %s", fh->node->name,
			     *zr_errmsg() ? zr_errmsg() : zr_strerror(err));
	return err;
}

/* -- delete input: text indices or an integer .npy ---------------------- */

static int text_indices(const char *s, size_t len, uint64_t **out,
			size_t *count)
{
	size_t n = 0, cap = 0;
	uint64_t *v = NULL;

	for (size_t i = 0; i < len;) {
		size_t j = i;

		if (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' ||
		    s[i] == '\r' || s[i] == ',') {
			i++;
			continue;
		}
		while (j < len && s[j] >= '0' && s[j] <= '9')
			j++;
		if (n == cap) {
			void *p = realloc(v, (cap = cap ? 2 * cap : 64) *
					  sizeof(*v));

			if (!p)
				goto nomem;
			v = p;
		}
		/* leading zeros are harmless here: strip them */
		while (j - i > 1 && s[i] == '0')
			i++;
		if (j == i || zr__parse_u64(s + i, j - i, &v[n]))
			goto bad;
		n++;
		i = j;
	}
	*out = v;
	*count = n;
	return 0;
bad:
	free(v);
	return -EINVAL;
nomem:
	free(v);
	return -ENOMEM;
}

static int npy_indices(const char *s, size_t len, uint64_t **out,
		       size_t *count)
{
	zr_npy_header h;
	uint64_t *v, n;
	int err = zr_npy_parse(s, len, &h, NULL);

	if (err)
		return err;
	if ((h.dtype.kind != 'i' && h.dtype.kind != 'u') || h.ndim > 1 ||
	    h.header_len + h.data_len != len)
		return ZR_E_NPY;
	n = h.data_len / h.dtype.itemsize;
	v = malloc((n ? n : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (uint64_t k = 0; k < n; k++) {
		const unsigned char *p = (const unsigned char *)s +
					 h.header_len + k * h.dtype.itemsize;
		unsigned w = h.dtype.itemsize;
		uint64_t x = 0;

		for (unsigned b = 0; b < w; b++)
			x |= (uint64_t)p[h.dtype.order == '>' ? w - 1 - b : b]
			     << (8 * b);
		if (h.dtype.kind == 'i' && w < 8 && (x >> (8 * w - 1)))
			err = -EINVAL;
		if (h.dtype.kind == 'i' && w == 8 && (x >> 63))
			err = -EINVAL;
		v[k] = x;
	}
	if (err) {
		free(v);
		return err;
	}
	*out = v;
	*count = n;
	return 0;
}

/* Makes the kernel look up again every record name it may know whose
 * bytes changed: the holes (now holding a moved record; del sorted) and
 * everything past the end.  Their old inodes keep the old bytes for open
 * files. */
static void invalidate(struct zr__fs *fs, struct zr__fstore *st,
		       uint64_t *del, size_t ndel, uint64_t length)
{
	uint64_t *known;
	size_t nknown;

	if (zr__ns_records(fs, st, &known, &nknown))
		return;
	for (size_t i = 0; i < nknown; i++) {
		uint64_t idx = known[i];

		if (idx < length && !bsearch(&idx, del, ndel, sizeof(*del),
					     zr__cmp_u64))
			continue;
		zr__record_unname(fs, st, idx);
	}
	free(known);
}

static int apply_delete(struct zr__fs *fs, struct zr__fstore *st,
			const char *buf, size_t len)
{
	uint64_t *idx = NULL, length;
	size_t n = 0;
	int err;

	if (len >= 6 && !memcmp(buf, "\x93NUMPY", 6))
		err = npy_indices(buf, len, &idx, &n);
	else
		err = text_indices(buf, len, &idx, &n);
	if (err)
		return err;
	qsort(idx, n, sizeof(*idx), zr__cmp_u64);
	zr__st_wrlock(st);
	if (n)
		zr__record_prefill(fs, st, idx, n);
	err = n ? zr_store_delete(st->zs, idx, n) : 0;
	length = zr_store_length(st->zs);
	/* even a failed delete may have moved some records */
	if (n)
		zr__dlog_add(&st->dlog, ++st->gen, idx, n, length);
	zr__st_wrunlock(st);
	zr__ops_replay(fs, st);
	if (n)
		invalidate(fs, st, idx, n, length);
	free(idx);
	return err;
}

int zr__control_flush(struct zr__fs *fs, struct zr__fh *fh)
{
	struct zr__fstore *st = fh->node->st;
	int err = 0;

	if (fh->node->kind != ZR__K_DELETE)
		return 0;
	pthread_mutex_lock(&fh->mu);
	if (fh->len)
		err = apply_delete(fs, st, fh->buf, fh->len);
	fh->len = 0;
	pthread_mutex_unlock(&fh->mu);
	if (err)
		zr__elog_add(&st->log, st->path, "delete: %s",
			     *zr_errmsg() ? zr_errmsg() : zr_strerror(err));
	return err;
}
