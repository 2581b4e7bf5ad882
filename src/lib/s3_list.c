/*
 * s3_list.c - one folder level of an S3 prefix (s3.h): ListObjectsV2 with
 * delimiter '/', page after page (continuation tokens), its keys and
 * common prefixes taken out of the XML answer; and whether any key is
 * under a prefix, from one page of one key.  Every name comes from the
 * bucket, so it is untrusted: each page's answer has a fixed cap, every
 * entry counts against the caller's budget before it is kept, and a name
 * that cannot be a folder's in a mount (empty, ".", "..", over NAME_MAX
 * bytes, a NUL) is passed over rather than kept.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "s3.h"

/* Keys asked per page, and the answer's cap: a key is at most 1024 bytes,
 * 6 times that escaped (&quot;), plus its entry's other elements. */
#define PAGE_KEYS 200u
#define PAGE_CAP ((size_t)2 << 20)
#define TOKEN_MAX 1024

void zr__s3_names_free(struct zr__s3_names *v)
{
	for (size_t i = 0; i < v->n; i++)
		free(v->v[i]);
	free(v->v);
	memset(v, 0, sizeof(*v));
}

int zr__s3_names_add(struct zr__s3_names *v, const char *name, size_t len)
{
	char *copy;

	if (v->n == v->cap) {
		size_t cap = v->cap ? 2 * v->cap : 16;
		void *p = realloc(v->v, cap * sizeof(*v->v));

		if (!p)
			return -ENOMEM;
		v->v = p;
		v->cap = cap;
	}
	copy = strndup(name, len);
	if (!copy)
		return -ENOMEM;
	v->v[v->n++] = copy;
	return 0;
}

/* One XML character reference or entity at s (after its '&') into *c;
 * its length up to the ';', 0 if it is none this answer may hold. */
static size_t entity(const char *s, const char *end, char *c)
{
	static const struct { const char *name; char c; } named[] = {
		{ "amp;", '&' }, { "lt;", '<' }, { "gt;", '>' },
		{ "quot;", '"' }, { "apos;", '\'' },
	};
	const char *semi = memchr(s, ';', (size_t)(end - s));
	unsigned long v;
	char *stop;

	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (!strncmp(s, named[i].name, strlen(named[i].name))) {
			*c = named[i].c;
			return strlen(named[i].name);
		}
	if (!semi || *s != '#' || semi - s > 8)
		return 0;
	v = s[1] == 'x' ? strtoul(s + 2, &stop, 16) : strtoul(s + 1, &stop, 10);
	/* one byte only: a key's other UTF-8 is sent as it is */
	if (stop != semi || v == 0 || v > 0x7f)
		return 0;
	*c = (char)v;
	return (size_t)(semi - s) + 1;
}

/* The text [s, end) with its references replaced, into out[cap]: its
 * length, or -1 if malformed or longer. */
static long unescape(const char *s, const char *end, char *out, size_t cap)
{
	size_t n = 0;

	while (s < end) {
		char c = *s++;

		if (c == '&') {
			size_t k = entity(s, end, &c);

			if (!k)
				return -1;
			s += k;
		}
		if (n + 1 >= cap)
			return -1;
		out[n++] = c;
	}
	out[n] = '\0';
	return (long)n;
}

/* The text of the first <tag>...</tag> in [*at, end), unescaped into
 * out[cap]; *at moves past it.  1 found, 0 none, -1 malformed. */
static int element(const char **at, const char *end, const char *tag,
		   char *out, size_t cap)
{
	char open[40], close[40];
	const char *s, *e;

	snprintf(open, sizeof(open), "<%s>", tag);
	snprintf(close, sizeof(close), "</%s>", tag);
	s = strstr(*at, open);
	if (!s || s >= end)
		return 0;
	s += strlen(open);
	e = strstr(s, close);
	if (!e || e > end)
		return -1;
	*at = e + strlen(close);
	return unescape(s, e, out, cap) < 0 ? -1 : 1;
}

/* The cause of err (error.h), and err. */
__attribute__((format(printf, 2, 3)))
static int cause(int err, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	zr__cause("%s", msg);
	return err;
}

/* A name the mount can show as a file or folder. */
static int name_ok(const char *name, size_t len)
{
	return len && len <= NAME_MAX && !memchr(name, '/', len) &&
	       !(len <= 2 && !strncmp(name, "..", len));
}

/* What one page yields, beside the names. */
struct page {
	const char *url;      /* the prefix's s3:// URL, for messages */
	const char *prefix;   /* the key prefix listed */
	unsigned max;         /* keys asked for */
	int delimit;          /* grouped by '/' (a folder level) */
	struct zr__s3_list *out;
	size_t *budget;
	size_t seen;          /* names under prefix, kept or passed over */
	char token[TOKEN_MAX];
	int more;
};

/* One name of the answer (a key if dir is 0, a common prefix if 1). */
static int take(struct page *p, const char *full, int dir)
{
	size_t plen = strlen(p->prefix), len;
	const char *name;

	if (!*p->budget)
		return cause(-E2BIG, "%s: over %u keys and folders under the "
			     "prefix (ZR_STORE_LIST_MAX): give the URL of a "
			     "folder nearer the stores", p->url,
			     ZR_STORE_LIST_MAX);
	--*p->budget;
	if (strncmp(full, p->prefix, plen))
		return 0; /* not under it: an answer to ignore */
	p->seen++;
	name = full + plen;
	len = strlen(name);
	if (dir && len && name[len - 1] == '/')
		len--;
	if (!name_ok(name, len))
		return 0;
	return zr__s3_names_add(dir ? &p->out->dirs : &p->out->keys, name,
				len);
}

