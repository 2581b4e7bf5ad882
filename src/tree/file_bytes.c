/*
 * file_bytes.c - record and batch files as a mount serves them (see
 * file_bytes.h): a record node's file from the common encoder
 * (encoder.h), a batch node's as a spec for the batch planner `zrecord
 * batch` uses (src/files/batch_file.h) with the tree's run options passed
 * in, and the refusals the planner explains written to the errors file.
 * Everything here reads through library views (ZR_VIEW_TRY: ZR_E_BUSY at
 * once during a delete or compact, which the caller parks), so the record
 * table cannot change between computing a size and filling it, except the
 * bounds check of a batch name, which runs before any view, allocation or
 * table read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "batch_stream.h"
#include "file_bytes.h"
#include "form_table.h"
#include "mixture.h"
#include "errors_log.h"

/* -- views ------------------------------------------------------------- */

int zrtree_views_begin(struct zrtree_store *const *st, size_t n, zr_view **v)
{
	for (size_t i = 0; i < n; i++) {
		int err = zr_view_begin(st[i]->zs, ZR_VIEW_TRY, &v[i]);

		if (err) {
			v[i] = NULL;
			zrtree_views_end(v, i);
			return err;
		}
	}
	return 0;
}

void zrtree_views_end(zr_view **v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		zr_view_end(v[i]);
		v[i] = NULL;
	}
}

int zrtree_st_probe(struct zrtree_store *st)
{
	zr_view *v;
	int err = zrtree_views_begin(&st, 1, &v);

	zr_view_end(err ? NULL : v);
	return err;
}

/* -- records ----------------------------------------------------------- */

/* Record idx's file in form (RECORD, PNG) over the stream *s. */
static int rec_plan(struct zrtree_store *st, zr_view *v, const uint64_t *idx,
		    int form, zrfile_source *s, zrfile_npy *f)
{
	*s = (zrfile_source){ .zs = st->zs, .view = v };
	return zrfile_npy_plan(f, form, s, 1, idx, 1);
}

int zrtree_rec_size(struct zrtree_store *st, zr_view *v, uint64_t idx, int form,
		 uint64_t *size)
{
	zrfile_source s;
	zrfile_npy f;
	int err;

	if (idx >= zr_view_length(v))
		return -ENOENT;
	err = rec_plan(st, v, &idx, form, &s, &f);
	*size = f.total;
	zrfile_npy_free(&f);
	return err;
}

int zrtree_rec_version(struct zrtree_store *st, uint64_t idx, int form,
		    uint64_t *size, uint64_t *epoch)
{
	zr_view *v;
	int err = zrtree_views_begin(&st, 1, &v);

	if (err)
		return err;
	err = zrtree_rec_size(st, v, idx, form, size);
	*epoch = zr_view_epoch(v);
	zr_view_end(v);
	return err;
}

int zrtree_rec_same(const struct zrtree_node *n, uint64_t epoch)
{
	return !zr_store_index_changed(n->st->zs, n->ver[0], epoch, n->idx);
}

int zrtree_rec_fill(struct zrtree_store *st, zr_view *v, uint64_t idx, int form,
		 char *buf, uint64_t size)
{
	zrfile_source s;
	zrfile_npy f;
	int err;

	err = rec_plan(st, v, &idx, form, &s, &f);
	if (!err && f.total != size)
		err = -ESTALE; /* a delete or compact since the lookup */
	if (!err)
		err = zrfile_npy_fill(&f, buf);
	zrfile_npy_free(&f);
	return err;
}

void zrtree_rec_log(const struct zrtree_node *n, const char *msg)
{
	zrtree_elog_add(n->st->log, n->st->path, "records/%llu.%s: %s",
			(unsigned long long)n->idx,
			zrfile_form(n->form)->suffix + 1, msg);
}

/* -- batches ------------------------------------------------------------ */

/* Node n's batch as the planner's spec (batch_file.h): the tree's
 * sampler options, schedule and max_batch_bytes; a mixture's file and
 * the source lengths its lookup drew at; the node's stores as the shape
 * cache's key. */
static void node_spec(const struct zrtree_run *o, const struct zrtree_node *n,
		      uint64_t epoch, struct zrfile_batch_spec *s)
{
	*s = (struct zrfile_batch_spec){
		.cfg = { .mode = n->mode, .seed = n->seed,
			 .batch_size = n->bsize, .rank = o->rank,
			 .world = o->world },
		.start = o->start, .granule = o->granule, .step = n->step,
		.sched = &o->sched, .form = n->form,
		.max_batch = o->max_batch,
		.mix = n->mix ? &n->mix->file : NULL, .lens = n->lens,
		.cache = n->mix ? (const void *)n->mix :
			 n->ds ? (const void *)n->ds : (const void *)n->st,
		.epoch = epoch, .images = &o->image,
	};
}

/* The planner's streams of the node's stores (a dataset's by name, a
 * mixture's grid), read through their views. */
static void node_streams(const struct zrtree_node *n, zr_view *const *views,
			 zrfile_source *grid)
{
	struct zrtree_store *const *st;
	size_t k = zrtree_batch_stores(n, &st);

	if (n->mix) {
		zrtree_mix_grid(n->mix, views, grid);
		return;
	}
	for (size_t i = 0; i < k; i++)
		grid[i] = (zrfile_source){
			.zs = st[i]->zs, .name = n->ds ? n->ds->names[i] : NULL,
			.view = views[i] };
}

