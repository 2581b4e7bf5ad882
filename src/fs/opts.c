/*
 * opts.c - parses `zrecordfs SRC MNT [-f] [-d] [-o opts]`.  One table
 * names every -o option zrecordfs knows: ours (parsed into struct
 * zrfs_opts; those of batch files, which `zrecord cat -o` takes too, by
 * the table of src/tree/run_opts.h), libfuse's and the kernel's (handed
 * on), and libfuse's that do not work here (refused, saying why).  The
 * same table prints --help, which tests/man_check.py holds against
 * zrecordfs(8).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "zrecord.h"
#include "mountinfo.h"
#include "fs.h"
#include "opts.h"
#include "run_opts.h"

enum kind {
	NUM,		/* a decimal in [lo, hi], into field              */
	SIZE,		/* a byte count of at least lo, with K, M or G    */
	RUN,		/* a run option: o->run (run_opts.h)              */
	THREADS,	/* a decimal in [lo, hi], into ZR_THREADS         */
	FLAG,		/* field = 1                                      */
	FOLLOW,		/* [=SECONDS]: ro, and refresh every SECONDS      */
	CACHE,		/* =DIR: o->cache                                 */
	PASS,		/* libfuse's or the kernel's: handed on           */
	REFUSED,	/* libfuse's, but not for zrecordfs               */
};

/* The options whose presence changes a default or contradicts another. */
enum seen { SEEN_NONE, SEEN_RW, SEEN_FSNAME, SEEN_SUBTYPE, SEEN_N };

#define FIELD(f) .field = offsetof(struct zrfs_opts, f), \
	.width = sizeof(((struct zrfs_opts *)0)->f)

struct opt {
	const char *name;	/* ending in '=': takes a value           */
	enum kind kind;
	uint64_t lo, hi;	/* NUM, THREADS: bounds; SIZE: least     */
	size_t field, width;	/* where NUM, SIZE and FLAG store         */
	int pass;		/* ours, but libfuse gets it too          */
	enum seen seen;
	/* --help: "-o ARG  HELP" (HELP may hold newlines); a PASS option
	 * without ARG is only named in the list of options handed on, with
	 * HELP as a remark; REFUSED: HELP says why */
	const char *arg, *help;
	const char *takes;	/* a bad value's message, if not "lo to hi" */
};