/* Every <block><tag>NAME</tag>... of the answer [s, end). */
static int take_all(struct page *p, const char *s, const char *end,
		    const char *block, const char *tag, int dir)
{
	char name[2048];
	int found, err = 0;

	while (!err) {
		const char *at = strstr(s, block);

		if (!at || at >= end)
			return 0;
		s = at + strlen(block);
		found = element(&s, end, tag, name, sizeof(name));
		if (found < 0)
			return cause(-EIO, "%s: a malformed <%s> in the "
				     "answer to a listing", p->url, tag);
		err = found ? take(p, name, dir) : 0;
	}
	return err;
}

/* The names of the answer body[0..len). */
static int names(struct page *p, const char *body, size_t len)
{
	int err = take_all(p, body, body + len, "<Contents>", "Key", 0);

	return err ? err : take_all(p, body, body + len, "<CommonPrefixes>",
				    "Prefix", 1);
}

/* The answer body[0..len): whether a page follows, and from which token. */
static int next(struct page *p, const char *body, size_t len)
{
	const char *end = body + len, *at = body;
	char flag[16], sent[TOKEN_MAX];

	memcpy(sent, p->token, sizeof(sent));
	p->more = element(&at, end, "IsTruncated", flag, sizeof(flag)) == 1 &&
		  !strcmp(flag, "true");
	at = body;
	if (p->more && element(&at, end, "NextContinuationToken", p->token,
			       sizeof(p->token)) != 1)
		return cause(-EIO, "%s: a listing's answer says more follows "
			     "but has no usable continuation token", p->url);
	/* the same token again would list the same page forever */
	if (p->more && !strcmp(sent, p->token))
		return cause(-EIO, "%s: a listing's answer gives back the "
			     "continuation token it was asked with", p->url);
	return 0;
}

/* The answer to one page's request of o's bucket from p->token (if
 * p->more) into body[0..*len), NUL-terminated; -ENOENT only for a 404. */
static int page_fetch(const struct zr__s3_conf *c,
		      const struct zr__s3_obj *o, struct page *p, char *body,
		      size_t *len)
{
	char *http = zr__s3_list_query(o, p->prefix, p->delimit, p->max,
				       p->more ? p->token : NULL);
	struct zr__s3_req r = { .conf = c, .url = p->url, .http = http,
				.buf = body, .cap = PAGE_CAP - 1 };
	struct zr__s3_resp resp;
	int err;

	if (!http)
		return -ENOMEM;
	err = zr__s3_send(&r, &resp);
	free(http);
	if (err)
		return err;
	if (resp.status == 404 && !strcmp(resp.code, "NoSuchBucket")) {
		zr__cause("%s: no such bucket (HTTP 404 NoSuchBucket): check "
			  "the URL and AWS_ENDPOINT_URL", p->url);
		return -ENOENT;
	}
	if (resp.status != 200)
		return zr__s3_status_err(&r, &resp);
	body[resp.got] = '\0';
	*len = resp.got;
	return 0;
}

/* One page of a folder level: its names, and whether a page follows. */
static int page_get(const struct zr__s3_conf *c, const struct zr__s3_obj *o,
		    struct page *p, char *body)
{
	size_t len;
	int err = page_fetch(c, o, p, body, &len);

	if (!err)
		err = names(p, body, len);
	return err ? err : next(p, body, len);
}

int zr__s3_list_level(const struct zr__s3_conf *c,
		      const struct zr__s3_obj *o, const char *url,
		      const char *prefix, size_t *budget,
		      struct zr__s3_list *out)
{
	struct page p = { .url = url, .prefix = prefix, .max = PAGE_KEYS,
			  .delimit = 1, .out = out, .budget = budget };
	char *body = malloc(PAGE_CAP);
	int err = body ? 0 : -ENOMEM;

	do {
		size_t before = *budget;

		if (!err)
			err = page_get(c, o, &p, body);
		/* a page that lists nothing yet says more follows would loop */
		if (!err && p.more && *budget == before)
			err = cause(-EIO, "%s: a listing's page is empty but "
				    "says more follows", url);
	} while (!err && p.more);
	free(body);
	return err;
}

int zr__s3_list_any(const struct zr__s3_conf *c, const struct zr__s3_obj *o,
		    const char *prefix)
{
	struct zr__s3_list l = { 0 };
	size_t budget = SIZE_MAX; /* one page, which PAGE_CAP bounds */
	struct page p = { .url = o->url, .prefix = prefix, .max = 1,
			  .out = &l, .budget = &budget };
	char *body = malloc(PAGE_CAP);
	size_t len;
	int err = body ? page_fetch(c, o, &p, body, &len) : -ENOMEM;

	if (!err)
		err = names(&p, body, len);
	if (!err && !p.seen)
		err = -ENOENT;
	else if (err == -ENOENT) /* a 404: the bucket may be missing */
		err = zr__s3_missing(c, o);
	zr__s3_names_free(&l.keys);
	zr__s3_names_free(&l.dirs);
	free(body);
	return err;
}
