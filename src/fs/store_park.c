/*
 * store_park.c - store locks and parked requests (see store_park.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "store_park.h"

static _Thread_local struct zrfs_fstore *busy;

void zrfs_st_lock_init(struct zrfs_fstore *st)
{
	pthread_rwlockattr_t a;

	/* Writer-preferring: a stream of readers cannot starve a delete,
	 * and readers that arrive meanwhile park instead of queueing. */
	pthread_rwlockattr_init(&a);
	pthread_rwlockattr_setkind_np(&a,
		PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&st->rw, &a);
	pthread_rwlockattr_destroy(&a);
	pthread_mutex_init(&st->qmu, NULL);
}

void zrfs_st_lock_destroy(struct zrfs_fstore *st)
{
	/* Requests parked at shutdown are never answered: the session that
	 * would take the answer is gone. */
	while (st->parked) {
		struct zrfs_parked *p = st->parked;

		st->parked = p->next;
		free(p);
	}
	while (st->ready) {
		struct zrfs_parked *p = st->ready;

		st->ready = p->next;
		free(p);
	}
	pthread_mutex_destroy(&st->qmu);
	pthread_rwlock_destroy(&st->rw);
}

int zrfs_st_rdlock(struct zrfs_fstore *st)
{
	unsigned writers;

	if (pthread_rwlock_tryrdlock(&st->rw) == 0)
		return 0;
	pthread_mutex_lock(&st->qmu);
	writers = st->writers;
	pthread_mutex_unlock(&st->qmu);
	if (writers) {
		busy = st;
		return ZRFS_E_PARK;
	}
	/* No writer after all (a try can fail spuriously): a short wait. */
	pthread_rwlock_rdlock(&st->rw);
	return 0;
}

void zrfs_st_rdlock_wait(struct zrfs_fstore *st)
{
	pthread_rwlock_rdlock(&st->rw);
}

void zrfs_st_unlock(struct zrfs_fstore *st)
{
	pthread_rwlock_unlock(&st->rw);
}

int zrfs_st_rdlock_all(struct zrfs_fstore *const *st, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int err = zrfs_st_rdlock(st[i]);

		if (err) {
			zrfs_st_unlock_all(st, i);
			return err;
		}
	}
	return 0;
}

void zrfs_st_unlock_all(struct zrfs_fstore *const *st, size_t n)
{
	for (size_t i = n; i-- > 0;)
		pthread_rwlock_unlock(&st[i]->rw);
}

struct zrfs_fstore *zrfs_st_busy(void)
{
	return busy;
}

void zrfs_st_wrlock(struct zrfs_fstore *st)
{
	/* Counted before waiting, so every reader that finds the lock
	 * taken or awaited sees a writer and parks. */
	pthread_mutex_lock(&st->qmu);
	st->writers++;
	pthread_mutex_unlock(&st->qmu);
	pthread_rwlock_wrlock(&st->rw);
}

void zrfs_st_wrunlock(struct zrfs_fstore *st)
{
	pthread_rwlock_unlock(&st->rw);
	pthread_mutex_lock(&st->qmu);
	if (--st->writers == 0 && st->parked) {
		struct zrfs_parked **tail = &st->ready;

		while (*tail)
			tail = &(*tail)->next;
		*tail = st->parked;
		st->parked = NULL;
	}
	pthread_mutex_unlock(&st->qmu);
}

int zrfs_st_park(struct zrfs_fstore *st, struct zrfs_parked *p)
{
	int err = -EAGAIN;

	pthread_mutex_lock(&st->qmu);
	if (st->writers) {
		p->next = st->parked;
		st->parked = p;
		err = 0;
	}
	pthread_mutex_unlock(&st->qmu);
	return err;
}

struct zrfs_parked *zrfs_st_take_ready(struct zrfs_fstore *st)
{
	struct zrfs_parked *p;

	pthread_mutex_lock(&st->qmu);
	p = st->ready;
	st->ready = NULL;
	pthread_mutex_unlock(&st->qmu);
	return p;
}
