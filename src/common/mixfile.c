/*
 * mixfile.c - a strict reader of mixture files (mixfile.h): a small JSON
 * scanner (objects, arrays, strings, non-negative integers) that knows
 * exactly the shape a mixture file has, so every error names its place.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mixfile.h"

#define MAX_SOURCES 1024u
#define MAX_SCHEDULE 65536u
#define MAX_WEIGHT (1ull << 20)
#define MAX_PATH 4096u

typedef struct scan {
	const char *p, *end, *start;
	char *msg;
	size_t cap;
	int failed;
} scan;

__attribute__((format(printf, 2, 3)))
static int fail(scan *s, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (s->failed)
		return -EINVAL;
	s->failed = 1;
	n = snprintf(s->msg, s->cap, "byte %zu: ", (size_t)(s->p - s->start));
	if (n >= 0 && (size_t)n < s->cap) {
		va_start(ap, fmt);
		vsnprintf(s->msg + n, s->cap - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static void ws(scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' ||
				 *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

/* Takes the character c (after white space), else fails. */
static int expect(scan *s, char c)
{
	ws(s);
	if (s->p >= s->end || *s->p != c)
		return fail(s, "expected '%c'", c);
	s->p++;
	return 0;
}

/* Whether the next character is c (taken if so). */
static int take(scan *s, char c)
{
	ws(s);
	if (s->p < s->end && *s->p == c) {
		s->p++;
		return 1;
	}
	return 0;
}

/* A string without escapes other than \" \\ \/ (paths and keys), into a
 * fresh buffer. */
static int string(scan *s, char **out)
{
	char *d;
	size_t n = 0;

	if (expect(s, '"'))
		return -EINVAL;
	d = malloc(MAX_PATH + 1);
	if (!d)
		return -ENOMEM;
	while (s->p < s->end && *s->p != '"') {
		char c = *s->p++;

		if (c == '\\') {
			if (s->p >= s->end || !strchr("\"\\/", *s->p)) {
				free(d);
				return fail(s, "only \\\" \\\\ \\/ escapes "
					    "are accepted in a string");
			}
			c = *s->p++;
		}
		if ((unsigned char)c < 0x20 || n == MAX_PATH) {
			free(d);
			return fail(s, (unsigned char)c < 0x20 ?
				    "control character in a string" :
				    "string longer than 4096 bytes");
		}
		d[n++] = c;
	}
	if (s->p >= s->end) {
		free(d);
		return fail(s, "unterminated string");
	}
	s->p++;
	d[n] = 0;
	*out = d;
	return 0;
}

static int integer(scan *s, uint64_t max, const char *what, uint64_t *out)
{
	uint64_t v = 0;
	const char *b;

	ws(s);
	b = s->p;
	while (s->p < s->end && *s->p >= '0' && *s->p <= '9') {
		if (v > (max - (uint64_t)(*s->p - '0')) / 10)
			return fail(s, "%s is above %llu", what,
				    (unsigned long long)max);
		v = v * 10 + (uint64_t)(*s->p++ - '0');
	}
	if (s->p == b || (s->p < s->end && strchr(".eE-+", *s->p)))
		return fail(s, "%s must be a non-negative integer", what);
	*out = v;
	return 0;
}

/* Reads "key": and returns 0, leaving the value to the caller. */
static int key(scan *s, char **k)
{
	int rc = string(s, k);

	if (!rc && expect(s, ':')) {
		free(*k);
		return -EINVAL;
	}
	return rc;
}

/* The members of an object: each key's value goes to member(s, m, key,
 * seen), seen holding a flag per known key (so a repeated one fails). */
typedef int (*member_fn)(scan *s, zrcommon_mixfile *m, const char *key,
			 int *seen);

static int object(scan *s, zrcommon_mixfile *m, member_fn member, int *seen)
{
	int rc = expect(s, '{');

	while (!rc && !take(s, '}')) {
		char *k;

		if ((rc = key(s, &k)))
			break;
		rc = member(s, m, k, seen);
		free(k);
		if (!rc && !take(s, ','))
			rc = expect(s, '}') ? -EINVAL : 1;
	}
	return rc < 0 ? rc : 0;
}

static int source_member(scan *s, zrcommon_mixfile *m, const char *k, int *seen)
{
	uint32_t i = m->k;
	int rc;

	if (!strcmp(k, "path") && !seen[0]) {
		seen[0] = 1;
		rc = string(s, &m->path[i]);
		if (!rc && !*m->path[i])
			rc = fail(s, "source %u: empty path", (unsigned)i);
		return rc;
	}
	if (!strcmp(k, "weight") && !seen[1]) {
		seen[1] = 1;
		return integer(s, MAX_WEIGHT, "weight", &m->weight[i]);
	}
	return fail(s, "source %u: unknown or repeated key '%.40s' (want "
		    "path, weight)", (unsigned)i, k);
}

static int source(scan *s, zrcommon_mixfile *m)
{
	int seen[2] = { 0, 0 }, rc = object(s, m, source_member, seen);

	if (rc)
		return rc;
	if (!seen[0] || !seen[1])
		return fail(s, "source %u needs a path and a weight",
			    (unsigned)m->k);
	m->k++;
	return 0;
}

