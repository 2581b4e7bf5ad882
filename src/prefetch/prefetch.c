/*
 * prefetch.c - the prefetcher of prefetch.h: a table of sequences, each
 * with the steps gathered ahead of its last read one, and the one thread
 * that gathers them.
 *
 * One thread gathers one step at a time, and never beside a foreground
 * request: the caller's gather asks zrpf_go before each piece (about
 * 1 MiB), which waits while any request the caller marked with
 * zrpf_busy runs and for ZRPF_QUIET_NS after.  That matters more than
 * the thread's own priority (nice +ZRPF_NICE, so that it yields to the
 * session's threads between those points): the library's worker pool
 * runs one batch at a time at normal priority, and a foreground batch
 * that found the pool held by a prefetch would run on its caller's
 * thread alone (it never waits for it: zrecord.h, "Worker pool").  A
 * take of a step still being gathered stops that gather: the open
 * gathers it itself rather than wait for a thread that yields to it.
 *
 * pf->mu guards everything in struct zrpf but the callbacks' work; it is
 * never held while a callback runs.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "prefetch.h"

#define ZRPF_NICE 10
#define ZRPF_GIB (1ull << 30)

/* A step gathered ahead, waiting for its open. */
struct slot {
	uint64_t step;
	int ready;
	struct zrpf_batch b;
};

struct seq {
	int used;
	struct zrpf_seq key;
	uint64_t inc;		/* changes whenever its slots are dropped */
	uint64_t last;		/* the last step opened                  */
	int armed;		/* last came right after the one before  */
	uint64_t gen;		/* the caller's content generation       */
	uint64_t est;		/* bytes a step is assumed to take       */
	uint64_t failed;	/* a step whose gather failed, +1 (0: none) */
	uint64_t tick;		/* when last hinted (pf->tick)           */
	uint64_t at_ms;
	struct slot slot[ZRPF_DEPTH_MAX];
};

/* The step being gathered (one at a time). */
struct job {
	int active;
	size_t si;
	uint64_t inc, step, reserved;
	atomic_int stop;
};

struct zrpf {
	struct zrpf_conf c;
	pthread_mutex_t mu;
	pthread_cond_t cv;	/* a hint or take may have made work      */
	pthread_t th;
	int quit;
	uint64_t tick;
	uint64_t used;		/* bytes of ready slots and the job's     */
	struct job job;
	struct zrpf_counts n;
	struct seq seqs[ZRPF_SEQS];
	/* zrpf_busy's, outside mu */
	atomic_int fg;		/* foreground requests running            */
	_Atomic uint64_t fg_end; /* when the last one ended (now_ns)      */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ms(void)
{
	return now_ns() / 1000000;
}

uint64_t zrpf_default_budget(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	uint64_t ram = pages > 0 && psize > 0 ?
		       (uint64_t)pages * (uint64_t)psize : 16 * ZRPF_GIB;

	return ram / 16 < ZRPF_GIB ? ram / 16 : ZRPF_GIB;
}

static int same_seq(const struct zrpf_seq *a, const struct zrpf_seq *b)
{
	return a->src == b->src && a->mode == b->mode &&
	       a->bsize == b->bsize && a->seed == b->seed &&
	       a->form == b->form;
}

static void slot_drop(struct zrpf *pf, struct slot *sl)
{
	if (!sl->ready)
		return;
	pf->c.release(pf->c.ctx, sl->b.buf, sl->b.cap);
	pf->used -= sl->b.cap;
	pf->n.dropped++;
	sl->ready = 0;
}

/* Drops the steps of q at or below step (all: UINT64_MAX), and tells a
 * gather of them to stop. */
static void drop_upto(struct zrpf *pf, struct seq *q, uint64_t step)
{
	for (size_t k = 0; k < ZRPF_DEPTH_MAX; k++)
		if (q->slot[k].step <= step)
			slot_drop(pf, &q->slot[k]);
	if (pf->job.active && &pf->seqs[pf->job.si] == q &&
	    pf->job.step <= step)
		atomic_store(&pf->job.stop, 1);
	if (step == UINT64_MAX)
		q->inc++;
}

static void seq_forget(struct zrpf *pf, struct seq *q)
{
	drop_upto(pf, q, UINT64_MAX);
	q->used = 0;
}

static struct seq *seq_find(struct zrpf *pf, const struct zrpf_seq *s)
{
	for (size_t i = 0; i < ZRPF_SEQS; i++)
		if (pf->seqs[i].used && same_seq(&pf->seqs[i].key, s))
			return &pf->seqs[i];
	return NULL;
}

/* A free sequence, or the least recently read one, forgotten. */
static struct seq *seq_new(struct zrpf *pf, const struct zrpf_seq *s)
{
	struct seq *q = &pf->seqs[0];

