/*
 * batch_gather.c - batch files gathered piece by piece (batch_gather.h):
 * which pieces are in, who fills the next, and the prefetcher's gather
 * of a step ahead through views held one piece of work at a time.
 *
 * g->mu guards the plan, missing, filling and refs; done[k] is written
 * under it too (release) and read without it (acquire), so a reader of
 * bytes already in takes no lock.  At most one piece is filled at a time
 * (filling): the library's worker pool runs one gather at a time anyway,
 * and a plan's streams point at one filler's views.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "batch_gather.h"
#include "big_buffers.h"
#include "file_bytes.h"

struct zrtree_gather {
	pthread_mutex_t mu;
	pthread_cond_t cv;	/* a piece is in, or a filler stopped     */
	unsigned refs;
	int mix;		/* fills through the views planned with   */
	struct zrfile_batch plan; /* freed once every piece is in          */
	struct zrfile_batch_pieces pc; /* written once, before g is shared */
	char *buf;
	size_t cap;
	size_t missing;		/* pieces not in buf yet                  */
	size_t next;		/* no piece before it is missing but maybe
				 * one a reader is filling               */
	int filling;		/* a piece is being filled                */
	int warmed;		/* zr_view_warm asked for the whole batch */
	atomic_uchar done[];	/* piece k is in buf                      */
};

int zrtree_gather_new(struct zrtree *t, const struct zrtree_node *n,
		      uint64_t length, zr_view *const *views,
		      struct zrtree_gather **out)
{
	struct zrfile_batch_pieces pc;
	struct zrtree_gather *g;
	struct zrfile_batch p;
	int err = zrtree_plan_make(t, n, &p, 0, length, views);

	if (err)
		return err == -ENOENT ? -ESTALE : err;
	if (p.total != n->size) {
		zrfile_batch_free(&p);
		return -ESTALE;
	}
	zrfile_batch_pieces(&p, &pc);
	g = calloc(1, sizeof(*g) + pc.n * sizeof(g->done[0]));
	/* the slack is scratch the fill may use past the file's bytes */
	if (g)
		g->buf = zrcommon_bigbuf_get(p.total + p.file.slack, &g->cap);
	if (!g || !g->buf) {
		free(g);
		zrfile_batch_free(&p);
		return -ENOMEM;
	}
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->cv, NULL);
	g->refs = 1;
	g->mix = n->mix != NULL;
	g->plan = p;
	g->pc = pc;
	g->missing = pc.n;
	for (size_t k = 0; k < pc.n; k++)
		atomic_init(&g->done[k], 0);
	*out = g;
	return 0;
}

void zrtree_gather_ref(struct zrtree_gather *g)
{
	pthread_mutex_lock(&g->mu);
	g->refs++;
	pthread_mutex_unlock(&g->mu);
}

static void gather_free(struct zrtree_gather *g, int keep_buf)
{
	zrfile_batch_free(&g->plan);
	if (!keep_buf)
		zrcommon_bigbuf_put(g->buf, g->cap);
	pthread_cond_destroy(&g->cv);
	pthread_mutex_destroy(&g->mu);
	free(g);
}

void zrtree_gather_put(struct zrtree_gather *g)
{
	unsigned left;

	if (!g)
		return;
	pthread_mutex_lock(&g->mu);
	left = --g->refs;
	pthread_mutex_unlock(&g->mu);
	if (!left)
		gather_free(g, 0);
}

char *zrtree_gather_unwrap(struct zrtree_gather *g, size_t *cap)
{
	char *buf = g->buf;

	*cap = g->cap;
	gather_free(g, 1);
	return buf;
}

/* Caller holds mu and has set filling.  Fills piece k through views,
 * without mu. */
static int fill_one(struct zrtree_gather *g, size_t k, zr_view *const *views)
{
	int err;

	int warm = !g->warmed && !g->mix;

	if (!g->mix)
		for (size_t i = 0; i < g->plan.nst; i++)
			g->plan.streams[i].view = views[i];
	g->warmed = 1;
	pthread_mutex_unlock(&g->mu);
	/* A remote store's batch fetched whole first: each piece's gather
	 * would otherwise wait for a round trip of its own, one after the
	 * other.  A failure here is the piece's to meet and report. */
	for (size_t i = 0; warm && i < g->plan.nst; i++)
		if (views[i])
			zr_view_warm(views[i], g->plan.idx,
				     (size_t)g->plan.count);
	err = zrfile_batch_fill_piece(&g->plan, &g->pc, g->buf, k);
	pthread_mutex_lock(&g->mu);
	g->filling = 0;
	if (!err) {
		atomic_store_explicit(&g->done[k], 1, memory_order_release);
		if (!--g->missing)
			zrfile_batch_free(&g->plan); /* buf is complete */
	}
	pthread_cond_broadcast(&g->cv);
	return err;
}

