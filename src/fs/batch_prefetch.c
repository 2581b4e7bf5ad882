/*
 * batch_prefetch.c - batch files gathered ahead (batch_prefetch.h).
 *
 * A sequence is what a trainer reads step after step: one store or
 * dataset, sampler mode, batch size, seed and file form (rank, world,
 * start and granule are the mount's).  A step is gathered exactly as a
 * lookup and then a first read of its name would: zrfs_batch_version
 * gives the size and version tag a lookup gives (and keeps a packed
 * form's shapes for that lookup), the plan is made from the same length
 * at the same generation, and each piece is filled under the stores' read
 * locks after checking the generation again.  An open takes the buffer
 * only if its node has that version and size, while the stores are still
 * at that generation: then the buffer holds the node's bytes, whatever
 * happened in between (a delete or compact changes the generation, so
 * nothing it made stale can match).
 *
 * The gather never waits for a delete or compact: a store lock a writer
 * holds or awaits ends it (ZRFS_E_PARK), as does the prefetcher's stop.
 * Nor does it run beside a batch open or read (zrfs_pf_busy): it pauses
 * before its next piece until they are done.
 *
 * Locks: the prefetcher's own lock is a leaf of fs.h's order, taken
 * inside the store locks (take) or outside them (hint); only the buffer
 * cache's lock is taken inside it (release).
 */
#include <errno.h>
#include <stdio.h>

#include "batch_prefetch.h"
#include "buf_cache.h"
#include "file_bytes.h"
#include "prefetch.h"
#include "store_park.h"

#define ZRFS_PF_DS (1ull << 32) /* in zrpf_seq.form: src is a dataset */

static zrpf *pf; /* set before the session's threads start */

static void seq_of(const struct zrfs_node *n, struct zrpf_seq *s)
{
	s->src = n->ds ? (const void *)n->ds : (const void *)n->st;
	s->mode = (uint64_t)n->mode;
	s->bsize = n->bsize;
	s->seed = n->seed;
	s->form = (uint64_t)n->form | (n->ds ? ZRFS_PF_DS : 0);
}

/* The batch node of step of s, as a lookup would make it. */
static void node_of(const struct zrpf_seq *s, uint64_t step,
		    struct zrfs_node *n)
{
	*n = (struct zrfs_node){
		.kind = ZRFS_K_BATCH, .depth = 3,
		.mode = (zr_sampler_mode)s->mode, .bsize = s->bsize,
		.seed = s->seed, .step = step,
		.form = (enum zrfs_form)(s->form & ~ZRFS_PF_DS),
	};
	if (s->form & ZRFS_PF_DS)
		n->ds = (struct zrfs_dataset *)s->src;
	else
		n->st = (struct zrfs_fstore *)s->src;
}

/* The read locks of n's stores, if they are still at generation gen. */
static int lock_at(const struct zrfs_node *n, uint64_t gen)
{
	struct zrfs_fstore *const *st;
	size_t k = zrfs_batch_stores(n, &st);
	int err = zrfs_st_rdlock_all(st, k);

	if (!err && zrfs_batch_gen(n) != gen) {
		zrfs_st_unlock_all(st, k);
		err = -ESTALE;
	}
	return err;
}

static void unlock(const struct zrfs_node *n)
{
	struct zrfs_fstore *const *st;

	zrfs_st_unlock_all(st, zrfs_batch_stores(n, &st));
}

/* Plans n as its lookup sized it and gets a buffer for it. */
static int plan_at(struct zrfs_fs *fs, const struct zrfs_node *n,
		   struct zrfs_plan *p, struct zrpf_batch *b)
{
	int err = lock_at(n, b->ver[1]);

