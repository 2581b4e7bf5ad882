/*
 * run_opts.c - the run options' table (run_opts.h): each option's name,
 * how its value parses and where it goes in struct zrtree_run, its
 * --help row and, where "ARG takes LO to HI" would not say it, what it
 * takes.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encoder.h"
#include "run_opts.h"

enum kind {
	NUM,		/* a decimal in [lo, hi], into field              */
	SIZE,		/* a byte count of at least lo, with K, M or G    */
	SAMPLER,	/* sequential, iid or cyclic                      */
	START,		/* P or P@G: start and at_granule                 */
	SCHED,		/* skip= or grow= (lo: which), length=: sched     */
	IMAGE,		/* decode= (lo 0), augment= (lo 1): image         */
};

#define FIELD(f) .field = offsetof(struct zrtree_run, f), \
	.width = sizeof(((struct zrtree_run *)0)->f)

struct opt {
	const char *name;	/* "name=" */
	enum kind kind;
	uint64_t lo, hi;	/* NUM: bounds; SIZE: least; SCHED: which */
	size_t field, width;	/* where NUM and SIZE store               */
	const char *arg, *help;	/* --help: "-o ARG  HELP"                 */
	const char *takes;	/* a bad value's message, if not "lo to hi" */
};

static const struct opt table[] = {
	{ .name = "sampler=", .kind = SAMPLER, .arg = "sampler=MODE",
	  .help = "sequential|iid|cyclic (default iid)",
	  .takes = "sampler=MODE takes sequential, iid or cyclic" },
	{ .name = "batch_size=", .kind = NUM, .lo = 1, .hi = 1u << 24,
	  FIELD(bsize), .arg = "batch_size=B",
	  .help = "default batch size (default 256)" },
	{ .name = "rank=", .kind = NUM, .lo = 0, .hi = UINT32_MAX - 1,
	  FIELD(rank), .arg = "rank=R",
	  .help = "serve rank R's slice of a W-rank global batch",
	  .takes = "rank=R takes 0 to 4294967294, below world" },
	{ .name = "world=", .kind = NUM, .lo = 1, .hi = UINT32_MAX,
	  FIELD(world), .arg = "world=W",
	  .help = "the number of ranks (default 1)" },
	{ .name = "start=", .kind = START, .arg = "start=P[@G]",
	  .help = "a run that began at stream position P: step T\nreads "
	  "positions P + T*W*B + R*B .. (default 0);\nP@G: of a stream of "
	  "granule G (cyclic and iid\nbatches need it past 0)",
	  .takes = "start=P[@G] takes a position P (0 to 2^64-1), then "
	  "optionally @ and the granule G (1 to 2^64-1)" },
	{ .name = "granule=", .kind = NUM, .lo = 1, .hi = UINT64_MAX,
	  FIELD(granule), .arg = "granule=G",
	  .help = "the stream's cycle multiple (default W*B): keep\nthe "
	  "first run's W*B when W or B change" },
	{ .name = "skip=", .kind = SCHED, .lo = ZRCOMMON_SKIP,
	  .arg = "skip=A:B",
	  .help = "positions A..B-1 are not served (repeatable)",
	  .takes = "skip=A:B takes positions A < B, at most 65536 entries" },
	{ .name = "grow=", .kind = SCHED, .lo = ZRCOMMON_GROW,
	  .arg = "grow=P[:K]:N", .help = "the store (source K of a mixture) "
	  "has N records\nfrom its first cycle boundary at or after P\n"
	  "(repeatable)",
	  .takes = "grow=P:N or grow=P:K:N takes decimals, K below 1024, "
	  "at most 65536 entries" },
	{ .name = "length=", .kind = SCHED, .lo = 2, .arg = "length=N[:N...]",
	  .help = "the stream's lengths at position 0, one per source\n"
	  "(default: the lengths at each lookup)",
	  .takes = "length=N[:N...] takes up to 1024 decimals, one per "
	  "source" },
	{ .name = "max_batch_bytes=", .kind = SIZE, .lo = 4096,
	  FIELD(max_batch), .arg = "max_batch_bytes=N[K|M|G]",
	  .help = "largest batch file; a larger one is EFBIG at lookup\n"
	  "(default: 1G or 1/8 of RAM, whichever is smaller)",
	  .takes = "max_batch_bytes=N takes a byte count of 4096 or more, "
	  "with an optional K, M or G: 4K, 64M, 2G" },
	{ .name = "decode=", .kind = IMAGE, .lo = 0, .arg = "decode=SIZE",
	  .help = "an encoded-image store's batch .npy: its images\n"
	  "decoded, shorter side to SIZE, centre crop:\n(B, SIZE, SIZE, 3) "
	  "uint8",
	  .takes = "decode=SIZE takes 1 to 4096" },
	{ .name = "augment=", .kind = IMAGE, .lo = 1,
	  .arg = "augment=rrc[:MIN:MAX][+flip]",
	  .help = "the training transform instead: RandomResizedCrop\n"
	  "(to 224 unless decode=SIZE), flip; crops drawn\nfrom (seed, "
	  "position) as zrecord batch --augment",
	  .takes = "augment=A takes rrc, rrc:MIN:MAX (0 < MIN <= MAX <= 1) "
	  "and flip, joined by + (a comma ends the option)" },
};
#define NOPTS (sizeof(table) / sizeof(*table))

void zrtree_run_defaults(struct zrtree_run *r)
{
	memset(r, 0, sizeof(*r));
	r->mode = ZR_SAMPLER_IID;
	r->bsize = 256;
	r->world = 1;
	r->max_batch = zrfile_npy_default_max();
}

