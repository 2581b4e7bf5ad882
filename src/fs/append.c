/*
 * append.c - the write-only `append` file.  Each open starts one append
 * session (a second concurrent appender gets EBUSY at open); writes feed
 * the .npy stream parser sequentially, and their errors come back from
 * write().  The session commits when a descriptor of it is closed (flush),
 * so finish errors (a truncated .npy, disk full) come back from close();
 * writes through a dup'ed descriptor after that start a fresh session.
 * Every failure is logged and kept in the store's errors file; nothing of
 * a failed session becomes visible.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>

#include "files.h"
#include "npystream.h"
#include "stlock.h"

static void log_failure(struct zr__fh *fh, const char *what, int err)
{
	struct zr__fstore *st = fh->node->st;
	const char *msg = fh->ns ? zr_npystream_message(fh->ns) : "";

	if (!*msg)
		msg = *zr_errmsg() ? zr_errmsg() : zr_strerror(err);
	zr__elog_add(&st->log, st->path, "append %s: %s (%s)", what, msg,
		     zr_errname(err));
}

/* Caller holds fh->mu.  The library's session start would wait for a
 * delete or compact: an open parks instead (may_park), a write waits. */
static int begin(struct zr__fh *fh, int may_park)
{
	struct zr__fstore *st = fh->node->st;
	int err = 0;

	if (may_park)
		err = zr__st_rdlock(st);
	else
		zr__st_rdlock_wait(st);
	if (err)
		return err;
	err = zr_npystream_new(st->zs, &fh->ns);
	zr__st_unlock(st);
	if (err)
		zr__elog_add(&st->log, st->path, "append: cannot start a "
			     "session: %s", zr_strerror(err));
	return err;
}

int zr__append_open(struct zr__fs *fs, struct zr__fh *fh, int flags)
{
	(void)fs;
	fh->append_mode = !!(flags & O_APPEND);
	return begin(fh, 1);
}

int zr__append_write(struct zr__fs *fs, struct zr__fh *fh, const char *buf,
		     size_t size, off_t off)
{
	struct zr__fstore *st = fh->node->st;
	int err = 0;

	(void)fs;
	pthread_mutex_lock(&fh->mu);
	if (fh->err) {
		err = fh->err;
		goto out;
	}
	if (!fh->append_mode && (uint64_t)off != fh->pos) {
		err = -EINVAL;
		zr__elog_add(&st->log, st->path, "append: write at offset %jd,"
			     " expected %" PRIu64 " (only sequential writes)",
			     (intmax_t)off, fh->pos);
		goto out;
	}
	if (!fh->ns && (err = begin(fh, 0)))
		goto out;
	/* An open session keeps deletes and compacts out (EBUSY). */
	err = zr_npystream_feed(fh->ns, buf, size);
	if (err) {
		log_failure(fh, "write", err);
		fh->err = err;
		goto out;
	}
	fh->pos += size;
out:
	pthread_mutex_unlock(&fh->mu);
	return err;
}

/* Caller holds fh->mu. */
static int finish(struct zr__fh *fh)
{
	int err = zr_npystream_finish(fh->ns, NULL);

	if (err) {
		log_failure(fh, "close", err);
		fh->err = err;
	}
	zr_npystream_free(fh->ns);
	fh->ns = NULL;
	return err;
}

int zr__append_flush(struct zr__fs *fs, struct zr__fh *fh)
{
	int err;

	(void)fs;
	pthread_mutex_lock(&fh->mu);
	if (fh->err) {
		/* the session already failed: report it again, once per
		 * close, and let the next write start afresh */
		err = fh->err;
		fh->err = 0;
		zr_npystream_free(fh->ns);
		fh->ns = NULL;
	} else {
		err = fh->ns ? finish(fh) : 0;
		fh->err = 0;
	}
	pthread_mutex_unlock(&fh->mu);
	return err;
}

void zr__append_release(struct zr__fs *fs, struct zr__fh *fh)
{
	(void)fs;
	pthread_mutex_lock(&fh->mu);
	/* No flush reached us (the kernel skips it in rare cases): commit
	 * what parsed cleanly, else abort; the log keeps the reason. */
	if (fh->ns && !fh->err && zr_npystream_offset(fh->ns))
		finish(fh);
	zr_npystream_free(fh->ns);
	fh->ns = NULL;
	pthread_mutex_unlock(&fh->mu);
}
