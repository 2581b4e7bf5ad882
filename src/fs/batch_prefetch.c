/*
 * batch_prefetch.c - batch files gathered ahead (batch_prefetch.h).
 *
 * A sequence is what a trainer reads step after step: one store or
 * dataset, sampler mode, batch size, seed and file form (rank, world,
 * start and granule are the mount's).  A step is gathered as its lookup
 * and then a first read would make it: zrtree_batch_version gives the size
 * and version a lookup gives (the length drawn from and the sum of the
 * stores' view epochs; it also keeps a packed form's shapes for that
 * lookup), then the plan and each piece are made through views whose
 * epochs still sum to that version's.  Epochs only grow, so such views
 * show the same record at every index as the lookup's did (tree.h,
 * Contents): the bytes are those of any node of that version and size,
 * whatever appends or compacts came between.  An open takes them only if
 * its node has that version and size and its own views are still at it
 * (batch.c), so nothing a delete changed can match.
 *
 * The gather never waits and never parks.  Its views are begun without
 * waiting (file_bytes.h) and held for one piece of work at a time, never
 * across zrpf_go's pause, so that a compact never finds an old view of
 * the prefetcher's open for long (zrecord.h, "views"); ZR_E_BUSY from a
 * running delete or compact gives the step up, as do views at another
 * epoch (a delete since: no open could take the step any more) and the
 * prefetcher's stop.  Nor does it run beside a batch open or read
 * (zrfs_pf_busy): it pauses before its next piece until they are done.
 *
 * Locks: the prefetcher's own lock is a leaf of fs.h's order, taken at a
 * batch open with no other lock held (take, hint); only the buffer
 * cache's lock is taken inside it (release).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "batch_prefetch.h"
#include "big_buffers.h"
#include "file_bytes.h"
#include "open_file.h"
#include "prefetch.h"

#define ZRFS_PF_DS (1ull << 32) /* in zrpf_seq.form: src is a dataset */

static zrpf *pf; /* set before the session's threads start */

/* A step being gathered: the node its lookup would make, its plan, and
 * the views its current piece of work reads through. */
struct step {
	struct zrtree_node n;
	struct zrfile_batch p;	/* zeroed until planned                 */
	zr_view **v;		/* one per store (zrtree_batch_stores)     */
	size_t k;
	uint64_t epoch;		/* what they must sum to: the version's  */
};

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

/* Begins the views of one piece of work, if the stores are still at the
 * step's epoch, and points a planned step's gathers at them: a plan holds
 * what its records are (sizes, shapes), never where their bytes lie, so
 * views of the same epoch serve it. */
static int views_at(struct step *s)
{
	struct zrtree_store *const *st;
	int err;

	zrtree_batch_stores(&s->n, &st);
	err = zrtree_views_begin(st, s->k, s->v);
	if (!err && zrtree_views_epoch(s->v, s->k) != s->epoch) {
		zrtree_views_end(s->v, s->k);
		err = -ESTALE;
	}
	for (size_t i = 0; !err && i < s->p.nst; i++)
		s->p.streams[i].view = s->v[i];
	return err;
}

static void views_done(struct step *s)
{
	for (size_t i = 0; i < s->p.nst; i++)
		s->p.streams[i].view = NULL;
	zrtree_views_end(s->v, s->k);
}

/* Plans the step as its lookup sized it and gets a buffer for it. */
static int plan(struct zrfs_fs *fs, struct step *s, struct zrpf_batch *b)
{
	int err = views_at(s);

	if (err)
		return err;
	err = zrtree_plan_make(&fs->tree, &s->n, &s->p, 0, b->ver[0], s->v);
	if (!err && s->p.total != b->size) {
		zrfile_batch_free(&s->p);
		err = -ESTALE;
	}
	views_done(s);
	if (!err) {
		b->buf = zrcommon_bigbuf_get(s->p.total + s->p.file.slack, &b->cap);
		if (!b->buf) {
			zrfile_batch_free(&s->p);
			err = -ENOMEM;
		}
	}
	return err;
}

/* One piece at a time, so that a delete or compact waits for one piece
 * at most, and a stop is seen between pieces. */
static int fill(struct step *s, zrpf *pf, struct zrpf_batch *b)
{
	struct zrfile_batch_pieces pc;
	int err = 0;

	zrfile_batch_pieces(&s->p, &pc);
	for (size_t k = 0; !err && k < pc.n; k++) {
		err = zrpf_go(pf);
		if (!err)
			err = views_at(s);
		if (err)
			break;
		err = zrfile_batch_fill_piece(&s->p, &pc, b->buf, k);
		views_done(s);
	}
	return err;
}

static int gather(void *ctx, const struct zrpf_seq *q, uint64_t step,
		  zrpf *pf, struct zrpf_batch *b)
{
	struct zrfs_fs *fs = ctx;
	struct zrtree_store *const *st;
	struct step s = { 0 };
	int err;

	node_of(q, step, &s.n);
	s.k = zrtree_batch_stores(&s.n, &st);
	s.v = calloc(s.k, sizeof(*s.v));
	err = s.v ? zrpf_go(pf) : -ENOMEM;
	if (!err)
		err = zrtree_batch_version(&fs->tree, &s.n, &b->size, b->ver);
	s.epoch = b->ver[1];
	if (!err)
		err = zrpf_go(pf);
	if (!err)
		err = plan(fs, &s, b);
	if (!err) {
		err = fill(&s, pf, b);
		zrfile_batch_free(&s.p);
		if (err)
			zrcommon_bigbuf_put(b->buf, b->cap);
	}
	free(s.v);
	return err;
}

static void release(void *ctx, char *buf, size_t cap)
{
	(void)ctx;
	zrcommon_bigbuf_put(buf, cap);
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
	const struct zrtree_node *n = fh->node;
	struct zrpf_batch b;
	struct zrpf_seq s;

	if (!pf)
		return 0;
	seq_of(n, &s);
	if (!zrpf_take(pf, &s, n->step, n->ver, n->size, &b))
		return 0;
	zrtree_file_adopt(fh->file, b.buf, b.cap);
	return 1;
}

void zrfs_pf_store(struct zrfs_fs *fs, const struct zrfs_fh *fh)
{
	struct fuse_bufvec bv = FUSE_BUFVEC_INIT(fh->len);

	if (fh->uncached || fs->opts.direct_batches)
		return;
	bv.buf[0].mem = (void *)zrtree_file_bytes(fh->file);
	/* An open holds no page of the file (a READ would: never from
	 * there), so the kernel can take these at once.  A failure leaves
	 * the reads to the buffer, as without. */
	(void)fuse_lowlevel_notify_store(fs->se, fh->node->ino, 0, &bv, 0);
}

void zrfs_pf_busy(int delta)
{
	zrpf_busy(pf, delta);
}

void zrfs_pf_hint(const struct zrfs_fh *fh, uint64_t epoch)
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
