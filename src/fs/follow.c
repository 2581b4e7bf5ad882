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
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "follow.h"
#include "fs.h"
#include "errors_log.h"

/* Stopping writes to stopfd, which ends the thread's wait at once: the
 * thread shares nothing else with the rest of the daemon, so it needs no
 * lock. */
struct zrfs_follower {
	pthread_t thread;
	int stopfd;		/* eventfd */
	char (*last)[ZRTREE_ELOG_LINE]; /* per store: last message logged */
};

static void refresh_one(struct zrtree_store *st, char *last)
{
	if (zr_store_refresh(st->zs) == 0) {
		last[0] = 0;
		return;
	}
	if (strncmp(last, zr_errmsg(), ZRTREE_ELOG_LINE - 1) == 0)
		return;
	snprintf(last, ZRTREE_ELOG_LINE, "%s", zr_errmsg());
	zrtree_elog_add(st->log, st->path, "follow: %s", last);
}

static void *run(void *arg)
{
	struct zrfs_fs *fs = arg;
	struct zrfs_follower *the = fs->follower;
	struct pollfd p = { .fd = the->stopfd, .events = POLLIN };
	int r;

	do {
		for (size_t i = 0; i < fs->tree.nstores; i++)
			refresh_one(fs->tree.stores[i], the->last[i]);
		r = poll(&p, 1, (int)fs->opts.follow_ms);
	} while (r == 0 || (r < 0 && errno == EINTR));
	return NULL;
}

static void follower_free(struct zrfs_follower *f)
{
	close(f->stopfd);
	free(f->last);
	free(f);
}

int zrfs_follow_start(struct zrfs_fs *fs)
{
	struct zrfs_follower *f;
	int err;

	if (!fs->opts.follow_ms)
		return 0;
	f = calloc(1, sizeof(*f));
	if (!f || !(f->last = calloc(fs->tree.nstores + 1, sizeof(*f->last)))) {
		free(f);
		return -ENOMEM;
	}
	f->stopfd = eventfd(0, EFD_CLOEXEC);
	if (f->stopfd < 0) {
		err = -errno;
		free(f->last);
		free(f);
		return err;
	}
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
	uint64_t one = 1;

	if (!the)
		return;
	if (write(the->stopfd, &one, sizeof(one)) != sizeof(one))
		(void)0; /* cannot fail: the counter is far from full */
	pthread_join(the->thread, NULL);
	follower_free(the);
	fs->follower = NULL;
}