static const struct opt table[] = {
	{ .name = "ro", .kind = FLAG, FIELD(ro), .pass = 1, .arg = "ro",
	  .help = "read-only: stores are shared with readers, no writer" },
	/* RUN: parsed, and their --help rows printed, by run_opts.c; named
	 * here for their place in --help */
	{ .name = "sampler=", .kind = RUN },
	{ .name = "batch_size=", .kind = RUN },
	{ .name = "threads=", .kind = THREADS, .lo = 0, .hi = 4096,
	  .arg = "threads=N", .help = "libzrecord worker threads (sets "
	  "ZR_THREADS;\n0: none, each request's thread gathers alone)" },
	{ .name = "rank=", .kind = RUN },
	{ .name = "world=", .kind = RUN },
	{ .name = "start=", .kind = RUN },
	{ .name = "granule=", .kind = RUN },
	{ .name = "skip=", .kind = RUN },
	{ .name = "grow=", .kind = RUN },
	{ .name = "length=", .kind = RUN },
	{ .name = "max_batch_bytes=", .kind = RUN },
	{ .name = "decode=", .kind = RUN },
	{ .name = "augment=", .kind = RUN },
	{ .name = "prefetch=", .kind = NUM, .lo = 0, .hi = 16,
	  FIELD(prefetch), .arg = "prefetch=D",
	  .help = "after two consecutive steps of a batch sequence,\n"
	  "gather the next D ahead (default 2; 0: off)",
	  .takes = "prefetch=D takes 0 (off) to 16" },
	{ .name = "prefetch_mem=", .kind = SIZE, .lo = 4096,
	  FIELD(prefetch_mem), .arg = "prefetch_mem=N[K|M|G]",
	  .help = "their memory at most (default: 1G or 1/16 of RAM)",
	  .takes = "prefetch_mem=N takes a byte count of 4096 or more, "
	  "with an optional K, M or G: 64M, 2G" },
	{ .name = "direct_batches", .kind = FLAG, FIELD(direct_batches),
	  .arg = "direct_batches", .help = "batch files bypass the page "
	  "cache (direct_io):\nfaster single reads, no mmap" },
	{ .name = "follow", .kind = FOLLOW, .arg = "follow[=SECONDS]",
	  .help = "read-only, and show what a writer elsewhere syncs:\n"
	  "stores are refreshed every SECONDS (default 1)" },
	{ .name = "follow=", .kind = FOLLOW,
	  .takes = "follow=SECONDS takes 0.01 to 3600" },
	{ .name = "cache=", .kind = CACHE, .arg = "cache=DIR|off",
	  .help = "the host cache of S3 reads, shared by every\n"
	  "process on the host (default: ZR_CACHE, else\n"
	  "/var/cache/zrecord for root, ~/.cache/zrecord)" },
	{ .name = "cache_size=", .kind = SIZE, .lo = (uint64_t)64 << 20,
	  FIELD(cache_size), .arg = "cache_size=N[K|M|G]",
	  .help = "its size at most (default: ZR_CACHE_SIZE, else 8G)",
	  .takes = "cache_size=N takes a byte count of 64M or more, "
	  "with an optional K, M or G: 64G" },
	{ .name = "max_threads=", .kind = PASS, .arg = "max_threads=N",
	  .help = "threads serving requests (default 10)" },
	{ .name = "allow_other", .kind = PASS },
	{ .name = "allow_root", .kind = PASS },
	{ .name = "auto_unmount", .kind = PASS },
	{ .name = "default_permissions", .kind = PASS, .help = "always on" },
	{ .name = "fsname=", .kind = PASS, .seen = SEEN_FSNAME },
	{ .name = "subtype=", .kind = PASS, .seen = SEEN_SUBTYPE },
	{ .name = "max_idle_threads=", .kind = PASS },
	{ .name = "clone_fd", .kind = PASS },
	{ .name = "debug", .kind = PASS },
	{ .name = "rw", .kind = PASS, .seen = SEEN_RW },
	{ .name = "dev", .kind = PASS }, { .name = "nodev", .kind = PASS },
	{ .name = "suid", .kind = PASS }, { .name = "nosuid", .kind = PASS },
	{ .name = "exec", .kind = PASS }, { .name = "noexec", .kind = PASS },
	{ .name = "atime", .kind = PASS }, { .name = "noatime", .kind = PASS },
	{ .name = "sync", .kind = PASS }, { .name = "async", .kind = PASS },
	{ .name = "dirsync", .kind = PASS },
	{ .name = "max_read=", .kind = REFUSED,
	  .help = "zrecordfs sets the read size itself" },
	{ .name = "blksize=", .kind = REFUSED,
	  .help = "only block-device (fuseblk) mounts take it" },
	{ .name = "kernel_cache", .kind = REFUSED,
	  .help = "only the high-level libfuse API has it" },
	{ .name = "auto_cache", .kind = REFUSED,
	  .help = "only the high-level libfuse API has it" },
};
#define NOPTS (sizeof(table) / sizeof(*table))

/* The command-line flags libfuse's fuse_parse_cmdline() takes. */
static const char *const fuse_flags[] = {
	"-f", "-d", "-s", "-h", "--help", "-V", "--version",
};

/* What the option callback learns beyond struct zrfs_opts. */
struct parse_ctx {
	struct zrfs_opts *o;
	int bad;
	int seen[SEEN_N];
	int nargs;		/* non-option arguments seen: SRC, MNT    */
};

static const char usage_text[] =
	"usage: %s SRC MOUNTPOINT [-f] [-d] [-o opt[,opt...]]\n\n"
	"Serves every store under SRC as virtual files.  SRC may be an S3\n"
	"URL (s3://BUCKET/PREFIX): that store, or every store under the\n"
	"prefix (listed, at most 100000 keys), served read-only; -o follow\n"
	"takes up the versions zrecord push publishes there.\n\n"
	"zrecordfs options:\n";
static const char usage_tail[] =
	"MOUNTPOINT must be an existing folder, and /dev/fuse must open "
	"read-write.\n\n"
	"Unmounting: umount.fuse.zrecordfs MOUNTPOINT (what umount(8) runs "
	"for a\nmount made by mount -t zrecordfs) returns once every store "
	"is closed;\nfusermount3 -u returns before: then use zrecord --wait.  "
	"A daemon waits\nfor the one that served MOUNTPOINT before to close "
	"its stores.\n\n";

