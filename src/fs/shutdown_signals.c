/*
 * shutdown_signals.c - the thread that turns SIGTERM, SIGINT and SIGHUP
 * into the end of the session loop (shutdown_signals.h says why libfuse's
 * handler is not enough).
 *
 * Every thread blocks the three signals, so the kernel leaves them pending
 * for sigwait() here. On one, this thread marks the session exited and
 * then sends the loop's thread SIGUSR1 every KICK_MS until that thread
 * reports the loop returned: whichever kick finds it inside sem_wait() (or
 * read() of /dev/fuse with -o single) interrupts it, and libfuse then sees
 * the mark. A kick that lands just before the wait is harmless; the next
 * one follows.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#define FUSE_USE_VERSION 312 /* as fs.h */
#include <fuse_lowlevel.h>

#include "shutdown_signals.h"

#define KICK_SIG SIGUSR1
#define KICK_MS 10

static struct {
	pthread_t th, loop;
	int running;
	int done;		/* the loop returned (under lock) */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct fuse_session *se;
} sig = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

static void shutdown_set(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGHUP);
}

/* The kick only needs to interrupt a wait: no SA_RESTART. */
static void on_kick(int s)
{
	(void)s;
}

void zrfs_sig_block(void)
{
	sigset_t set;

	shutdown_set(&set);
	sigaddset(&set, KICK_SIG);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
}

/* Kicks the loop's thread until it says the loop returned. */
static void kick_until_done(void)
{
	struct timespec t;

	pthread_mutex_lock(&sig.lock);
	while (!sig.done) {
		pthread_kill(sig.loop, KICK_SIG);
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_nsec += KICK_MS * 1000000L;
		if (t.tv_nsec >= 1000000000L) {
			t.tv_sec++;
			t.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&sig.cond, &sig.lock, &t);
	}
	pthread_mutex_unlock(&sig.lock);
}

static void *run(void *arg)
{
	sigset_t set;
	int s;

	(void)arg;
	shutdown_set(&set);
	/* sigwait() is the only cancellation point: zrfs_sig_stop cancels
	 * an idle thread, and one that took a signal finishes its kicks. */
	if (sigwait(&set, &s))
		return NULL;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	fuse_session_exit(sig.se);
	kick_until_done();
	return NULL;
}

int zrfs_sig_start(struct fuse_session *se)
{
	struct sigaction sa;
	int err;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_kick;
	sigemptyset(&sa.sa_mask);
	if (sigaction(KICK_SIG, &sa, NULL))
		return -errno;
	sig.se = se;
	sig.loop = pthread_self();
	sig.done = 0;
	err = pthread_create(&sig.th, NULL, run, NULL);
	if (err)
		return -err;
	/* named so that a thread count (ps -L, the tests) can tell it from
	 * the session's workers, which max_threads bounds */
	pthread_setname_np(sig.th, "zrsig");
	sig.running = 1;
	return 0;
}

void zrfs_sig_loop_begin(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, KICK_SIG);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

void zrfs_sig_stop(void)
{
	sigset_t set;

	if (!sig.running)
		return;
	sigemptyset(&set);
	sigaddset(&set, KICK_SIG);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	pthread_mutex_lock(&sig.lock);
	sig.done = 1;
	pthread_cond_signal(&sig.cond);
	pthread_mutex_unlock(&sig.lock);
	pthread_cancel(sig.th);
	pthread_join(sig.th, NULL);
	sig.running = 0;
}
