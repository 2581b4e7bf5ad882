/*
 * follow.c - the follower thread of a -o follow mount (see follow.h):
 * every interval it calls zrtree_refresh, which refreshes each store and
 * writes a failure to the store's errors file once (src/tree/refresh.c).
 * Between intervals it sleeps in poll(2) on an eventfd that stopping
 * writes.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "follow.h"
#include "fs.h"

/* Stopping writes to stopfd, which ends the thread's wait at once: the
 * thread shares nothing else with the rest of the daemon (the library
 * makes a refresh safe beside lookups and reads, and the stores' last
 * failure lines are this thread's alone), so it needs no lock. */
struct zrfs_follower {
	pthread_t thread;
	int stopfd;		/* eventfd */
};

static void *run(void *arg)
{
	struct zrfs_fs *fs = arg;
	struct pollfd p = { .fd = fs->follower->stopfd, .events = POLLIN };
	int r;

	do {
		zrtree_refresh(&fs->tree);
		r = poll(&p, 1, (int)fs->opts.follow_ms);
	} while (r == 0 || (r < 0 && errno == EINTR));
	return NULL;
}

static void follower_free(struct zrfs_follower *f)
{
	close(f->stopfd);
	free(f);
}

int zrfs_follow_start(struct zrfs_fs *fs)
{
	struct zrfs_follower *f;
	int err;

	if (!fs->opts.follow_ms)
		return 0;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->stopfd = eventfd(0, EFD_CLOEXEC);
	if (f->stopfd < 0) {
		err = -errno;
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