	if (err)
		return err;
	err = zrfs_plan_make(fs, n, p, 0, b->ver[0], NULL, b->ver[1]);
	if (!err && p->total != b->size) {
		zrfs_plan_free(p);
		err = -ESTALE;
	}
	if (!err) {
		b->buf = zrfs_buf_get(p->total + p->file.slack, &b->cap);
		if (!b->buf) {
			zrfs_plan_free(p);
			err = -ENOMEM;
		}
	}
	unlock(n);
	return err;
}

/* One piece at a time, so that a delete or compact waits for one piece
 * at most, and a stop is seen between pieces. */
static int fill(const struct zrfs_node *n, const struct zrfs_plan *p,
		zrpf *pf, struct zrpf_batch *b)
{
	struct zrfs_pieces pc;
	int err = 0;

	zrfs_plan_pieces(p, &pc);
	for (size_t k = 0; !err && k < pc.n; k++) {
		err = zrpf_go(pf);
		if (!err)
			err = lock_at(n, b->ver[1]);
		if (err)
			break;
		err = zrfs_plan_fill_piece(p, &pc, b->buf, k);
		unlock(n);
	}
	return err;
}

static int gather(void *ctx, const struct zrpf_seq *s, uint64_t step,
		  zrpf *pf, struct zrpf_batch *b)
{
	struct zrfs_fs *fs = ctx;
	struct zrfs_node n;
	struct zrfs_plan p;
	int err;

	node_of(s, step, &n);
	err = zrpf_go(pf);
	if (!err)
		err = zrfs_batch_version(fs, &n, &b->size, b->ver);
	if (!err)
		err = plan_at(fs, &n, &p, b);
	if (err)
		return err;
	err = fill(&n, &p, pf, b);
	zrfs_plan_free(&p);
	if (err)
		zrfs_buf_put(b->buf, b->cap);
	return err;
}

static void release(void *ctx, char *buf, size_t cap)
{
	(void)ctx;
	zrfs_buf_put(buf, cap);
}

void zrfs_pf_start(struct zrfs_fs *fs)
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
}

void zrfs_pf_stop(void)
{
	struct zrpf_counts c;

	if (!pf)
		return;
	zrpf_free(pf, &c);
	pf = NULL;
	if (c.gathered)
		fprintf(stderr, "zrecordfs: prefetch: %llu batches gathered "
			"ahead, %llu served, %llu dropped\n",
			(unsigned long long)c.gathered,
			(unsigned long long)c.served,
			(unsigned long long)c.dropped);
}

int zrfs_pf_take(struct zrfs_fh *fh)
{
	const struct zrfs_node *n = fh->node;
	struct zrpf_batch b;
	struct zrpf_seq s;

	if (!pf)
		return 0;
	seq_of(n, &s);
	if (!zrpf_take(pf, &s, n->step, n->ver, n->size, &b))
		return 0;
	fh->buf = b.buf;
	fh->cap = b.cap;
	fh->cached = 1;
	atomic_store_explicit(&fh->filled, 1, memory_order_release);
	return 1;
}

void zrfs_pf_store(struct zrfs_fs *fs, const struct zrfs_fh *fh)
{
	struct fuse_bufvec bv = FUSE_BUFVEC_INIT(fh->len);

	if (fh->uncached || fs->opts.direct_batches)
		return;
	bv.buf[0].mem = fh->buf;
	/* An open holds no page of the file (a READ would: never from
	 * there), so the kernel can take these at once.  A failure leaves
	 * the reads to the buffer, as without. */
	(void)fuse_lowlevel_notify_store(fs->se, fh->node->ino, 0, &bv, 0);
}

void zrfs_pf_busy(int delta)
{
	zrpf_busy(pf, delta);
}

void zrfs_pf_hint(const struct zrfs_fh *fh)
{
	struct zrpf_seq s;

	/* an index file costs nothing to read */
	if (!pf || fh->node->form == ZRFS_F_IDX)
		return;
	seq_of(fh->node, &s);
	zrpf_hint(pf, &s, fh->node->step, fh->vgen, fh->node->size);
}
