/*
 * dict.c - zstd dictionary training: the three named tiers, a strided
 * sample that fits the tier's byte budget, and training on a store's own
 * records.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zdict.h>

#include "error.h"
#include "store.h"

/* ZDICT works best on samples of at most this size: longer records are
 * cut into pieces. */
#define ZR__DICT_CHUNK ((size_t)128 << 10)

static const struct {
	const char *name;
	size_t dict;
	size_t sample;
} tiers[] = {
	[ZR_DICT_FAST] = { "fast", (size_t)32 << 10, (size_t)4 << 20 },
	[ZR_DICT_BALANCED] = { "balanced", (size_t)128 << 10,
			       (size_t)16 << 20 },
	[ZR_DICT_MAX] = { "max", (size_t)1 << 20, (size_t)64 << 20 },
};

#define NTIERS (sizeof(tiers) / sizeof(tiers[0]))

int zr_dict_tier_parse(const char *s, zr_dict_tier *out)
{
	zr__clear();
	for (size_t i = 0; s && i < NTIERS; i++) {
		if (strcmp(s, tiers[i].name) == 0) {
			*out = (zr_dict_tier)i;
			return 0;
		}
	}
	return zr__fail(-EINVAL, "unknown dictionary tier '%s' (fast, "
			"balanced, max)", s ? s : "(null)");
}

const char *zr_dict_tier_name(zr_dict_tier tier)
{
	return (unsigned)tier < NTIERS ? tiers[tier].name : "unknown";
}

size_t zr_dict_tier_dict_size(zr_dict_tier tier)
{
	return (unsigned)tier < NTIERS ? tiers[tier].dict : 0;
}

size_t zr_dict_tier_sample_size(zr_dict_tier tier)
{
	return (unsigned)tier < NTIERS ? tiers[tier].sample : 0;
}

/* The chunks ZDICT trains on, copied back to back. */
struct sample {
	uint8_t *buf;
	size_t used, budget;
	size_t *sizes;
	size_t n, cap_n;
};

static size_t chunks_of(size_t len)
{
	return len / ZR__DICT_CHUNK + (len % ZR__DICT_CHUNK != 0);
}

/* Takes every stride-th chunk until the budget is full. */
static void pick(struct sample *sm, const void *const *samples,
		 const size_t *sizes, size_t n, size_t stride)
{
	size_t g = 0;

	for (size_t i = 0; i < n; i++) {
		for (size_t c = 0; c < chunks_of(sizes[i]); c++, g++) {
			size_t off = c * ZR__DICT_CHUNK;
			size_t len = sizes[i] - off < ZR__DICT_CHUNK
					     ? sizes[i] - off
					     : ZR__DICT_CHUNK;

			if (g % stride || sm->n == sm->cap_n ||
			    len > sm->budget - sm->used)
				continue;
			memcpy(sm->buf + sm->used,
			       (const uint8_t *)samples[i] + off, len);
			sm->used += len;
			sm->sizes[sm->n++] = len;
		}
	}
}

static int sample_alloc(struct sample *sm, const size_t *sizes, size_t n,
			zr_dict_tier tier, size_t *stride)
{
	size_t total = 0, chunks = 0;

	for (size_t i = 0; i < n; i++) {
		total = sizes[i] > SIZE_MAX - total ? SIZE_MAX
						    : total + sizes[i];
		chunks += chunks_of(sizes[i]);
	}
	sm->budget = tiers[tier].sample < total ? tiers[tier].sample : total;
	*stride = total / tiers[tier].sample +
		  (total % tiers[tier].sample != 0);
	if (*stride == 0)
		*stride = 1;
	sm->cap_n = chunks / *stride + 1;
	if (sm->cap_n > UINT32_MAX)
		sm->cap_n = UINT32_MAX;
	sm->buf = malloc(sm->budget ? sm->budget : 1);
	sm->sizes = malloc(sm->cap_n * sizeof(*sm->sizes));
	if (!sm->buf || !sm->sizes)
		return zr__fail(-ENOMEM, "dictionary: no memory for a %zu-byte "
				"sample", sm->budget);
	return 0;
}

