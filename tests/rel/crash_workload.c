/*
 * crash_workload.c - the two ends of the crash-state explorer
 * (tests/rel/crashstates.py):
 *
 *   crash_workload run WORKLOAD STORE MARKERS   (under the iotrace shim)
 *   crash_workload check                        (store folders on stdin)
 *   crash_workload npy FIRST COUNT              (rows as .npy, on stdout)
 *   crash_workload mark MARKERS KIND [ID...]    (one marker line)
 *
 * run creates STORE and drives one workload through the library (append,
 * many, delete, compact, dict; bigcompact, of 2.5 MiB rows, for long
 * runs).  After every call that changes the store it appends one line to
 * MARKERS with one write(2), which the trace records in order with the
 * store's own writes: "P ids..." once the state is
 * promised durable (create, sync, delete, compact, close returned), "C
 * ids..." once it is committed only.  ids are the records in index order.
 *
 * npy and mark serve the same workloads run through a zrecordfs mount:
 * the rows of ids FIRST.. (as "seed", the mount workload's store, holds)
 * for a cp into append, and a marker after each step.
 *
 * check opens each folder read on stdin (read-write: an open may have to
 * finish an interrupted delete or compact) and prints one line per folder:
 * "OK ids...", "NOSTORE", or "ERR message".  Every record names itself in
 * its first 8 bytes and the rest follows from that name, so a record that
 * is not byte for byte one the workload wrote is an error.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "zrecord.h"

#define ROW 1500u            /* crosses 512-byte sectors */
#define BIG_ROW (5u << 19)   /* 2.5 MiB: moves of several journal chunks */
#define LINE_MAX_IDS 4096u

/* Record id's bytes (len of them): its id, then bytes that depend on it,
 * the first 1/4, 2/4 or 3/4 of them incompressible, so that compressed
 * records differ in size and a compact meets moves that overlap. */
static void gen(uint64_t id, uint8_t *row, size_t len)
{
	size_t noise = len / 4 * (1 + id % 3);
	uint64_t x = id * 0x9e3779b97f4a7c15ull + 1;

	for (unsigned i = 0; i < 8; i++)
		row[i] = (uint8_t)(id >> (8 * i));
	for (size_t j = 8; j < len; j++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		row[j] = j < noise ? (uint8_t)x : (uint8_t)(id * 31u + j / 7u);
	}
}

/* Appends " id" for every record to line, checking each record's bytes;
 * 0, or an error with the message in line. */
static int read_ids(zr_store *s, char *line, size_t cap)
{
	uint64_t n = zr_store_length(s);
	size_t len = zr_store_row_bytes(s), used = strlen(line);
	uint8_t *row = malloc(len), *want = malloc(len);
	int err = n > LINE_MAX_IDS ? -E2BIG : !row || !want ? -ENOMEM : 0;

	for (uint64_t i = 0; !err && i < n; i++) {
		uint64_t id = 0;

		err = zr_store_gather(s, &i, 1, row, len, NULL);
		for (unsigned b = 0; !err && b < 8; b++)
			id |= (uint64_t)row[b] << (8 * b);
		if (!err)
			gen(id, want, len);
		if (!err && memcmp(row, want, len)) {
			snprintf(line, cap, "ERR record %" PRIu64
				 " is not a record the workload wrote", i);
			err = ZR_E_CORRUPT;
			break;
		}
		if (!err)
			used += (size_t)snprintf(line + used, cap - used,
						 " %" PRIu64, id);
	}
	if (err && strncmp(line, "ERR", 3))
		snprintf(line, cap, "ERR %s: %s", zr_strerror(err),
			 zr_errmsg());
	free(row);
	free(want);
	return err;
}

static int mark(int fd, zr_store *s, const char *kind)
{
	static char line[LINE_MAX_IDS * 12];
	int err;

	snprintf(line, sizeof(line), "%s", kind);
	err = read_ids(s, line, sizeof(line));
	if (err)
		fprintf(stderr, "crash_workload: %s\n", line);
	strcat(line, "\n");
	if (!err && write(fd, line, strlen(line)) != (ssize_t)strlen(line))
		err = -errno;
	return err;
}

static uint64_t next_id;

static int append(zr_store *s, unsigned n)
{
	size_t len = zr_store_row_bytes(s);
	uint8_t *rows = malloc(n * len);
	int err = rows ? 0 : -ENOMEM;

	for (unsigned k = 0; !err && k < n; k++)
		gen(next_id++, rows + k * len, len);
	if (!err)
		err = zr_store_append_dense(s, rows, n);
	free(rows);
	return err;
}

/* One step of a workload: what it does, then the marker it earns. */
struct step {
	char op;      /* a: append n, s: sync, d: delete ids, c: compact */
	unsigned n;
	uint64_t del[4];
};

static int step_run(zr_store *s, const struct step *st, int mfd)
{
	int err;

	switch (st->op) {
	case 'a':
		err = append(s, st->n);
		return err ? err : mark(mfd, s, "C");
	case 's':
		err = zr_store_sync(s);
		break;
	case 'd':
		err = zr_store_delete(s, st->del, st->n);
		break;
	default:
		err = zr_store_compact(s, NULL, NULL);
		break;
	}
	return err ? err : mark(mfd, s, "P");
}

#define A(k) { 'a', k, { 0 } }
#define S { 's', 0, { 0 } }
#define D(k, ...) { 'd', k, { __VA_ARGS__ } }
#define C { 'c', 0, { 0 } }
#define END { 0, 0, { 0 } }

