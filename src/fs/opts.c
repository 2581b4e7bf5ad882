/*
 * opts.c - parses `zrecordfs SRC MNT [-f] [-d] [-o opts]`: our own -o
 * options are taken out, everything else goes to libfuse unchanged.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npy_file.h"
#include "opts.h"

enum {
	KEY_SAMPLER,
	KEY_BSIZE,
	KEY_THREADS,
	KEY_RANK,
	KEY_WORLD,
	KEY_START,
	KEY_GRANULE,
	KEY_MAXBATCH,
	KEY_PREFETCH,
	KEY_PFMEM,
	KEY_RO,
	KEY_DIRECT,
	KEY_FOLLOW,
	KEY_FSNAME,
	KEY_SUBTYPE,
};

/* What the option callback learns beyond struct zrfs_opts. */
struct parse_ctx {
	struct zrfs_opts *o;
	int bad;
	int fsname, subtype;
	int rw;			/* -o rw seen: ro or follow contradict it */
	int nargs;		/* non-option arguments seen: SRC, MNT    */
};

/*
 * The libfuse and kernel options zrecordfs passes on.  libfuse would name
 * an unknown one without naming us, so anything not listed here is
 * refused by us.  A name ending in '=' takes a value.
 */
static const char *const fuse_opts[] = {
	"allow_other", "allow_root", "auto_unmount", "default_permissions",
	"fsname=", "subtype=", "max_threads=", "max_idle_threads=",
	"clone_fd", "debug", "rw", "dev", "nodev", "suid", "nosuid", "exec",
	"noexec", "atime", "noatime", "sync", "async", "dirsync",
};

/* Known to libfuse, but they do not work with zrecordfs: why not. */
static const struct {
	const char *name, *why;
} refused_opts[] = {
	{ "max_read=", "zrecordfs sets the read size itself" },
	{ "blksize=", "only block-device (fuseblk) mounts take it" },
	{ "kernel_cache", "only the high-level libfuse API has it" },
	{ "auto_cache", "only the high-level libfuse API has it" },
};

/* The command-line flags libfuse's fuse_parse_cmdline() takes. */
static const char *const fuse_flags[] = {
	"-f", "-d", "-s", "-h", "--help", "-V", "--version",
};

static const struct fuse_opt spec[] = {
	FUSE_OPT_KEY("sampler=", KEY_SAMPLER),
	FUSE_OPT_KEY("batch_size=", KEY_BSIZE),
	FUSE_OPT_KEY("threads=", KEY_THREADS),
	FUSE_OPT_KEY("rank=", KEY_RANK),
	FUSE_OPT_KEY("world=", KEY_WORLD),
	FUSE_OPT_KEY("start=", KEY_START),
	FUSE_OPT_KEY("granule=", KEY_GRANULE),
	FUSE_OPT_KEY("max_batch_bytes=", KEY_MAXBATCH),
	FUSE_OPT_KEY("prefetch=", KEY_PREFETCH),
	FUSE_OPT_KEY("prefetch_mem=", KEY_PFMEM),
	FUSE_OPT_KEY("ro", KEY_RO),
	FUSE_OPT_KEY("direct_batches", KEY_DIRECT),
	FUSE_OPT_KEY("follow", KEY_FOLLOW),
	FUSE_OPT_KEY("follow=", KEY_FOLLOW),
	FUSE_OPT_KEY("fsname=", KEY_FSNAME),
	FUSE_OPT_KEY("subtype=", KEY_SUBTYPE),
	FUSE_OPT_END
};

