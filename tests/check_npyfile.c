/*
 * check_npyfile.c - the record encoder (src/files/encoder.h) on real
 * stores of every codec: the sizes it plans before any byte exists are the
 * bytes it writes (every byte of the file written, none past it), each
 * part parses as a .npy of exactly its planned size holding its record,
 * the forms a store cannot take are refused, and the ways zrecordfs fills
 * in parts (rows of a STACK, a plan from known shapes) give the same
 * bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check_suites.h"
#include "check_util.h"
#include "encoder.h"

#define GUARD 64
#define NREC 12

/* Ragged records of ranks 0 to 3 whose sizes cross 64-byte boundaries. */
static void ragged_shape(size_t i, zr_ragged_in *r, uint64_t *shape)
{
	r->ndim = i % 4;
	for (uint32_t d = 0; d < r->ndim; d++)
		shape[d] = 1 + (i * 5 + d * 3) % 5;
	r->shape = shape;
}

static zr_store *ragged_store(zr_codec codec, uint16_t *data)
{
	zr_schema sc = ck_schema("<u2", -1, NULL);
	zr_store *s = ck_store(ck_dir, "r", &sc, codec);
	zr_ragged_in in[NREC];
	uint64_t shapes[NREC][3];
	uint16_t *p = data;

	for (size_t i = 0; i < NREC; i++) {
		uint64_t e = 1;

		ragged_shape(i, &in[i], shapes[i]);
		for (uint32_t d = 0; d < in[i].ndim; d++)
			e *= shapes[i][d];
		ck_fill(p, e * 2, i);
		in[i].data = p;
		p += e;
	}
	ck_assert_int_eq(zr_store_append_ragged(s, in, NREC), 0);
	return s;
}

static zr_store *dense_store(zr_codec codec)
{
	static const uint64_t shape[] = { 2, 3 };
	zr_schema sc = ck_schema("<f4", 2, shape);
	zr_store *s = ck_store(ck_dir, "d", &sc, codec);
	char rows[NREC * 24];

	ck_fill(rows, sizeof(rows), 5);
	ck_assert_int_eq(zr_store_append_dense(s, rows, NREC), 0);
	return s;
}

/* Fills f twice, over different bytes: both give the same file, so every
 * byte of [0, total) was written, and the bytes past its scratch (slack)
 * were left alone. */
static char *fill_checked(const zrfile_npy *f)
{
	uint64_t end = f->total + f->slack;
	char *a = malloc(end + GUARD), *b = malloc(end + GUARD);

	memset(a, 0xaa, end + GUARD);
	memset(b, 0x55, end + GUARD);
	ck_assert_msg(zrfile_npy_fill(f, a) == 0, "fill: %s", zr_errmsg());
	ck_assert_int_eq(zrfile_npy_fill(f, b), 0);
	ck_assert_mem_eq(a, b, f->total);
	for (size_t i = 0; i < GUARD; i++)
		ck_assert_int_eq((unsigned char)a[end + i], 0xaa);
	free(b);
	return a;
}

/* The .npy at p is exactly size bytes and holds ndim axes. */
static zr_npy_header check_npy(const char *p, uint64_t size, uint32_t ndim)
{
	zr_npy_header h;

	ck_assert_int_eq(zr_npy_parse(p, size, &h, NULL), 0);
	ck_assert_uint_eq(h.header_len + h.data_len, size);
	ck_assert_uint_eq(h.ndim, ndim);
	return h;
}

/* A ragged record's .npy: its record's shape and bytes, the header
 * policy's size (H, a multiple of 64, plus the stored length). */
static void check_ragged_part(zr_store *s, uint64_t idx, const char *p,
			      uint64_t size)
{
	uint64_t shape[ZR_MAX_NDIM], rec[64], off[2];
	uint32_t ndim;
	zr_npy_header h;
	zr_loc loc;

	ck_assert_int_eq(zr_ragged_shape(s, idx, &ndim, shape), 0);
	ck_assert_int_eq(zr_store_loc(s, idx, &loc), 0);
	h = check_npy(p, size, ndim);
	ck_assert_mem_eq(h.shape, shape, ndim * sizeof(*shape));
	ck_assert_uint_eq((size - loc.logic_length) % 64, 0);
	ck_assert_uint_eq(h.header_len % 8, 0);
	ck_assert_uint_le(loc.logic_length, sizeof(rec));
	ck_assert_int_eq(zr_store_gather(s, &idx, 1, rec, sizeof(rec), off),
			 0);
	ck_assert_mem_eq(p + h.header_len, (char *)rec + 8 + 8 * ndim,
			 h.data_len);
}

