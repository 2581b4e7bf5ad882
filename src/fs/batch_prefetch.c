/*
 * batch_prefetch.c - the daemon's hooks of the prefetcher
 * (batch_prefetch.h): which sequence a batch node belongs to, the node a
 * step's lookup would make, and the hand-over of a step's bytes to its
 * open.  The gather itself is the tree's (zrtree_gather_ahead in
 * batch_gather.h), the one an open file runs.
 *
 * A sequence is what a trainer reads step after step: one store or
 * dataset, sampler mode, batch size, seed and file form (rank, world,
 * start and granule are the mount's).  A step is gathered as its lookup
 * and then a first read would make it, with the size and version a
 * lookup gives (the length drawn from and the sum of the stores' view
 * epochs), through views whose epochs still sum to that version's:
 * the bytes are those of any node of that version and size, whatever
 * appends or compacts came between (tree.h, Contents).  An open takes
 * them, whole or part-way, only if its node has that version and size
 * and its own views are still at it (batch.c), so nothing a delete
 * changed can match.  The gather never waits and never parks, and does
 * not run beside a batch open, read or gather (zrfs_prefetch_busy): it
 * pauses before its next piece until they are done.
 *
 * Locks: the prefetcher's own lock and run_mu are leaves of fs.h's
 * order, taken at a batch open with no other lock held (take, hint);
 * only the buffer cache's lock and a gather's are taken inside them.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "batch_gather.h"
#include "batch_prefetch.h"
#include "big_buffers.h"
#include "encoder.h"
#include "errors_log.h"
#include "open_file.h"
#include "prefetch.h"

#define ZRFS_PF_DS (1ull << 32) /* in zrpf_seq.form: src is a dataset */

static zrpf *pf; /* set before the session's threads start */
static struct zrpf_conf conf; /* pf's: its depth and budget */

/* The step the prefetch thread is gathering, once planned, for an open
 * of it to take over part-way (zrfs_prefetch_take): run_mu guards it. */
static pthread_mutex_t run_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
	struct zrpf_seq seq;
	const struct zrtree_node *n; /* the gather's: size, ver          */
	struct zrtree_gather *g; /* a reference; NULL: none              */
	int taken;		/* an open took it over                  */
} run;
static _Atomic uint64_t taken_over; /* steps handed over part-way   */

static void seq_of(const struct zrtree_node *n, struct zrpf_seq *s)
{
	s->src = n->ds ? (const void *)n->ds : (const void *)n->st;
	s->mode = (uint64_t)n->mode;
	s->bsize = n->bsize;
	s->seed = n->seed;
	s->form = (uint64_t)n->form | (n->ds ? ZRFS_PF_DS : 0);
}

/* The batch node of step of s, as a lookup would make it. */
static void node_of(const struct zrpf_seq *s, uint64_t step,
		    struct zrtree_node *n)
{
	*n = (struct zrtree_node){
		.kind = ZRTREE_K_BATCH, .depth = 3,
		.mode = (zr_sampler_mode)s->mode, .bsize = s->bsize,
		.seed = s->seed, .step = step,
		.form = (int)(s->form & ~ZRFS_PF_DS),
	};
	if (s->form & ZRFS_PF_DS)
		n->ds = (struct zrtree_dataset *)s->src;
	else
		n->st = (struct zrtree_store *)s->src;
}

/* The gather's: what an open may take over once it is planned. */
struct step {
	const struct zrpf_seq *seq;
	const struct zrtree_node *n;
	zrpf *pf;
};

static int go(void *ctx)
{
	return zrpf_go(((struct step *)ctx)->pf);
}

static void publish(void *ctx, struct zrtree_gather *g)
{
	struct step *st = ctx;

	zrtree_gather_ref(g);
	pthread_mutex_lock(&run_mu);
	run.seq = *st->seq;
	run.n = st->n;
	run.g = g;
	run.taken = 0;
	pthread_mutex_unlock(&run_mu);
}

/* A step gathered ahead by the tree (zrtree_gather_ahead), unless an
 * open took it over meanwhile. */
static int gather(void *ctx, const struct zrpf_seq *q, uint64_t step,
		  zrpf *pf, struct zrpf_batch *b)
{
	struct zrfs_fs *fs = ctx;
	struct zrtree_gather *g, *pub;
	struct zrtree_node n;
	struct step st = { q, &n, pf };
	int err, taken;

	node_of(q, step, &n);
	err = zrtree_gather_ahead(&fs->tree, &n, go, publish, &st, &g);
	pthread_mutex_lock(&run_mu);
	pub = run.g;
	taken = run.taken;
	run.g = NULL;
	pthread_mutex_unlock(&run_mu);
	zrtree_gather_put(pub);
	if (!err && taken) {
		zrtree_gather_put(g); /* the open has it */
		err = -ECANCELED;
	}
	if (!err) {
		b->size = n.size;
		b->ver[0] = n.ver[0];
		b->ver[1] = n.ver[1];
		b->buf = zrtree_gather_unwrap(g, &b->cap);
	}
	return err;
}