	for (size_t i = 0; i < ZRPF_SEQS && q->used; i++)
		if (!pf->seqs[i].used || pf->seqs[i].tick < q->tick)
			q = &pf->seqs[i];
	if (q->used)
		seq_forget(pf, q);
	q->used = 1;
	q->key = *s;
	q->armed = 0;
	q->failed = 0;
	return q;
}

/* Whether step of q is ready or being gathered. */
static int present(const struct zrpf *pf, const struct seq *q, uint64_t step)
{
	if (pf->job.active && &pf->seqs[pf->job.si] == q &&
	    pf->job.step == step && pf->job.inc == q->inc)
		return 1;
	for (size_t k = 0; k < ZRPF_DEPTH_MAX; k++)
		if (q->slot[k].ready && q->slot[k].step == step)
			return 1;
	return 0;
}

/* Frees ready steps of sequences read less recently than q until need
 * more bytes fit the budget: an abandoned sequence's steps go first. */
static int make_room(struct zrpf *pf, const struct seq *q, uint64_t need)
{
	while (pf->used + need > pf->c.budget) {
		struct slot *victim = NULL;
		uint64_t oldest = q->tick;

		for (size_t i = 0; i < ZRPF_SEQS; i++) {
			struct seq *o = &pf->seqs[i];

			for (size_t k = 0; o->used && o->tick < oldest &&
			     k < ZRPF_DEPTH_MAX; k++)
				if (o->slot[k].ready) {
					victim = &o->slot[k];
					oldest = o->tick;
					break;
				}
		}
		if (!victim)
			return 0;
		slot_drop(pf, victim);
	}
	return 1;
}

/* The next step to gather: the most recently read armed sequence's
 * first missing step ahead.  1 and the job set up, or 0. */
static int pick(struct zrpf *pf)
{
	struct seq *best = NULL;
	uint64_t step = 0;

	for (size_t i = 0; i < ZRPF_SEQS; i++) {
		struct seq *q = &pf->seqs[i];

		if (!q->used || !q->armed || (best && q->tick < best->tick))
			continue;
		for (uint64_t s = q->last + 1;
		     s <= q->last + pf->c.depth && s > q->last; s++) {
			if (present(pf, q, s))
				continue;
			if (q->failed != s + 1) {
				best = q;
				step = s;
			}
			break;
		}
	}
	if (!best || best->est > pf->c.budget || !make_room(pf, best, best->est))
		return 0;
	pf->job.active = 1;
	pf->job.si = (size_t)(best - pf->seqs);
	pf->job.inc = best->inc;
	pf->job.step = step;
	pf->job.reserved = best->est;
	atomic_store(&pf->job.stop, 0);
	pf->used += best->est;
	return 1;
}

/* Files what the job gathered, if its sequence still wants it. */
static void job_done(struct zrpf *pf, int err, struct zrpf_batch *b)
{
	struct seq *q = &pf->seqs[pf->job.si];
	uint64_t step = pf->job.step;
	struct slot *free_slot = NULL;

	pf->used -= pf->job.reserved;
	pf->job.active = 0;
	if (q->used && q->inc == pf->job.inc && err)
		q->failed = step + 1;
	if (err)
		return;
	if (q->used && q->inc == pf->job.inc && !atomic_load(&pf->job.stop) &&
	    step > q->last && step <= q->last + pf->c.depth &&
	    make_room(pf, q, b->cap))
		for (size_t k = 0; !free_slot && k < ZRPF_DEPTH_MAX; k++)
			if (!q->slot[k].ready)
				free_slot = &q->slot[k];
	if (!free_slot) {
		pf->c.release(pf->c.ctx, b->buf, b->cap);
		return;
	}
	free_slot->step = step;
	free_slot->b = *b;
	free_slot->ready = 1;
	pf->used += b->cap;
	pf->n.gathered++;
}

static void expire(struct zrpf *pf)
{
	uint64_t t = now_ms();

	for (size_t i = 0; i < ZRPF_SEQS; i++)
		if (pf->seqs[i].used && t - pf->seqs[i].at_ms > ZRPF_IDLE_MS)
			seq_forget(pf, &pf->seqs[i]);
}

static void *run(void *arg)
{
	struct zrpf *pf = arg;
	struct zrpf_batch b;
	struct zrpf_seq key;
	struct timespec ts;
	uint64_t step;
	int err;

	/* Below the session's threads: a waiting read is run first. */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), ZRPF_NICE);
	pthread_mutex_lock(&pf->mu);
	while (!pf->quit) {
		expire(pf);
		if (!pick(pf)) {
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += 1;
			pthread_cond_timedwait(&pf->cv, &pf->mu, &ts);
			continue;
		}
		key = pf->seqs[pf->job.si].key;
		step = pf->job.step;
		pthread_mutex_unlock(&pf->mu);
		memset(&b, 0, sizeof(b));
		err = pf->c.gather(pf->c.ctx, &key, step, pf, &b);
		pthread_mutex_lock(&pf->mu);
		job_done(pf, err, &b);
	}
	pthread_mutex_unlock(&pf->mu);
	return NULL;
}