static const uint64_t batch[] = { 7, 0, 3, 3, 11, 1, 2, 9 };
#define NBATCH (sizeof(batch) / sizeof(batch[0]))

START_TEST(test_ragged_files)
{
	uint16_t data[NREC * 400];
	zr_store *s = ragged_store(ck_codecs[_i], data);
	zrfile_source st = { .zs = s };
	zrfile_npy f;
	char *buf;

	for (uint64_t i = 0; i < NREC; i++) {
		ck_assert_int_eq(zrfile_npy_plan(&f, ZRFILE_RECORD, &st, 1,
						 &i, 1), 0);
		buf = fill_checked(&f);
		check_ragged_part(s, i, buf, f.total);
		free(buf);
		zrfile_npy_free(&f);
	}
	ck_assert_int_eq(zrfile_npy_plan(&f, ZRFILE_NPZ, &st, 1, batch,
					 NBATCH), 0);
	ck_assert_uint_eq(f.nparts, NBATCH);
	buf = fill_checked(&f);
	for (size_t k = 0; k < NBATCH; k++)
		check_ragged_part(s, batch[k], buf + f.part[k].offset,
				  f.part[k].size);
	ck_assert_mem_eq(buf + f.total - 22, "PK\5\6", 4); /* end record */
	free(buf);
	zrfile_npy_free(&f);
	zr_store_close(s);
}
END_TEST

/* Plans form over the dense store: the size wanted, the same with no
 * indices (the size does not depend on them), and a checked fill. */
static char *dense_file(zrfile_npy *f, int form, const zrfile_source *st,
			const uint64_t *idx, uint64_t n, uint64_t want)
{
	ck_assert_int_eq(zrfile_npy_plan(f, form, st, 1, NULL, n),
			 form == ZRFILE_RECORD ? -EINVAL : 0);
	ck_assert(form == ZRFILE_RECORD || f->total == want);
	zrfile_npy_free(f);
	ck_assert_int_eq(zrfile_npy_plan(f, form, st, 1, idx, n), 0);
	ck_assert_uint_eq(f->total, want);
	return fill_checked(f);
}

START_TEST(test_dense_files)
{
	zr_store *s = dense_store(ck_codecs[_i]);
	zrfile_source st = { .zs = s, .name = "x" };
	char rows[NBATCH * 24], *buf;
	zr_npy_header h;
	zrfile_npy f;

	ck_assert_int_eq(zr_store_gather(s, batch, NBATCH, rows, sizeof(rows),
					 NULL), 0);
	buf = dense_file(&f, ZRFILE_RECORD, &st, batch, 1, 128 + 24);
	h = check_npy(buf, f.total, 2);
	ck_assert_mem_eq(buf + h.header_len, rows, 24);
	free(buf);
	zrfile_npy_free(&f);
	buf = dense_file(&f, ZRFILE_STACK, &st, batch, NBATCH,
			 128 + sizeof(rows));
	h = check_npy(buf, f.total, 3);
	ck_assert_uint_eq(h.shape[0], NBATCH);
	ck_assert_mem_eq(buf + h.header_len, rows, sizeof(rows));
	free(buf);
	zrfile_npy_free(&f);
	buf = dense_file(&f, ZRFILE_INDICES, &st, batch, NBATCH,
			 128 + 8 * NBATCH);
	h = check_npy(buf, f.total, 1);
	ck_assert_uint_eq(((unsigned char *)buf)[h.header_len + 8 * 4], 11);
	free(buf);
	zrfile_npy_free(&f);
	/* one member x.npy: 30 + 5 local, 46 + 5 central, 22 end */
	buf = dense_file(&f, ZRFILE_NPZ, &st, batch, NBATCH,
			 128 + sizeof(rows) + 108);
	ck_assert_str_eq(f.part[0].name, "x.npy");
	check_npy(buf + f.part[0].offset, f.part[0].size, 3);
	free(buf);
	zrfile_npy_free(&f);
	zr_store_close(s);
}
END_TEST

