/*
 * check_tree_files.c - src/tree's open files (open_file.h) across deletes
 * and compacts of a real store the tree holds read-write, as the mount's
 * do: a file opened before a delete gives the bytes it opened, a node
 * looked up before one is stale (another size), fresh (the same size,
 * new bytes) or unchanged (an index the delete missed), a compact changes
 * no file, and threads filling one batch file's pieces at once while
 * deletes run all get the bytes it opened.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "check_suites.h"
#include "check_util.h"
#include "open_file.h"
#include "tree_util.h"

/* A looked-up node, kept past the walk (a mount's kernel keeps it). */
static struct zrtree_node look(struct zrtree *t, const char *path)
{
	struct ckt_walk w;
	struct zrtree_node n;
	int err = ckt_walk(t, path, &w);

	ck_assert_msg(err == 0, "%s: %s", path, zr_errname(err));
	n = *ckt_at(&w);
	ck_assert_ptr_null(n.lens); /* no mixture here: nothing to keep */
	ckt_walk_end(&w);
	return n;
}

static zr_store *store_of(struct zrtree *t, const char *path)
{
	struct ckt_walk w;

	ck_assert_int_eq(ckt_walk(t, path, &w), 0);
	return w.base->st->zs;
}

static char *read_all(struct zrtree *t, const struct zrtree_node *n,
		      uint64_t *len)
{
	return ckt_read_node(t, n, 1000, len);
}

/* Fills the open file f whole, as ckt_read_node does for a node. */
static void fill_all(struct zrtree_file *f)
{
	uint64_t size = zrtree_file_size(f);
	int err = zrtree_file_fill(f, 0, size);

	ck_assert_msg(err == 0, "fill: %s: %s", zr_errname(err), zr_errmsg());
	ck_assert(zrtree_file_have(f, 0, size));
}

static void delete_one(zr_store *s, uint64_t idx)
{
	ck_assert_int_eq(zr_store_delete(s, &idx, 1), 0);
}

START_TEST(test_record_across_delete)
{
	struct ckt_tree t;
	struct zrtree_node r3, r0, now;
	struct zrtree_file *f;
	uint64_t l3, l9, l0, len;
	char *e3, *e9, *e0, *got;
	zr_store *img;

	ckt_build(&t, 0, NULL);
	img = store_of(&t.t, "img");
	r3 = look(&t.t, "img/records/3.npy");
	r0 = look(&t.t, "img/records/0.npy");
	e3 = ckt_read(&t.t, "img/records/3.npy", &l3);
	e9 = ckt_read(&t.t, "img/records/9.npy", &l9);
	e0 = ckt_read(&t.t, "img/records/0.npy", &l0);
	ck_assert_int_ne(memcmp(e3, e9, l3), 0);
	/* opened before the delete: the bytes it opened, read after */
	ck_assert_int_eq(zrtree_file_open(&t.t, &r3, &f), 0);
	delete_one(img, 3); /* record 9 moves into 3 */
	fill_all(f);
	ck_assert(!zrtree_file_fresh(f));
	ckt_same("open before delete", zrtree_file_bytes(f),
		 zrtree_file_size(f), e3, l3);
	zrtree_file_close(f);
	/* the old node opened after: the name's new bytes, of its size */
	ck_assert_int_eq(zrtree_file_open(&t.t, &r3, &f), 0);
	ck_assert(zrtree_file_fresh(f));
	fill_all(f);
	ckt_same("old node, fresh", zrtree_file_bytes(f), zrtree_file_size(f),
		 e9, l9);
	zrtree_file_close(f);
	/* a new lookup is a new content; 9 is gone */
	now = look(&t.t, "img/records/3.npy");
	ck_assert_uint_ne(now.ver[0], r3.ver[0]);
	got = read_all(&t.t, &now, &len);
	ckt_same("new lookup", got, len, e9, l9);
	free(got);
	{
		struct ckt_walk w;

		ck_assert_int_eq(ckt_walk(&t.t, "img/records/9.npy", &w),
				 -ENOENT);
	}
	/* an index the delete did not touch keeps its node */
	ck_assert_int_eq(zrtree_file_open(&t.t, &r0, &f), 0);
	ck_assert(!zrtree_file_fresh(f));
	fill_all(f);
	ckt_same("untouched index", zrtree_file_bytes(f), zrtree_file_size(f),
		 e0, l0);
	zrtree_file_close(f);
	free(e3);
	free(e9);
	free(e0);
	ckt_free(&t);
}
END_TEST

