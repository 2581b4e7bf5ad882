/*
 * tree_util.c - the source folder, tree, walks and reads the src/tree
 * suites share (tree_util.h).
 */
#include <check.h>
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_util.h"
#include "open_file.h"
#include "run_opts.h"
#include "tree_util.h"

char ckt_src[4096];

static void dense(const char *dir, const char *name, const char *dtype,
		  int ndim, const uint64_t *shape, zr_codec codec,
		  uint64_t n, uint64_t seed)
{
	zr_schema sc = ck_schema(dtype, ndim, shape);
	zr_store *s = ck_store(dir, name, &sc, codec);
	size_t row = sc.dtype.itemsize;
	char *rows;

	for (int d = 0; d < ndim; d++)
		row *= shape[d];
	rows = malloc(row * n);
	ck_assert_ptr_nonnull(rows);
	ck_fill(rows, row * n, seed);
	ck_assert_int_eq(zr_store_append_dense(s, rows, n), 0);
	ck_assert_int_eq(zr_store_close(s), 0);
	free(rows);
}

static void ragged(const char *dir)
{
	zr_schema sc = ck_schema("<u2", -1, NULL);
	zr_store *s = ck_store(dir, "rag", &sc, ZR_CODEC_ZSTD);
	zr_ragged_in in[9];
	uint64_t shape[9];
	uint16_t data[9][7];

	for (size_t i = 0; i < 9; i++) {
		shape[i] = 1 + (i * 3) % 7;
		ck_fill(data[i], sizeof(data[i]), 40 + i);
		in[i] = (zr_ragged_in){ .ndim = 1, .shape = &shape[i],
					.data = data[i] };
	}
	ck_assert_int_eq(zr_store_append_ragged(s, in, 9), 0);
	ck_assert_int_eq(zr_store_close(s), 0);
}

void ckt_text_file(const char *name, const char *text)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", ckt_src, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_ge(fputs(text, f), 0);
	ck_assert_int_eq(fclose(f), 0);
}

void ckt_src_make(void)
{
	static const uint64_t img[] = { 4, 5, 3 }, three[] = { 3 },
			      two[] = { 2 };
	char sub[4200];

	ck_tmpdir(ckt_src, sizeof(ckt_src));
	dense(ckt_src, "img", "|u1", 3, img, ZR_CODEC_ZSTD, 10, 1);
	dense(ckt_src, "img2", "|u1", 3, img, ZR_CODEC_RAW, 7, 2);
	ragged(ckt_src);
	snprintf(sub, sizeof(sub), "%s/ds", ckt_src);
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	dense(sub, "a", "<i4", 1, three, ZR_CODEC_RAW, 8, 3);
	dense(sub, "b", "<f8", 1, two, ZR_CODEC_ZSTD, 8, 4);
	snprintf(sub, sizeof(sub), "%s/plain", ckt_src);
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	dense(sub, "inner", "|u1", 1, two, ZR_CODEC_RAW, 3, 5);
	ckt_text_file("mix.mix.json", "{\"sources\": [{\"path\": \"img\", "
		  "\"weight\": 2}, {\"path\": \"img2\", \"weight\": 1}]}\n");
	ckt_text_file("notes.txt", "not a store\n");
}

void ckt_src_remove(void)
{
	zr_rmtree(ckt_src);
}

void ckt_build(struct ckt_tree *c, unsigned flags, const char *opts)
{
	char msg[160], *list = strdup(opts ? opts : ""), *save = NULL;

	ck_assert_ptr_nonnull(list);
	zrtree_run_defaults(&c->run);
	for (char *o = strtok_r(list, ",", &save); o;
	     o = strtok_r(NULL, ",", &save))
		ck_assert_msg(zrtree_run_parse(&c->run, o, msg, sizeof(msg)) ==
			      0, "%s: %s", o, msg);
	free(list);
	ck_assert_int_eq(zrtree_run_check(&c->run, msg, sizeof(msg)), 0);
	ck_assert_int_eq(zrtree_build(&c->t, ckt_src, flags, &c->run), 0);
}

void ckt_free(struct ckt_tree *c)
{
	ck_assert_int_eq(zrtree_free(&c->t), 0);
	zrtree_run_free(&c->run);
}

struct zrtree_node *ckt_at(struct ckt_walk *w)
{
	return w->ndyn ? &w->dyn[w->ndyn - 1] : w->base;
}

void ckt_walk_end(struct ckt_walk *w)
{
	while (w->ndyn)
		free(w->dyn[--w->ndyn].lens);
}

