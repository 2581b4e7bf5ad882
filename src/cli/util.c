/*
 * util.c - the zrecord command's shared plumbing: error and usage messages
 * in one format, option parsing with --help and --wait built in, strict
 * index parsing, opening (waiting for a busy store's lock if asked) and
 * closing stores, opening inputs ("-" for stdin), reading small files.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "lock_holder.h"
#include "retry.h"

/* How long zr_cli_open waits for a busy store, from --wait (0: no wait).
 * One command runs per process, so the option can live here. */
static unsigned wait_ms;
/* Whether this command takes --wait: a busy error then names it. */
static int takes_wait;

int zr_cli_error(const char *store, const char *cmd, int err,
		 const char *detail)
{
	fprintf(stderr, "zrecord: %s: %s: %s%s%s\n", store, cmd,
		zr_strerror(err), detail && *detail ? ": " : "",
		detail ? detail : "");
	return ZR_CLI_FAIL;
}

static int busy_error(const char *path, const char *cmd, unsigned waited);

/* A busy store names who holds it, whichever call found it busy. */
int zr_cli_lib_error(const char *store, const char *cmd, int err)
{
	if (err == ZR_E_BUSY)
		return busy_error(store, cmd, 0);
	return zr_cli_error(store, cmd, err, zr_errmsg());
}

int zr_cli_usage(const zr_cli_cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "zrecord: %s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nUsage: zrecord %s %s\nTry 'zrecord %s --help'.\n",
		cmd->name, cmd->synopsis, cmd->name);
	return ZR_CLI_USAGE;
}

void zr_cli_print_help(const zr_cli_cmd *cmd)
{
	printf("Usage: zrecord %s %s\n\n%s", cmd->name, cmd->synopsis,
	       cmd->help);
	if (cmd->help_more)
		cmd->help_more();
	if (cmd->waits)
		printf("\n"
		"  --wait[=SECONDS]  when another process holds the store's lock\n"
		"        (a zrecordfs mount still closing after fusermount3 -u,\n"
		"        another writer), retry until it lets go, for at most\n"
		"        SECONDS (default %u; 0 tries once, as without --wait),\n"
		"        then fail with \"store busy\" naming the holder.\n",
		ZR_CLI_WAIT_DEFAULT);
}

/* --wait's value: whole seconds, 0..ZR_CLI_WAIT_MAX; none: the default. */
static int parse_wait(const zr_cli_cmd *cmd, const char *arg)
{
	uint64_t s = ZR_CLI_WAIT_DEFAULT;

	if (arg && (zr_cli_parse_u64(arg, &s) || s > ZR_CLI_WAIT_MAX)) {
		zr_cli_usage(cmd, "--wait='%s': give whole seconds, 0 to %u "
			     "(or --wait alone for %u)", arg, ZR_CLI_WAIT_MAX,
			     ZR_CLI_WAIT_DEFAULT);
		return -3;
	}
	wait_ms = (unsigned)s * 1000u;
	return 0;
}

/* getopt takes "-1" for an option; name the real mistake instead. */
static const char *find_negative(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (argv[i][0] == '-' && argv[i][1] >= '0' && argv[i][1] <= '9')
			return argv[i];
	return NULL;
}

int zr_cli_getopt(const zr_cli_cmd *cmd, int argc, char **argv,
		  const char *shortopts, const struct option *longopts)
{
	char opts[32];
	const char *neg, *what;
	int c;

	takes_wait = cmd->waits;
	/* A leading ':' makes a missing value ':' instead of '?'. */
	snprintf(opts, sizeof(opts), ":%s", shortopts);
	opterr = 0;
	longopts = zr_cli_common_opts(longopts);
	for (;;) {
		c = getopt_long(argc, argv, opts, longopts, NULL);
		if (c == ZR_CLI_OPT_WAIT && parse_wait(cmd, optarg))
			return -3;
		if ((c == ZR_CLI_OPT_CACHE || c == ZR_CLI_OPT_CACHE_SIZE) &&
		    zr_cli_cache_opt(c, optarg))
			return zr_cli_usage(cmd, "--cache-size %s: a byte count "
					    "of at least 64M, with an optional "
					    "K, M or G (64G)", optarg), -3;
		if (c < ZR_CLI_OPT_WAIT || c > ZR_CLI_OPT_CACHE_SIZE)
			break;
	}
	if (c == -1 && zr_cli_cache_apply(cmd))
		return -3;
	if (c == 'h') {
		zr_cli_print_help(cmd);
		return -2;
	}
	if (c != '?' && c != ':')
		return c;
	neg = find_negative(argc, argv);
	what = c == ':' ? "missing value for option" : "unknown option";
	if (neg)
		zr_cli_usage(cmd, "'%s' is negative: indices and counts start "
			     "at 0", neg);
	else if (optopt && strncmp(argv[optind - 1], "--", 2))
		zr_cli_usage(cmd, "%s '-%c'", what, optopt);
	else
		zr_cli_usage(cmd, "%s '%s'", what, argv[optind - 1]);
	return -3;
}