void zrtree_run_free(struct zrtree_run *r)
{
	zrcommon_schedule_free(&r->sched);
}

static const struct opt *find(const char *arg)
{
	for (size_t i = 0; i < NOPTS; i++)
		if (!strncmp(arg, table[i].name, strlen(table[i].name)))
			return &table[i];
	return NULL;
}

int zrtree_run_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

int zrtree_run_size(const char *s, uint64_t lo, uint64_t *out)
{
	static const char units[] = "KMG";
	size_t len = strlen(s);
	const char *u = len ? strchr(units, s[len - 1]) : NULL;
	unsigned shift = u && *u ? 10 * (unsigned)(u - units + 1) : 0;
	char num[24];
	uint64_t v;

	len -= shift != 0;
	if (len == 0 || len >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, len);
	num[len] = 0;
	if (zrtree_run_u64(num, 1, UINT64_MAX >> shift, &v) ||
	    (v << shift) < lo)
		return -EINVAL;
	*out = v << shift;
	return 0;
}

/* skip= (which ZRCOMMON_SKIP), grow= (ZRCOMMON_GROW) or length= into r's
 * schedule (schedule.h, applied by the batch planner as `zrecord batch
 * --skip --grow --length` applies them).  The schedule's own message is
 * dropped: the option's takes says it in the option's words. */
static int sched_option(struct zrtree_run *r, int which, const char *val)
{
	char msg[160];

	if (which == ZRCOMMON_SKIP || which == ZRCOMMON_GROW)
		return zrcommon_schedule_add(&r->sched, which, val, msg,
					     sizeof(msg));
	return zrcommon_schedule_lengths(&r->sched, val, ':', msg,
					 sizeof(msg));
}

/* decode=SIZE (which 0) or augment=A into r->image, by the parser the
 * command and loaderx use; the other option's part stays.  A mount's
 * batch needs a size: decode= takes no empty value.  augment= is parsed
 * as if a size were given (the options come in any order); whether
 * flip alone has one is zrtree_run_check's. */
static int image_option(struct zrtree_run *r, int which, const char *val)
{
	zr_image_opts o;

	if (zr_image_opts_parse(which ? "1" : val, which ? val : NULL, &o) ||
	    (!which && !o.size))
		return -EINVAL;
	if (!which) {
		r->image.size = o.size;
		return 0;
	}
	r->image.flags = o.flags;
	r->image.scale_min = o.scale_min;
	r->image.scale_max = o.scale_max;
	return 0;
}

/* The value of option t into r; nonzero when it is bad.  Fields are
 * uint64_t or uint32_t. */
static int take(struct zrtree_run *r, const struct opt *t, const char *val)
{
	char *p = (char *)r + t->field;
	uint64_t v;
	uint32_t v32;

	switch (t->kind) {
	case SAMPLER:
		return zr_sampler_mode_parse(val, &r->mode);
	case START:
		return zrcommon_schedule_start(val, &r->start, &r->at_granule);
	case SCHED:
		return sched_option(r, (int)t->lo, val);
	case IMAGE:
		return image_option(r, (int)t->lo, val);
	case NUM:
		if (zrtree_run_u64(val, t->lo, t->hi, &v))
			return -EINVAL;
		break;
	default: /* SIZE */
		if (zrtree_run_size(val, t->lo, &v))
			return -EINVAL;
		break;
	}
	v32 = (uint32_t)v;
	if (t->width == sizeof(v))
		memcpy(p, &v, sizeof(v));
	else
		memcpy(p, &v32, sizeof(v32));
	return 0;
}

int zrtree_run_parse(struct zrtree_run *r, const char *arg, char *msg,
		     size_t cap)
{
	const struct opt *t = find(arg);

	if (!t)
		return -ENOENT;
	if (!take(r, t, arg + strlen(t->name)))
		return 0;
	if (t->takes)
		snprintf(msg, cap, "%s", t->takes);
	else
		snprintf(msg, cap, "%s takes %llu to %llu", t->arg,
			 (unsigned long long)t->lo, (unsigned long long)t->hi);
	return -EINVAL;
}

int zrtree_run_check(struct zrtree_run *r, char *msg, size_t cap)
{
	if (r->rank >= r->world) {
		snprintf(msg, cap, "rank=%u needs world > %u", r->rank,
			 r->rank);
		return -EINVAL;
	}
	if (r->at_granule && r->granule && r->at_granule != r->granule) {
		snprintf(msg, cap, "start=P@%llu and granule=%llu differ",
			 (unsigned long long)r->at_granule,
			 (unsigned long long)r->granule);
		return -EINVAL;
	}
	if (r->at_granule)
		r->granule = r->at_granule;
	if (r->image.flags && !r->image.size &&
	    !(r->image.flags & ZR_IMAGE_RRC)) {
		snprintf(msg, cap, "augment=flip needs decode=SIZE or rrc");
		return -EINVAL;
	}
	return 0;
}

void zrtree_run_help_row(const char *arg, const char *help)
{
	const char *h = help;
	int w = printf("    -o %s", arg);

	do {
		size_t n = strcspn(h, "\n");

		if (w > 26)
			w = printf("\n") - 1;
		printf("%*s%.*s\n", 27 - w, "", (int)n, h);
		h += n + (h[n] == '\n');
		w = 0;
	} while (*h);
}

void zrtree_run_help(const char *name)
{
	for (size_t i = 0; i < NOPTS; i++)
		if (!strcmp(table[i].name, name))
			zrtree_run_help_row(table[i].arg, table[i].help);
}

void zrtree_run_help_all(void)
{
	for (size_t i = 0; i < NOPTS; i++)
		zrtree_run_help_row(table[i].arg, table[i].help);
}
