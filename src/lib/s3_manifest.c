/*
 * s3_manifest.c - a published store's manifest (s3_manifest.h): its text
 * form, written by push and read by the S3 backend and pull, and its
 * fetch from the bucket.  The text is line-oriented so that a person can
 * read it with any S3 client:
 *   zrecord-manifest 1
 *   version SHA256
 *   file NAME SIZE NPARTS
 *   part SHA256 OFFSET LENGTH ETAG      (NPARTS of them, in order)
 *   ...
 *   end
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "s3_manifest.h"
#include "sha256.h"

/* A manifest bigger than this is not one (16k parts of 64 MiB: 1 TiB of
 * store take about 3 MiB). */
#define MANIFEST_MAX (64u << 20)

void zr__mfile_free(struct zr__mfile *f)
{
	free(f->parts);
	f->parts = NULL;
	f->n = 0;
}

void zr__manifest_free(struct zr__manifest *m)
{
	for (size_t i = 0; i < m->nfiles; i++)
		zr__mfile_free(&m->files[i]);
	memset(m, 0, sizeof(*m));
}

const struct zr__mfile *zr__manifest_file(const struct zr__manifest *m,
					  const char *name)
{
	for (size_t i = 0; i < m->nfiles; i++)
		if (!strcmp(m->files[i].name, name))
			return &m->files[i];
	return NULL;
}

int zr__mfile_copy(const struct zr__mfile *f, struct zr__mfile *out)
{
	*out = *f;
	out->parts = NULL;
	if (!f->n)
		return 0;
	out->parts = malloc(f->n * sizeof(*f->parts));
	if (!out->parts)
		return -ENOMEM;
	memcpy(out->parts, f->parts, f->n * sizeof(*f->parts));
	return 0;
}

