/*
 * bench_gather.c - the library benchmark: writes one synthetic corpus as a
 * .npy file and as raw / zstd (/ zstd_dict) stores, then times random
 * batch gathers against the plain baseline, a single-thread memcpy gather
 * from the mmap'd .npy, and gathers through read views against plain ones
 * (a view held, one per batch, one begun before a delete).  One run
 * prints every table.
 *
 *   bench_gather [--quick] [--dir DIR] [--workload images|tokens|all]
 *                [--sigbus-guard]
 *
 * --sigbus-guard times the gathers with zr_sigbus_guard() on.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../tests/rmtree.h"
#include "bench.h"
#include "zrecord.h"

#define MIB (1024.0 * 1024.0)
#define GIB (MIB * 1024.0)
#define APPEND_CHUNK 64 /* records per zr_append_dense call */
#define MAX_TARGETS 4

typedef struct options {
	int quick;
	int guard;           /* --sigbus-guard */
	const char *dir;
	const char *workload;
	size_t plan_batches; /* batches in the random index plan */
	double min_s;        /* least timed seconds per backend  */
} options;

/* One way of storing the corpus, with what was measured on it. */
typedef struct target {
	char label[32];
	char path[4096];
	int is_npy;
	zr_codec codec;
	double write_s;
	uint64_t disk_bytes;
	zr_store *store;      /* reopened read-only for the gathers */
	bench_timing timing;
} target;

/* The corpus as the baseline sees it: the mmap'd .npy. */
typedef struct npy_map {
	const uint8_t *rows;
	size_t row_bytes;
	void *base;
	size_t len;
} npy_map;

static void die(const char *what, int rc)
{
	fprintf(stderr, "bench_gather: %s: %s: %s\n", what, zr_strerror(rc),
		zr_errmsg());
	exit(1);
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_gather [--quick] [--dir DIR] "
		"[--workload images|tokens|all] [--sigbus-guard]\n");
	exit(2);
}

static void parse_options(int argc, char **argv, options *o)
{
	o->quick = 0;
	o->guard = 0;
	o->dir = NULL;
	o->workload = "all";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			o->quick = 1;
		else if (!strcmp(argv[i], "--sigbus-guard"))
			o->guard = 1;
		else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			o->dir = argv[++i];
		else if (!strcmp(argv[i], "--workload") && i + 1 < argc)
			o->workload = argv[++i];
		else
			usage();
	}
	if (strcmp(o->workload, "images") && strcmp(o->workload, "tokens") &&
	    strcmp(o->workload, "all"))
		usage();
	o->plan_batches = o->quick ? 8 : 50;
	o->min_s = o->quick ? 0.1 : 1.0;
}

/* -- writing -------------------------------------------------------------- */

static void write_all(int fd, const void *buf, size_t len, const char *path)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die(path, n < 0 ? -errno : -EIO);
		p += n;
		len -= (size_t)n;
	}
}