int zr_cli_getopt_exit(int c)
{
	return c == -2 ? ZR_CLI_OK : ZR_CLI_USAGE;
}

int zr_cli_store_args(const zr_cli_cmd *cmd, int argc, char **argv,
		      int min_rest)
{
	static const struct option help_only[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const struct option help_wait[] = {
		{ "help", no_argument, NULL, 'h' },
		ZR_CLI_WAIT_OPTION,
		{ NULL, 0, NULL, 0 }
	};
	int rc = zr_cli_getopt(cmd, argc, argv, "h",
			       cmd->waits ? help_wait : help_only);

	if (rc != -1)
		return zr_cli_getopt_exit(rc);
	if (argc - optind < 1 + min_rest ||
	    (min_rest == 0 && argc - optind != 1))
		return zr_cli_usage(cmd, "expected %s", cmd->synopsis);
	return -1;
}

int zr_cli_parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	const char *p;

	if (!*s)
		return -EINVAL;
	for (p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*out = v;
	return 0;
}

int zr_cli_parse_indices(const zr_cli_cmd *cmd, char **argv, int n,
			 uint64_t **out)
{
	uint64_t *idx;
	int i, rc;

	if (n <= 0)
		return zr_cli_usage(cmd, "no INDEX given");
	idx = calloc((size_t)n, sizeof(*idx));
	if (!idx) {
		fprintf(stderr, "zrecord: %s: %s\n", cmd->name,
			zr_strerror(-ENOMEM));
		return ZR_CLI_FAIL;
	}
	for (i = 0; i < n; i++) {
		rc = zr_cli_parse_u64(argv[i], &idx[i]);
		if (rc == 0)
			continue;
		free(idx);
		if (argv[i][0] == '-')
			return zr_cli_usage(cmd, "index '%s' is negative; "
					    "indices count from 0", argv[i]);
		return zr_cli_usage(cmd, "index '%s' is not a decimal "
				    "record number", argv[i]);
	}
	*out = idx;
	return 0;
}

int zr_cli_check_range(const char *store, const char *cmd, zr_store *s,
		       const uint64_t *idx, size_t n)
{
	uint64_t len = zr_store_length(s);
	char msg[128];
	size_t i;

	for (i = 0; i < n; i++) {
		if (idx[i] < len)
			continue;
		snprintf(msg, sizeof(msg),
			 "index %" PRIu64 " but the store holds %" PRIu64
			 " records", idx[i], len);
		return zr_cli_error(store, cmd, ZR_E_RANGE, msg);
	}
	return ZR_CLI_OK;
}

int zr_cli_open_input(const char *file, int *fd)
{
	if (!strcmp(file, "-")) {
		*fd = STDIN_FILENO;
		return 0;
	}
	*fd = open(file, O_RDONLY | O_CLOEXEC);
	return *fd < 0 ? -errno : 0;
}

void zr_cli_close_input(int fd)
{
	if (fd != STDIN_FILENO)
		close(fd);
}

/* Which lock an holder has says what it is (zrecord.h, Locking): data.zr
 * exclusive is a writer, data.zr shared a reader, meta.zr alone a
 * follower (shared) or a process that keeps every handle out. */
static const char *holder_kind(int on_data, int write)
{
	if (on_data)
		return write ? "for writing (a read-write zrecordfs mount or "
			       "a writer: unmount or stop it, or mount with -o "
			       "ro to share the store with readers; zrecordfs "
			       "-o follow reads beside a writer)" :
			       "for reading (a read-only mount or a reader "
			       "keeps writers out: unmount it, or mount with "
			       "-o follow to let one writer in)";
	return write ? "alone (a process that keeps every handle out)" :
		       "as a follower (a -o follow mount or a follow=True "
		       "reader: delete and compact need it gone)";
}

/* What the library said after its "store busy: ". */
static const char *lib_reason(void)
{
	const char *m = zr_errmsg(), *r = strstr(m, "store busy: ");

	return r ? r + strlen("store busy: ") : m;
}

/* "store busy" once, with who holds the lock and what to do about it
 * (zr_strerror() and the library's message both say "store busy"). */
static int busy_error(const char *path, const char *cmd, unsigned waited)
{
	char file[PATH_MAX], comm[64], msg[PATH_MAX];
	pid_t pid;
	int write = 0, on_data = 1;

	snprintf(file, sizeof(file), "%s/data.zr", path);
	pid = zrcommon_lock_holder(file, comm, sizeof(comm), &write);
	if (!pid) {
		on_data = 0;
		snprintf(file, sizeof(file), "%s/meta.zr", path);
		pid = zrcommon_lock_holder(file, comm, sizeof(comm), &write);
	}
	if (pid)
		snprintf(msg, sizeof(msg), "process %d (%s) holds its lock %s",
			 (int)pid, comm, holder_kind(on_data, write));
	else /* the library's reason, which at least names the role */
		snprintf(msg, sizeof(msg), "%s (a process on another host, or "
			 "in another mount namespace)", lib_reason());
	if (waited)
		snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg),
			 "; still held after waiting %u s", waited / 1000);
	else if (takes_wait)
		snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg),
			 "; --wait[=SECONDS] retries until it lets go (a "
			 "mount still closing its stores)");
	/* zr_strerror() says "another handle holds its lock": too vague */
	fprintf(stderr, "zrecord: %s: %s: store busy: %s\n", path, cmd, msg);
	return ZR_CLI_FAIL;
}

