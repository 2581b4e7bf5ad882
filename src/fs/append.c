/*
 * append.c - the write-only `append` file.  One open is one append session
 * (a second concurrent appender gets EBUSY at open), whatever processes
 * share its descriptor: writes feed the .npy stream parser in order, and
 * bad bytes fail the write() that delivers them.
 *
 * The session commits at a close() by the process that opened the file
 * (its own thread group), and that close() reports a stream cut inside an
 * .npy or a failed commit.  Closes by other processes holding the same
 * descriptor (a forked child, a command in a subshell, exec of a
 * close-on-exec descriptor) do nothing: `(cat h; cat p) > append` appends
 * once.  The kernel sends RELEASE after the last close, asynchronously, so
 * nothing can be reported from it: what is still pending then (the opener
 * closed first) commits if whole, else is dropped, and `errors` says so.
 * Writes after the opener's close start a new session.  Every failure is
 * logged in the store's errors file; nothing of a failed session shows.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>

#include "file_kinds.h"
#include "store_park.h"
#include "npy_stream.h"
#include "file_bytes.h"
#include "errors_log.h"

static void log_failure(struct zrfs_fh *fh, const char *what, int err)
{
	struct zrtree_store *st = fh->node->st;
	const char *msg = fh->ns ? zrfile_npystream_message(fh->ns) : "";

	if (!*msg)
		msg = *zr_errmsg() ? zr_errmsg() : zr_strerror(err);
	zrtree_elog_add(st->log, st->path, "append %s: %s (%s)", what, msg,
		     zr_errname(err));
}

/* Caller holds fh->mu.  The library's session start would wait for a
 * delete or compact: an open parks instead (may_park; one that starts
 * right after the probe is waited for), a write waits. */
static int begin(struct zrfs_fh *fh, int may_park)
{
	struct zrtree_store *st = fh->node->st;
	int err = may_park ? zrfs_busy_to_park(zrtree_st_probe(st)) : 0;

	if (err)
		return err;
	err = zrfile_npystream_new(st->zs, &fh->ns);
	if (err)
		zrtree_elog_add(st->log, st->path, "append: cannot start a "
			     "session: %s", zr_strerror(err));
	return err;
}

/* Caller holds fh->mu.  Aborts the session unless it was committed. */
static void end(struct zrfs_fh *fh)
{
	if (!fh->ns)
		return;
	zrfile_npystream_free(fh->ns);
	fh->ns = NULL;
}

static int append_open(struct zrfs_fs *fs, struct zrfs_fh *fh, int flags)
{
	(void)fs;
	fh->append_mode = !!(flags & O_APPEND);
	return begin(fh, 1);
}

static int append_write(struct zrfs_fs *fs, struct zrfs_fh *fh,
			const char *buf, size_t size, off_t off,
			struct zrfs_change *ch)
{
	struct zrtree_store *st = fh->node->st;
	int err = 0;

	(void)fs, (void)ch;
	pthread_mutex_lock(&fh->mu);
	if (fh->err) {
		err = fh->err;
		goto out;
	}
	if (!fh->append_mode && (uint64_t)off != fh->pos) {
		err = -EINVAL;
		zrtree_elog_add(st->log, st->path, "append: write at offset %jd,"
			     " expected %" PRIu64 " (only sequential writes)",
			     (intmax_t)off, fh->pos);
		goto out;
	}
	if (!fh->ns && (err = begin(fh, 0)))
		goto out;
	/* An open session keeps deletes and compacts out (EBUSY). */
	err = zrfile_npystream_feed(fh->ns, buf, size);
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

/* Caller holds fh->mu.  Commits what was written since the last commit,
 * all or nothing. */
static int finish(struct zrfs_fh *fh, const char *when)
{
	int err = zrfile_npystream_finish(fh->ns, NULL);

	if (err)
		log_failure(fh, when, err);
	end(fh);
	return err;
}

static int append_flush(struct zrfs_fs *fs, struct zrfs_fh *fh, pid_t caller,
			struct zrfs_change *ch)
{
	int err = 0;

	(void)fs, (void)ch;
	if (!caller || caller != fh->owner)
		return 0;
	pthread_mutex_lock(&fh->mu);
	if (fh->err) {
		/* the session failed at a write: report it once more and
		 * let the next write start afresh */
		err = fh->err;
		fh->err = 0;
		end(fh);
	} else if (fh->ns) {
		err = finish(fh, "close");
	}
	pthread_mutex_unlock(&fh->mu);
	return err;
}

static void append_release(struct zrfs_fs *fs, struct zrfs_fh *fh,
			   struct zrfs_change *ch)
{
	(void)fs, (void)ch;
	pthread_mutex_lock(&fh->mu);
	if (fh->ns && !fh->err && zrfile_npystream_offset(fh->ns))
		finish(fh, "after the last close");
	end(fh);
	pthread_mutex_unlock(&fh->mu);
}

const struct zrfs_kind_ops zrfs_append_kind = {
	.mode = S_IFREG | 0644,
	.flags = ZRFS_KF_WRITABLE,
	.attr_ttl = 0,
	.entry_ttl = ZRFS_TTL_LONG,
	.open = append_open,
	.read = zrfs_usage_read,
	.write = append_write,
	.flush = append_flush,
	.release = append_release,
	.size = zrfs_usage_size,
};
