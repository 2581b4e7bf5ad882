/*
 * folder.c - the image folder source: images directly in each SOURCE, or
 * one folder per class (found anywhere below it).  Entries are taken in
 * byte order of their names, depth first; class names are the sorted
 * union of every SOURCE's class folders and are written to classes.json;
 * files.txt says which file each record came from.  The walk keeps only
 * paths, sizes and times; the workers read the files.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "import.h"

typedef struct entry {
	char *path;
	off_t size;
	int64_t mtime;
	int64_t label;
} entry;

typedef struct walk {
	entry *e;
	size_t n, cap;
	char **classes;
	size_t nclasses, ccap;
	uint64_t bytes, ignored;
	size_t rel;              /* the SOURCE's prefix files.txt drops */
	const zr_imp_dest *dest; /* left out wherever the walk meets it */
	int skip_bad;
	char **bad;              /* --skip-bad: "PATH\0WHY" of entries */
	size_t nbad;             /* that cannot be read                */
} walk;

static int push(walk *w, const char *path, const struct stat *st,
		int64_t label)
{
	entry *e;

	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 1024;

		e = realloc(w->e, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		w->e = e;
		w->cap = cap;
	}
	e = &w->e[w->n];
	e->path = strdup(path);
	if (!e->path)
		return -ENOMEM;
	e->size = st->st_size;
	e->mtime = zr_imp_mtime_ns(st);
	e->label = label;
	w->n++;
	w->bytes += (uint64_t)st->st_size;
	return 0;
}

static int scan(walk *w, const char *dir, int64_t label, int top_flat);

/* An entry that cannot be read (a dangling link, a folder without
 * permission): the end of the walk, or under --skip-bad a bad input
 * listed in the summary like any other. */
static int bad_entry(walk *w, const char *path, int err, const char *what)
{
	char **bad;

	if (!w->skip_bad)
		return zr_imp_error(path, err, what);
	bad = realloc(w->bad, (w->nbad + 1) * sizeof(*bad));
	if (!bad)
		return zr_imp_error(path, -ENOMEM, NULL);
	w->bad = bad;
	if (asprintf(&bad[w->nbad], "%s%c%s: %s", path, 0, what,
		     zr_strerror(err)) < 0)
		return zr_imp_error(path, -ENOMEM, NULL);
	w->nbad++;
	return 0;
}

static int scan_one(walk *w, const char *dir, const char *name,
		    int64_t label, int top_flat)
{
	struct stat st;
	char *path;
	int rc = 0;

	if (asprintf(&path, "%s/%s", dir, name) < 0)
		return zr_imp_error(dir, -ENOMEM, NULL);
	if (stat(path, &st) < 0)
		rc = bad_entry(w, path, -errno, "cannot stat");
	else if (S_ISDIR(st.st_mode) && !top_flat)
		rc = scan(w, path, label, 0);
	else if (S_ISREG(st.st_mode) && zr_imp_is_image_name(name))
		rc = push(w, path, &st, label) < 0 ?
		     zr_imp_error(path, -ENOMEM, NULL) : 0;
	else if (!S_ISDIR(st.st_mode))
		w->ignored++;
	free(path);
	return rc;
}

/* Adds the images under dir (recursively) with label. */
static int scan(walk *w, const char *dir, int64_t label, int top_flat)
{
	struct dirent **list;
	int n, i, rc = 0;

	n = zr_imp_list_dir(w->dest, dir, &list);
	if (n < 0)
		return bad_entry(w, dir, n, "cannot read the folder");
	for (i = 0; i < n; i++) {
		if (rc == 0)
			rc = scan_one(w, dir, list[i]->d_name, label, top_flat);
		free(list[i]);
	}
	free(list);
	return rc;
}

