/*
 * iopool.c - the I/O threads of iopool.h: a queue of jobs under one lock;
 * a thread takes the next item of the first job that has one, and the
 * caller of a job takes items of its own job until none is left, then
 * waits for the ones running elsewhere.  Threads start as jobs need them,
 * up to ZR__IO_THREADS - 1, and are joined when the process exits.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>

#include "error.h"
#include "iopool.h"

struct io_job {
	zr__io_fn fn;
	void *ctx;
	size_t n, next;		/* items; the next one to claim       */
	unsigned running;	/* items being run                    */
	zr__error first;	/* the first failure                  */
	pthread_cond_t done;	/* next == n and running == 0         */
	struct io_job *link;	/* the queue                          */
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t work;
	struct io_job *head, *tail;
	pthread_t tid[ZR__IO_THREADS];
	unsigned threads;
	int stop, atfork;
} io = { .lock = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER };

/* The first job with an item to claim; jobs with none leave the queue
 * (their callers still wait for the items running). */
static struct io_job *queued(void)
{
	while (io.head && io.head->next == io.head->n) {
		io.head = io.head->link;
		if (!io.head)
			io.tail = NULL;
	}
	return io.head;
}

/* Runs one item of j, the lock held before and after. */
static void run_item(struct io_job *j)
{
	size_t i = j->next++;
	int err;

	j->running++;
	pthread_mutex_unlock(&io.lock);
	err = j->fn(j->ctx, i);
	pthread_mutex_lock(&io.lock);
	if (err && !j->first.err) {
		zr__error_capture(&j->first, err);
		j->next = j->n; /* the rest is not started */
	}
	if (--j->running == 0 && j->next == j->n)
		pthread_cond_signal(&j->done);
}

/* Takes j out of the queue, wherever it stands. */
static void unlink_job(struct io_job *j)
{
	struct io_job **at = &io.head, *prev = NULL;

	while (*at && *at != j) {
		prev = *at;
		at = &(*at)->link;
	}
	if (!*at)
		return;
	*at = j->link;
	if (io.tail == j)
		io.tail = prev;
}

static void *io_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&io.lock);
	while (!io.stop) {
		struct io_job *j = queued();

		if (j)
			run_item(j);
		else
			pthread_cond_wait(&io.work, &io.lock);
	}
	pthread_mutex_unlock(&io.lock);
	return NULL;
}

/* A forked child has none of the threads (only the forking one
 * survives), and the lock may have been held by one of them. */
static void io_atfork_child(void)
{
	pthread_mutex_init(&io.lock, NULL);
	pthread_cond_init(&io.work, NULL);
	io.head = io.tail = NULL;
	io.threads = 0;
}

/* Threads for up to want items beside the caller's, the lock held.  They
 * take no signal (a daemon's go to its signal thread); fewer threads
 * still do the work. */
static void start_threads(size_t want)
{
	sigset_t all, old;

	if (!io.atfork) {
		pthread_atfork(NULL, NULL, io_atfork_child);
		io.atfork = 1;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	while (io.threads < want && io.threads < ZR__IO_THREADS - 1 &&
	       !pthread_create(&io.tid[io.threads], NULL, io_main, NULL))
		io.threads++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

int zr__io_run(zr__io_fn fn, void *ctx, size_t n)
{
	struct io_job j = { .fn = fn, .ctx = ctx, .n = n };
	int err;

	if (n == 0)
		return 0;
	pthread_cond_init(&j.done, NULL);
	pthread_mutex_lock(&io.lock);
	start_threads(n - 1);
	if (io.tail)
		io.tail->link = &j;
	else
		io.head = &j;
	io.tail = &j;
	pthread_cond_broadcast(&io.work);
	while (j.next < j.n)
		run_item(&j);
	while (j.running)
		pthread_cond_wait(&j.done, &io.lock);
	unlink_job(&j); /* before j goes out of scope */
	pthread_mutex_unlock(&io.lock);
	pthread_cond_destroy(&j.done);
	err = j.first.err ? zr__error_replay(&j.first) : 0;
	return err;
}

/* Joins the threads when the process exits (or the library is
 * unloaded), so that none outlives the code it runs. */
__attribute__((destructor)) static void io_stop(void)
{
	pthread_mutex_lock(&io.lock);
	io.stop = 1;
	pthread_cond_broadcast(&io.work);
	pthread_mutex_unlock(&io.lock);
	for (unsigned i = 0; i < io.threads; i++)
		pthread_join(io.tid[i], NULL);
	io.threads = 0;
}
