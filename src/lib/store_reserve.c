/*
 * store_reserve.c - dense rows put in place by many threads:
 * zr_append_dense_reserve takes the next count rows of an append session
 * as slots, zr_append_dense_put writes one row into its slot from any
 * thread (a decoder, straight from the buffer it decoded into while that
 * is still in its cache), and zr_append_dense_stage stages the slots kept,
 * in order.  In a raw store the slots are data.zr's own rows past the
 * session frontier, so each put is the one write of its bytes and puts run
 * in parallel; in a compressed store, or for raw rows under 4 KiB, they
 * are a buffer that staging compresses or writes, as zr_append_dense
 * would.
 *
 * Either way the bytes and the table are those zr_append_dense writes for
 * the same rows, and nothing is published before commit: the slots lie
 * past the committed tail, where a crash leaves garbage that the next
 * append overwrites (drop_staged in store_append.c, and this file's trim,
 * cut data.zr back when slots go unstaged).
 *
 * Locking: a->lock (the session's frontier lock) also serialises the puts'
 * failures into a->failure; the window itself is written only by the
 * session's caller, between its calls, never while puts run.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "append.h"
#include "error.h"
#include "store.h"

/* Raw rows smaller than this are collected in a buffer and written in one
 * pwrite at stage, as compressed ones are: a put of its own, one syscall
 * a row, would cost more than the copy it saves (labels: 8 bytes). */
#define ZR__PUT_DIRECT_MIN 4096

static int reserve_raw(zr_append *a, uint64_t count)
{
	zr_store *s = a->s;
	uint64_t size;
	int err = s->file[ZR__DATA]->io->size(s->file[ZR__DATA], 0, &size);

	if (err)
		return zr__fail(err, "%s/data.zr: cannot stat", s->path);
	a->win.size_before = (off_t)size;
	a->win.base = a->frontier;
	/* Ahead of the puts: a sync meanwhile must not take the growth for
	 * another writer's (as zr__append_reserve does). */
	if (atomic_load(&s->data_seen) < a->frontier + count * s->row_bytes)
		atomic_store(&s->data_seen, a->frontier + count * s->row_bytes);
	return 0;
}

int zr_append_dense_reserve(zr_append *a, uint64_t count)
{
	int err = zr__append_check(a, 0, count);
	size_t row;

	if (err)
		return err;
	row = a->s->row_bytes;
	if (count == 0)
		return zr__fail(-EINVAL, "append: reserve needs a count of at "
				"least 1");
	if (count > SIZE_MAX / row ||
	    a->frontier > (uint64_t)INT64_MAX - count * row)
		return zr__append_fail(a, zr__fail(ZR_E_TOOBIG, "%s: %" PRIu64
						   " rows overflow",
						   a->s->path, count));
	if (a->s->codec == ZR_CODEC_RAW && row >= ZR__PUT_DIRECT_MIN) {
		err = reserve_raw(a, count);
	} else if (!(a->win.buf = malloc((size_t)count * row))) {
		err = zr__fail(-ENOMEM, "%s: no memory for %" PRIu64 " rows",
			       a->s->path, count);
	}
	if (err)
		return err;
	a->win.count = count;
	return 0;
}

/* A put's failure is the session's (the first one wins). */
static int put_fail(zr_append *a, int err)
{
	pthread_mutex_lock(&a->lock);
	zr__error_capture(&a->failure, err);
	pthread_mutex_unlock(&a->lock);
	return err;
}

int zr_append_dense_put(zr_append *a, uint64_t slot, const void *row)
{
	zr_store *s;
	size_t n;
	int err;

	zr__clear();
	if (!a || !row)
		return zr__fail(-EINVAL, "append: put needs a session and a "
				"row");
	s = a->s;
	n = s->row_bytes;
	if (slot >= a->win.count)
		return put_fail(a, zr__fail(-EINVAL, "%s: slot %" PRIu64
					    " of a reservation of %" PRIu64,
					    s->path, slot, a->win.count));
	if (a->win.buf) {
		memcpy(a->win.buf + slot * n, row, n);
		return 0;
	}
	err = zr__pwrite_all(s, ZR__DATA, row, n, a->win.base + slot * n);
	return err ? put_fail(a, err) : 0;
}

/* keep[0..count) must be ascending slots of the reservation. */
static int check_keep(const zr_append *a, const uint64_t *keep,
		      uint64_t count)
{
	if (count > a->win.count)
		return zr__fail(-EINVAL, "%s: staging %" PRIu64 " rows of a "
				"reservation of %" PRIu64, a->s->path, count,
				a->win.count);
	for (uint64_t j = 0; keep && j < count; j++)
		if (keep[j] >= a->win.count || (j && keep[j] <= keep[j - 1]))
			return zr__fail(-EINVAL, "%s: kept slot %" PRIu64
					" out of order or past the "
					"reservation", a->s->path, keep[j]);
	return 0;
}

/* Closes the kept rows up over the dropped ones: each moves down, over a
 * slot already passed, so going in order never overwrites one still to
 * move. */
static int close_up(zr_append *a, const uint64_t *keep, uint64_t count)
{
	zr_store *s = a->s;
	size_t n = s->row_bytes;
	uint8_t *tmp = NULL;
	int err = 0;

	for (uint64_t j = 0; keep && !err && j < count; j++) {
		if (keep[j] == j)
			continue;
		if (a->win.buf) {
			memmove(a->win.buf + j * n, a->win.buf + keep[j] * n, n);
			continue;
		}
		if (!tmp && !(tmp = malloc(n)))
			err = zr__fail(-ENOMEM, "%s: no memory", s->path);
		if (!err)
			err = zr__pread_all(s, ZR__DATA, tmp, n,
					    a->win.base + keep[j] * n);
		if (!err)
			err = zr__pwrite_all(s, ZR__DATA, tmp, n,
					     a->win.base + j * n);
	}
	free(tmp);
	return err;
}

/* The kept rows are in data.zr already: they only need their frontier
 * and table entries. */
static int stage_raw(zr_append *a, uint64_t count)
{
	uint64_t off;
	int err = count ? zr__append_reserve(a, (size_t)count *
					     a->s->row_bytes, &off) : 0;

	if (!err && count)
		err = zr__append_raw_rows(a, off, count);
	if (!err)
		a->staged += count;
	return err;
}

int zr_append_dense_stage(zr_append *a, const uint64_t *keep,
			  uint64_t count)
{
	uint8_t *buf;
	int err;

	zr__clear();
	if (!a)
		return zr__fail(-EINVAL, "append: NULL session");
	if (a->failure.err) {
		zr__append_window_drop(a);
		return zr__error_replay(&a->failure);
	}
	err = a->win.count ? check_keep(a, keep, count) :
			     zr__fail(-EINVAL, "%s: nothing reserved to "
				      "stage", a->s->path);
	if (!err)
		err = close_up(a, keep, count);
	if (!err && a->win.buf) {
		/* zr_append_dense starts by dropping the reservation: take
		 * the buffer out of it first. */
		buf = a->win.buf;
		memset(&a->win, 0, sizeof(a->win));
		err = count ? zr_append_dense(a, buf, count) : 0;
		free(buf);
		return err;
	}
	if (!err)
		err = stage_raw(a, count);
	zr__append_window_drop(a);
	return err ? zr__append_fail(a, err) : 0;
}