size_t zr__mfile_find(const struct zr__mfile *f, uint64_t off)
{
	size_t lo = 0, hi = f->n;

	while (hi - lo > 1) { /* parts are in order and cover the file */
		size_t mid = lo + (hi - lo) / 2;

		if (f->parts[mid].off <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

int zr__mfile_add(struct zr__mfile *f, const struct zr__part *p)
{
	struct zr__part *np;

	/* one realloc per part: parts are 64 MiB, so few */
	np = realloc(f->parts, (f->n + 1) * sizeof(*np));
	if (!np)
		return -ENOMEM;
	f->parts = np;
	f->parts[f->n++] = *p;
	f->size = p->off + p->len;
	return 0;
}

/* The lines that make a version: names, sizes and digests (not ETags, so
 * the same bytes pushed twice are the same version). */
static void version_of(struct zr__manifest *m)
{
	struct zr__sha256 c;
	char line[256];

	zr__sha256_init(&c);
	for (size_t i = 0; i < m->nfiles; i++) {
		const struct zr__mfile *f = &m->files[i];

		snprintf(line, sizeof(line), "%s %" PRIu64 "\n", f->name,
			 f->size);
		zr__sha256_update(&c, line, strlen(line));
		for (size_t k = 0; k < f->n; k++)
			zr__sha256_update(&c, f->parts[k].sha, 64);
	}
	zr__sha256_hex(&c, m->version);
}

char *zr__manifest_format(struct zr__manifest *m)
{
	char *text = NULL;
	size_t cap = 0;
	FILE *out = open_memstream(&text, &cap);

	if (!out)
		return NULL;
	version_of(m);
	fprintf(out, "zrecord-manifest 1\nversion %s\n", m->version);
	for (size_t i = 0; i < m->nfiles; i++) {
		const struct zr__mfile *f = &m->files[i];

		fprintf(out, "file %s %" PRIu64 " %zu\n", f->name, f->size,
			f->n);
		for (size_t k = 0; k < f->n; k++)
			fprintf(out, "part %s %" PRIu64 " %" PRIu64 " %s\n",
				f->parts[k].sha, f->parts[k].off,
				f->parts[k].len, f->parts[k].etag);
	}
	fputs("end\n", out);
	if (fclose(out)) {
		free(text);
		return NULL;
	}
	return text;
}

/* One "part" line into f: 0, or -1 if it is not one that follows. */
static int parse_part(const char *line, struct zr__mfile *f)
{
	struct zr__part p;
	char sha[80];
	int used = 0;

	if (sscanf(line, "part %79s %" SCNu64 " %" SCNu64 " %127s%n", sha,
		   &p.off, &p.len, p.etag, &used) != 4 || strlen(sha) != 64 ||
	    line[used] || p.off != f->size || !p.len)
		return -1;
	memcpy(p.sha, sha, sizeof(p.sha));
	return zr__mfile_add(f, &p) ? -1 : 0;
}

/* One "file" line: a new entry of m; -1 if not one. */
static int parse_file(const char *line, struct zr__manifest *m,
		      uint64_t *size, size_t *nparts)
{
	struct zr__mfile *f = &m->files[m->nfiles];
	int used = 0;

	if (m->nfiles == ZR__MANIFEST_FILES ||
	    sscanf(line, "file %31s %" SCNu64 " %zu%n", f->name, size, nparts,
		   &used) != 3 || line[used])
		return -1;
	m->nfiles++;
	return 0;
}

/* The line-by-line reading of text (NUL-terminated, modified): the
 * number of the first bad line, 0 if all are good. */
static int parse_lines(char *text, struct zr__manifest *m)
{
	uint64_t size = 0;
	size_t want = 0;
	int no = 0, end = 0;
	char *save, *line;

	for (line = strtok_r(text, "\n", &save); line && !end;
	     line = strtok_r(NULL, "\n", &save)) {
		struct zr__mfile *f = m->nfiles ? &m->files[m->nfiles - 1]
						: NULL;
		int bad;

		no++;
		if (no == 1)
			bad = strcmp(line, "zrecord-manifest 1") != 0;
		else if (no == 2)
			bad = sscanf(line, "version %64s", m->version) != 1;
		else if (f && f->n < want)
			bad = parse_part(line, f);
		else if (f && f->size != size)
			bad = 1;
		else if ((end = !strcmp(line, "end")))
			bad = 0;
		else
			bad = parse_file(line, m, &size, &want);
		if (bad)
			return no;
	}
	return end ? 0 : no + 1;
}

int zr__manifest_parse(const char *text, size_t len, const char *url,
		       struct zr__manifest *m)
{
	char *copy = strndup(text, len);
	int bad;

	memset(m, 0, sizeof(*m));
	if (!copy)
		return -ENOMEM;
	bad = parse_lines(copy, m);
	free(copy);
	if (!bad)
		return 0;
	zr__manifest_free(m);
	zr__cause("%s: not a zrecord manifest (line %d; zrecord(5), "
		  "\"Published stores\"): push the store again", url, bad);
	return ZR_E_CORRUPT;
}

/* GET of o (size bytes, ETag etag) into a new buffer *out. */
static int get_whole(const struct zr__s3_conf *c, const struct zr__s3_obj *o,
		     uint64_t size, const char *etag, char **out,
		     struct zr__s3_resp *resp)
{
	struct zr__s3_req r = { .conf = c, .url = o->url, .http = o->http,
				.if_match = etag };
	int err;

	if (size > MANIFEST_MAX) {
		zr__cause("%s: %" PRIu64 " bytes is too big for a manifest",
			  o->url, size);
		return ZR_E_CORRUPT;
	}
	*out = malloc(size + 1);
	if (!*out)
		return -ENOMEM;
	r.buf = *out;
	r.cap = size;
	err = zr__s3_send(&r, resp);
	if (!err && resp->status != 200)
		err = zr__s3_status_err(&r, resp);
	if (err) {
		free(*out);
		*out = NULL;
	}
	return err;
}

/* HEAD then GET of o pinned to the HEAD's ETag: a push replacing it in
 * between makes the GET fail (412), and the pair is tried again. */
static int fetch_text(const struct zr__s3_conf *c, const struct zr__s3_obj *o,
		      char **out, size_t *len)
{
	struct zr__s3_resp resp;
	int err = -ESTALE;

	for (int tries = 0; err == -ESTALE && tries < 3; tries++) {
		char etag[sizeof(resp.etag)];

		err = zr__s3_head(c, o, &resp);
		if (err)
			return err;
		memcpy(etag, resp.etag, sizeof(etag));
		err = get_whole(c, o, resp.length, etag, out, &resp);
	}
	if (!err)
		*len = resp.got;
	return err;
}

int zr__manifest_fetch(const struct zr__s3_conf *c, const char *prefix,
		       struct zr__manifest *m)
{
	struct zr__s3_obj o;
	char *text = NULL;
	size_t len = 0;
	int err = zr__s3_obj_child(c, prefix, ZR__MANIFEST_KEY, &o);

	if (err)
		return err;
	err = fetch_text(c, &o, &text, &len);
	if (!err)
		err = zr__manifest_parse(text, len, o.url, m);
	free(text);
	zr__s3_obj_free(&o);
	return err;
}