static const struct {
	const char *name;
	zr_codec codec;
	size_t row;
	struct step steps[16];
} workloads[] = {
	{ "append", ZR_CODEC_ZSTD, ROW, { A(5), S, A(3), S, A(4), END } },
	{ "many", ZR_CODEC_RAW, ROW,
	  { A(2), S, A(1), S, A(2), A(1), S, A(3), S, A(1), S, A(2), END } },
	{ "delete", ZR_CODEC_RAW, ROW,
	  { A(12), S, D(3, 3, 7, 11), D(1, 0), A(2), S, END } },
	{ "compact", ZR_CODEC_ZSTD, ROW,
	  { A(12), S, D(4, 0, 5, 8, 9), A(2), C, A(3), S, END } },
	{ "dict", ZR_CODEC_ZSTD_DICT, ROW, { A(6), S, A(2), END } },
	/* The store the mount workload starts from (crashstates.py). */
	{ "seed", ZR_CODEC_ZSTD, ROW, { A(4), S, END } },
	/* Long runs only: states of megabytes. */
	{ "bigcompact", ZR_CODEC_ZSTD, BIG_ROW,
	  { A(5), S, D(1, 0), C, END } },
};

static int run(const char *name, const char *path, const char *markers)
{
	zr_schema sc = { .ndim = 1 };
	uint8_t dict[4 * ROW];
	zr_store *s = NULL;
	size_t w = 0;
	int mfd, err;

	while (w < sizeof(workloads) / sizeof(*workloads) &&
	       strcmp(workloads[w].name, name))
		w++;
	if (w == sizeof(workloads) / sizeof(*workloads))
		return -EINVAL;
	for (unsigned k = 0; k < 4; k++)
		gen(1000 + k, dict + k * ROW, ROW);
	mfd = open(markers, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	if (mfd < 0)
		return -errno;
	sc.shape[0] = workloads[w].row;
	err = zr_dtype_parse("<u1", &sc.dtype);
	if (!err)
		err = zr_store_create(path, &sc, workloads[w].codec,
				      workloads[w].codec == ZR_CODEC_ZSTD_DICT
					      ? dict : NULL,
				      workloads[w].codec == ZR_CODEC_ZSTD_DICT
					      ? sizeof(dict) : 0, &s);
	if (!err)
		err = mark(mfd, s, "P");
	for (const struct step *st = workloads[w].steps; !err && st->op; st++)
		err = step_run(s, st, mfd);
	if (!err)
		err = zr_store_sync(s);
	if (!err)
		err = mark(mfd, s, "P");
	if (err)
		fprintf(stderr, "crash_workload: %s: %s\n", zr_strerror(err),
			zr_errmsg());
	if (zr_store_close(s) && !err)
		err = -EIO;
	close(mfd);
	return err;
}

static void check_one(const char *dir)
{
	static char line[LINE_MAX_IDS * 12];
	zr_store *s;
	int err = zr_store_open(dir, 0, &s);

	if (err == ZR_E_NOSTORE) {
		puts("NOSTORE");
		return;
	}
	if (err) {
		printf("ERR %s: %s\n", zr_strerror(err), zr_errmsg());
		return;
	}
	snprintf(line, sizeof(line), "OK");
	read_ids(s, line, sizeof(line));
	puts(line);
	zr_store_close(s);
}

static int check(void)
{
	char dir[4096];

	while (fgets(dir, sizeof(dir), stdin)) {
		dir[strcspn(dir, "\n")] = '\0';
		check_one(dir);
		fflush(stdout);
	}
	return 0;
}

/* NPY 1.0: magic, version, header length, a header padded to 64. */
static int npy(uint64_t first, uint64_t count)
{
	char head[128];
	uint8_t pre[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0 }, row[ROW];
	int n = snprintf(head, sizeof(head), "{'descr': '|u1', "
			 "'fortran_order': False, 'shape': (%" PRIu64
			 ", %u), }", count, ROW);

	while ((10 + n + 1) % 64)
		head[n++] = ' ';
	head[n++] = '\n';
	pre[8] = (uint8_t)n;
	pre[9] = (uint8_t)(n >> 8);
	fwrite(pre, 1, sizeof(pre), stdout);
	fwrite(head, 1, (size_t)n, stdout);
	for (uint64_t k = 0; k < count; k++) {
		gen(first + k, row, ROW);
		fwrite(row, 1, ROW, stdout);
	}
	return fflush(stdout) ? 1 : 0;
}

static int mark_line(const char *markers, int argc, char **argv)
{
	char line[LINE_MAX_IDS * 12];
	size_t n = 0;
	int fd = open(markers, O_WRONLY | O_CREAT | O_APPEND, 0644), ok;

	for (int i = 0; i < argc && n < sizeof(line) - 24; i++)
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%s",
				      i ? " " : "", argv[i]);
	line[n++] = '\n';
	ok = fd >= 0 && write(fd, line, n) == (ssize_t)n;
	if (fd >= 0)
		close(fd);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "npy"))
		return npy(strtoull(argv[2], NULL, 10),
			   strtoull(argv[3], NULL, 10));
	if (argc >= 4 && !strcmp(argv[1], "mark"))
		return mark_line(argv[2], argc - 3, argv + 3);
	if (argc == 5 && !strcmp(argv[1], "run"))
		return run(argv[2], argv[3], argv[4]) ? 1 : 0;
	if (argc == 2 && !strcmp(argv[1], "check"))
		return check();
	fprintf(stderr, "usage: crash_workload run WORKLOAD STORE MARKERS\n"
			"       crash_workload check\n"
			"       crash_workload npy FIRST COUNT\n"
			"       crash_workload mark MARKERS KIND [ID...]\n");
	return 2;
}