int zr_dict_train(const void *const *samples, const size_t *sizes, size_t n,
		  zr_dict_tier tier, void *dst, size_t dst_cap,
		  size_t *dict_len)
{
	struct sample sm = { 0 };
	size_t stride, rc;
	int err;

	zr__clear();
	if ((unsigned)tier >= NTIERS || !dst || !dict_len ||
	    (n && (!samples || !sizes)))
		return zr__fail(-EINVAL, "dictionary: bad arguments");
	if (dst_cap < tiers[tier].dict)
		return zr__fail(-EINVAL, "dictionary: dst_cap %zu below the "
				"%s tier's %zu bytes", dst_cap,
				tiers[tier].name, tiers[tier].dict);
	err = sample_alloc(&sm, sizes, n, tier, &stride);
	if (err)
		goto out;
	pick(&sm, samples, sizes, n, stride);
	rc = ZDICT_trainFromBuffer(dst, tiers[tier].dict, sm.buf, sm.sizes,
				   (unsigned)sm.n);
	if (ZDICT_isError(rc)) {
		err = zr__fail(ZR_E_CODEC, "dictionary training on %zu samples "
			       "(%zu bytes) failed: %s", sm.n, sm.used,
			       ZDICT_getErrorName(rc));
		goto out;
	}
	*dict_len = rc;
out:
	free(sm.buf);
	free(sm.sizes);
	return err;
}

/* A strided subset of the store's indices whose records fit budget (at
 * least one record). */
static int pick_records(zr_store *s, size_t budget, uint64_t **idx,
			size_t *n)
{
	uint64_t len = zr_store_length(s), total = 0, stride, taken = 0;
	zr_loc l;
	int err = 0;

	for (uint64_t i = 0; !err && i < len; i++) {
		err = zr_store_loc(s, i, &l);
		total += err ? 0 : l.logic_length;
	}
	if (err)
		return err;
	stride = total / budget + (total % budget != 0);
	if (stride == 0)
		stride = 1;
	*idx = malloc((size_t)(len / stride + 1) * sizeof(**idx));
	if (!*idx)
		return zr__fail(-ENOMEM, "%s: no memory", s->path);
	*n = 0;
	for (uint64_t i = 0; !err && i < len; i += stride) {
		err = zr_store_loc(s, i, &l);
		if (err || (*n && taken + l.logic_length > budget))
			break;
		taken += l.logic_length;
		(*idx)[(*n)++] = i;
	}
	return err;
}

/* Gathers the picked records and points one sample at each. */
static int gather_samples(zr_store *s, const uint64_t *idx, size_t n,
			  uint8_t **buf, const void ***ptrs, size_t **sizes)
{
	uint64_t total, *off = malloc((n + 1) * sizeof(*off));
	int err = off ? zr_store_gather_size(s, idx, n, &total)
		      : zr__fail(-ENOMEM, "%s: no memory", s->path);

	if (!err && total > SIZE_MAX)
		err = zr__fail(-ENOMEM, "%s: sample too large", s->path);
	if (!err) {
		*buf = malloc((size_t)total);
		*ptrs = malloc(n * sizeof(**ptrs));
		*sizes = malloc(n * sizeof(**sizes));
		if (!*buf || !*ptrs || !*sizes)
			err = zr__fail(-ENOMEM, "%s: no memory", s->path);
	}
	if (!err)
		err = zr_store_gather(s, idx, n, *buf, (size_t)total,
				      s->schema.ragged ? off : NULL);
	for (size_t k = 0; !err && k < n; k++) {
		uint64_t b = s->schema.ragged ? off[k] : k * s->row_bytes;
		uint64_t e = s->schema.ragged ? off[k + 1]
					      : (k + 1) * s->row_bytes;

		(*ptrs)[k] = *buf + b;
		(*sizes)[k] = (size_t)(e - b);
	}
	free(off);
	return err;
}

int zr_dict_train_store(zr_store *s, zr_dict_tier tier, void *dst,
			size_t dst_cap, size_t *dict_len)
{
	uint64_t *idx = NULL;
	uint8_t *buf = NULL;
	const void **ptrs = NULL;
	size_t *sizes = NULL, n = 0;
	int err;

	zr__clear();
	if ((unsigned)tier >= NTIERS)
		return zr__fail(-EINVAL, "dictionary: bad tier %d", (int)tier);
	if (zr_store_length(s) == 0)
		return zr__fail(-EINVAL, "%s: no records to train on",
				s->path);
	err = pick_records(s, tiers[tier].sample, &idx, &n);
	if (!err)
		err = gather_samples(s, idx, n, &buf, &ptrs, &sizes);
	if (!err)
		err = zr_dict_train(ptrs, sizes, n, tier, dst, dst_cap,
				    dict_len);
	free(idx);
	free(buf);
	free(ptrs);
	free(sizes);
	return err;
}
