/*
 * source.c - a mixture field's reads (source.h): they take keys (source,
 * index), group them by source, read each source's records with one
 * gather (the library's, fanned out across its pool, through the
 * source's view), and put them back in batch order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "source.h"

/* A batch's keys grouped by source: pick[j] is the index of batch record
 * pos[j], source by source in source order (batch order within one);
 * first[s] .. first[s + 1] are source s's. */
struct groups {
	uint64_t *pick;
	size_t *pos;
	size_t *first; /* k + 1 */
};

static void groups_free(struct groups *g)
{
	free(g->pick);
	free(g->pos);
	free(g->first);
}

static int groups_make(const struct zrfile_mix *m, const uint64_t *key,
		       size_t n, struct groups *g)
{
	size_t *at;

	g->pick = malloc((n ? n : 1) * sizeof(*g->pick));
	g->pos = malloc((n ? n : 1) * sizeof(*g->pos));
	g->first = calloc(m->k + 2, sizeof(*g->first));
	if (!g->pick || !g->pos || !g->first) {
		groups_free(g);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if (ZRFILE_MIX_SRC(key[i]) >= m->k) {
			groups_free(g);
			return ZR_E_RANGE;
		}
		g->first[ZRFILE_MIX_SRC(key[i]) + 2]++;
	}
	/* first[s + 2] counted source s; prefix sums leave first[s + 1]
	 * as the next free slot of source s while placing */
	for (uint32_t s = 0; s < m->k; s++)
		g->first[s + 2] += g->first[s + 1];
	at = g->first + 1;
	for (size_t i = 0; i < n; i++) {
		size_t j = at[ZRFILE_MIX_SRC(key[i])]++;

		g->pick[j] = ZRFILE_MIX_IDX(key[i]);
		g->pos[j] = i;
	}
	return 0;
}

/* Dense rows: each source's into tmp, then each row to its place. */
static int gather_dense(const struct zrfile_mix *m, const struct groups *g,
			size_t n, char *dst, size_t cap)
{
	size_t row = zr_store_row_bytes(m->src[0].zs);
	char *tmp;
	int err = 0;

	if (row && n > cap / row)
		return -EINVAL;
	for (uint32_t s = 0; s < m->k; s++)
		if (g->first[s + 1] - g->first[s] == n) /* one source */
			return zrfile_source_gather(&m->src[s], g->pick, n, dst,
						    cap, NULL);
	tmp = malloc(n * row + 1);
	if (!tmp)
		return -ENOMEM;
	for (uint32_t s = 0; !err && s < m->k; s++) {
		size_t a = g->first[s], c = g->first[s + 1] - a;

		if (c)
			err = zrfile_source_gather(&m->src[s], g->pick + a,
						   c, tmp + a * row, c * row,
						   NULL);
	}
	for (size_t j = 0; !err && j < n; j++)
		memcpy(dst + g->pos[j] * row, tmp + j * row, row);
	free(tmp);
	return err;
}

/* Ragged records: each source's packed into tmp with their boundaries
 * (start[j], start[j + 1] within source s's run), then copied to dst in
 * batch order. */
static int gather_ragged(const struct zrfile_mix *m, const struct groups *g,
			 size_t n, char *dst, size_t cap, uint64_t *off)
{
	uint64_t *start = malloc((n + m->k + 1) * sizeof(*start)), total = 0;
	size_t *slot = malloc((n ? n : 1) * sizeof(*slot));
	char *tmp = NULL;
	int err = start && slot ? 0 : -ENOMEM;

	/* source s's boundaries are start[first[s] + s ...] */
	for (uint32_t s = 0; !err && s < m->k; s++) {
		size_t a = g->first[s], c = g->first[s + 1] - a;
		uint64_t sz = 0;

		if (c)
			err = zrfile_source_gather_size(&m->src[s],
							g->pick + a, c, &sz);
		total += sz;
	}
	if (!err && total > cap)
		err = -EINVAL;
	if (!err && !(tmp = malloc(total + 1)))
		err = -ENOMEM;
	for (uint64_t s = 0, base = 0; !err && s < m->k; s++) {
		size_t a = g->first[s], c = g->first[s + 1] - a;
		uint64_t *o = start + a + s;

		if (!c)
			continue;
		err = zrfile_source_gather(&m->src[s], g->pick + a, c,
					   tmp + base, total - base, o);
		for (size_t j = 0; !err && j <= c; j++)
			o[j] += base;
		for (size_t j = 0; j < c; j++)
			slot[g->pos[a + j]] = a + j + s;
		base = err ? base : o[c];
	}
	for (size_t i = 0, at = 0; !err && i < n; i++) {
		uint64_t len = start[slot[i] + 1] - start[slot[i]];

		memcpy(dst + at, tmp + start[slot[i]], len);
		off[i] = at;
		at += len;
		off[i + 1] = at;
	}
	if (!err && !n)
		off[0] = 0;
	free(tmp);
	free(slot);
	free(start);
	return err;
}

int zrfile_mix_gather(const struct zrfile_mix *m, const uint64_t *key,
		      size_t n, void *dst, size_t cap, uint64_t *off)
{
	struct groups g;
	int err = groups_make(m, key, n, &g);

	if (err)
		return err;
	if (zr_store_schema(m->src[0].zs)->ragged)
		err = off ? gather_ragged(m, &g, n, dst, cap, off) : -EINVAL;
	else
		err = gather_dense(m, &g, n, dst, cap);
	groups_free(&g);
	return err;
}

int zrfile_mix_gather_size(const struct zrfile_mix *m, const uint64_t *key,
			   size_t n, uint64_t *out)
{
	struct groups g;
	uint64_t sum = 0;
	int err = groups_make(m, key, n, &g);

	if (err)
		return err;
	for (uint32_t s = 0; !err && s < m->k; s++) {
		size_t a = g.first[s], c = g.first[s + 1] - a;
		uint64_t sz = 0;

		if (c)
			err = zrfile_source_gather_size(&m->src[s],
							g.pick + a, c, &sz);
		sum += sz;
	}
	groups_free(&g);
	if (!err)
		*out = sum;
	return err;
}

int zrfile_mix_loc(const struct zrfile_mix *m, uint64_t key, zr_loc *out)
{
	if (ZRFILE_MIX_SRC(key) >= m->k)
		return ZR_E_RANGE;
	return zrfile_source_loc(&m->src[ZRFILE_MIX_SRC(key)],
				 ZRFILE_MIX_IDX(key), out);
}

int zrfile_mix_shape(const struct zrfile_mix *m, uint64_t key,
		     uint32_t *ndim, uint64_t *shape)
{
	if (ZRFILE_MIX_SRC(key) >= m->k)
		return ZR_E_RANGE;
	return zrfile_source_shape(&m->src[ZRFILE_MIX_SRC(key)],
				   ZRFILE_MIX_IDX(key), ndim, shape);
}