static void release(void *ctx, char *buf, size_t cap)
{
	(void)ctx;
	zrcommon_bigbuf_put(buf, cap);
}

void zrfs_prefetch_start(struct zrfs_fs *fs)
{
	struct zrpf_conf c = {
		.depth = fs->opts.prefetch,
		.budget = fs->opts.prefetch_mem ? fs->opts.prefetch_mem :
						  zrpf_default_budget(),
		.ctx = fs, .gather = gather, .release = release,
	};
	int err;

	if (!c.depth)
		return;
	err = zrpf_new(&c, &pf);
	if (err)
		fprintf(stderr, "zrecordfs: prefetch is off: cannot start its "
			"thread (%s)\n", zr_strerror(err));
	else
		conf = c;
}

void zrfs_prefetch_counts(struct zrfs_prefetch_counts *out)
{
	*out = (struct zrfs_prefetch_counts){ 0 };
	if (!pf)
		return;
	out->depth = conf.depth;
	out->budget = conf.budget;
	zrpf_count(pf, &out->n);
	out->taken_over = taken_over;
}

/* A daemon's stderr is /dev/null: the line goes where its errors do. */
void zrfs_prefetch_stop(void)
{
	struct zrpf_counts c;

	if (!pf)
		return;
	zrpf_free(pf, &c);
	pf = NULL;
	if (c.gathered || taken_over)
		zrtree_elog_note("prefetch: %llu batches gathered ahead, %llu "
				 "served, %llu dropped, %llu taken over "
				 "part-way",
				 (unsigned long long)c.gathered,
				 (unsigned long long)c.served,
				 (unsigned long long)c.dropped,
				 (unsigned long long)taken_over);
}

/* The step the prefetch thread is gathering, if it is fh's: a reference
 * to its gather, which the open goes on with. */
static struct zrtree_gather *running(const struct zrfs_fh *fh,
				     const struct zrpf_seq *s)
{
	const struct zrtree_node *n = fh->node;
	struct zrtree_gather *g = NULL;

	pthread_mutex_lock(&run_mu);
	if (run.g && !run.taken && run.seq.src == s->src &&
	    run.seq.mode == s->mode && run.seq.bsize == s->bsize &&
	    run.seq.seed == s->seed && run.seq.form == s->form &&
	    run.n->step == n->step && run.n->size == n->size &&
	    run.n->ver[0] == n->ver[0] && run.n->ver[1] == n->ver[1]) {
		g = run.g;
		zrtree_gather_ref(g);
		run.taken = 1;
	}
	pthread_mutex_unlock(&run_mu);
	return g;
}

void zrfs_prefetch_take(struct zrfs_fh *fh)
{
	const struct zrtree_node *n = fh->node;
	struct zrtree_gather *g;
	struct zrpf_batch b;
	struct zrpf_seq s;

	if (!pf)
		return;
	seq_of(n, &s);
	g = running(fh, &s);
	if (g) {
		zrtree_file_take_over(fh->file, g);
		zrtree_gather_put(g);
		atomic_fetch_add(&taken_over, 1);
	}
	/* a step under way is told to stop: the open has it now */
	if (!zrpf_take(pf, &s, n->step, n->ver, n->size, &b))
		return;
	if (g) {
		zrcommon_bigbuf_put(b.buf, b.cap);
		return;
	}
	/* Its reads are served from this buffer.  Pushing it into the page
	 * cache here (fuse_lowlevel_notify_store) made the reads page-cache
	 * hits, but the push is a copy of the whole file inside the open,
	 * before the reader's own: a 6 MiB step waited 4.6 ms that way
	 * against 3.1 ms through READs, whose copies overlap the reader's
	 * (docs/performance.md, bench_stall). */
	zrtree_file_adopt(fh->file, b.buf, b.cap);
}

void zrfs_prefetch_busy(int delta)
{
	if (pf) /* -o prefetch=0 costs nothing */
		zrpf_busy(pf, delta);
}

void zrfs_prefetch_hint(const struct zrfs_fh *fh, uint64_t epoch)
{
	struct zrpf_seq s;

	/* an index file costs nothing to read; a mixture's batch is drawn
	 * at the source lengths its own lookup kept (batch_mix.c), which a
	 * step gathered ahead has no lookup to give */
	if (!pf || fh->node->form == ZRFILE_INDICES || fh->node->mix)
		return;
	seq_of(fh->node, &s);
	zrpf_hint(pf, &s, fh->node->step, epoch, fh->node->size);
}
