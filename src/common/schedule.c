/*
 * schedule.c - a batch stream's schedule (schedule.h): parsing, ordering,
 * applying it to a stream and checking that a batch finds its records.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedule.h"

/* A decimal of len characters at s. */
static int number(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (!len || len > 20)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9' ||
		    v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return 0;
}

/* Up to max decimals of val separated by sep into v; their count, or -1
 * for a bad one or more than max. */
static int numbers(const char *val, char sep, uint64_t *v, size_t max)
{
	size_t i = 0;

	for (const char *p = val;; i++) {
		const char *end = strchr(p, sep);
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (i == max || number(p, len, &v[i]))
			return -1;
		if (!end)
			return (int)i + 1;
		p = end + 1;
	}
}

static int bad(char *msg, size_t cap, const char *val, const char *want)
{
	snprintf(msg, cap, "'%s': want %s", val, want);
	return -1;
}

/* Inserts e after the entries at or before its position: as given on a
 * tie. */
static int insert(zrcommon_schedule *s, const zrcommon_entry *e)
{
	zrcommon_entry *p;
	size_t at;

	if (s->n == ZRCOMMON_MAX_ENTRIES)
		return -1;
	p = realloc(s->e, (s->n + 1) * sizeof(*p));
	if (!p)
		return -1;
	s->e = p;
	for (at = s->n; at > 0 && p[at - 1].at > e->at; at--)
		;
	memmove(p + at + 1, p + at, (s->n - at) * sizeof(*p));
	p[at] = *e;
	s->n++;
	return 0;
}

int zrcommon_schedule_add(zrcommon_schedule *s, int kind, const char *val,
			  char *msg, size_t cap)
{
	zrcommon_entry e = { .kind = kind };
	uint64_t v[3];
	int n = numbers(val, ':', v, kind == ZRCOMMON_SKIP ? 2 : 3);

	if (kind == ZRCOMMON_SKIP) {
		if (n != 2 || v[0] >= v[1])
			return bad(msg, cap, val, "FROM:UNTIL, decimal "
				   "positions, FROM < UNTIL");
		e.at = v[0];
		e.until = v[1];
	} else {
		if (n < 2 || (n == 3 && v[1] >= ZRCOMMON_MAX_LENGTHS))
			return bad(msg, cap, val, "POSITION:LENGTH or "
				   "POSITION:SOURCE:LENGTH, decimals, SOURCE "
				   "below 1024");
		e.at = v[0];
		e.source = n == 3 ? (uint32_t)v[1] : 0;
		e.length = v[n - 1];
	}
	if (insert(s, &e))
		return bad(msg, cap, val, "at most 65536 entries");
	return 0;
}

int zrcommon_schedule_lengths(zrcommon_schedule *s, const char *val,
			      char sep, char *msg, size_t cap)
{
	uint64_t *v = malloc(ZRCOMMON_MAX_LENGTHS * sizeof(*v));
	int n = v ? numbers(val, sep, v, ZRCOMMON_MAX_LENGTHS) : -1;
	char want[64];

	if (n < 0) {
		free(v);
		snprintf(want, sizeof(want), "N or N%cN%c... (one per source, "
			 "at most 1024)", sep, sep);
		return bad(msg, cap, val, want);
	}
	free(s->len);
	s->len = v;
	s->nlen = (size_t)n;
	return 0;
}

int zrcommon_schedule_start(const char *val, uint64_t *pos,
			    uint64_t *granule)
{
	uint64_t v[2] = { 0, 0 };
	int n = numbers(val, '@', v, 2);

	if (n < 0 || (n == 2 && !v[1]))
		return -1;
	*pos = v[0];
	*granule = v[1];
	return 0;
}

void zrcommon_schedule_free(zrcommon_schedule *s)
{
	free(s->e);
	free(s->len);
	memset(s, 0, sizeof(*s));
}

int zrcommon_schedule_base(const zrcommon_schedule *s, uint32_t k,
			   const uint64_t *have, uint64_t *base, char *msg,
			   size_t cap)
{
	if (s->nlen && s->nlen != k) {
		snprintf(msg, cap, "length gives %zu lengths, want one per "
			 "source (%u)", s->nlen, (unsigned)k);
		return -EINVAL;
	}
	memcpy(base, s->nlen ? s->len : have, k * sizeof(*base));
	return 0;
}

static int apply_one(zr_stream *st, const zrcommon_entry *e)
{
	if (e->kind == ZRCOMMON_SKIP)
		return zr_stream_skip(st, e->at, e->until);
	return zr_stream_grow(st, e->at, e->source, e->length);
}

int zrcommon_schedule_apply(const zrcommon_schedule *s, zr_stream *st,
			    const uint64_t *from, const uint64_t *weights,
			    size_t n, uint32_t k)
{
	size_t i = 0, j = 0;
	int err = 0;

	while (!err && (i < n || j < s->n)) {
		if (i < n && (j == s->n || from[i] <= s->e[j].at)) {
			err = zr_stream_weights(st, from[i], weights + i * k);
			i++;
		} else {
			err = apply_one(st, &s->e[j++]);
		}
	}
	return err;
}

/* The position of the batch's last sample. */
static int last_position(const zr_stream *st, uint64_t start, uint64_t step,
			 uint32_t rank, uint32_t world, uint64_t batch,
			 uint64_t *pos)
{
	uint64_t served;

	if (!batch)
		return -EINVAL;
	if (__builtin_mul_overflow(step, world ? world : 1, &served) ||
	    __builtin_add_overflow(served, rank, &served) ||
	    __builtin_mul_overflow(served, batch, &served) ||
	    __builtin_add_overflow(served, batch - 1, &served))
		return -EOVERFLOW;
	return zr_stream_position(st, start, served, pos);
}

int zrcommon_schedule_check(const zrcommon_schedule *s, const zr_stream *st,
			    uint64_t start, uint64_t step, uint32_t rank,
			    uint32_t world, uint64_t batch,
			    const uint64_t *base, const uint64_t *have,
			    char *msg, size_t cap)
{
	uint32_t k = zr_stream_sources(st);
	uint64_t last;
	int err = last_position(st, start, step, rank, world, batch, &last);

	for (uint32_t src = 0; !err && src < k; src++) {
		uint64_t need = base[src];

		for (size_t i = 0; i < s->n && s->e[i].at <= last; i++)
			if (s->e[i].kind == ZRCOMMON_GROW &&
			    s->e[i].source == src && s->e[i].length > need)
				need = s->e[i].length;
		if (need <= have[src])
			continue;
		snprintf(msg, cap, "source %u has %llu records, fewer than "
			 "the %llu its length and growth give it by position "
			 "%llu (the batch's last): the batch is there once "
			 "the store holds them", (unsigned)src,
			 (unsigned long long)have[src],
			 (unsigned long long)need, (unsigned long long)last);
		return -ENOENT;
	}
	return err;
}