/* A ragged record whose name now shows a record of another size. */
START_TEST(test_ragged_record_stale)
{
	struct ckt_tree t;
	struct zrtree_node r2;
	struct zrtree_file *f;

	ckt_build(&t, 0, NULL);
	r2 = look(&t.t, "rag/records/2.npy"); /* 7 elements */
	delete_one(store_of(&t.t, "rag"), 2); /* record 8, of 4, moves in */
	ck_assert_int_eq(zrtree_file_open(&t.t, &r2, &f), -ESTALE);
	ckt_free(&t);
}
END_TEST

START_TEST(test_batch_across_delete)
{
	struct ckt_tree t;
	struct zrtree_node b, now;
	struct zrtree_file *f;
	uint64_t le, ln, len;
	char *e, *en, *got;

	ckt_build(&t, 0, NULL);
	b = look(&t.t, "img/batch/sequential/4/0-1.npy"); /* records 4..7 */
	e = read_all(&t.t, &b, &le);
	ck_assert_int_eq(zrtree_file_open(&t.t, &b, &f), 0);
	ck_assert(!zrtree_file_have(f, 0, 1)); /* nothing copied at open */
	delete_one(store_of(&t.t, "img"), 5);
	fill_all(f);
	ckt_same("batch open before delete", zrtree_file_bytes(f),
		 zrtree_file_size(f), e, le);
	zrtree_file_close(f);
	/* after: a new lookup draws from 9 records, other bytes */
	now = look(&t.t, "img/batch/sequential/4/0-1.npy");
	ck_assert(now.ver[0] != b.ver[0] || now.ver[1] != b.ver[1]);
	en = read_all(&t.t, &now, &ln);
	ck_assert(ln != le || memcmp(en, e, le));
	/* the old node opened now serves the new content or none */
	if (zrtree_file_open(&t.t, &b, &f) == 0) {
		ck_assert(zrtree_file_fresh(f));
		fill_all(f);
		ckt_same("old batch node", zrtree_file_bytes(f),
			 zrtree_file_size(f), en, ln);
		zrtree_file_close(f);
	}
	got = read_all(&t.t, &now, &len);
	ckt_same("new batch node", got, len, en, ln);
	free(got);
	free(e);
	free(en);
	ckt_free(&t);
}
END_TEST