/* Caller holds mu: the first missing piece nobody fills, or pc.n. */
static size_t next_missing(struct zrtree_gather *g)
{
	while (g->next < g->pc.n &&
	       atomic_load_explicit(&g->done[g->next], memory_order_relaxed))
		g->next++;
	return g->next;
}

int zrtree_gather_run(struct zrtree_gather *g,
		      const struct zrtree_gather_hooks *h)
{
	zr_view *const *views;
	int err = 0;

	pthread_mutex_lock(&g->mu);
	while (!err && g->missing) {
		if (g->filling) {
			pthread_cond_wait(&g->cv, &g->mu);
			continue;
		}
		/* go may wait (the prefetcher's pause): not under mu */
		pthread_mutex_unlock(&g->mu);
		err = h->go(h->ctx, &views);
		pthread_mutex_lock(&g->mu);
		if (err)
			break;
		if (!g->filling && g->missing) {
			g->filling = 1;
			err = fill_one(g, next_missing(g), views);
		}
		if (h->after) {
			pthread_mutex_unlock(&g->mu);
			h->after(h->ctx);
			pthread_mutex_lock(&g->mu);
		}
	}
	pthread_mutex_unlock(&g->mu);
	return err;
}

int zrtree_gather_fill(struct zrtree_gather *g, uint64_t off, uint64_t end,
		       zr_view *const *views)
{
	size_t k = zrfile_batch_piece_of(&g->pc, off);
	size_t k1 = zrfile_batch_piece_of(&g->pc, end - 1);
	int err = 0;

	pthread_mutex_lock(&g->mu);
	while (!err && k <= k1) {
		if (atomic_load_explicit(&g->done[k], memory_order_relaxed)) {
			k++;
		} else if (g->filling) {
			pthread_cond_wait(&g->cv, &g->mu);
		} else {
			g->filling = 1;
			err = fill_one(g, k, views);
		}
	}
	pthread_mutex_unlock(&g->mu);
	return err;
}

int zrtree_gather_have(const struct zrtree_gather *g, uint64_t off,
		       uint64_t end)
{
	for (size_t k = zrfile_batch_piece_of(&g->pc, off);
	     k <= zrfile_batch_piece_of(&g->pc, end - 1); k++)
		if (!atomic_load_explicit(&g->done[k], memory_order_acquire))
			return 0;
	return 1;
}

int zrtree_gather_complete(struct zrtree_gather *g)
{
	int all;

	pthread_mutex_lock(&g->mu);
	all = !g->missing;
	pthread_mutex_unlock(&g->mu);
	return all;
}

size_t zrtree_gather_pieces(const struct zrtree_gather *g)
{
	return g->pc.n;
}

char *zrtree_gather_bytes(const struct zrtree_gather *g)
{
	return g->buf;
}

/* -- a step ahead -------------------------------------------------------- */

/* The views of one piece of work of a step gathered ahead. */
struct ahead {
	struct zrtree_store *const *st;
	size_t k;
	zr_view **v;
	uint64_t epoch;		/* what they must sum to: the version's  */
	int (*go)(void *ctx);
	void *ctx;
};

/* Begins the views, if the stores are still at the step's epoch. */
static int ahead_views(struct ahead *a)
{
	int err = zrtree_views_begin(a->st, a->k, a->v);

	if (!err && zrtree_views_epoch(a->v, a->k) != a->epoch) {
		zrtree_views_end(a->v, a->k);
		err = -ESTALE;
	}
	return err;
}

static int ahead_go(void *ctx, zr_view *const **views)
{
	struct ahead *a = ctx;
	int err = a->go(a->ctx);

	if (!err)
		err = ahead_views(a);
	*views = a->v;
	return err;
}

static void ahead_after(void *ctx)
{
	struct ahead *a = ctx;

	zrtree_views_end(a->v, a->k);
}

int zrtree_gather_ahead(struct zrtree *t, struct zrtree_node *n,
			int (*go)(void *ctx),
			void (*publish)(void *ctx, struct zrtree_gather *g),
			void *ctx, struct zrtree_gather **out)
{
	struct ahead a = { .go = go, .ctx = ctx };
	struct zrtree_gather_hooks h = { ahead_go, ahead_after, &a };
	struct zrtree_gather *g = NULL;
	int err;

	a.k = zrtree_batch_stores(n, &a.st);
	a.v = calloc(a.k, sizeof(*a.v));
	err = a.v ? go(ctx) : -ENOMEM;
	if (!err)
		err = zrtree_batch_version(t, n, &n->size, n->ver);
	a.epoch = n->ver[1];
	if (!err)
		err = go(ctx);
	if (!err && !(err = ahead_views(&a))) {
		err = zrtree_gather_new(t, n, n->ver[0], a.v, &g);
		zrtree_views_end(a.v, a.k);
	}
	if (!err) {
		publish(ctx, g);
		err = zrtree_gather_run(g, &h);
	}
	free(a.v);
	if (err) {
		zrtree_gather_put(g);
		return err;
	}
	*out = g;
	return 0;
}