static int class_index(walk *w, const char *name, int add)
{
	size_t i;
	char **c;

	for (i = 0; i < w->nclasses; i++)
		if (!strcmp(w->classes[i], name))
			return (int)i;
	if (!add)
		return -1;
	if (w->nclasses == w->ccap) {
		w->ccap = w->ccap ? w->ccap * 2 : 64;
		c = realloc(w->classes, w->ccap * sizeof(*c));
		if (!c)
			return -1;
		w->classes = c;
	}
	w->classes[w->nclasses] = strdup(name);
	return w->classes[w->nclasses] ? (int)w->nclasses++ : -1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A SOURCE with subfolders is class-per-folder; images beside them are
 * a mistake the user should hear about. */
static int subfolders(const char *dir, walk *w, int *classed)
{
	struct dirent **list;
	struct stat st;
	char *path;
	int n, i, images = 0, rc = 0;

	n = zr_imp_list_dir(w->dest, dir, &list);
	if (n < 0)
		return zr_imp_error(dir, n, "cannot read the folder");
	*classed = 0;
	for (i = 0; i < n; i++) {
		if (rc == 0 && asprintf(&path, "%s/%s", dir,
					list[i]->d_name) >= 0) {
			if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
				*classed = 1;
				if (class_index(w, list[i]->d_name, 1) < 0)
					rc = zr_imp_error(dir, -ENOMEM, NULL);
			} else if (zr_imp_is_image_name(list[i]->d_name)) {
				images++;
			}
			free(path);
		}
		free(list[i]);
	}
	free(list);
	if (rc == 0 && *classed && images)
		rc = zr_imp_error(dir, ZR_IMP_ETEXT, "holds both images and class "
				  "folders: move the images into a class "
				  "folder, or import the folders one by one");
	return rc;
}

/* The length of the well-formed UTF-8 sequence at p (RFC 3629: no
 * overlong forms, no surrogates, at most U+10FFFF), 0 if there is none. */
static size_t utf8_len(const unsigned char *p)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (*p < 0x80)
		return 1;
	if (*p >= 0xc2 && *p <= 0xdf)
		n = 2;
	else if (*p >= 0xe0 && *p <= 0xef)
		n = 3;
	else if (*p >= 0xf0 && *p <= 0xf4)
		n = 4;
	else
		return 0;
	if (*p == 0xe0)
		lo = 0xa0;
	else if (*p == 0xed)
		hi = 0x9f;
	else if (*p == 0xf0)
		lo = 0x90;
	else if (*p == 0xf4)
		hi = 0x8f;
	for (i = 1; i < n; i++, lo = 0x80, hi = 0xbf)
		if (p[i] < lo || p[i] > hi)
			return 0;
	return n;
}

/* One name as a JSON string into text (6 bytes a byte at most): UTF-8
 * as it is, a byte that is not as the lone surrogate \udcXX, which is
 * how Python's surrogateescape (os.fsdecode) holds it, so that
 * os.fsencode of what json.load reads is the folder's name again. */
static size_t json_name(char *text, const char *name)
{
	const unsigned char *p = (const unsigned char *)name;
	size_t o = 0, n;

	text[o++] = '"';
	while (*p) {
		n = utf8_len(p);
		if (n == 0)
			o += (size_t)sprintf(text + o, "\\udc%02x", *p++);
		else if (*p < 0x20 || *p == '"' || *p == '\\')
			o += (size_t)sprintf(text + o, "\\u%04x", *p++);
		else
			while (n--)
				text[o++] = (char)*p++;
	}
	text[o++] = '"';
	return o;
}

/* classes.json: the class names, label 0 first, as one JSON array. */
static int classes_json(walk *w, zr_imp_dataset *d)
{
	size_t i, len = 4, o = 0;
	char *text;
	int rc;

	for (i = 0; i < w->nclasses; i++)
		len += strlen(w->classes[i]) * 6 + 4;
	text = malloc(len);
	if (!text)
		return zr_imp_error("classes.json", -ENOMEM, NULL);
	text[o++] = '[';
	for (i = 0; i < w->nclasses; i++) {
		if (i) {
			text[o++] = ',';
			text[o++] = ' ';
		}
		o += json_name(text + o, w->classes[i]);
	}
	strcpy(text + o, "]\n");
	rc = zr_imp_dataset_write_file(d, "classes.json", text);
	free(text);
	return rc;
}

