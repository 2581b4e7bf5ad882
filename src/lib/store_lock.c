/*
 * store_lock.c - the flocks that keep processes and hosts apart (see
 * zrecord.h, Locking).  meta.zr carries the seed's lifetime lock, data.zr
 * the writer's:
 *
 *   writer    data.zr EX, meta.zr SH (EX while it opens, deletes, compacts)
 *   reader    meta.zr SH, data.zr SH
 *   follower  meta.zr SH
 *
 * So one writer and any number of followers share a store; a plain reader
 * serves one snapshot and keeps writers out; delete and compact (and the
 * recovery of an interrupted one) need every follower gone; and a seed
 * process, which holds meta.zr EX for its lifetime, excludes and is
 * excluded by all three.
 *
 * flock() converts a lock by dropping it and taking the new one.  Only a
 * process that takes meta.zr EX without holding data.zr (a seed process,
 * or a zrecord from before this scheme) can slip into that gap; if one
 * does, this handle has lost its place, and every later write fails with
 * ZR_E_BUSY rather than running beside that process.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "store.h"

static int busy(zr_store *s, const char *who)
{
	return zr__fail(ZR_E_BUSY, "%s: store busy: %s", s->path, who);
}

static int lock_fd(zr_store *s, int file, int op)
{
	int r = zr__io_lock(s->file[file], op);

	if (r >= 0)
		return r;
	return zr__fail(r, "%s/%s: flock: %s", s->path, zr__file_name(file),
			strerror(-r));
}

/* A writer opens with meta.zr EX when it can, so that recovery of an
 * interrupted delete or compact runs alone; open ends with zr__lock_share. */
static int take_writer(zr_store *s)
{
	int r = lock_fd(s, ZR__DATA, ZR__LOCK_EX);

	if (r)
		return r < 0 ? r : busy(s, "another handle holds its lock "
					"(a writer, or a reader that keeps "
					"writers out)");
	r = lock_fd(s, ZR__META, ZR__LOCK_EX);
	if (r <= 0) {
		s->meta_ex = r == 0;
		return r;
	}
	r = lock_fd(s, ZR__META, ZR__LOCK_SH);
	if (r)
		return r < 0 ? r : busy(s, "another handle holds its lock "
					"(a process that holds meta.zr alone)");
	return 0;
}

int zr__lock_open(zr_store *s)
{
	int r;

	if (!s->readonly)
		return take_writer(s);
	r = lock_fd(s, ZR__META, ZR__LOCK_SH);
	if (r == 0 && !s->follow)
		r = lock_fd(s, ZR__DATA, ZR__LOCK_SH);
	if (r > 0)
		return busy(s, s->follow ?
			    "another handle holds its lock (a process that "
			    "holds meta.zr alone, or a delete or compact)" :
			    "another handle holds its lock (a writer; open "
			    "with ZR_OPEN_FOLLOW to read beside it)");
	return r;
}

int zr__lock_exclusive(zr_store *s, const char *what)
{
	int r;

	r = zr__lock_held(s, what);
	if (r || s->meta_ex)
		return r;
	r = lock_fd(s, ZR__META, ZR__LOCK_EX);
	if (r == 0) {
		s->meta_ex = 1;
		return 0;
	}
	/* A failed conversion may have dropped the shared lock: take it
	 * back (holding it already, this changes nothing). */
	if (lock_fd(s, ZR__META, ZR__LOCK_SH))
		s->lock_lost = 1;
	if (r < 0)
		return r;
	return zr__fail(ZR_E_BUSY, "%s: %s refused: store busy: a follower "
			"(a read-only handle opened with ZR_OPEN_FOLLOW, such "
			"as a zrecordfs -o follow mount) holds it; %s needs "
			"every reader gone", s->path, what, what);
}

void zr__lock_share(zr_store *s)
{
	if (!s->meta_ex)
		return;
	s->meta_ex = 0;
	if (lock_fd(s, ZR__META, ZR__LOCK_SH))
		s->lock_lost = 1;
}

int zr__lock_held(const zr_store *s, const char *what)
{
	if (!s->lock_lost)
		return 0;
	return zr__fail(ZR_E_BUSY, "%s: %s refused: store busy: this handle "
			"lost its lock to another process", s->path, what);
}