static void usage(const char *prog)
{
	printf("usage: %s SRC MOUNTPOINT [-f] [-d] [-o opt[,opt...]]\n"
	       "\n"
	       "Serves every store under SRC as virtual files.\n"
	       "\n"
	       "zrecordfs options:\n"
	       "    -o ro                  read-only: stores are shared with "
	       "readers, no writer\n"
	       "    -o sampler=MODE        sequential|iid|cyclic "
	       "(default iid)\n"
	       "    -o batch_size=B        default batch size (default 256)\n"
	       "    -o threads=N           libzrecord worker threads (sets "
	       "ZR_THREADS;\n"
	       "                           0: none, each request's thread "
	       "gathers alone)\n"
	       "    -o rank=R,world=W      serve rank R's slice of a W-rank "
	       "global batch\n"
	       "    -o start=P             a run that began at stream position "
	       "P: step T\n"
	       "                           reads positions P + T*W*B + R*B .. "
	       "(default 0)\n"
	       "    -o granule=G           the stream's cycle multiple (default "
	       "W*B): keep\n"
	       "                           the first run's W*B when W or B "
	       "change\n"
	       "    -o max_batch_bytes=N[K|M|G]\n"
	       "                           largest batch file; a larger one "
	       "is EFBIG at lookup\n"
	       "                           (default: 1G or 1/8 of RAM, "
	       "whichever is smaller)\n"
	       "    -o prefetch=D          after two consecutive steps of a "
	       "batch sequence,\n"
	       "                           gather the next D ahead (default "
	       "2; 0: off)\n"
	       "    -o prefetch_mem=N[K|M|G]\n"
	       "                           their memory at most (default: 1G "
	       "or 1/16 of RAM)\n"
	       "    -o direct_batches      batch files bypass the page cache "
	       "(direct_io):\n"
	       "                           faster single reads, no mmap\n"
	       "    -o follow[=SECONDS]    read-only, and show what a writer "
	       "elsewhere syncs:\n"
	       "                           stores are refreshed every SECONDS "
	       "(default 1)\n"
	       "    -o max_threads=N       threads serving requests (default "
	       "10)\n"
	       "\n"
	       "Other -o options must be libfuse or mount options: "
	       "allow_other, allow_root,\n"
	       "auto_unmount, default_permissions (always on), fsname=, "
	       "subtype=,\n"
	       "max_idle_threads=, clone_fd, debug, rw, [no]dev, [no]suid, "
	       "[no]exec,\n"
	       "[no]atime, sync, async, dirsync; anything else is refused.\n"
	       "MOUNTPOINT must be an existing folder, and /dev/fuse must "
	       "open read-write.\n"
	       "\n"
	       "Unmounting: umount.fuse.zrecordfs MOUNTPOINT (what umount(8) "
	       "runs for a\n"
	       "mount made by mount -t zrecordfs) returns once every store is "
	       "closed;\n"
	       "fusermount3 -u returns before: then use zrecord --wait.  A "
	       "daemon waits\n"
	       "for the one that served MOUNTPOINT before to close its "
	       "stores.\n"
	       "\n", prog);
	fuse_cmdline_help();
	fuse_lowlevel_help();
}

/* A whole decimal u64 in [lo, hi]. */
static int parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
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

/* A byte count of at least 4 KiB, with an optional binary K, M or G. */
static int parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "KMG";
	size_t len = strlen(s);
	const char *u = len ? strchr(units, s[len - 1]) : NULL;
	unsigned shift = u && *u ? 10 * (unsigned)(u - units + 1) : 0;
	char num[24];
	uint64_t v;

	if (shift)
		len--;
	if (len == 0 || len >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, len);
	num[len] = 0;
	if (parse_u64(num, 1, UINT64_MAX >> shift, &v))
		return -EINVAL;
	v <<= shift;
	if (v < 4096)
		return -EINVAL;
	*out = v;
	return 0;
}

/* What each of our valued options takes, for the message of a bad one. */
static const char *valid_values(int key)
{
	switch (key) {
	case KEY_SAMPLER:
		return "sampler=MODE takes sequential, iid or cyclic";
	case KEY_BSIZE:
		return "batch_size=B takes 1 to 16777216";
	case KEY_THREADS:
		return "threads=N takes 0 to 4096";
	case KEY_RANK:
		return "rank=R takes 0 to 4294967294, below world";
	case KEY_WORLD:
		return "world=W takes 1 to 4294967295";
	case KEY_PREFETCH:
		return "prefetch=D takes 0 (off) to 16";
	case KEY_PFMEM:
		return "prefetch_mem=N takes a byte count of 4096 or more, "
		       "with an optional K, M or G: 64M, 2G";
	default:
		return "max_batch_bytes=N takes a byte count of 4096 or more, "
		       "with an optional K, M or G: 4K, 64M, 2G";
	}
}

static int own_option(struct parse_ctx *c, const char *arg, int key)
{
	const char *val = strchr(arg, '=') + 1;
	uint64_t v;

	switch (key) {
	case KEY_SAMPLER:
		if (zr_sampler_mode_parse(val, &c->o->mode) == 0)
			return 0;
		break;
	case KEY_BSIZE:
		if (parse_u64(val, 1, 1u << 24, &c->o->bsize) == 0)
			return 0;
		break;
	case KEY_THREADS:
		/* The pool reads ZR_THREADS when it starts, after this. */
		if (parse_u64(val, 0, 4096, &v) == 0 &&
		    setenv("ZR_THREADS", val, 1) == 0)
			return 0;
		break;
	case KEY_RANK:
		if (parse_u64(val, 0, UINT32_MAX - 1, &v) == 0) {
			c->o->rank = (uint32_t)v;
			return 0;
		}
		break;
	case KEY_WORLD:
		if (parse_u64(val, 1, UINT32_MAX, &v) == 0) {
			c->o->world = (uint32_t)v;
			return 0;
		}
		break;
	case KEY_START:
		if (parse_u64(val, 0, UINT64_MAX, &c->o->start) == 0)
			return 0;
		break;
	case KEY_GRANULE:
		if (parse_u64(val, 1, UINT64_MAX, &c->o->granule) == 0)
			return 0;
		break;
	case KEY_MAXBATCH:
		if (parse_size(val, &c->o->max_batch) == 0)
			return 0;
		break;
	case KEY_PREFETCH:
		if (parse_u64(val, 0, 16, &v) == 0) {
			c->o->prefetch = (unsigned)v;
			return 0;
		}
		break;
	case KEY_PFMEM:
		if (parse_size(val, &c->o->prefetch_mem) == 0)
			return 0;
		break;
	}
	fprintf(stderr, "zrecordfs: bad option '%s' (%s)\n", arg,
		valid_values(key));
	c->bad = 1;
	return -1;
}

