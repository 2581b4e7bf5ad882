/*
 * retry.c - polling with a deadline (see retry.h).
 */
#include <errno.h>
#include <sys/file.h>
#include <time.h>

#include "retry.h"

#define PAUSE_FIRST_MS 5
#define PAUSE_MAX_MS 100

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void pause_ms(long long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int zrcommon_retry(int (*attempt)(void *ctx), void *ctx, unsigned timeout_ms)
{
	long long end = now_ms() + timeout_ms, left;
	long long pause = PAUSE_FIRST_MS;
	int rc;

	while ((rc = attempt(ctx)) == ZRCOMMON_RETRY_BUSY) {
		left = end - now_ms();
		if (left <= 0)
			break;
		pause_ms(pause < left ? pause : left);
		if (pause < PAUSE_MAX_MS)
			pause *= 2;
	}
	return rc;
}

struct flock_try {
	int fd, op;
};

static int try_flock(void *ctx)
{
	const struct flock_try *t = ctx;

	if (!flock(t->fd, t->op | LOCK_NB))
		return 0;
	if (errno == EWOULDBLOCK)
		return ZRCOMMON_RETRY_BUSY;
	return errno == EINTR ? ZRCOMMON_RETRY_BUSY : -errno;
}

int zrcommon_flock_wait(int fd, int op, unsigned timeout_ms)
{
	struct flock_try t = { fd, op };
	int rc = zrcommon_retry(try_flock, &t, timeout_ms);

	return rc == ZRCOMMON_RETRY_BUSY ? -ETIMEDOUT : rc;
}