static void usage(const char *prog)
{
	const char *sep = "";
	int col = 51;

	printf(usage_text, prog);
	for (size_t i = 0; i < NOPTS; i++)
		if (table[i].kind == RUN)
			zrtree_run_help(table[i].name);
		else if (table[i].arg)
			zrtree_run_help_row(table[i].arg, table[i].help);
	printf("\nOther -o options must be libfuse or mount options:");
	for (size_t i = 0; i < NOPTS; i++) {
		const struct opt *t = &table[i];
		char item[64];
		int n;

		if (t->kind != PASS || t->arg)
			continue;
		n = snprintf(item, sizeof(item), "%s%s%s%s", t->name,
			     t->help ? " (" : "", t->help ? t->help : "",
			     t->help ? ")" : "");
		col += printf("%s", sep);
		if (col + n > 78)
			col = printf("\n") - 1;
		else
			col += printf(" ");
		col += printf("%s", item);
		sep = ",";
	}
	printf("; anything else is refused.\n%s", usage_tail);
	fuse_cmdline_help();
	fuse_lowlevel_help();
}

/* SECONDS of follow=: 0.01 to 3600. */
static int parse_seconds(const char *s, unsigned *ms)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (*s < '0' || *s > '9' || errno || *end || !(v >= 0.01 && v <= 3600))
		return -EINVAL;
	*ms = (unsigned)(v * 1000 + 0.5);
	return 0;
}

/* NUM, SIZE and FLAG fields are uint64_t, or 4 bytes: uint32_t or an int
 * flag, which hold the same bytes for the values they take. */
static void store(struct zrfs_opts *o, const struct opt *t, uint64_t v)
{
	char *p = (char *)o + t->field;
	uint32_t v32 = (uint32_t)v;

	if (t->width == sizeof(v))
		memcpy(p, &v, sizeof(v));
	else
		memcpy(p, &v32, sizeof(v32));
}

/* One of our options, or a value for it; 0 if it is good. */
static int take(struct parse_ctx *c, const struct opt *t, const char *arg,
		struct fuse_args *outargs)
{
	const char *val = strchr(arg, '=') ? strchr(arg, '=') + 1 : NULL;
	struct zrfs_opts *o = c->o;
	uint64_t v = 1;

	switch (t->kind) {
	case NUM:
	case THREADS:
		if (zrtree_run_u64(val, t->lo, t->hi, &v))
			return -1;
		if (t->kind == NUM)
			store(o, t, v);
		/* The pool reads ZR_THREADS when it starts, after this. */
		return t->kind == THREADS ? setenv("ZR_THREADS", val, 1) : 0;
	case SIZE:
		if (zrtree_run_size(val, t->lo, &v))
			return -1;
		store(o, t, v);
		return 0;
	case FLAG:
		store(o, t, 1);
		return 0;
	case CACHE:
		free(o->cache);
		o->cache = strdup(val);
		return o->cache ? 0 : -2;
	default: /* FOLLOW */
		o->follow_ms = 1000;
		if (val && parse_seconds(val, &o->follow_ms))
			return -1;
		o->ro = 1;
		return fuse_opt_add_arg(outargs, "-oro") ? -2 : 0;
	}
}

/* name matches arg: exactly, or as a prefix if it ends in '='. */
static int opt_is(const char *arg, const char *name)
{
	size_t len = strlen(name);

	return name[len - 1] == '=' ? !strncmp(arg, name, len) :
	       !strcmp(arg, name);
}

static int refuse(struct parse_ctx *c, const char *fmt, const char *arg,
		  const char *why)
{
	fprintf(stderr, fmt, arg, why);
	c->bad = 1;
	return -1;
}

/* A -o option (or a flag, arg starting with '-'): 1 to hand it to
 * libfuse, 0 when it is ours, -1 when it is refused. */
static int option(struct parse_ctx *c, const char *arg,
		  struct fuse_args *outargs)
{
	const struct opt *t = NULL;
	char range[160];
	int err;

