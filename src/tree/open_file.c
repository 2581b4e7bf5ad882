/*
 * open_file.c - open record and batch files (open_file.h): the views
 * begun at open, the buffer, and for a batch the plan and which of its
 * pieces are in, so that reads of pieces already gathered never wait for
 * a gather.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "big_buffers.h"
#include "errors_log.h"
#include "file_bytes.h"
#include "form_table.h"
#include "open_file.h"

/* How far the buffer is. */
enum { FILL_NONE, FILL_PLANNED, FILL_DONE };

/* A batch's layout and which of its pieces are in buf (see
 * zrfile_batch_pieces in batch_file.h).  plan is freed once every piece
 * is in, the rest with the file, since a reader may be checking done[]
 * without mu. */
struct pieces {
	struct zrfile_batch plan; /* valid until every piece is in (mu)  */
	struct zrfile_batch_pieces pc; /* written once, before state      */
	size_t missing;		/* pieces not in buf yet (mu)             */
	atomic_uchar done[];	/* piece k is in buf (release, acquire)   */
};

struct zrtree_file {
	struct zrtree *tree;
	const struct zrtree_node *node;
	/* Guards the fill: buf, views, fill's plan and missing. */
	pthread_mutex_t mu;
	char *buf;
	size_t cap;
	int cached;		/* buf came from zrcommon_bigbuf_get      */
	int fresh;
	uint64_t epoch;
	/* one per store of the node (zrtree_batch_stores order), ended
	 * once buf holds the file */
	zr_view **views;
	size_t nviews;
	/* how far buf is: written under mu (release) and read without it
	 * (acquire), so that reads of bytes already in take no lock */
	atomic_int state;
	struct pieces *fill;	/* batch: set under mu before PLANNED     */
};

static int is_record(const struct zrtree_file *f)
{
	return f->node->kind == ZRTREE_K_RECORD;
}

static void log_failure(const struct zrtree_file *f, int err)
{
	const struct zrtree_node *n = f->node;
	const char *name, *msg = *zr_errmsg() ? zr_errmsg() : zr_strerror(err);
	struct zrtree_elog *log;

	if (err == ZR_E_BUSY)
		return; /* tried again after the writer */
	if (is_record(f)) {
		zrtree_elog_add(n->st->log, n->st->path, "records/%llu.%s: %s",
				(unsigned long long)n->idx,
				zrfile_form(n->form)->suffix + 1, msg);
		return;
	}
	log = zrtree_batch_elog(n, &name);
	zrtree_elog_add(log, name, "batch %llu-%llu: %s",
			(unsigned long long)n->seed,
			(unsigned long long)n->step, msg);
}

static void views_end(struct zrtree_file *f)
{
	if (f->views)
		zrtree_views_end(f->views, f->nviews);
	free(f->views);
	f->views = NULL;
}

static void set_state(struct zrtree_file *f, int state)
{
	atomic_store_explicit(&f->state, state, memory_order_release);
}

/* -- records ------------------------------------------------------------ */

/* Caller holds mu: the whole record, through the view begun at open. */
static int record_fill(struct zrtree_file *f)
{
	const struct zrtree_node *n = f->node;
	int err;

	f->buf = malloc(n->size ? n->size : 1);
	if (!f->buf)
		return -ENOMEM;
	err = zrtree_rec_fill(n->st, f->views[0], n->idx, n->form, f->buf,
			      n->size);
	if (err) {
		free(f->buf);
		f->buf = NULL;
		return err;
	}
	views_end(f); /* buf holds all it could show */
	set_state(f, FILL_DONE);
	return 0;
}

/* The record as the view shows it: of the node's size, or -ESTALE. */
static int record_open(struct zrtree_file *f)
{
	const struct zrtree_node *n = f->node;
	uint64_t size;
	int err = zrtree_rec_size(n->st, f->views[0], n->idx, n->form, &size);

	if (err == ZR_E_DTYPE || err == ZR_E_SHAPE)
		err = -ENOENT; /* no longer an image: no .png */
	if (err == -ENOENT || (!err && size != n->size))
		return -ESTALE;
	if (!err && !zrtree_rec_same(n, zr_view_epoch(f->views[0])))
		f->fresh = 1;
	return err;
}

/* -- batches ------------------------------------------------------------ */

/* Caller holds mu.  Plans the batch drawn from the first length records
 * (0: all) and gets buf for it, if it has the node's size (else
 * -ESTALE). */
static int plan(struct zrtree_file *f, uint64_t length)
{
	struct zrfile_batch_pieces pc;
	struct zrfile_batch p;
	struct pieces *s;
	int err = zrtree_plan_make(f->tree, f->node, &p, 0, length, f->views);

	if (err)
		return err == -ENOENT ? -ESTALE : err;
	if (p.total != f->node->size) {
		zrfile_batch_free(&p);
		return -ESTALE;
	}
	zrfile_batch_pieces(&p, &pc);
	s = malloc(sizeof(*s) + pc.n * sizeof(s->done[0]));
	/* the slack is scratch the fill may use past the file's bytes */
	f->buf = s ? zrcommon_bigbuf_get(p.total + p.file.slack, &f->cap) :
		     NULL;
	if (!f->buf) {
		free(s);
		zrfile_batch_free(&p);
		return -ENOMEM;
	}
	f->cached = 1;
	s->plan = p;
	s->pc = pc;
	s->missing = pc.n;
	for (size_t k = 0; k < pc.n; k++)
		atomic_init(&s->done[k], 0);
	f->fill = s;
	set_state(f, FILL_PLANNED);
	return 0;
}