START_TEST(test_streams_in_one_npz)
{
	uint16_t data[NREC * 400];
	zr_store *r = ragged_store(ck_codecs[_i], data);
	zr_store *d = dense_store(ck_codecs[_i]);
	zrfile_source st[] = { { .zs = d, .name = "img" },
			       { .zs = r, .name = "tok" } };
	zrfile_npy f;
	char *buf;

	ck_assert_int_eq(zrfile_npy_plan(&f, ZRFILE_NPZ, st, 2, batch, 3),
			 0);
	ck_assert_uint_eq(f.nparts, 4);
	ck_assert_str_eq(f.part[0].name, "img.npy");
	ck_assert_str_eq(f.part[3].name, "tok/2.npy");
	buf = fill_checked(&f);
	check_npy(buf + f.part[0].offset, f.part[0].size, 3);
	for (size_t k = 0; k < 3; k++)
		check_ragged_part(r, batch[k], buf + f.part[k + 1].offset,
				  f.part[k + 1].size);
	free(buf);
	zrfile_npy_free(&f);
	zr_store_close(d);
	zr_store_close(r);
}
END_TEST

START_TEST(test_refused_forms)
{
	uint16_t data[NREC * 400];
	zr_store *s = ragged_store(ZR_CODEC_RAW, data);
	zrfile_source st = { .zs = s };
	uint64_t past = NREC;
	zrfile_npy f;

	ck_assert_int_eq(zrfile_npy_plan(&f, ZRFILE_STACK, &st, 1, batch,
					 2), -EINVAL);
	zrfile_npy_free(&f);
	ck_assert_int_eq(zrfile_npy_plan(&f, ZRFILE_RECORD, &st, 1, batch,
					 2), -EINVAL);
	zrfile_npy_free(&f);
	ck_assert_int_eq(zrfile_npy_plan(&f, ZRFILE_NPZ, &st, 1, NULL, 2),
			 -EINVAL);
	zrfile_npy_free(&f);
	ck_assert_int_eq(zrfile_npy_plan(&f, ZRFILE_RECORD, &st, 1, &past,
					 1), ZR_E_RANGE);
	zrfile_npy_free(&f);
	ck_assert_int_eq(zrfile_npy_plan(&f, ZRFILE_INDICES, &st, 1, NULL,
					 2), 0);
	ck_assert_int_eq(zrfile_npy_fill(&f, data), -EINVAL);
	zrfile_npy_free(&f);
	zr_store_close(s);
}
END_TEST

/* A packed or padded file planned from the shapes an earlier plan read
 * (what zrecordfs keeps from a lookup) is the same file; a shape that no
 * longer matches its record cannot reach the bytes (-ESTALE). */
static void check_known_shapes(zr_store *s, int form)
{
	static const uint64_t ones[] = { 9, 1, 5, 1 }; /* ndim 1 each */
	zrfile_source st = { .zs = s };
	zrfile_npy f, g;
	uint64_t *shapes;
	uint32_t rndim;
	char *a, *b;

	ck_assert_int_eq(zrfile_npy_plan(&f, form, &st, 1, ones, 4), 0);
	a = fill_checked(&f);
	shapes = zrfile_npy_take_shapes(&f, &rndim);
	ck_assert_uint_eq(rndim, 1);
	ck_assert_int_eq(zrfile_npy_plan_known(&g, form, &st, ones, 4, shapes,
					       rndim), 0);
	ck_assert_uint_eq(g.total, f.total);
	b = fill_checked(&g);
	ck_assert_mem_eq(a, b, f.total);
	free(b);
	zrfile_npy_free(&g);
	zrfile_npy_free(&f);
	ck_assert_int_eq(zrfile_npy_plan(&f, form, &st, 1, ones, 4), 0);
	shapes = zrfile_npy_take_shapes(&f, &rndim);
	shapes[2] += 1;
	ck_assert_int_eq(zrfile_npy_plan_known(&g, form, &st, ones, 4, shapes,
					       rndim), 0);
	b = calloc(1, g.total + g.slack);
	ck_assert_int_eq(zrfile_npy_fill(&g, b), -ESTALE);
	free(b);
	zrfile_npy_free(&g);
	zrfile_npy_free(&f);
	free(a);
}

START_TEST(test_known_shapes)
{
	uint16_t data[NREC * 400];
	zr_store *s = ragged_store(ck_codecs[_i], data);

	for (int form = ZRFILE_PACKED; form <= ZRFILE_LENGTHS; form++)
		check_known_shapes(s, form);
	zr_store_close(s);
}
END_TEST

/* Each part file of a packed or padded batch (.packed.npy, ...) is its
 * member of the .npz, byte for byte, and needs no more scratch than it
 * plans (fill_checked's guard): a packed data.npy alone has no members
 * after it to gather over. */