	for (size_t i = 0; arg[0] == '-' && i < sizeof(fuse_flags) /
	     sizeof(*fuse_flags); i++)
		if (!strcmp(arg, fuse_flags[i]))
			return 1;
	for (size_t i = 0; arg[0] != '-' && !t && i < NOPTS; i++)
		if (opt_is(arg, table[i].name))
			t = &table[i];
	if (!t)
		return refuse(c, "zrecordfs: unknown option '%s'%s\n", arg,
			      " (see zrecordfs --help)");
	if (t->kind == REFUSED)
		return refuse(c, "zrecordfs: option '%s' is not supported: "
			      "%s\n", arg, t->help);
	c->seen[t->seen] = 1;
	if (t->kind == PASS)
		return 1;
	if (t->kind == RUN) {
		if (zrtree_run_parse(&c->o->run, arg, range, sizeof(range)))
			return refuse(c, "zrecordfs: bad option '%s' (%s)\n",
				      arg, range);
		return 0;
	}
	err = take(c, t, arg, outargs);
	if (err == -1) {
		snprintf(range, sizeof(range), "%s takes %llu to %llu", t->arg,
			 (unsigned long long)t->lo, (unsigned long long)t->hi);
		return refuse(c, "zrecordfs: bad option '%s' (%s)\n", arg,
			      t->takes ? t->takes : range);
	}
	return err ? -1 : t->pass;
}

/* The mount point must be a folder already: libfuse would mount over a
 * regular file as well, and name a missing one without naming us. */
static int check_mountpoint(struct parse_ctx *c, const char *mnt)
{
	struct stat st;

	if (stat(mnt, &st))
		return refuse(c, "zrecordfs: mount point %s: %s\n", mnt,
			      strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return refuse(c, "zrecordfs: mount point %s: %s\n", mnt,
			      "not a folder");
	return 1; /* libfuse's fuse_parse_cmdline() takes it */
}

static int opt_proc(void *data, const char *arg, int key,
		    struct fuse_args *outargs)
{
	struct parse_ctx *c = data;

	if (key != FUSE_OPT_KEY_NONOPT)
		return option(c, arg, outargs);
	/* SRC, then the mount point; nothing else. */
	switch (c->nargs++) {
	case 0:
		c->o->src = strdup(arg);
		return c->o->src ? 0 : -1;
	case 1:
		return check_mountpoint(c, arg);
	default:
		return refuse(c, "zrecordfs: unexpected argument '%s'%s\n", arg,
			      " (usage: zrecordfs SRC MOUNTPOINT [-o opts])");
	}
}

/* A URL SRC (s3://BUCKET/PREFIX) is a store or a prefix of stores the
 * library reads where they lie, read-only: the mount is ro; -o follow
 * takes up the versions pushed there (vfs_s3.c). */
static int url_src(struct zrfs_opts *o, const int *seen)
{
	if (seen[SEEN_RW]) {
		fprintf(stderr, "zrecordfs: SRC %s is a URL: an S3 store is "
			"served read-only, without -o rw\n", o->src);
		return -1;
	}
	o->ro = 1;
	return fuse_opt_add_arg(&o->args, "-oro") ? -1 : 0;
}

/* A cache folder under the mount point would be hidden by the mount, and
 * each block the daemon keeps a request to itself: refused. */
static int cache_outside(const struct zrfs_opts *o)
{
	char *mnt = realpath(o->mountpoint, NULL);
	zr_cache_info info;
	size_t n = mnt ? strlen(mnt) : 0;
	int inside;

	zr_cache_status(&info);
	inside = mnt && info.dir[0] && !strncmp(info.dir, mnt, n) &&
		 (info.dir[n] == '/' || !info.dir[n] || n == 1);
	if (inside) {
		fprintf(stderr, "zrecordfs: cache folder %s is inside the "
			"mount point %s: give one outside it (-o cache=DIR)\n",
			info.dir, mnt);
		zr_cache_set("off", 0);
	}
	free(mnt);
	return inside ? -1 : 0;
}

/* The host cache -o cache and cache_size choose (zr_cache_set), before
 * the daemon forks so that a folder it cannot use stops the mount on the
 * terminal.  Without them a URL SRC takes the default now, and only a
 * warning if that cannot be used: its reads then go uncached. */
static int cache_setup(const struct zrfs_opts *o)
{
	int given = o->cache || o->cache_size;

	if (!given && !zr_path_is_url(o->src))
		return 0; /* no S3 reads but a mixture's: the default then */
	if (zr_cache_set(o->cache, o->cache_size) == 0)
		return cache_outside(o);
	fprintf(stderr, "zrecordfs: %s%s\n", given ? "" : "warning: S3 "
		"reads go uncached: ", zr_errmsg());
	return given ? -1 : 0;
}

/* SRC must be an existing folder or a URL; a folder is kept absolute
 * because a daemon changes its working directory. */
static int resolve_src(struct zrfs_opts *o, const int *seen)
{
	char *abs;
	struct stat st;

	if (!o->src) {
		fprintf(stderr, "zrecordfs: missing SRC (usage: zrecordfs SRC "
			"MOUNTPOINT [-o opts])\n");
		return -1;
	}
	if (zr_path_is_url(o->src))
		return url_src(o, seen);
	abs = realpath(o->src, NULL);
	if (!abs || stat(abs, &st) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "zrecordfs: SRC %s: %s\n", o->src,
			abs ? "not a folder" : strerror(errno));
		free(abs);
		return -1;
	}
	free(o->src);
	o->src = abs;
	return 0;
}