/* follow[=SECONDS]: a read-only mount (libfuse is told so too) that
 * refreshes its stores every SECONDS, 0.01 to 3600, default 1. */
static int follow_option(struct parse_ctx *c, const char *arg,
			 struct fuse_args *outargs)
{
	const char *val = strchr(arg, '=');
	double v = 1;
	char *end;

	if (val) {
		errno = 0;
		v = strtod(val + 1, &end);
		if (val[1] < '0' || val[1] > '9' || errno || *end ||
		    !(v >= 0.01 && v <= 3600)) {
			fprintf(stderr, "zrecordfs: bad option '%s' (follow="
				"SECONDS takes 0.01 to 3600)\n", arg);
			c->bad = 1;
			return -1;
		}
	}
	c->o->follow_ms = (unsigned)(v * 1000 + 0.5);
	c->o->ro = 1;
	return fuse_opt_add_arg(outargs, "-oro") ? -1 : 0;
}

static int bad_option(struct parse_ctx *c, const char *arg,
		      const char *why)
{
	if (why)
		fprintf(stderr, "zrecordfs: option '%s' is not supported: %s\n",
			arg, why);
	else
		fprintf(stderr, "zrecordfs: unknown option '%s' (see zrecordfs "
			"--help)\n", arg);
	c->bad = 1;
	return -1;
}

/* name matches arg: exactly, or as a prefix if it ends in '='. */
static int opt_is(const char *arg, const char *name)
{
	size_t len = strlen(name);

	return name[len - 1] == '=' ? !strncmp(arg, name, len) :
	       !strcmp(arg, name);
}

/* An option we do not handle ourselves: a listed flag (arg starts with
 * '-') or -o option goes on to libfuse (1), anything else is refused. */
static int pass_through(struct parse_ctx *c, const char *arg)
{
	size_t i;

	if (arg[0] == '-') {
		for (i = 0; i < sizeof(fuse_flags) / sizeof(*fuse_flags); i++)
			if (!strcmp(arg, fuse_flags[i]))
				return 1;
		return bad_option(c, arg, NULL);
	}
	if (!strcmp(arg, "rw"))
		c->rw = 1;
	for (i = 0; i < sizeof(fuse_opts) / sizeof(*fuse_opts); i++)
		if (opt_is(arg, fuse_opts[i]))
			return 1;
	for (i = 0; i < sizeof(refused_opts) / sizeof(*refused_opts); i++)
		if (opt_is(arg, refused_opts[i].name))
			return bad_option(c, arg, refused_opts[i].why);
	return bad_option(c, arg, NULL);
}

/* The mount point must be a folder already: libfuse would mount over a
 * regular file as well, and name a missing one without naming us. */
static int check_mountpoint(struct parse_ctx *c, const char *mnt)
{
	struct stat st;
	const char *why;

	if (stat(mnt, &st))
		why = strerror(errno);
	else if (!S_ISDIR(st.st_mode))
		why = "not a folder";
	else
		return 1; /* libfuse's fuse_parse_cmdline() takes it */
	fprintf(stderr, "zrecordfs: mount point %s: %s\n", mnt, why);
	c->bad = 1;
	return -1;
}

/* SRC, then the mount point; nothing else. */
static int non_option(struct parse_ctx *c, const char *arg)
{
	switch (c->nargs++) {
	case 0:
		c->o->src = strdup(arg);
		return c->o->src ? 0 : -1;
	case 1:
		return check_mountpoint(c, arg);
	default:
		fprintf(stderr, "zrecordfs: unexpected argument '%s' (usage: "
			"zrecordfs SRC MOUNTPOINT [-o opts])\n", arg);
		c->bad = 1;
		return -1;
	}
}

static int opt_proc(void *data, const char *arg, int key,
		    struct fuse_args *outargs)
{
	struct parse_ctx *c = data;

