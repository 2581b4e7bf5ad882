/*
 * store_follow.c - a follower (ZR_OPEN_FOLLOW) taking up what the writer
 * beside it has synced.  The writer publishes a header only after the
 * payloads and table entries it covers are flushed, so a header read here
 * names records that are all on disk; the header itself may not be yet
 * (the writer's last fsync may still be running), so the follower flushes
 * meta.zr before it believes it.  On a filesystem with client caches the
 * files may briefly look shorter than the header says (GlusterFS keeps
 * sizes for a second): such a header is left for a later refresh.  The
 * new bytes are then read once through the file, not the mapping: a
 * client cache that still ends at the old size gives a short read (and a
 * FUSE client shrinks the file's size in the kernel on one, after which a
 * mapped read past it is SIGBUS), so a short read leaves the header for a
 * later refresh too, and a full one leaves the kernel knowing the size and
 * holding the pages the mapping will read.  Only
 * appends can happen beside a follower (delete and compact need its lock),
 * so a header that shrank means the lock did not reach the writer.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "error.h"
#include "store_io.h"

/* Whether the files hold what header (len, tail) points at; 0 if not yet. */
static int files_cover(zr_store *s, uint64_t len, uint64_t tail, int *ok)
{
	uint64_t msize, dsize;
	int err = zr__file_size(s, ZR__META, &msize);

	if (!err)
		err = zr__file_size(s, ZR__DATA, &dsize);
	*ok = !err && msize >= zr__loc_pos(len) && dsize >= tail;
	return err;
}

#define READ_CHUNK (1u << 20)

/* Whether file shows every byte of [from, to) to a read; 0 if it ends
 * before (the client's view is behind: not yet). */
static int file_shows(zr_store *s, int file, uint64_t from, uint64_t to,
		      uint8_t *buf, int *ok)
{
	*ok = 1;
	while (from < to) {
		size_t want = to - from < READ_CHUNK ? (size_t)(to - from)
						     : READ_CHUNK;
		struct zr__file *f = s->file[file];
		ssize_t n = f->io->read(f, buf, want, from);

		if (n == -EINTR)
			continue;
		if (n < 0)
			return zr__fail((int)n, "%s/%s: read at %" PRIu64
					": %s", s->path, zr__file_name(file),
					from, strerror((int)-n));
		if (n == 0) {
			*ok = 0;
			return 0;
		}
		from += (uint64_t)n;
	}
	return 0;
}

/* Whether the new table entries and records read whole through the
 * files (see the top of this file). */
static int new_bytes_show(zr_store *s, uint64_t old, uint64_t len,
			  uint64_t tail, int *ok)
{
	uint8_t *buf = malloc(READ_CHUNK);
	int err;

	if (!buf)
		return zr__fail(-ENOMEM, "%s: refresh: no memory", s->path);
	err = file_shows(s, ZR__META, zr__loc_pos(old), zr__loc_pos(len), buf,
			 ok);
	if (!err && *ok)
		err = file_shows(s, ZR__DATA, zr__tail(s), tail, buf, ok);
	free(buf);
	return err;
}

/* The new entries [from, len) against the new frontier, and their sum. */
static int check_new(zr_store *s, uint64_t from, uint64_t len, uint64_t tail,
		     uint64_t *sum)
{
	int err = zr__map_ensure(s, ZR__META, zr__loc_pos(len));

	if (!err)
		err = zr__map_ensure(s, ZR__DATA, tail);
	*sum = 0;
	for (uint64_t i = from; !err && i < len; i++) {
		zr_loc l;

		err = zr__loc_get(s, i, len, tail, &l);
		*sum += err ? 0 : l.phys_length;
	}
	return err;
}

static void publish(zr_store *s, uint64_t len, uint64_t tail, uint64_t sum)
{
	pthread_mutex_lock(&s->live_lock);
	atomic_store_explicit(&s->tail, tail, memory_order_release);
	atomic_store_explicit(&s->length, len, memory_order_release);
	s->live += sum;
	pthread_mutex_unlock(&s->live_lock);
}

static int follow(zr_store *s)
{
	uint64_t len, tail, old = zr__length(s), sum;
	int ok, err = zr__header_read(s, &len, &tail);

	if (err || (len == old && tail == zr__tail(s)))
		return err;
	if (len < old || tail < zr__tail(s) ||
	    len > (INT64_MAX - ZR__PAGE) / ZR__LOC || tail > INT64_MAX)
		return zr__fail(ZR_E_CHANGED, "%s: refresh: the header went "
				"from %" PRIu64 " to %" PRIu64 " records: only "
				"appends may happen beside a follower (its lock "
				"does not reach the writer, or the store was "
				"modified behind it)", s->path, old, len);
	err = zr__io_sync(s->file[ZR__META], ZR__SYNC_DATA);
	if (err && err != -EINVAL && err != -EROFS)
		return zr__fail(err, "%s/meta.zr: fdatasync: %s", s->path,
				strerror(-err));
	err = files_cover(s, len, tail, &ok);
	if (!err && ok)
		err = new_bytes_show(s, old, len, tail, &ok);
	if (err || !ok)
		return err;
	err = check_new(s, old, len, tail, &sum);
	if (!err)
		publish(s, len, tail, sum);
	return err;
}

int zr_store_refresh(zr_store *s)
{
	int err;

	zr__clear();
	if (!s)
		return zr__fail(-EINVAL, "zr_store_refresh: NULL store");
	if (!s->follow)
		return 0;
	/* One refresh at a time (sync_lock is otherwise a writer's). */
	pthread_mutex_lock(&s->sync_lock);
	err = follow(s);
	pthread_mutex_unlock(&s->sync_lock);
	return err;
}
