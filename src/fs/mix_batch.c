/*
 * mix_batch.c - the records of a mixture's batch file (mixture.h): the
 * library's mixture stream (zr_stream_new_mixture and the file's weight
 * changes, the mount's -o start, rank and world) picks (source, record)
 * for each sample, and the batch is read through the encoder's mixture
 * streams (src/files/npy_mix.h) and the handle's views, the bytes
 * `zrecord batch MIX` writes.  The batch is drawn at the source lengths
 * its lookup saw, which the node keeps (fs.h, lens).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "batch_node.h"
#include "batch_schedule.h"
#include "mix_batch.h"
#include "npy_mix.h"

int zrfs_mix_forms(const struct zrfs_mix *m, int *npz, int *flat)
{
	zrfile_source s = { .zs = m->grid[0]->zs, .name = m->names[0] };

	if (!m->records)
		return -1;
	*npz = zrfile_mix_form(&s, m->nf, flat) == ZRFILE_NPZ;
	return 0;
}

/* Per record, at least: a dense row or a ragged record's 8-byte prefix
 * in each field, and its index pair. */
int zrfs_mix_bound(struct zrfs_fs *fs, const struct zrfs_node *n)
{
	const struct zrfs_mix *m = n->mix;
	uint64_t least = 16, members = 0, b = n->bsize;

	for (uint32_t f = 0; n->form != ZRFS_F_IDX && f < m->nf; f++) {
		uint64_t row = zr_store_row_bytes(m->grid[f * m->k]->zs);

		least += row ? row : 8;
		members += row ? 1 : b;
	}
	if (n->form == ZRFS_F_NPZ && members > ZRFILE_NPZ_MEMBERS_MAX)
		return -EFBIG;
	return b > fs->opts.max_batch / least ? -EFBIG : 0;
}

uint64_t zrfs_mix_length(const struct zrfs_mix *m, uint32_t s,
			 zr_view *const *views)
{
	uint64_t n = UINT64_MAX;

	for (uint32_t f = 0; f < m->nf; f++) {
		size_t c = (size_t)f * m->k + s;
		uint64_t l = views ? zr_view_length(views[m->slot[c]])
				   : zr_store_length(m->grid[c]->zs);

		n = l < n ? l : n;
	}
	return n;
}

int zrfs_mix_streams(const struct zrfs_mix *m, uint32_t nf,
		     zr_view *const *views, zrfile_source **out, char *msg,
		     size_t cap)
{
	zrfile_source *grid;

	*out = zrfile_mix_alloc(m->k, nf, &grid);
	if (!*out)
		return -ENOMEM;
	for (size_t c = 0; c < (size_t)m->k * nf; c++)
		grid[c] = (zrfile_source){
			.zs = m->grid[c]->zs, .name = m->names[c / m->k],
			.view = views ? views[m->slot[c]] : NULL };
	return zrfile_mix_check(*out, m->k, nf, msg, cap);
}

/* The encoder's streams of the node's fields (INDICES: of field 0 only,
 * which takes any sources), through the handle's views. */
static int streams(const struct zrfs_mix *m, const struct zrfs_node *n,
		   struct zrfs_plan *p, zr_view *const *views)
{
	uint32_t nf = n->form == ZRFS_F_IDX ? 1 : m->nf;
	char msg[256];
	int err = zrfs_mix_streams(m, nf, views, &p->streams, msg,
				   sizeof(msg));

	if (!p->streams)
		return -ENOMEM;
	p->nst = nf;
	return n->form == ZRFS_F_IDX ? 0 : err;
}

/* The batch's keys from the mixture stream at lengths len. */
static int draw(struct zrfs_fs *fs, const struct zrfs_node *n,
		const uint64_t *len, uint64_t *key)
{
	const struct zrfs_mix *m = n->mix;
	uint64_t *base = malloc(m->k * sizeof(*base));
	zr_stream *st = NULL;
	int err = base ? zrfs_sched_base(fs, n, m->k, len, base) : -ENOMEM;

	if (!err)
		err = zr_stream_new_mixture(n->seed, m->k, base,
					    m->file.weight, &st);
	if (!err)
		err = zrfs_sched_apply(fs, n, st, m->file.from,
				       m->file.weights, m->file.nsched, base,
				       len);
	if (!err)
		err = zrfile_mix_batch(st, fs->opts.start, n->step,
				       fs->opts.rank, fs->opts.world, n->bsize,
				       key);
	zr_stream_free(st);
	free(base);
	return err;
}

/* The lengths n draws at into *len: its lookup's (length: its ver[0]),
 * or now's (kept in p->lens for a lookup's node). */
static int lengths_of(const struct zrfs_node *n, struct zrfs_plan *p,
		      uint64_t length, zr_view *const *views,
		      const uint64_t **len)
{
	const struct zrfs_mix *m = n->mix;
	uint64_t sum = 0;

	if (length && n->lens) {
		*len = n->lens;
		p->length = n->ver[0];
		return 0;
	}
	if (!(p->lens = calloc(m->k, sizeof(*p->lens))))
		return -ENOMEM;
	for (uint32_t s = 0; s < m->k; s++) {
		p->lens[s] = zrfs_mix_length(m, s, views);
		sum += p->lens[s];
	}
	*len = p->lens;
	p->length = sum;
	return length && length != sum ? -ESTALE : 0;
}

int zrfs_mix_draw(struct zrfs_fs *fs, const struct zrfs_node *n,
		  struct zrfs_plan *p, uint64_t length,
		  zr_view *const *views)
{
	const uint64_t *len;
	int err = streams(n->mix, n, p, views);

	if (!err)
		err = lengths_of(n, p, length, views, &len);
	p->count = n->bsize;
	if (!err && !(p->idx = malloc(p->count * sizeof(*p->idx))))
		err = -ENOMEM;
	if (!err)
		err = draw(fs, n, len, p->idx);
	return err;
}