	(void)outargs;
	switch (key) {
	case FUSE_OPT_KEY_NONOPT:
		return non_option(c, arg);
	case KEY_RO:
		c->o->ro = 1;
		return 1; /* libfuse mounts read-only too */
	case KEY_DIRECT:
		c->o->direct_batches = 1;
		return 0;
	case KEY_FOLLOW:
		return follow_option(c, arg, outargs);
	case KEY_FSNAME:
		c->fsname = 1;
		return 1;
	case KEY_SUBTYPE:
		c->subtype = 1;
		return 1;
	case KEY_SAMPLER:
	case KEY_BSIZE:
	case KEY_THREADS:
	case KEY_RANK:
	case KEY_WORLD:
	case KEY_START:
	case KEY_GRANULE:
	case KEY_MAXBATCH:
	case KEY_PREFETCH:
	case KEY_PFMEM:
		return own_option(c, arg, key);
	default:
		return pass_through(c, arg);
	}
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 |
				      (s[3] - '0'));
			s += 3;
		} else {
			*w++ = *s;
		}
	}
	*w = 0;
}

/* A second zrecordfs over a live one would hide it, its stores still
 * locked and served to whoever holds a file open: refuse. */
static int mounted_here(const char *mnt)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[8192], at[4096], type[256], src[4096];
	int found = 0;

	while (f && !found && fgets(line, sizeof(line), f)) {
		const char *dash = strstr(line, " - ");

		if (!dash || sscanf(line, "%*s %*s %*s %*s %4095s", at) != 1 ||
		    sscanf(dash + 3, "%255s %4095s", type, src) != 2)
			continue;
		unescape(at);
		found = !strcmp(at, mnt) && !strcmp(type, "fuse.zrecordfs");
	}
	if (f)
		fclose(f);
	if (found) {
		unescape(src);
		fprintf(stderr, "zrecordfs: %s is a live zrecordfs mount (of "
			"%s): a mount over it would hide it; unmount it first "
			"(umount %s) or choose another folder\n", mnt, src,
			mnt);
	}
	return found;
}

/* SRC must be an existing folder; it is kept absolute because a daemon
 * changes its working directory. */
static int resolve_src(struct zrfs_opts *o)
{
	char *abs;
	struct stat st;

	if (!o->src) {
		fprintf(stderr, "zrecordfs: missing SRC (usage: zrecordfs SRC "
			"MOUNTPOINT [-o opts])\n");
		return -1;
	}
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
	char *opt = NULL;
	int err = 0;

	if (!c->fsname) {
		if (fuse_opt_add_opt_escaped(&opt, c->o->src) ||
		    fuse_opt_add_arg(a, "-o") || !opt)
			err = -1;
		else {
			char *full = malloc(strlen(opt) + 8);

			if (!full)
				err = -1;
			else {
				sprintf(full, "fsname=%s", opt);
				err = fuse_opt_add_arg(a, full);
				free(full);
			}
		}
		free(opt);
	}
	if (!err && !c->subtype)
		err = fuse_opt_add_arg(a, "-osubtype=zrecordfs");
	if (!err)
		err = fuse_opt_add_arg(a, "-odefault_permissions");
	return err ? -1 : 0;
}

int zrfs_opts_parse(int argc, char **argv, struct zrfs_opts *o)
{
	struct parse_ctx c = { .o = o };
	struct fuse_cmdline_opts cmd;

	memset(o, 0, sizeof(*o));
	o->mode = ZR_SAMPLER_IID;
	o->bsize = 256;
	o->world = 1;
	o->max_batch = zrfile_npy_default_max();
	o->prefetch = 2;
	o->args = (struct fuse_args)FUSE_ARGS_INIT(argc, argv);
	if (fuse_opt_parse(&o->args, &c, spec, opt_proc) || c.bad)
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
	o->mountpoint = cmd.mountpoint;
	o->foreground = cmd.foreground;
	o->debug = cmd.debug;
	o->single = cmd.singlethread;
	o->clone_fd = cmd.clone_fd;
	o->max_idle_threads = cmd.max_idle_threads;
	o->max_threads = cmd.max_threads;
	if (!o->mountpoint) {
		fprintf(stderr, "zrecordfs: missing MOUNTPOINT\n");
		return -1;
	}
	if (o->rank >= o->world) {
		fprintf(stderr, "zrecordfs: rank=%u needs world > %u\n",
			o->rank, o->rank);
		return -1;
	}
	if (c.rw && o->ro) {
		fprintf(stderr, "zrecordfs: -o rw contradicts -o %s: give one "
			"of them\n", o->follow_ms ? "follow" : "ro");
		return -1;
	}
	if (mounted_here(o->mountpoint))
		return -1;
	if (resolve_src(o) || add_defaults(&c))
		return -1;
	return 0;
}

void zrfs_opts_free(struct zrfs_opts *o)
{
	free(o->src);
	free(o->mountpoint);
	fuse_opt_free_args(&o->args);
	o->src = o->mountpoint = NULL;
}