struct open_try {
	const char *path;
	unsigned flags;
	zr_store **out;
	int rc;
};

static int try_open(void *ctx)
{
	struct open_try *t = ctx;

	t->rc = zr_store_open(t->path, t->flags, t->out);
	return t->rc == ZR_E_BUSY ? ZRCOMMON_RETRY_BUSY : 0;
}

void zr_cli_warn_lock(const zr_store *s)
{
	const char *w = zr_store_lock_warning(s);

	if (w)
		fprintf(stderr, "zrecord: warning: %s\n", w);
}

int zr_cli_open(const char *path, unsigned flags, const char *cmd,
		zr_store **out)
{
	struct open_try t = { path, flags, out, 0 };
	int rc;

	zrcommon_retry(try_open, &t, wait_ms);
	rc = t.rc;
	if (rc == ZR_E_BUSY)
		return busy_error(path, cmd, wait_ms);
	if (rc < 0)
		return zr_cli_lib_error(path, cmd, rc);
	zr_cli_warn_lock(*out);
	if (zr_store_recovered(*out))
		fprintf(stderr, "zrecord: %s\n", zr_store_recovered(*out));
	return ZR_CLI_OK;
}

int zr_cli_close(zr_store *s, const char *path, const char *cmd, int rc)
{
	int err = zr_store_close(s);

	if (err < 0 && rc == ZR_CLI_OK)
		return zr_cli_lib_error(path, cmd, err);
	return rc;
}

int zr_cli_read_file(const char *path, size_t max, void **buf, size_t *len)
{
	struct stat st;
	void *b = NULL;
	size_t got = 0;
	ssize_t n;
	int fd, rc = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = -EINVAL;
		goto out;
	}
	if ((uint64_t)st.st_size > max) {
		rc = -EFBIG;
		goto out;
	}
	b = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!b) {
		rc = -ENOMEM;
		goto out;
	}
	while (got < (size_t)st.st_size) {
		n = read(fd, (char *)b + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : -EIO;
			goto out;
		}
		got += (size_t)n;
	}
	*buf = b;
	*len = got;
	b = NULL;
out:
	free(b);
	close(fd);
	return rc;
}