static void check_parts(zr_store *s, const uint64_t *idx, uint64_t n,
			int form, int first, int last)
{
	zrfile_source st = { .zs = s };
	zrfile_npy whole, f;
	char *npz, *part;

	ck_assert_int_eq(zrfile_npy_plan(&whole, form, &st, 1, idx, n), 0);
	npz = fill_checked(&whole);
	ck_assert_uint_eq(whole.nparts, (size_t)(last - first + 1));
	for (int p = first; p <= last; p++) {
		const zrfile_npz_member *m = &whole.part[p - first];

		ck_assert_int_eq(zrfile_npy_plan(&f, p, &st, 1, idx, n), 0);
		ck_assert_uint_eq(f.total, m->size);
		part = fill_checked(&f);
		ck_assert_mem_eq(part, npz + m->offset, m->size);
		free(part);
		zrfile_npy_free(&f);
	}
	free(npz);
	zrfile_npy_free(&whole);
}

/* Planned from records gathered already (what zrecordfs keeps from a
 * lookup of a compressed store), every flat form is the file planned from
 * the store; a bad prefix in them is ZR_E_CORRUPT. */
static void check_gathered(zr_store *s, const uint64_t *idx, uint64_t n)
{
	zrfile_source st = { .zs = s };
	uint64_t need, *off = malloc((n + 1) * sizeof(*off));
	zrfile_npy f, g;
	char *recs, *a, *b;

	ck_assert_int_eq(zr_store_gather_size(s, idx, n, &need), 0);
	recs = malloc(need);
	ck_assert_int_eq(zr_store_gather(s, idx, n, recs, need, off), 0);
	for (int form = ZRFILE_PACKED; form <= ZRFILE_LENGTHS;
	     form++) {
		ck_assert_int_eq(zrfile_npy_plan(&f, form, &st, 1, idx, n), 0);
		ck_assert_int_eq(zrfile_npy_plan_gathered(&g, form, &st, idx, n,
							  recs, off), 0);
		ck_assert_uint_eq(g.total, f.total);
		a = fill_checked(&f);
		b = fill_checked(&g);
		ck_assert_mem_eq(a, b, f.total);
		free(a);
		free(b);
		zrfile_npy_free(&g);
		zrfile_npy_free(&f);
	}
	recs[off[1]] = 9; /* record 1's ndim */
	ck_assert_int_eq(zrfile_npy_plan_gathered(&g, ZRFILE_PACKED, &st,
						  idx, n, recs, off),
			 ZR_E_CORRUPT);
	zrfile_npy_free(&g);
	free(recs);
	free(off);
}

START_TEST(test_plan_from_gathered_records)
{
	static const uint64_t ones[] = { 9, 1, 5, 1, 9 };  /* ndim 1    */
	static const uint64_t twos[] = { 6, 2, 10, 2 };    /* (h, 4)    */
	static const uint64_t mixed[] = { 1, 2 };
	uint16_t data[NREC * 400];
	zr_store *s = ragged_store(ck_codecs[_i], data);
	zrfile_source st = { .zs = s };
	uint64_t off[3], need;
	char recs[4096];
	zrfile_npy g;

	check_gathered(s, ones, 5);
	check_gathered(s, twos, 4);
	ck_assert_int_eq(zr_store_gather_size(s, mixed, 2, &need), 0);
	ck_assert_int_eq(zr_store_gather(s, mixed, 2, recs, sizeof(recs), off),
			 0);
	ck_assert_int_eq(zrfile_npy_plan_gathered(&g, ZRFILE_OFFSETS, &st,
						  mixed, 2, recs, off),
			 -EINVAL);
	zrfile_npy_free(&g);
	zr_store_close(s);
}
END_TEST

START_TEST(test_parts_are_members)
{
	static const uint64_t ones[] = { 9, 1, 5, 1, 9 };  /* ndim 1    */
	static const uint64_t twos[] = { 6, 2, 10, 2 };    /* (h, 4)    */
	uint16_t data[NREC * 400];
	zr_store *s = ragged_store(ck_codecs[_i], data);

	for (int k = 0; k < 2; k++) {
		const uint64_t *idx = k ? twos : ones;
		uint64_t n = k ? 4 : 5;

		check_parts(s, idx, n, ZRFILE_PACKED,
			    ZRFILE_PACKED_DATA, ZRFILE_SHAPES);
		check_parts(s, idx, n, ZRFILE_PADDED,
			    ZRFILE_PADDED_DATA, ZRFILE_LENGTHS);
	}
	zr_store_close(s);
}
END_TEST

/* A STACK file filled a few rows at a time, last rows first, is the file
 * filled whole; rows past the batch and other forms are refused. */