/* Caller holds mu and has planned.  Gathers the pieces [k0, k1] not in
 * buf yet. */
static int fill_pieces(struct zrtree_file *f, size_t k0, size_t k1)
{
	struct pieces *s = f->fill;
	int err = 0;

	for (size_t k = k0; !err && k <= k1 && s->missing; k++) {
		if (atomic_load_explicit(&s->done[k], memory_order_relaxed))
			continue;
		err = zrfile_batch_fill_piece(&s->plan, &s->pc, f->buf, k);
		if (err)
			break;
		atomic_store_explicit(&s->done[k], 1, memory_order_release);
		if (!--s->missing) {
			zrfile_batch_free(&s->plan); /* buf is complete */
			views_end(f);
			set_state(f, FILL_DONE);
		}
	}
	return err;
}

/* Caller holds mu: bytes [off, end) of the node's content (length
 * ver[0]), or of the stores' now when fresh (planned at open). */
static int batch_fill(struct zrtree_file *f, uint64_t off, uint64_t end)
{
	int err = 0;

	if (!f->fill)
		err = plan(f, f->node->ver[0]);
	if (!err)
		err = fill_pieces(f, zrfile_batch_piece_of(&f->fill->pc, off),
				  zrfile_batch_piece_of(&f->fill->pc,
							end - 1));
	return err;
}

/* Unless a delete came since the lookup, the views show the node's
 * content, gathered at the reads that need it (or adopted); else the
 * batch is drawn anew now, from all the stores hold. */
static int batch_open(struct zrtree_file *f)
{
	int err = 0;

	f->epoch = zrtree_views_epoch(f->views, f->nviews);
	if (f->epoch != f->node->ver[1]) {
		f->fresh = 1;
		err = plan(f, 0);
		if (!err)
			err = fill_pieces(f, 0, f->fill->pc.n - 1);
	}
	return err;
}

/* -- the file ----------------------------------------------------------- */

static int views_begin(struct zrtree_file *f)
{
	struct zrtree_store *const *st;
	int err;

	if (is_record(f)) {
		st = &f->node->st;
		f->nviews = 1;
	} else {
		f->nviews = zrtree_batch_stores(f->node, &st);
	}
	f->views = calloc(f->nviews, sizeof(*f->views));
	if (!f->views)
		return -ENOMEM;
	err = zrtree_views_begin(st, f->nviews, f->views);
	if (err) {
		free(f->views);
		f->views = NULL;
	}
	return err;
}

int zrtree_file_open(struct zrtree *t, const struct zrtree_node *n,
		     struct zrtree_file **out)
{
	struct zrtree_file *f = calloc(1, sizeof(*f));
	int err;

	if (!f)
		return -ENOMEM;
	f->tree = t;
	f->node = n;
	pthread_mutex_init(&f->mu, NULL);
	atomic_init(&f->state, FILL_NONE);
	/* A record's open fails only by what its name shows now; a batch's
	 * may gather (the failures of zrtree_file_fill) or fail to begin. */
	err = views_begin(f);
	if (!err && is_record(f)) {
		err = record_open(f);
		if (!err && f->fresh && (err = record_fill(f)))
			log_failure(f, err);
	} else if (!is_record(f)) {
		err = err ? err : batch_open(f);
		if (err && err != -ESTALE)
			log_failure(f, err);
	}
	if (err) {
		zrtree_file_close(f);
		return err;
	}
	*out = f;
	return 0;
}

void zrtree_file_close(struct zrtree_file *f)
{
	if (!f)
		return;
	if (f->fill)
		zrfile_batch_free(&f->fill->plan);
	free(f->fill);
	views_end(f);
	if (f->cached)
		zrcommon_bigbuf_put(f->buf, f->cap);
	else
		free(f->buf);
	pthread_mutex_destroy(&f->mu);
	free(f);
}

int zrtree_file_fresh(const struct zrtree_file *f)
{
	return f->fresh;
}

uint64_t zrtree_file_epoch(const struct zrtree_file *f)
{
	return f->epoch;
}

uint64_t zrtree_file_size(const struct zrtree_file *f)
{
	return f->node->size;
}

int zrtree_file_have(const struct zrtree_file *f, uint64_t off,
		     uint64_t end)
{
	int state = atomic_load_explicit(&f->state, memory_order_acquire);
	const struct pieces *s;

	if (state != FILL_PLANNED)
		return state == FILL_DONE;
	s = f->fill;
	for (size_t k = zrfile_batch_piece_of(&s->pc, off);
	     k <= zrfile_batch_piece_of(&s->pc, end - 1); k++)
		if (!atomic_load_explicit(&s->done[k], memory_order_acquire))
			return 0;
	return 1;
}

int zrtree_file_fill(struct zrtree_file *f, uint64_t off, uint64_t end)
{
	int err = 0;

	pthread_mutex_lock(&f->mu);
	if (atomic_load_explicit(&f->state, memory_order_relaxed) != FILL_DONE)
		err = is_record(f) ? record_fill(f) : batch_fill(f, off, end);
	pthread_mutex_unlock(&f->mu);
	if (err)
		log_failure(f, err);
	return err;
}

const char *zrtree_file_bytes(const struct zrtree_file *f)
{
	return f->buf;
}

void zrtree_file_adopt(struct zrtree_file *f, char *buf, size_t cap)
{
	views_end(f); /* no read gathers */
	f->buf = buf;
	f->cap = cap;
	f->cached = 1;
	set_state(f, FILL_DONE);
}