START_TEST(test_compact)
{
	struct ckt_tree t;
	struct zrtree_node b, r, old;
	struct zrtree_file *fb, *fr, *fo;
	uint64_t lb, lr, epoch;
	char *eb, *er;
	zr_store *img;

	ckt_build(&t, 0, NULL);
	img = store_of(&t.t, "img");
	old = look(&t.t, "img/records/1.npy");
	ck_assert_int_eq(zrtree_file_open(&t.t, &old, &fo), 0);
	delete_one(img, 2);
	/* a file opened before the last delete holds compact off */
	ck_assert_int_eq(zr_store_compact(img, NULL, NULL), ZR_E_BUSY);
	fill_all(fo);
	zrtree_file_close(fo);
	b = look(&t.t, "img/batch/cyclic/3/4-1.npy");
	r = look(&t.t, "img/records/2.npy");
	eb = read_all(&t.t, &b, &lb);
	er = read_all(&t.t, &r, &lr);
	ck_assert_int_eq(zrtree_file_open(&t.t, &b, &fb), 0);
	epoch = zrtree_file_epoch(fb);
	ck_assert_int_eq(zrtree_file_open(&t.t, &r, &fr), 0);
	/* files opened after it do not */
	ck_assert_int_eq(zr_store_compact(img, NULL, NULL), 0);
	fill_all(fb);
	fill_all(fr);
	ckt_same("batch across compact", zrtree_file_bytes(fb), lb, eb, lb);
	ckt_same("record across compact", zrtree_file_bytes(fr), lr, er, lr);
	zrtree_file_close(fb);
	zrtree_file_close(fr);
	/* nodes looked up before a compact stay what they were */
	ck_assert_int_eq(zrtree_file_open(&t.t, &b, &fb), 0);
	ck_assert(!zrtree_file_fresh(fb));
	ck_assert_uint_eq(zrtree_file_epoch(fb), epoch);
	fill_all(fb);
	ckt_same("batch node after compact", zrtree_file_bytes(fb), lb, eb,
		 lb);
	zrtree_file_close(fb);
	free(eb);
	free(er);
	ckt_free(&t);
}
END_TEST

/* Threads filling one batch file of several pieces at once. */
struct filler {
	struct zrtree_file *f;
	uint64_t from, step;
	int err;
};

static void *fill_pieces(void *arg)
{
	struct filler *p = arg;
	uint64_t size = zrtree_file_size(p->f);

	for (uint64_t off = p->from; off < size && !p->err; off += p->step) {
		uint64_t end = off + 65536 < size ? off + 65536 : size;

		/* a delete running now: again once it ended, as the mount
		 * runs a parked request again */
		while ((p->err = zrtree_file_fill(p->f, off, end)) ==
		       ZR_E_BUSY)
			sched_yield();
		if (!p->err && !zrtree_file_have(p->f, off, end))
			p->err = -EIO;
	}
	return NULL;
}

START_TEST(test_threads_fill_pieces)
{
	struct ckt_tree t;
	struct zrtree_node b;
	struct zrtree_file *f;
	struct filler p[4];
	pthread_t th[4];
	uint64_t le;
	char *e;
	zr_store *img;

	ckt_build(&t, 0, NULL);
	img = store_of(&t.t, "img");
	/* 65536 records of 60 bytes: pieces of about 1 MiB */
	b = look(&t.t, "img/batch/iid/65536/3-5.npy");
	e = read_all(&t.t, &b, &le);
	ck_assert_uint_gt(le, 3 << 20);
	ck_assert_int_eq(zrtree_file_open(&t.t, &b, &f), 0);
	for (int i = 0; i < 4; i++) {
		p[i] = (struct filler){ .f = f, .from = i * 65536,
					.step = 4 * 65536 };
		ck_assert_int_eq(pthread_create(&th[i], NULL, fill_pieces,
						&p[i]), 0);
	}
	delete_one(img, 0);
	delete_one(img, 4);
	for (int i = 0; i < 4; i++) {
		ck_assert_int_eq(pthread_join(th[i], NULL), 0);
		ck_assert_msg(p[i].err == 0, "thread %d: %s", i,
			      zr_errname(p[i].err));
	}
	ckt_same("pieces filled by 4 threads", zrtree_file_bytes(f),
		 zrtree_file_size(f), e, le);
	zrtree_file_close(f);
	free(e);
	ckt_free(&t);
}
END_TEST

Suite *suite_tree_files(void)
{
	Suite *s = suite_create("tree_files");
	TCase *tc = tcase_create("open_files");

	tcase_add_checked_fixture(tc, ckt_src_make, ckt_src_remove);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_record_across_delete);
	tcase_add_test(tc, test_ragged_record_stale);
	tcase_add_test(tc, test_batch_across_delete);
	tcase_add_test(tc, test_compact);
	tcase_add_test(tc, test_threads_fill_pieces);
	suite_add_tcase(s, tc);
	return s;
}
