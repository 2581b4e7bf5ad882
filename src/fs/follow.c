/*
 * follow.c - the follower thread of a -o follow mount (see follow.h).
 * Every interval it calls zr_store_refresh on each store; the library
 * publishes a new length atomically, and every name under the mount reads
 * the length when it is looked up (record names that did not exist,
 * batch names, whose entries never stay cached, and stats), so nothing
 * else has to know.  A refresh that fails leaves the store as it was; its
 * message goes to the store's errors file once, not every interval.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "follow.h"
#include "fs.h"

struct zrfs_follower {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;	/* CLOCK_MONOTONIC */
	int stop;
	char (*last)[ZRFS_ELOG_LINE]; /* per store: last message logged */
};

static void refresh_one(struct zrfs_fstore *st, char *last)
{
	if (zr_store_refresh(st->zs) == 0) {
		last[0] = 0;
		return;
	}
	if (strncmp(last, zr_errmsg(), ZRFS_ELOG_LINE - 1) == 0)
		return;
	snprintf(last, ZRFS_ELOG_LINE, "%s", zr_errmsg());
	zrfs_elog_add(&st->log, st->path, "follow: %s", last);
}

static void deadline(struct timespec *t, unsigned ms)
{
	clock_gettime(CLOCK_MONOTONIC, t);
	t->tv_sec += ms / 1000;
	t->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
}

static void *run(void *arg)
{
	struct zrfs_fs *fs = arg;
	struct zrfs_follower *the = fs->follower;
	struct timespec t;

	pthread_mutex_lock(&the->mu);
	while (!the->stop) {
		pthread_mutex_unlock(&the->mu);
		for (size_t i = 0; i < fs->nstores; i++)
			refresh_one(fs->stores[i], the->last[i]);
		pthread_mutex_lock(&the->mu);
		deadline(&t, fs->opts.follow_ms);
		while (!the->stop &&
		       pthread_cond_timedwait(&the->cv, &the->mu, &t) == 0)
			;
	}
	pthread_mutex_unlock(&the->mu);
	return NULL;
}

static void follower_free(struct zrfs_follower *f)
{
	pthread_cond_destroy(&f->cv);
	pthread_mutex_destroy(&f->mu);
	free(f->last);
	free(f);
}

int zrfs_follow_start(struct zrfs_fs *fs)
{
	struct zrfs_follower *f;
	pthread_condattr_t ca;
	int err;

	if (!fs->opts.follow_ms)
		return 0;
	f = calloc(1, sizeof(*f));
	if (!f || !(f->last = calloc(fs->nstores + 1, sizeof(*f->last)))) {
		free(f);
		return -ENOMEM;
	}
	pthread_mutex_init(&f->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&f->cv, &ca);
	pthread_condattr_destroy(&ca);
	fs->follower = f;
	err = pthread_create(&f->thread, NULL, run, fs);
	if (err) {
		fs->follower = NULL;
		follower_free(f);
		return -err;
	}
	return 0;
}

void zrfs_follow_stop(struct zrfs_fs *fs)
{
	struct zrfs_follower *the = fs->follower;

	if (!the)
		return;
	pthread_mutex_lock(&the->mu);
	the->stop = 1;
	pthread_cond_signal(&the->cv);
	pthread_mutex_unlock(&the->mu);
	pthread_join(the->thread, NULL);
	follower_free(the);
	fs->follower = NULL;
}