/* Calls one(s, m) per element of an array of at most max elements. */
static int array(scan *s, zrcommon_mixfile *m, uint32_t max, const char *what,
		 int (*one)(scan *, zrcommon_mixfile *), uint32_t *count)
{
	int rc = expect(s, '[');

	if (rc || take(s, ']'))
		return rc;
	do {
		if (*count >= max)
			return fail(s, "more than %u %s", max, what);
		rc = one(s, m);
	} while (!rc && take(s, ','));
	return rc ? rc : expect(s, ']');
}

/* Whether one of the k weights w is above 0: a mixture whose weights
 * are all 0 has nothing to draw, so every batch of it would be refused. */
static int any_weight(const uint64_t *w, uint32_t k)
{
	for (uint32_t i = 0; i < k; i++)
		if (w[i])
			return 1;
	return 0;
}

static int sources(scan *s, zrcommon_mixfile *m)
{
	int rc;

	m->path = calloc(MAX_SOURCES, sizeof(*m->path));
	m->weight = calloc(MAX_SOURCES, sizeof(*m->weight));
	if (!m->path || !m->weight)
		return -ENOMEM;
	rc = array(s, m, MAX_SOURCES, "sources", source, &m->k);
	if (!rc && m->k && !any_weight(m->weight, m->k))
		rc = fail(s, "every weight is 0 (give a source a weight above "
			  "0)");
	return rc;
}

static int weight_list(scan *s, zrcommon_mixfile *m, uint64_t *w)
{
	uint32_t n = 0;
	int rc = expect(s, '[');

	while (!rc && n < m->k) {
		rc = integer(s, MAX_WEIGHT, "weight", &w[n++]);
		if (!rc && n < m->k && !take(s, ','))
			rc = fail(s, "schedule: want %u weights, one per "
				  "source", (unsigned)m->k);
	}
	if (!rc && !take(s, ']'))
		return fail(s, "schedule: want %u weights, one per source",
			    (unsigned)m->k);
	return rc;
}

static int change_member(scan *s, zrcommon_mixfile *m, const char *k, int *seen)
{
	uint32_t i = m->nsched;

	if (!strcmp(k, "from") && !seen[0]) {
		seen[0] = 1;
		return integer(s, UINT64_MAX, "from", &m->from[i]);
	}
	if (!strcmp(k, "weights") && !seen[1]) {
		seen[1] = 1;
		return weight_list(s, m, m->weights + (size_t)i * m->k);
	}
	return fail(s, "schedule: unknown or repeated key '%.40s' (want "
		    "from, weights)", k);
}

static int change(scan *s, zrcommon_mixfile *m)
{
	uint32_t i = m->nsched;
	int seen[2] = { 0, 0 }, rc;
	void *f = realloc(m->from, (i + 1) * sizeof(*m->from));
	void *w;

	if (!f)
		return -ENOMEM;
	m->from = f;
	w = realloc(m->weights, (i + 1) * (size_t)m->k * sizeof(*m->weights));
	if (!w)
		return -ENOMEM;
	m->weights = w;
	rc = object(s, m, change_member, seen);
	if (rc)
		return rc;
	if (!seen[0] || !seen[1])
		return fail(s, "a schedule entry needs from and weights");
	if (!any_weight(m->weights + (size_t)i * m->k, m->k))
		return fail(s, "schedule entry %u: every weight is 0 (give a "
			    "source a weight above 0)", (unsigned)i);
	if (i && m->from[i] < m->from[i - 1])
		return fail(s, "schedule: from %llu comes before %llu",
			    (unsigned long long)m->from[i],
			    (unsigned long long)m->from[i - 1]);
	m->nsched++;
	return 0;
}

static int top_member(scan *s, zrcommon_mixfile *m, const char *k, int *seen)
{
	if (!strcmp(k, "sources") && !seen[0]) {
		seen[0] = 1;
		return sources(s, m);
	}
	if (!strcmp(k, "schedule") && seen[0] && !seen[1]) {
		seen[1] = 1;
		return array(s, m, MAX_SCHEDULE, "schedule entries", change,
			     &m->nsched);
	}
	return fail(s, "unknown or repeated key '%.40s' (want sources, then "
		    "schedule)", k);
}

static int top(scan *s, zrcommon_mixfile *m)
{
	int seen[2] = { 0, 0 }, rc = object(s, m, top_member, seen);

	if (rc)
		return rc;
	if (!m->k)
		return fail(s, "no sources");
	ws(s);
	if (s->p != s->end)
		return fail(s, "text after the mixture");
	return 0;
}

void zrcommon_mixfile_free(zrcommon_mixfile *m)
{
	for (uint32_t i = 0; m->path && i < MAX_SOURCES; i++)
		free(m->path[i]);
	free(m->path);
	free(m->weight);
	free(m->from);
	free(m->weights);
	memset(m, 0, sizeof(*m));
}

int zrcommon_mixfile_parse(const char *buf, size_t len, zrcommon_mixfile *out,
			   char *msg, size_t msg_cap)
{
	scan s = { buf, buf + len, buf, msg, msg_cap, 0 };
	int rc;

	memset(out, 0, sizeof(*out));
	if (msg_cap)
		msg[0] = 0;
	rc = top(&s, out);
	if (rc == -ENOMEM)
		snprintf(msg, msg_cap, "no memory");
	if (rc)
		zrcommon_mixfile_free(out);
	return rc;
}