/* A file planned through a view is filled from it: a delete between the
 * plan and the fill changes nothing in it, where the store now gives
 * other records (or a stale plan).  An .npz of a batch, and one record's
 * .npy. */
START_TEST(test_file_through_view)
{
	uint16_t data[NREC * 400];
	zr_store *s = ragged_store(ck_codecs[_i % 3], data);
	int form = _i < 3 ? ZRFILE_NPZ : ZRFILE_RECORD;
	uint64_t n = _i < 3 ? NBATCH : 1; /* batch[0] is deleted */
	zrfile_source now = { .zs = s }, st = { .zs = s };
	const uint64_t del[] = { 7, 3, 0 };
	zrfile_npy f, g;
	char *want, *got, *other;
	zr_view *view;
	int err;

	ck_assert_int_eq(zrfile_npy_plan(&f, form, &now, 1, batch, n),
			 0);
	want = fill_checked(&f);
	ck_assert_int_eq(zr_view_begin(s, 0, &st.view), 0);
	ck_assert_int_eq(zrfile_npy_plan(&g, form, &st, 1, batch, n),
			 0);
	ck_assert_int_eq(zr_store_delete(s, del, 3), 0);
	got = fill_checked(&g);
	ck_assert_uint_eq(g.total, f.total);
	ck_assert_mem_eq(got, want, f.total);
	/* The same plan without the view reads the store as it is now. */
	zrfile_npy_free(&g);
	ck_assert_int_eq(zrfile_npy_plan(&g, form, &st, 1, batch, n),
			 0);
	view = st.view;
	st.view = NULL;
	other = calloc(1, g.total + g.slack + 1);
	err = zrfile_npy_fill(&g, other);
	/* ZR_E_RANGE (indices past the 9 records left), -ESTALE, or other
	 * records' bytes */
	ck_assert(err || memcmp(other, want, f.total));
	zr_view_end(view);
	free(other);
	free(got);
	free(want);
	zrfile_npy_free(&g);
	zrfile_npy_free(&f);
	zr_store_close(s);
}
END_TEST

START_TEST(test_rows_in_pieces)
{
	zr_store *s = dense_store(ck_codecs[_i]);
	zrfile_source st = { .zs = s };
	zrfile_npy f;
	uint64_t row;
	char *whole, *pieces;

	ck_assert_int_eq(zrfile_npy_plan(&f, ZRFILE_STACK, &st, 1, batch,
					 NBATCH), 0);
	ck_assert_uint_eq(zrfile_npy_rows_at(&f, &row), 128);
	ck_assert_uint_eq(row, 24);
	whole = calloc(1, f.total);
	pieces = calloc(1, f.total);
	ck_assert_int_eq(zrfile_npy_fill(&f, whole), 0);
	for (uint64_t first = NBATCH; first > 0;) {
		uint64_t n = first >= 3 ? 3 : first;

		first -= n;
		ck_assert_int_eq(zrfile_npy_fill_rows(&f, pieces, first, n), 0);
	}
	ck_assert_mem_eq(whole, pieces, f.total);
	ck_assert_int_eq(zrfile_npy_fill_rows(&f, pieces, NBATCH - 1, 2),
			 -EINVAL);
	zrfile_npy_free(&f);
	ck_assert_int_eq(zrfile_npy_plan(&f, ZRFILE_INDICES, &st, 1, batch,
					 NBATCH), 0);
	ck_assert_uint_eq(zrfile_npy_rows_at(&f, &row), 0);
	ck_assert_int_eq(zrfile_npy_fill_rows(&f, pieces, 0, 1), -EINVAL);
	zrfile_npy_free(&f);
	free(whole);
	free(pieces);
	zr_store_close(s);
}
END_TEST

Suite *suite_npyfile(void)
{
	Suite *s = suite_create("npyfile");
	TCase *tc = tcase_create("npyfile");

	tcase_add_checked_fixture(tc, ck_dir_setup, ck_dir_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_ragged_files, 0, 3);
	tcase_add_loop_test(tc, test_dense_files, 0, 3);
	tcase_add_loop_test(tc, test_streams_in_one_npz, 0, 3);
	tcase_add_test(tc, test_refused_forms);
	tcase_add_loop_test(tc, test_known_shapes, 0, 3);
	tcase_add_loop_test(tc, test_parts_are_members, 0, 3);
	tcase_add_loop_test(tc, test_plan_from_gathered_records, 0, 3);
	tcase_add_loop_test(tc, test_rows_in_pieces, 0, 3);
	tcase_add_loop_test(tc, test_file_through_view, 0, 6);
	suite_add_tcase(s, tc);
	return s;
}
