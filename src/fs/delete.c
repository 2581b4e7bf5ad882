/*
 * delete.c - the write-only `delete` file: record indices as decimal text
 * (separated by spaces, tabs, commas or newlines) or as one integer .npy.
 *
 * Each write() checks the input it completes, so a shell sees the error
 * at the write it makes (bash ignores close errors of its builtins): a bad
 * character, dtype or header is EINVAL, an index at or past the store's
 * length ERANGE, an open append session EBUSY, input over 256 MiB EFBIG.
 * A failed write poisons the handle: nothing of it is deleted.  The
 * indices are deleted together, as one zr_store_delete, at the close by
 * the process that opened the file (append.c says why that one), which
 * reports the library's verdict; input still pending at RELEASE (the
 * opener closed first) is deleted then, its errors only logged.
 * Every failure leaves a line in the store's errors file.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file_kinds.h"
#include "u64.h"
#include "store_park.h"
#include "errors_log.h"

#define DELETE_INPUT_MAX (256u << 20)

/* The indices of one delete. */
struct idxvec {
	uint64_t *v;
	size_t n, cap;
};

static int push(struct idxvec *iv, uint64_t x)
{
	if (!iv)
		return 0;
	if (iv->n == iv->cap) {
		size_t cap = iv->cap ? 2 * iv->cap : 64;
		uint64_t *p = realloc(iv->v, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		iv->v = p;
		iv->cap = cap;
	}
	iv->v[iv->n++] = x;
	return 0;
}

static int is_sep(char c)
{
	return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == ',';
}

static int past_end(struct zrfs_fstore *st, const char *index, uint64_t limit)
{
	zrfs_elog_add(&st->log, st->path, "delete: index %s is out of range "
		     "(the store holds %" PRIu64 " records)", index, limit);
	return ZR_E_RANGE;
}

/* Checks decimal digits s[0, len) (a whole token, or the start of one:
 * more digits only make an index larger) against limit. */
static int check_digits(struct zrfs_fstore *st, const char *s, size_t len,
			uint64_t limit, uint64_t *out)
{
	char shown[32];
	uint64_t x;

	/* leading zeros are harmless here: strip them */
	while (len > 1 && *s == '0') {
		s++;
		len--;
	}
	if (!zrfs_parse_u64(s, len, &x) && x < limit) {
		*out = x;
		return 0;
	}
	snprintf(shown, sizeof(shown), "%.*s%s", len > 24 ? 24 : (int)len,
		 s, len > 24 ? "..." : "");
	return past_end(st, shown, limit);
}

/* Scans text s[*pos, len).  A token that runs to the end of the input is
 * whole only when final; before that only its digits so far are checked
 * and *pos stays at its start.  Collects the indices into iv (if any). */
static int text_scan(struct zrfs_fstore *st, const char *s, size_t len,
		     size_t *pos, int final, uint64_t limit,
		     struct idxvec *iv)
{
	size_t i = *pos;
	uint64_t x;
	int err = 0;

	while (i < len && !err) {
		size_t j = i;

		if (is_sep(s[i])) {
			*pos = ++i;
			continue;
		}
		while (j < len && s[j] >= '0' && s[j] <= '9')
			j++;
		if (j < len && !is_sep(s[j])) {
			zrfs_elog_add(&st->log, st->path, "delete: byte %zu "
				     "(0x%02x) is neither a digit nor a "
				     "separator", j, (unsigned char)s[j]);
			return -EINVAL;
		}
		err = check_digits(st, s + i, j - i, limit, &x);
		if (j == len && !final)
			break;
		if (!err)
			err = push(iv, x);
		*pos = i = j;
	}
	return err;
}

static int bad_npy(struct zrfs_fstore *st, const char *why)
{
	zrfs_elog_add(&st->log, st->path, "delete: %s", why);
	return ZR_E_NPY;
}

/* Reads the integer at p; 1 if it is negative (*out then holds it as
 * an int64_t). */
static int npy_item(const zr_npy_header *h, const unsigned char *p,
		    uint64_t *out)
{
	unsigned w = h->dtype.itemsize;
	uint64_t x = 0;
	int neg;

	for (unsigned b = 0; b < w; b++)
		x |= (uint64_t)p[h->dtype.order == '>' ? w - 1 - b : b]
		     << (8 * b);
	neg = h->dtype.kind == 'i' && (x >> (8 * w - 1)) & 1;
	if (neg && w < 8)
		x |= ~(uint64_t)0 << (8 * w);
	*out = x;
	return neg;
}

/* Scans an integer .npy in s[0, len) from item *pos on (*pos counts
 * bytes, the header included). */
static int npy_scan(struct zrfs_fstore *st, const char *s, size_t len,
		    size_t *pos, int final, uint64_t limit, struct idxvec *iv)
{
	zr_npy_header h;
	size_t need = 0, w, at;
	int err = zr_npy_parse(s, len, &h, &need);

	if (err == ZR_E_TRUNCATED && !final)
		return 0;
	if (err)
		return bad_npy(st, "malformed .npy header");
	if ((h.dtype.kind != 'i' && h.dtype.kind != 'u') || h.ndim > 1)
		return bad_npy(st, "the .npy must be a 1-d integer array");
	if (len > h.header_len + h.data_len ||
	    (final && len != h.header_len + h.data_len))
		return bad_npy(st, "the .npy's size disagrees with its shape");
	w = h.dtype.itemsize;
	at = *pos > h.header_len ? *pos : h.header_len;
	for (; at + w <= len; at += w) {
		char shown[24];
		uint64_t x;

		if (npy_item(&h, (const unsigned char *)s + at, &x)) {
			snprintf(shown, sizeof(shown), "%" PRId64, (int64_t)x);
			return past_end(st, shown, limit);
		}
		if (x >= limit) {
			snprintf(shown, sizeof(shown), "%" PRIu64, x);
			return past_end(st, shown, limit);
		}
		if ((err = push(iv, x)))
			return err;
	}
	*pos = at;
	return 0;
}

/* Checks (and collects into iv) the input not checked yet. */
static int scan(struct zrfs_fstore *st, struct zrfs_fh *fh, int final,
		struct idxvec *iv)
{
	uint64_t limit = zr_store_length(st->zs);
	size_t pos = fh->pos;
	int err;

	if (fh->len && (unsigned char)fh->buf[0] == 0x93)
		err = npy_scan(st, fh->buf, fh->len, &pos, final, limit, iv);
	else
		err = text_scan(st, fh->buf, fh->len, &pos, final, limit, iv);
	if (!err)
		fh->pos = pos;
	return err;
}

/* Caller holds fh->mu. */
static int take(struct zrfs_fh *fh, const char *buf, size_t size)
{
	if (size > DELETE_INPUT_MAX - fh->len) {
		zrfs_elog_add(&fh->node->st->log, fh->node->st->path,
			     "delete: input over %u MiB", DELETE_INPUT_MAX >> 20);
		return -EFBIG;
	}
	if (fh->len + size > fh->cap) {
		size_t cap = 2 * (fh->len + size);
		char *p = realloc(fh->buf, cap + 1);

		if (!p)
			return -ENOMEM;
		fh->buf = p;
		fh->cap = cap;
	}
	memcpy(fh->buf + fh->len, buf, size);
	fh->len += size;
	return 0;
}

static int delete_write(struct zrfs_fs *fs, struct zrfs_fh *fh,
			const char *buf, size_t size, off_t off,
			struct zrfs_change *ch)
{
	struct zrfs_fstore *st = fh->node->st;
	int err;

	(void)fs, (void)off, (void)ch;
	pthread_mutex_lock(&fh->mu);
	err = fh->err;
	if (!err && zr_store_appending(st->zs)) {
		zrfs_elog_add(&st->log, st->path, "delete: an append session "
			     "is open; try again after it closes");
		err = -EBUSY;
	}
	if (!err)
		err = take(fh, buf, size);
	if (!err)
		err = scan(st, fh, 0, NULL);
	fh->err = err;
	pthread_mutex_unlock(&fh->mu);
	return err;
}

/* Deletes idx[0, n), which ch then owns. */
static int apply(struct zrfs_fs *fs, struct zrfs_fstore *st, uint64_t *idx,
		 size_t n, struct zrfs_change *ch)
{
	uint64_t length;
	int err;

	if (!n) {
		free(idx);
		return 0;
	}
	qsort(idx, n, sizeof(*idx), zrfs_cmp_u64);
	zrfs_writer_begin(&fs->park);
	err = zr_store_delete(st->zs, idx, n);
	length = zr_store_length(st->zs);
	zrfs_writer_end(&fs->park);
	*ch = (struct zrfs_change){ st, idx, n, length };
	if (err)
		zrfs_elog_add(&st->log, st->path, "delete: %s",
			     *zr_errmsg() ? zr_errmsg() : zr_strerror(err));
	return err;
}

/* Caller holds fh->mu.  Deletes what was written, or reports the write
 * that failed; either way the handle starts afresh. */
static int commit(struct zrfs_fs *fs, struct zrfs_fh *fh,
		  struct zrfs_change *ch)
{
	struct idxvec iv = { 0 };
	int err = fh->err;

	if (!err && fh->len) {
		fh->pos = 0;
		err = scan(fh->node->st, fh, 1, &iv);
		if (!err) {
			err = apply(fs, fh->node->st, iv.v, iv.n, ch);
			iv.v = NULL;
		}
	}
	free(iv.v);
	fh->len = fh->pos = 0;
	fh->err = 0;
	return err;
}

static int delete_flush(struct zrfs_fs *fs, struct zrfs_fh *fh, pid_t caller,
			struct zrfs_change *ch)
{
	int err;

	if (!caller || caller != fh->owner)
		return 0;
	pthread_mutex_lock(&fh->mu);
	err = commit(fs, fh, ch);
	pthread_mutex_unlock(&fh->mu);
	return err;
}

static void delete_release(struct zrfs_fs *fs, struct zrfs_fh *fh,
			   struct zrfs_change *ch)
{
	pthread_mutex_lock(&fh->mu);
	commit(fs, fh, ch);
	pthread_mutex_unlock(&fh->mu);
}

const struct zrfs_kind_ops zrfs_delete_kind = {
	.mode = S_IFREG | 0644,
	.flags = ZRFS_KF_WRITABLE,
	.attr_ttl = 0,
	.entry_ttl = ZRFS_TTL_LONG,
	.read = zrfs_usage_read,
	.write = delete_write,
	.flush = delete_flush,
	.release = delete_release,
	.size = zrfs_usage_size,
};