static void write_npy(target *t, const bench_workload *w, const void *rows,
		      size_t row_bytes)
{
	uint64_t shape[4] = { w->count };
	uint8_t header[4096];
	size_t hlen;
	zr_dtype d;
	double t0 = bench_now();
	int fd, rc;

	memcpy(shape + 1, w->shape, w->ndim * sizeof(*shape));
	rc = zr_dtype_parse(w->dtype, &d);
	if (!rc)
		rc = zr_npy_write_header(&d, w->ndim + 1, shape, header,
					 sizeof(header), &hlen);
	if (rc)
		die("npy header", rc);
	fd = open(t->path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die(t->path, -errno);
	write_all(fd, header, hlen, t->path);
	write_all(fd, rows, w->count * row_bytes, t->path);
	close(fd);
	t->write_s = bench_now() - t0;
	t->disk_bytes = hlen + w->count * row_bytes;
}

/* Trains the balanced dictionary on the corpus (outside the timer, as the
 * seed's benchmark does: training is reusable input preparation). */
static void *train_dict(const void *rows, uint64_t count, size_t row_bytes,
			size_t *len)
{
	size_t cap = zr_dict_tier_dict_size(ZR_DICT_BALANCED);
	const void **samples = malloc(count * sizeof(*samples));
	size_t *sizes = malloc(count * sizeof(*sizes));
	void *dict = malloc(cap);
	double t0 = bench_now();
	int rc;

	if (!samples || !sizes || !dict)
		die("train dict", -ENOMEM);
	for (uint64_t i = 0; i < count; i++) {
		samples[i] = (const uint8_t *)rows + i * row_bytes;
		sizes[i] = row_bytes;
	}
	rc = zr_dict_train(samples, sizes, count, ZR_DICT_BALANCED, dict, cap,
			   len);
	if (rc)
		die("train dict", rc);
	printf("  dictionary (balanced, %zu B) trained in %.1f s (not part "
	       "of the write time)\n", *len, bench_now() - t0);
	free(samples);
	free(sizes);
	return dict;
}

static void schema_of(const bench_workload *w, zr_schema *s)
{
	int rc;

	memset(s, 0, sizeof(*s));
	rc = zr_dtype_parse(w->dtype, &s->dtype);
	if (rc)
		die("dtype", rc);
	s->ndim = w->ndim;
	memcpy(s->shape, w->shape, w->ndim * sizeof(*s->shape));
}

/* Times create + one append session + commit; the final sync at close is
 * outside the timer (as in the seed's benchmark). */
static void write_store(target *t, const bench_workload *w, const void *rows,
			size_t row_bytes, const void *dict, size_t dict_len)
{
	zr_schema schema;
	zr_append *a = NULL;
	zr_stats st;
	double t0 = bench_now();
	int rc;

	schema_of(w, &schema);
	rc = zr_store_create(t->path, &schema, t->codec, dict, dict_len,
			     &t->store);
	if (!rc)
		rc = zr_append_begin(t->store, &a);
	for (uint64_t i = 0; !rc && i < w->count; i += APPEND_CHUNK) {
		uint64_t n = w->count - i < APPEND_CHUNK ? w->count - i
							 : APPEND_CHUNK;

		rc = zr_append_dense(a, (const uint8_t *)rows + i * row_bytes,
				     n);
	}
	if (rc)
		zr_append_abort(a);
	else
		rc = zr_append_commit(a);
	t->write_s = bench_now() - t0;
	if (!rc)
		rc = zr_store_close(t->store);
	if (!rc)
		rc = zr_store_open(t->path, ZR_OPEN_RDONLY, &t->store);
	if (!rc)
		rc = zr_store_stats(t->store, &st);
	if (rc)
		die(t->path, rc);
	t->disk_bytes = st.data_bytes;
}

/* -- gathering ------------------------------------------------------------ */

static int gather_npy(void *ctx, const uint64_t *idx, size_t n, void *dst,
		      size_t cap)
{
	const npy_map *m = ctx;
	uint8_t *d = dst;

	(void)cap;
	for (size_t i = 0; i < n; i++)
		memcpy(d + i * m->row_bytes, m->rows + idx[i] * m->row_bytes,
		       m->row_bytes);
	return 0;
}

static int gather_store(void *ctx, const uint64_t *idx, size_t n, void *dst,
			size_t cap)
{
	return zr_store_gather(ctx, idx, n, dst, cap, NULL);
}

/* Maps the .npy, checks its header and touches every page once. */
static void map_npy(const char *path, npy_map *m)
{
	zr_npy_header h;
	struct stat st;
	volatile uint8_t sink = 0;
	int fd = open(path, O_RDONLY), rc;

	if (fd < 0 || fstat(fd, &st))
		die(path, -errno);
	m->len = (size_t)st.st_size;
	m->base = mmap(NULL, m->len, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m->base == MAP_FAILED)
		die(path, -errno);
	rc = zr_npy_parse(m->base, m->len, &h, NULL);
	if (rc)
		die(path, rc);
	m->rows = (const uint8_t *)m->base + h.header_len;
	m->row_bytes = (size_t)(h.data_len / h.shape[0]);
	for (size_t i = 0; i < m->len; i += 4096)
		sink ^= ((const uint8_t *)m->base)[i];
	(void)sink;
}

static void make_plan(uint64_t count, size_t batches, uint64_t *plan)
{
	zr_sampler cfg = { .mode = ZR_SAMPLER_IID, .seed = 2024,
			   .length = count, .batch_size = BENCH_BATCH };

	for (uint64_t b = 0; b < batches; b++) {
		int rc = zr_sampler_batch(&cfg, b, plan + b * BENCH_BATCH);

		if (rc)
			die("sampler", rc);
	}
}

/* Every planned batch of the store equals the baseline's bytes. */
static void verify_store(target *t, npy_map *m, const uint64_t *plan,
			 size_t batches, uint8_t *want, uint8_t *got,
			 size_t cap)
{
	for (size_t b = 0; b < batches; b++) {
		const uint64_t *idx = plan + b * BENCH_BATCH;
		int rc;

		gather_npy(m, idx, BENCH_BATCH, want, cap);
		memset(got, 0xa5, cap);
		rc = gather_store(t->store, idx, BENCH_BATCH, got, cap);
		if (rc)
			die(t->path, rc);
		if (memcmp(want, got, cap)) {
			fprintf(stderr, "bench_gather: %s: batch %zu differs "
				"from the .npy\n", t->label, b);
			exit(1);
		}
	}
}

/* -- views ---------------------------------------------------------------- */

/* A store and a view of it: a view held across batches, as an open file
 * or a loader's epoch holds one, or begun and ended around each batch. */
struct view_ctx {
	zr_store *s;
	zr_view *v;
};

static int gather_view(void *ctx, const uint64_t *idx, size_t n, void *dst,
		       size_t cap)
{
	const struct view_ctx *c = ctx;

	return zr_view_gather(c->v, idx, n, dst, cap, NULL);
}

static int gather_view_each(void *ctx, const uint64_t *idx, size_t n,
			    void *dst, size_t cap)
{
	const struct view_ctx *c = ctx;
	zr_view *v;
	int rc = zr_view_begin(c->s, 0, &v);

	if (!rc)
		rc = zr_view_gather(v, idx, n, dst, cap, NULL);
	zr_view_end(v);
	return rc;
}

static void time_one(bench_gather_fn fn, void *ctx, const target *t,
		     const options *o, const uint64_t *plan, uint8_t *got,
		     size_t cap, bench_timing *out)
{
	int rc = bench_time_plan(fn, ctx, plan, o->plan_batches, got, cap,
				 o->min_s, out);

	if (rc)
		die(t->label, rc);
}

/* time_one into best on round 0, and on later rounds if faster. */
static void time_best(bench_gather_fn fn, void *ctx, const target *t,
		      const options *o, const uint64_t *plan, uint8_t *got,
		      size_t cap, bench_timing *best, int round)
{
	bench_timing now;

	time_one(fn, ctx, t, o, plan, got, cap, &now);
	if (!round || now.median_s < best->median_s)
		*best = now;
}

static void print_view_row(const char *what, const bench_timing *g,
			   const bench_timing *base)
{
	printf("  %-46s %10.3f %8.3f %9.2fx\n", what, g->median_s * 1e3,
	       g->p95_s * 1e3, base->median_s / g->median_s);
}

/* The store's gathers plain (an implicit view per call) and through
 * views, timed in turns in this run on the same plan. */
static void time_views(const target *t, const options *o,
		       const uint64_t *plan, uint8_t *got, size_t cap)
{
	struct view_ctx c = { t->store, NULL };
	bench_timing plain, held, each;
	char what[64];
	int rc = zr_view_begin(t->store, 0, &c.v);

	if (rc)
		die(t->label, rc);
	/* Each twice, in turns, keeping its faster run: the pool's own
	 * judgement and the page cache favour whichever runs later. */
	for (int round = 0; round < 2; round++) {
		time_best(gather_store, t->store, t, o, plan, got, cap, &plain,
			  round);
		time_best(gather_view, &c, t, o, plan, got, cap, &held, round);
		time_best(gather_view_each, &c, t, o, plan, got, cap, &each,
			  round);
	}
	zr_view_end(c.v);
	snprintf(what, sizeof(what), "%s plain", t->label);
	print_view_row(what, &plain, &plain);
	snprintf(what, sizeof(what), "%s view held", t->label);
	print_view_row(what, &held, &plain);
	snprintf(what, sizeof(what), "%s view per batch", t->label);
	print_view_row(what, &each, &plain);
}

/* A view begun before a delete of every 100th record reads through the
 * delete log: timed against the same view before the delete, and its
 * batches checked against the .npy (the store is rewritten, so last). */
static void time_view_log(target *t, const options *o, npy_map *m,
			  const uint64_t *plan, uint8_t *want, uint8_t *got,
			  size_t cap, uint64_t count)
{
	struct view_ctx c = { NULL, NULL };
	bench_timing before, after;
	uint64_t ndel = count / 100 ? count / 100 : 1;
	uint64_t *del = malloc(ndel * sizeof(*del));
	char what[96];
	int rc = zr_store_close(t->store);

	if (!rc)
		rc = zr_store_open(t->path, 0, &t->store);
	c.s = t->store;
	if (!rc)
		rc = zr_view_begin(t->store, 0, &c.v);
	if (rc || !del)
		die(t->path, rc ? rc : -ENOMEM);
	for (uint64_t i = 0; i < ndel; i++)
		del[i] = i * 100 % count;
	time_best(gather_view, &c, t, o, plan, got, cap, &before, 0);
	time_best(gather_view, &c, t, o, plan, got, cap, &before, 1);
	rc = zr_store_delete(t->store, del, ndel);
	if (rc)
		die(t->path, rc);
	time_best(gather_view, &c, t, o, plan, got, cap, &after, 0);
	time_best(gather_view, &c, t, o, plan, got, cap, &after, 1);
	for (size_t b = 0; b < o->plan_batches; b++) {
		const uint64_t *idx = plan + b * BENCH_BATCH;

		gather_npy(m, idx, BENCH_BATCH, want, cap);
		rc = zr_view_gather(c.v, idx, BENCH_BATCH, got, cap, NULL);
		if (rc || memcmp(want, got, cap)) {
			fprintf(stderr, "bench_gather: %s: a view after a "
				"delete differs from the .npy (%d)\n",
				t->label, rc);
			exit(1);
		}
	}
	zr_view_end(c.v);
	snprintf(what, sizeof(what), "%s view, %" PRIu64 " deleted since (vs before)",
		 t->label, ndel);
	print_view_row(what, &after, &before);
	free(del);
}

/* -- reporting ------------------------------------------------------------ */

static void print_writes(const target *t, size_t n, double logical)
{
	printf("\n  %-22s %12s %12s %10s\n", "write", "MiB/s", "disk MiB",
	       "ratio");
	for (size_t i = 0; i < n; i++)
		printf("  %-22s %12.1f %12.1f %9.2fx\n", t[i].label,
		       logical / MIB / t[i].write_s, t[i].disk_bytes / MIB,
		       logical / (double)t[i].disk_bytes);
}

static void print_gathers(const target *t, size_t n, size_t row_bytes)
{
	double batch_bytes = (double)BENCH_BATCH * (double)row_bytes;

	printf("\n  %-22s %8s %9s %10s %8s %8s %10s\n", "gather (batch 256)",
	       "GiB/s", "krec/s", "median ms", "p95 ms", "batches",
	       "vs npy");
	for (size_t i = 0; i < n; i++) {
		const bench_timing *g = &t[i].timing;

		printf("  %-22s %8.2f %9.1f %10.3f %8.3f %8zu %9.2fx\n",
		       t[i].label, batch_bytes / GIB / g->median_s,
		       BENCH_BATCH / g->median_s / 1000.0, g->median_s * 1e3,
		       g->p95_s * 1e3, g->batches,
		       t[0].timing.median_s / g->median_s);
	}
	for (size_t i = 2; i < n; i++)
		printf("  %s vs zrecord raw: %.2fx\n", t[i].label,
		       t[1].timing.median_s / t[i].timing.median_s);
}

/* -- one workload --------------------------------------------------------- */

static size_t setup_targets(target *t, const bench_workload *w,
			    const char *dir)
{
	static const zr_codec codecs[] = { ZR_CODEC_RAW, ZR_CODEC_ZSTD,
					   ZR_CODEC_ZSTD_DICT };
	size_t n = 1;

	memset(t, 0, MAX_TARGETS * sizeof(*t));
	t[0].is_npy = 1;
	snprintf(t[0].label, sizeof(t[0].label), "npy (mmap, memcpy)");
	snprintf(t[0].path, sizeof(t[0].path), "%s/%s.npy", dir, w->name);
	for (size_t i = 0; i < 3; i++) {
		if (codecs[i] == ZR_CODEC_ZSTD_DICT && !w->with_dict)
			continue;
		t[n].codec = codecs[i];
		snprintf(t[n].label, sizeof(t[n].label), "zrecord %s",
			 zr_codec_name(codecs[i]));
		snprintf(t[n].path, sizeof(t[n].path), "%s/%s-%s", dir,
			 w->name, zr_codec_name(codecs[i]));
		n++;
	}
	return n;
}

static void build_all(target *t, size_t n, const bench_workload *w,
		      size_t row_bytes)
{
	size_t bytes = w->count * row_bytes, dict_len = 0;
	uint8_t *rows = malloc(bytes);
	void *dict = NULL;
	double t0 = bench_now();

	if (!rows)
		die("corpus", -ENOMEM);
	w->fill(0, w->count, rows);
	printf("  generated in %.1f s\n", bench_now() - t0);
	fflush(stdout);
	write_npy(&t[0], w, rows, row_bytes);
	for (size_t i = 1; i < n; i++) {
		if (t[i].codec == ZR_CODEC_ZSTD_DICT && !dict)
			dict = train_dict(rows, w->count, row_bytes, &dict_len);
		write_store(&t[i], w, rows, row_bytes,
			    t[i].codec == ZR_CODEC_ZSTD_DICT ? dict : NULL,
			    t[i].codec == ZR_CODEC_ZSTD_DICT ? dict_len : 0);
	}
	free(dict);
	free(rows);
}

static void run_workload(const bench_workload *w, const char *dir,
			 const options *o)
{
	target t[MAX_TARGETS];
	size_t n = setup_targets(t, w, dir), row_bytes, cap;
	uint64_t *plan = malloc(o->plan_batches * BENCH_BATCH *
				sizeof(*plan));
	uint8_t *want, *got;
	zr_schema schema;
	npy_map m;
	int rc;

	schema_of(w, &schema);
	rc = zr_schema_row_bytes(&schema, &row_bytes);
	if (rc || !plan)
		die("workload", rc ? rc : -ENOMEM);
	printf("\n== %s: %llu records of %s %zu B, %.1f MiB logical\n",
	       w->name, (unsigned long long)w->count, w->dtype, row_bytes,
	       w->count * row_bytes / MIB);
	build_all(t, n, w, row_bytes);
	print_writes(t, n, (double)(w->count * row_bytes));
	fflush(stdout);

	cap = BENCH_BATCH * row_bytes;
	want = malloc(cap);
	got = malloc(cap);
	if (!want || !got)
		die("buffers", -ENOMEM);
	map_npy(t[0].path, &m);
	make_plan(w->count, o->plan_batches, plan);
	for (size_t i = 1; i < n; i++)
		verify_store(&t[i], &m, plan, o->plan_batches, want, got, cap);
	for (size_t i = 0; i < n; i++) {
		rc = bench_time_plan(i ? gather_store : gather_npy,
				     i ? (void *)t[i].store : (void *)&m, plan,
				     o->plan_batches, got, cap, o->min_s,
				     &t[i].timing);
		if (rc)
			die(t[i].label, rc);
	}
	print_gathers(t, n, row_bytes);
	printf("\n  %-46s %10s %8s %10s\n", "gather through views (vs plain)", "median ms",
	       "p95 ms", "vs plain");
	for (size_t i = 1; i < n; i++)
		time_views(&t[i], o, plan, got, cap);
	time_view_log(&t[1], o, &m, plan, want, got, cap, w->count);
	fflush(stdout);

	munmap(m.base, m.len);
	for (size_t i = 1; i < n; i++)
		zr_store_close(t[i].store);
	for (size_t i = 0; i < n; i++)
		zr_rmtree(t[i].path);
	free(want);
	free(got);
	free(plan);
}

/* -- main ----------------------------------------------------------------- */

static void print_machine(const options *o)
{
	const char *env = getenv("ZR_THREADS");

	printf("machine: %ld online CPUs, zr_pool_lanes() = %u%s%s\n",
	       sysconf(_SC_NPROCESSORS_ONLN), zr_pool_lanes(),
	       env ? ", ZR_THREADS=" : "", env ? env : "");
	printf("timing: warm page cache; median / p95 of per-batch times; a "
	       "random plan of %zu batches repeated for >= %.1f s per "
	       "backend; GiB/s and krec/s from the median\n",
	       o->plan_batches, o->min_s);
}

static char *make_dir(const options *o, int *owned)
{
	const char *tmp = getenv("TMPDIR");
	char *dir;

	*owned = !o->dir;
	if (o->dir) {
		if (mkdir(o->dir, 0755) && errno != EEXIST)
			die(o->dir, -errno);
		return strdup(o->dir);
	}
	if (asprintf(&dir, "%s/zrbench.XXXXXX",
		     tmp && *tmp ? tmp : "/var/tmp") < 0 || !mkdtemp(dir))
		die("temporary folder", -errno);
	return dir;
}

int main(int argc, char **argv)
{
	bench_workload work[] = {
		{ "images", "|u1", 3, { 3, 224, 224 }, 2500, 0,
		  bench_fill_images },
		{ "tokens", "<i4", 1, { 512 }, 200000, 1, bench_fill_tokens },
	};
	options o;
	int owned, rc;
	char *dir;

	parse_options(argc, argv, &o);
	if (o.guard && (rc = zr_sigbus_guard()))
		die("zr_sigbus_guard", rc);
	if (o.quick) {
		work[0].count = 200;
		work[1].count = 2000;
	}
	dir = make_dir(&o, &owned);
	print_machine(&o);
	printf("folder: %s%s%s\n", dir, o.quick ? " (quick run)" : "",
	       o.guard ? " (SIGBUS guard on)" : "");
	for (size_t i = 0; i < sizeof(work) / sizeof(work[0]); i++)
		if (!strcmp(o.workload, "all") ||
		    !strcmp(o.workload, work[i].name))
			run_workload(&work[i], dir, &o);
	if (owned)
		zr_rmtree(dir);
	free(dir);
	return 0;
}