int zrpf_new(const struct zrpf_conf *conf, zrpf **out)
{
	struct zrpf *pf;
	sigset_t all, old;
	int err;

	if (!conf->depth || conf->depth > ZRPF_DEPTH_MAX || !conf->budget ||
	    !conf->gather || !conf->release)
		return -EINVAL;
	pf = calloc(1, sizeof(*pf));
	if (!pf)
		return -ENOMEM;
	pf->c = *conf;
	pthread_mutex_init(&pf->mu, NULL);
	pthread_cond_init(&pf->cv, NULL);
	/* Signals are the caller's threads' business (a FUSE session's
	 * handler must run on a thread its loop waits in). */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = pthread_create(&pf->th, NULL, run, pf);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pthread_cond_destroy(&pf->cv);
		pthread_mutex_destroy(&pf->mu);
		free(pf);
		return -err;
	}
	pthread_setname_np(pf->th, "zrpf");
	*out = pf;
	return 0;
}

void zrpf_free(zrpf *pf, struct zrpf_counts *counts)
{
	if (!pf)
		return;
	pthread_mutex_lock(&pf->mu);
	pf->quit = 1;
	atomic_store(&pf->job.stop, 1);
	pthread_cond_signal(&pf->cv);
	pthread_mutex_unlock(&pf->mu);
	pthread_join(pf->th, NULL);
	for (size_t i = 0; i < ZRPF_SEQS; i++)
		if (pf->seqs[i].used)
			seq_forget(pf, &pf->seqs[i]);
	if (counts)
		*counts = pf->n;
	pthread_cond_destroy(&pf->cv);
	pthread_mutex_destroy(&pf->mu);
	free(pf);
}

void zrpf_count(zrpf *pf, struct zrpf_counts *out)
{
	pthread_mutex_lock(&pf->mu);
	*out = pf->n;
	pthread_mutex_unlock(&pf->mu);
}

void zrpf_hint(zrpf *pf, const struct zrpf_seq *s, uint64_t step,
	       uint64_t gen, uint64_t size)
{
	struct seq *q;

	pthread_mutex_lock(&pf->mu);
	q = seq_find(pf, s);
	if (!q) {
		q = seq_new(pf, s);
		q->last = step;
		q->gen = gen;
	}
	q->tick = ++pf->tick;
	q->at_ms = now_ms();
	q->est = size;
	if (gen != q->gen) {
		drop_upto(pf, q, UINT64_MAX);
		q->gen = gen;
	}
	if (step != q->last) {
		q->armed = step == q->last + 1;
		drop_upto(pf, q, q->armed ? step : UINT64_MAX);
		q->last = step;
		q->failed = 0;
	}
	pthread_cond_signal(&pf->cv);
	pthread_mutex_unlock(&pf->mu);
}

int zrpf_take(zrpf *pf, const struct zrpf_seq *s, uint64_t step,
	      const uint64_t ver[2], uint64_t size, struct zrpf_batch *out)
{
	struct seq *q;
	int got = 0;

	pthread_mutex_lock(&pf->mu);
	q = seq_find(pf, s);
	for (size_t k = 0; q && !got && k < ZRPF_DEPTH_MAX; k++) {
		struct slot *sl = &q->slot[k];

		if (!sl->ready || sl->step != step)
			continue;
		if (sl->b.ver[0] != ver[0] || sl->b.ver[1] != ver[1] ||
		    sl->b.size != size) {
			slot_drop(pf, sl);
			continue;
		}
		*out = sl->b;
		sl->ready = 0;
		pf->used -= sl->b.cap;
		pf->n.served++;
		got = 1;
		/* what the open's hint will say: the window moves on now, so
		 * the thread does not gather this step again meanwhile */
		q->last = step;
		drop_upto(pf, q, step);
	}
	if (!got && q && pf->job.active && &pf->seqs[pf->job.si] == q &&
	    pf->job.step == step)
		atomic_store(&pf->job.stop, 1);
	pthread_mutex_unlock(&pf->mu);
	return got;
}

void zrpf_busy(zrpf *pf, int delta)
{
	if (!pf)
		return;
	/* the end time first: whoever sees fg drop to 0 sees it too */
	if (delta < 0)
		atomic_store(&pf->fg_end, now_ns());
	atomic_fetch_add(&pf->fg, delta);
}

int zrpf_go(zrpf *pf)
{
	const struct timespec nap = { .tv_nsec = 500000 };

	for (;;) {
		if (atomic_load(&pf->job.stop))
			return -ECANCELED;
		if (!atomic_load(&pf->fg) &&
		    now_ns() - atomic_load(&pf->fg_end) >= ZRPF_QUIET_NS)
			return 0;
		nanosleep(&nap, NULL);
	}
}