/* A refusal of a batch name, into the errors file of n's store or
 * mixture: a batch the schedule does not serve yet, one over the byte cap,
 * records a packed or padded form cannot take, and what the planner left
 * to the library to explain (a cyclic W*B over the length, a stream it
 * cannot build: zr_errmsg).  A store with nothing to sample from yet is
 * no failure (ENOENT with no message). */
static void log_refusal(const struct zrtree_node *n, int err, const char *msg,
			int planned)
{
	unsigned long long b = n->bsize;
	int lib = !msg[0] && err == -EINVAL;
	struct zrtree_elog *log;
	const char *name;

	if (lib)
		msg = zr_errmsg();
	if (!msg[0])
		return;
	log = zrtree_batch_elog(n, &name);
	if (err == -ENOENT)
		zrtree_elog_add(log, name, "batch %llu-%llu: -o length, grow: "
			      "%s (ENOENT)", (unsigned long long)n->seed,
			      (unsigned long long)n->step, msg);
	else if (err == -EFBIG)
		zrtree_elog_add(log, name, "batch of %llu: %s (EFBIG)", b, msg);
	else if (err == -EINVAL && planned && !lib &&
		 zrfile_npy_flat(n->form))
		zrtree_elog_add(log, name, "batch of %llu: %s (EINVAL); the "
			      ".npz form holds any records, one member each",
			      b, msg);
	else
		zrtree_elog_add(log, name, "batch of %llu: %s (%s)", b, msg,
			      err == -EINVAL ? "EINVAL" : zr_strerror(err));
}

/* zrtree_plan_make, and into *spec (unless NULL) the spec it planned. */
static int plan(struct zrtree *t, const struct zrtree_node *n,
		struct zrfile_batch *p, int size_only, uint64_t length,
		zr_view *const *views, struct zrfile_batch_spec *spec)
{
	struct zrtree_store *const *st;
	size_t k = zrtree_batch_stores(n, &st);
	struct zrfile_batch_spec s;
	zrfile_source *grid;
	char msg[320];
	int err;

	node_spec(t->run, n, zrtree_views_epoch(views, k), &s);
	grid = zrfile_batch_sources(p, n->mix ? n->mix->k : 0,
				    n->mix ? n->mix->nf : k);
	if (grid)
		node_streams(n, views, grid);
	err = zrfile_batch_plan(p, &s, size_only, length, msg, sizeof(msg));
	if (err) {
		log_refusal(n, err, msg, 1);
		zrfile_batch_free(p);
	} else if (spec) {
		*spec = s;
	}
	return err;
}

int zrtree_plan_make(struct zrtree *t, const struct zrtree_node *n,
		   struct zrfile_batch *p, int size_only, uint64_t length,
		   zr_view *const *views)
{
	return plan(t, n, p, size_only, length, views, NULL);
}

uint64_t zrtree_views_epoch(zr_view *const *views, size_t k)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < k; i++)
		sum += zr_view_epoch(views[i]);
	return sum;
}

/* The planner's early refusal of n, before any view, allocation or table
 * read: -EFBIG for a batch over max_batch_bytes whatever records it held
 * (one store per field: a mixture's first source's); -EINVAL for a run
 * resumed without its granule (batch_stream.h; a mixture has none). */
static int bound(struct zrtree *t, const struct zrtree_node *n)
{
	struct zrtree_store *const *st;
	size_t k = zrtree_batch_stores(n, &st);
	struct zrfile_batch_spec s;
	struct zrfile_batch_least l;
	char msg[320];
	int err;

	node_spec(t->run, n, 0, &s);
	zrfile_batch_least_init(&l, n->mix != NULL);
	if (n->mix)
		for (uint32_t f = 0; f < n->mix->nf; f++)
			zrfile_batch_least_add(&s, &l,
					       n->mix->grid[f * n->mix->k]->zs);
	else
		for (size_t i = 0; i < k; i++)
			zrfile_batch_least_add(&s, &l, st[i]->zs);
	err = zrfile_batch_bound(&s, &l, msg, sizeof(msg));
	if (!err && !n->mix)
		err = zrfile_batch_resumed(n->mode, s.start, s.granule, msg,
					     sizeof(msg));
	if (err)
		log_refusal(n, err, msg, 0);
	return err;
}

/* zrtree_batch_version, and into *lens (unless NULL) a mixture's lengths;
 * what the plan read of a packed or padded batch is kept for its reads. */
static int version(struct zrtree *t, const struct zrtree_node *n,
		   uint64_t *size, uint64_t ver[2], uint64_t **lens)
{
	struct zrtree_store *const *st;
	size_t k = zrtree_batch_stores(n, &st);
	struct zrfile_batch_spec s;
	struct zrfile_batch p;
	zr_view **v = NULL;
	int err = bound(t, n);

	if (!err && !(v = calloc(k, sizeof(*v))))
		err = -ENOMEM;
	if (!err)
		err = zrtree_views_begin(st, k, v);
	if (err) {
		free(v);
		return err;
	}
	err = plan(t, n, &p, 1, 0, v, &s);
	if (!err) {
		*size = p.total;
		ver[0] = p.length;
		ver[1] = s.epoch;
		zrfile_batch_keep(&s, &p);
		if (lens) {
			*lens = p.lens;
			p.lens = NULL;
		}
		zrfile_batch_free(&p);
	}
	zrtree_views_end(v, k);
	free(v);
	return err;
}

int zrtree_batch_version(struct zrtree *t, const struct zrtree_node *n,
		       uint64_t *size, uint64_t ver[2])
{
	return version(t, n, size, ver, NULL);
}

int zrtree_batch_lookup(struct zrtree *tree, struct zrtree_node *t)
{
	return version(tree, t, &t->size, t->ver, &t->lens);
}