/* fsname=SRC and subtype=zrecordfs unless given; default_permissions so
 * ordinary Unix permissions apply even with allow_other. */
static int add_defaults(struct parse_ctx *c)
{
	struct fuse_args *a = &c->o->args;
	char *opt = NULL, *full = NULL;
	int err = 0;

	if (!c->seen[SEEN_FSNAME]) {
		err = fuse_opt_add_opt_escaped(&opt, c->o->src) || !opt ||
		      asprintf(&full, "-ofsname=%s", opt) < 0 ||
		      fuse_opt_add_arg(a, full);
		free(full);
		free(opt);
	}
	if (!err && !c->seen[SEEN_SUBTYPE])
		err = fuse_opt_add_arg(a, "-osubtype=zrecordfs");
	if (!err)
		err = fuse_opt_add_arg(a, "-odefault_permissions");
	return err ? -1 : 0;
}

/* What fuse_parse_cmdline() found, and the checks across options. */
static int finish(struct parse_ctx *c, struct fuse_cmdline_opts *cmd)
{
	struct zrfs_opts *o = c->o;
	char why[96];

	o->mountpoint = cmd->mountpoint;
	o->foreground = cmd->foreground;
	o->debug = cmd->debug;
	o->single = cmd->singlethread;
	o->clone_fd = cmd->clone_fd;
	o->max_idle_threads = cmd->max_idle_threads;
	o->max_threads = cmd->max_threads;
	if (!o->mountpoint) {
		fprintf(stderr, "zrecordfs: missing MOUNTPOINT\n");
		return -1;
	}
	if (zrtree_run_check(&o->run, why, sizeof(why))) {
		fprintf(stderr, "zrecordfs: %s\n", why);
		return -1;
	}
	if (c->seen[SEEN_RW] && o->ro) {
		fprintf(stderr, "zrecordfs: -o rw contradicts -o %s: give one "
			"of them\n", o->follow_ms ? "follow" : "ro");
		return -1;
	}
	if (zrmount_live_here(o->mountpoint))
		return -1;
	return resolve_src(o, c->seen) || add_defaults(c) ||
	       cache_setup(o) ? -1 : 0;
}

int zrfs_opts_parse(int argc, char **argv, struct zrfs_opts *o)
{
	static const struct fuse_opt none[] = { FUSE_OPT_END };
	struct parse_ctx c = { .o = o };
	struct fuse_cmdline_opts cmd;

	memset(o, 0, sizeof(*o));
	zrtree_run_defaults(&o->run);
	o->prefetch = 2;
	o->args = (struct fuse_args)FUSE_ARGS_INIT(argc, argv);
	if (fuse_opt_parse(&o->args, &c, none, opt_proc) || c.bad)
		return -1;
	if (fuse_parse_cmdline(&o->args, &cmd))
		return -1;
	if (cmd.show_help || cmd.show_version) {
		if (cmd.show_help)
			usage(argv[0]);
		else
			printf("zrecordfs %s, libfuse %s\n", PACKAGE_VERSION,
			       fuse_pkgversion());
		free(cmd.mountpoint);
		return 1;
	}
	return finish(&c, &cmd);
}

void zrfs_opts_free(struct zrfs_opts *o)
{
	free(o->cache);
	free(o->src);
	free(o->mountpoint);
	zrtree_run_free(&o->run);
	fuse_opt_free_args(&o->args);
	o->src = o->mountpoint = NULL;
}
