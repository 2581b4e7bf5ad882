/*
 * util.c - the zrecord command's shared plumbing: error and usage messages
 * in one format, option parsing with --help built in, strict index parsing,
 * opening and closing stores, reading small files.
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
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cli.h"

int zr_cli_error(const char *store, const char *cmd, int err,
		 const char *detail)
{
	fprintf(stderr, "zrecord: %s: %s: %s%s%s\n", store, cmd,
		zr_strerror(err), detail && *detail ? ": " : "",
		detail ? detail : "");
	return ZR_CLI_FAIL;
}

int zr_cli_lib_error(const char *store, const char *cmd, int err)
{
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

	/* A leading ':' makes a missing value ':' instead of '?'. */
	snprintf(opts, sizeof(opts), ":%s", shortopts);
	opterr = 0;
	c = getopt_long(argc, argv, opts, longopts, NULL);
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
	int rc = zr_cli_getopt(cmd, argc, argv, "h", help_only);

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

/* The process holding an flock on the file st names, from /proc/locks
 * ("1: FLOCK  ADVISORY  WRITE 1234 00:2f:5678 0 EOF"); 0 if none is
 * found.  *write tells an exclusive lock from a shared one. */
static pid_t lock_holder(const struct stat *st, int *write)
{
	FILE *f = fopen("/proc/locks", "re");
	char line[256], kind[16];
	unsigned maj, min;
	unsigned long ino;
	int pid = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "->") || sscanf(line, "%*s FLOCK %*s %15s %d "
		    "%x:%x:%lu", kind, &pid, &maj, &min, &ino) != 5)
			continue;
		if (ino == st->st_ino && maj == major(st->st_dev) &&
		    min == minor(st->st_dev))
			break;
		pid = 0;
	}
	fclose(f);
	*write = !strcmp(kind, "WRITE");
	return pid;
}

/* "store busy" once, with who holds the lock and what to do about it
 * (zr_strerror() and the library's message both say "store busy"). */
static int busy_error(const char *path, const char *cmd)
{
	char meta[PATH_MAX], comm[64] = "", msg[PATH_MAX];
	struct stat st;
	pid_t pid = 0;
	int write = 1;
	FILE *f;

	snprintf(meta, sizeof(meta), "%s/meta.zr", path);
	if (!stat(meta, &st))
		pid = lock_holder(&st, &write);
	snprintf(msg, sizeof(msg), "/proc/%d/comm", (int)pid);
	f = pid ? fopen(msg, "re") : NULL;
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = 0;
		fclose(f);
	}
	if (pid)
		snprintf(msg, sizeof(msg), "process %d (%s) holds its lock",
			 (int)pid, *comm ? comm : "?");
	else
		snprintf(msg, sizeof(msg), "another process holds its lock");
	snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), "%s", write ?
		 " for writing (a read-write zrecordfs mount or a writer: "
		 "unmount or stop it, or mount with -o ro to share the store "
		 "with readers)" :
		 " for reading (a read-only mount or a reader: writing needs "
		 "it gone)");
	/* zr_strerror() says "another handle holds its lock": too vague */
	fprintf(stderr, "zrecord: %s: %s: store busy: %s\n", path, cmd, msg);
	return ZR_CLI_FAIL;
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
	int rc = zr_store_open(path, flags, out);

	if (rc == ZR_E_BUSY)
		return busy_error(path, cmd);
	if (rc < 0)
		return zr_cli_lib_error(path, cmd, rc);
	zr_cli_warn_lock(*out);
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