int ckt_walk(struct zrtree *t, const char *path, struct ckt_walk *w)
{
	char *copy = strdup(path), *save = NULL;
	int err = 0;

	ck_assert_ptr_nonnull(copy);
	w->base = t->stat[0];
	w->ndyn = 0;
	for (char *name = strtok_r(copy, "/", &save); name && !err;
	     name = strtok_r(NULL, "/", &save)) {
		struct zrtree_node *kid;

		ck_assert_uint_lt(w->ndyn, 4);
		err = zrtree_lookup(t, ckt_at(w), name, &kid,
				    &w->dyn[w->ndyn]);
		if (!err && kid)
			w->base = kid;
		else if (!err)
			w->ndyn++;
	}
	free(copy);
	if (err)
		ckt_walk_end(w);
	return err;
}

char *ckt_read_node(struct zrtree *t, const struct zrtree_node *n,
		    uint64_t piece, uint64_t *len)
{
	struct zrtree_file *f;
	uint64_t size, off;
	char *buf;
	int err = zrtree_file_open(t, n, &f);

	ck_assert_msg(err == 0, "open: %s", zr_errname(err));
	size = zrtree_file_size(f);
	ck_assert_uint_eq(size, n->size);
	for (off = size - size % piece; ; off -= piece) {
		uint64_t end = off + piece < size ? off + piece : size;

		if (off < end) {
			err = zrtree_file_fill(f, off, end);
			ck_assert_msg(err == 0, "fill [%llu, %llu): %s: %s",
				      (unsigned long long)off,
				      (unsigned long long)end,
				      zr_errname(err), zr_errmsg());
			ck_assert(zrtree_file_have(f, off, end));
		}
		if (off == 0)
			break;
	}
	buf = malloc(size ? size : 1);
	ck_assert_ptr_nonnull(buf);
	memcpy(buf, zrtree_file_bytes(f), size);
	zrtree_file_close(f);
	*len = size;
	return buf;
}

char *ckt_read(struct zrtree *t, const char *path, uint64_t *len)
{
	struct ckt_walk w;
	struct zrtree_node *n;
	char *buf;
	size_t tlen;
	int err = ckt_walk(t, path, &w);

	ck_assert_msg(err == 0, "%s: %s", path, zr_errname(err));
	n = ckt_at(&w);
	if (n->kind == ZRTREE_K_RECORD || n->kind == ZRTREE_K_BATCH) {
		buf = ckt_read_node(t, n, 4099, len);
	} else {
		err = zrtree_text(n, &buf, &tlen);
		ck_assert_msg(err == 0, "%s: %s", path, zr_errname(err));
		*len = tlen;
	}
	ckt_walk_end(&w);
	return buf;
}

/* The build's zrecord: $top_builddir/src/cli/zrecord (as make check
 * and tests/tsan.test run), else ../src/cli/zrecord from this program's
 * folder (run by hand). */
static void zrecord_path(char *dst, size_t cap)
{
	const char *b = getenv("top_builddir");
	char exe[4096];
	ssize_t n;

	if (b && *b) {
		snprintf(dst, cap, "%s/src/cli/zrecord", b);
		return;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ck_assert_int_gt(n, 0);
	exe[n] = '\0';
	snprintf(dst, cap, "%s/../src/cli/zrecord", dirname(exe));
}

static char *slurp(const char *path, uint64_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	ck_assert_int_ge(n, 0);
	rewind(f);
	buf = malloc(n ? (size_t)n : 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (uint64_t)n;
	return buf;
}

char *ckt_zrecord(const char *args, uint64_t *len)
{
	char prog[4200], out[4200], cmd[16384], *buf;
	int rc;

	zrecord_path(prog, sizeof(prog));
	snprintf(out, sizeof(out), "%s/.zrecord.out", ckt_src);
	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' %s > '%s'", ckt_src, prog,
		 args, out);
	rc = system(cmd);
	ck_assert_msg(rc == 0, "%s: status %d", cmd, rc);
	buf = slurp(out, len);
	ck_assert_int_eq(unlink(out), 0);
	return buf;
}

void ckt_same(const char *what, const char *a, uint64_t alen, const char *b,
	      uint64_t blen)
{
	ck_assert_msg(alen == blen, "%s: %llu bytes, expected %llu", what,
		      (unsigned long long)alen, (unsigned long long)blen);
	for (uint64_t i = 0; i < alen; i++)
		ck_assert_msg(a[i] == b[i], "%s: byte %llu differs", what,
			      (unsigned long long)i);
}