static int walk_all(walk *w, char **srcs, int n, int *classed)
{
	int i, c = 0, rc, first = -1;
	struct dirent **list;
	int m, j;
	char *path;

	for (i = 0; i < n; i++) {
		rc = subfolders(srcs[i], w, &c);
		if (rc)
			return rc;
		if (first >= 0 && c != first)
			return zr_imp_error(srcs[i], ZR_IMP_ETEXT, "one SOURCE has "
					    "class folders and another not");
		first = c;
	}
	*classed = first;
	if (w->nclasses)
		qsort(w->classes, w->nclasses, sizeof(*w->classes), cmp_str);
	for (i = 0; i < n; i++) {
		/* one SOURCE: names relative to it; several: as opened */
		w->rel = n == 1 ? strlen(srcs[i]) + 1 : 0;
		if (!*classed) {
			rc = scan(w, srcs[i], 0, 1);
			if (rc)
				return rc;
			continue;
		}
		m = zr_imp_list_dir(w->dest, srcs[i], &list);
		if (m < 0)
			return zr_imp_error(srcs[i], m, "cannot read");
		for (j = 0, rc = 0; j < m; j++) {
			struct stat st;

			if (rc == 0 && asprintf(&path, "%s/%s", srcs[i],
						list[j]->d_name) >= 0) {
				if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
					rc = scan(w, path, class_index(
						w, list[j]->d_name, 0), 0);
				free(path);
			}
			free(list[j]);
		}
		free(list);
		if (rc)
			return rc;
	}
	return 0;
}

static int queue(const zr_imp_config *cfg, walk *w, zr_imp_dataset *d,
		 int classed)
{
	zr_imp_run *r;
	zr_imp_sample *s;
	int img, lab = -1, rc;
	size_t i;

	if (zr_imp_dataset_field(d, "image", &img) < 0 ||
	    (classed && zr_imp_dataset_field(d, "label", &lab) < 0))
		return zr_imp_error(cfg->dest, -ENOMEM, NULL);
	rc = zr_imp_run_new(cfg, d, w->n, w->bytes, &r);
	if (rc)
		return rc;
	for (i = 0; i < w->nbad; i++)
		zr_imp_run_skip(r, w->bad[i], w->bad[i] + strlen(w->bad[i]) + 1);
	for (i = 0; i < w->n && rc == 0; i++) {
		rc = zr_imp_run_next(r, &s);
		if (rc)
			break;
		s->where = w->e[i].path;
		s->nfields = 1;
		s->f[0].store = img;
		s->f[0].kind = ZR_IMP_IMAGE;
		s->f[0].path = strdup(w->e[i].path);
		s->f[0].want_size = w->e[i].size;
		s->f[0].want_mtime = w->e[i].mtime;
		w->e[i].path = NULL;
		if (!s->f[0].path)
			rc = zr_imp_error(s->where, -ENOMEM, NULL);
		if (classed) {
			s->nfields = 2;
			s->f[1].store = lab;
			s->f[1].kind = ZR_IMP_LABEL;
			s->f[1].out.label = w->e[i].label;
		}
		zr_imp_run_bytes(r, (uint64_t)w->e[i].size);
	}
	return zr_imp_run_end(r, rc);
}

/* Any folder is an image folder unless a format before it claims it. */
int zr_imp_folder_claims(const char *dir)
{
	(void)dir;
	return 1;
}

int zr_imp_folder(const zr_imp_config *cfg, char **srcs, int n,
		  zr_imp_dataset *d)
{
	walk w = { .dest = zr_imp_dataset_dest(d),
		   .skip_bad = cfg->skip_bad };
	int classed = 0, rc;
	size_t i;

	rc = walk_all(&w, srcs, n, &classed);
	if (rc == 0 && w.n == 0)
		rc = zr_imp_error(srcs[0], ZR_IMP_ETEXT, "no .jpg, .jpeg, .png or "
				  ".webp files found");
	if (rc == 0)
		zr_imp_note_ignored(w.ignored, ".jpg/.jpeg/.png/.webp");
	if (rc == 0 && classed)
		rc = classes_json(&w, d);
	if (rc == 0)
		rc = zr_imp_dataset_names(d, w.rel);
	if (rc == 0)
		rc = queue(cfg, &w, d, classed);
	for (i = 0; i < w.n; i++)
		free(w.e[i].path);
	for (i = 0; i < w.nclasses; i++)
		free(w.classes[i]);
	for (i = 0; i < w.nbad; i++)
		free(w.bad[i]);
	free(w.bad);
	free(w.e);
	free(w.classes);
	return rc;
}
