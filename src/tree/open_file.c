/*
 * open_file.c - open record and batch files (open_file.h): the views
 * begun at open, the buffer, and for a batch its gather (batch_gather.h)
 * and the thread that runs it from the first read on, so that reads of
 * pieces already gathered never wait for a gather and the next pieces
 * are gathered while the kernel copies these.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "batch_gather.h"
#include "big_buffers.h"
#include "errors_log.h"
#include "file_bytes.h"
#include "form_table.h"
#include "open_file.h"

/* How far the buffer is. */
enum { FILL_NONE, FILL_PLANNED, FILL_DONE };

struct zrtree_file {
	struct zrtree *tree;
	const struct zrtree_node *node;
	/* Guards the fill: buf, views, g, the runner's start. */
	pthread_mutex_t mu;
	char *buf;		/* a record's, an adopted batch's, or g's  */
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
	struct zrtree_gather *g; /* batch: set under mu before PLANNED   */
	/* the whole file gathered on a thread of its own (zrtree_file_ahead):
	 * armed, then started at the first fill */
	void (*busy)(int delta);
	int armed, running;
	pthread_t runner;
	zr_view *const *run_views; /* the views, as the runner started  */
	atomic_int stop;	/* close: the runner ends after its piece */
	/* its failure is in errors already: the kernel asks again for a
	 * range whose read failed, and that is one failure, not two */
	atomic_int logged;
};

static int is_record(const struct zrtree_file *f)
{
	return f->node->kind == ZRTREE_K_RECORD;
}

static void log_failure(struct zrtree_file *f, int err)
{
	const struct zrtree_node *n = f->node;
	const char *name, *msg = *zr_errmsg() ? zr_errmsg() : zr_strerror(err);
	struct zrtree_elog *log;

	if (err == ZR_E_BUSY)
		return; /* tried again after the writer */
	if (atomic_exchange(&f->logged, 1))
		return;
	if (is_record(f)) {
		zrtree_rec_log(n, msg);
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

/* Caller holds mu: once every piece is in, the views end. */
static void batch_done(struct zrtree_file *f)
{
	if (atomic_load_explicit(&f->state, memory_order_relaxed) ==
		    FILL_PLANNED &&
	    zrtree_gather_complete(f->g)) {
		views_end(f);
		set_state(f, FILL_DONE);
	}
}

/* Caller holds mu, before any fill: the batch is gathered into g's
 * buffer. */
static void batch_attach(struct zrtree_file *f, struct zrtree_gather *g)
{
	f->g = g;
	f->buf = zrtree_gather_bytes(g);
	set_state(f, FILL_PLANNED);
	batch_done(f);
}

/* Caller holds mu.  Plans the batch drawn from the first length records
 * (0: all), if it has the node's size (else -ESTALE). */
static int plan(struct zrtree_file *f, uint64_t length)
{
	struct zrtree_gather *g;
	int err = zrtree_gather_new(f->tree, f->node, length, f->views, &g);

	if (!err)
		batch_attach(f, g);
	return err;
}

/* The runner's views are the file's, fixed until every piece is in. */
struct run {
	struct zrtree_file *f;
	zr_view *const *views;
};

static int run_go(void *ctx, zr_view *const **views)
{
	struct run *r = ctx;

	*views = r->views;
	return atomic_load_explicit(&r->f->stop, memory_order_relaxed) ?
		       -ECANCELED : 0;
}

/* The runner: the pieces in file order, while the reads take them.  A
 * failure ends it quietly: the read that needs the piece fills it and
 * reports (ZR_E_BUSY: parks, as without a runner). */
static void *runner(void *arg)
{
	struct zrtree_file *f = arg;
	struct run r = { f, f->run_views };
	struct zrtree_gather_hooks h = { run_go, NULL, &r };

	if (f->busy)
		f->busy(1);
	(void)zrtree_gather_run(f->g, &h);
	if (f->busy)
		f->busy(-1);
	pthread_mutex_lock(&f->mu);
	batch_done(f);
	pthread_mutex_unlock(&f->mu);
	return NULL;
}

/* Caller holds mu and has planned: starts the runner if armed.  Without
 * a thread the reads fill their pieces themselves, as a file of one
 * piece always does: nothing to overlap, and a thread would only add
 * its start and a wake-up to the read. */
static void runner_start(struct zrtree_file *f)
{
	if (!f->armed || f->running ||
	    atomic_load_explicit(&f->state, memory_order_relaxed) == FILL_DONE ||
	    zrtree_gather_pieces(f->g) < 2)
		return;
	f->armed = 0;
	f->run_views = f->views;
	f->running = !pthread_create(&f->runner, NULL, runner, f);
}

/* Caller holds mu: bytes [off, end) of the node's content (length
 * ver[0]), or of the stores' now when fresh (planned at open). */
static int batch_fill(struct zrtree_file *f, uint64_t off, uint64_t end)
{
	int err = 0;

	if (!f->g)
		err = plan(f, f->node->ver[0]);
	if (!err)
		runner_start(f);
	if (!err)
		err = zrtree_gather_fill(f->g, off, end, f->views);
	batch_done(f);
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
			err = zrtree_gather_fill(f->g, 0, f->node->size,
						 f->views);
		if (!err)
			batch_done(f);
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
	atomic_init(&f->stop, 0);
	atomic_init(&f->logged, 0);
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
	if (f->running) {
		atomic_store_explicit(&f->stop, 1, memory_order_relaxed);
		pthread_join(f->runner, NULL);
	}
	zrtree_gather_put(f->g);
	views_end(f);
	if (f->cached)
		zrcommon_bigbuf_put(f->buf, f->cap);
	else if (!f->g)
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

	if (state != FILL_PLANNED)
		return state == FILL_DONE;
	return zrtree_gather_have(f->g, off, end);
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

void zrtree_file_take_over(struct zrtree_file *f, struct zrtree_gather *g)
{
	zrtree_gather_ref(g);
	pthread_mutex_lock(&f->mu);
	batch_attach(f, g);
	pthread_mutex_unlock(&f->mu);
}

void zrtree_file_ahead(struct zrtree_file *f, void (*busy)(int delta))
{
	if (is_record(f))
		return;
	pthread_mutex_lock(&f->mu);
	f->busy = busy;
	f->armed = 1;
	if (f->g) /* taken over part-way: on with the rest at once */
		runner_start(f);
	pthread_mutex_unlock(&f->mu);
}
