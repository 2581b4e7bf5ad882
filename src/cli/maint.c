/*
 * maint.c - the maintenance commands that change a store in place:
 * `zrecord delete` (indices as arguments or, with --from, in the
 * grammar of the mount's delete file, src/files/index_list.h),
 * `zrecord compact`, `zrecord sync` and `zrecord recover`.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "index_list.h"

/* Read size of --from FILE: the parser takes any chunking. */
#define FROM_CHUNK (64u << 10)

static int from_error(const char *store, const char *file, int err,
		      const char *detail)
{
	char msg[512];

	snprintf(msg, sizeof(msg), "%s%s%s", strcmp(file, "-") ? file :
		 "stdin", detail && *detail ? ": " : "", detail ? detail : "");
	return zr_cli_error(store, "delete", err, msg);
}

/* Appends got[0, ngot) (then freed) to idx[0, *n). */
static int join(uint64_t **idx, size_t *n, uint64_t *got, size_t ngot)
{
	uint64_t *v;

	if (!*n) {
		*idx = got;
		*n = ngot;
		return 0;
	}
	v = ngot ? realloc(*idx, (*n + ngot) * sizeof(*v)) : *idx;
	if (!v) {
		free(got);
		return -ENOMEM;
	}
	if (ngot)
		memcpy(v + *n, got, ngot * sizeof(*v));
	free(got);
	*idx = v;
	*n += ngot;
	return 0;
}

/* Feeds fd to p to its end, each index checked against limit. */
static int feed_fd(zrfile_idxlist *p, int fd, uint64_t limit)
{
	static char buf[FROM_CHUNK];
	ssize_t r;
	int rc;

	for (;;) {
		r = read(fd, buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : 0;
		rc = zrfile_idxlist_feed(p, buf, (size_t)r, limit);
		if (rc)
			return rc;
	}
}

/* Adds the indices in FILE, in the grammar of a mount's delete file
 * (index_list.h), to idx[0, *n); they are range-checked as they come. */
static int read_from(const char *store, const char *file, zr_store *s,
		     uint64_t **idx, size_t *n)
{
	uint64_t limit = zr_store_length(s), *got = NULL;
	zrfile_idxlist *p = NULL;
	size_t ngot = 0;
	int fd, rc;

	rc = zr_cli_open_input(file, &fd);
	if (rc < 0)
		return from_error(store, file, rc, NULL);
	rc = zrfile_idxlist_new(&p);
	if (!rc)
		rc = feed_fd(p, fd, limit);
	if (!rc)
		rc = zrfile_idxlist_finish(p, limit, &got, &ngot);
	zr_cli_close_input(fd);
	if (!rc)
		rc = join(idx, n, got, ngot);
	if (rc < 0)
		rc = from_error(store, file, rc, zrfile_idxlist_message(p));
	zrfile_idxlist_free(p);
	return rc;
}

static int delete(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "from", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		ZR_CLI_WAIT_OPTION,
		{ NULL, 0, NULL, 0 }
	};
	const zr_cli_cmd *cmd = &zr_cli_delete;
	const char *store, *from = NULL;
	uint64_t *idx = NULL;
	zr_store *s;
	size_t n = 0;
	int c, rc;

	while ((c = zr_cli_getopt(cmd, argc, argv, "h", opts)) != -1) {
		if (c != 'f')
			return zr_cli_getopt_exit(c);
		if (from)
			return zr_cli_usage(cmd, "--from may be given once");
		from = optarg;
	}
	if (argc - optind < (from ? 1 : 2))
		return zr_cli_usage(cmd, "expected %s", cmd->synopsis);
	store = argv[optind];
	if (argc - optind > 1) {
		n = (size_t)(argc - optind - 1);
		rc = zr_cli_parse_indices(cmd, argv + optind + 1, (int)n, &idx);
		if (rc != ZR_CLI_OK)
			return rc;
	}
	rc = zr_cli_open(store, 0, "delete", &s);
	if (rc == ZR_CLI_OK) {
		rc = zr_cli_check_range(store, "delete", s, idx, n);
		if (rc == ZR_CLI_OK && from)
			rc = read_from(store, from, s, &idx, &n);
		if (rc == ZR_CLI_OK && n)
			rc = zr_store_delete(s, idx, n);
		if (rc < 0)
			rc = zr_cli_lib_error(store, "delete", rc);
		rc = zr_cli_close(s, store, "delete", rc);
	}
	free(idx);
	return rc;
}

/* Opens the one STORE argument of cmd for writing, runs op on it and
 * closes it: what compact, sync and recover share. */
static int on_store(const zr_cli_cmd *cmd, int argc, char **argv,
		    int (*op)(zr_store *s, const char *store))
{
	const char *store;
	zr_store *s;
	int rc;

	rc = zr_cli_store_args(cmd, argc, argv, 0);
	if (rc >= 0)
		return rc;
	store = argv[optind];
	rc = zr_cli_open(store, 0, cmd->name, &s);
	if (rc != ZR_CLI_OK)
		return rc;
	rc = op(s, store);
	if (rc < 0)
		rc = zr_cli_lib_error(store, cmd->name, rc);
	return zr_cli_close(s, store, cmd->name, rc);
}

static int compact_op(zr_store *s, const char *store)
{
	zr_cli_progress prog;
	int rc;

	(void)store;
	zr_cli_progress_init(&prog, "compact");
	rc = zr_store_compact(s, zr_cli_progress_fn, &prog);
	zr_cli_progress_end(&prog);
	return rc;
}

static int sync_op(zr_store *s, const char *store)
{
	(void)store;
	return zr_store_sync(s);
}

/* Any open that may write recovers; this one says so when there was
 * nothing to do (zr_cli_open prints what there was). */
static int recover_op(zr_store *s, const char *store)
{
	if (!zr_store_recovered(s))
		fprintf(stderr, "zrecord: %s: nothing to recover\n", store);
	return ZR_CLI_OK;
}

static int compact(int argc, char **argv)
{
	return on_store(&zr_cli_compact, argc, argv, compact_op);
}

static int sync_store(int argc, char **argv)
{
	return on_store(&zr_cli_sync, argc, argv, sync_op);
}

static int recover(int argc, char **argv)
{
	return on_store(&zr_cli_recover, argc, argv, recover_op);
}

const zr_cli_cmd zr_cli_delete = {
	.name = "delete",
	.run = delete,
	.synopsis = "[--wait[=SECONDS]] STORE [INDEX...] [--from FILE]",
	.help =
	"Deletes the records INDEX... and those listed in FILE (give at\n"
	"least one of them).  Each hole is filled by moving the last record\n"
	"into it (highest index first), so indices of the survivors near the\n"
	"end change; the space is reclaimed by compact.  Nothing is deleted\n"
	"if any index is out of range or FILE holds anything bad.\n\n"
	"  --from FILE   the indices in FILE (\"-\": stdin), in the grammar\n"
	"                of a zrecordfs mount's delete file: decimal text\n"
	"                (separated by spaces, tabs, commas or newlines) or\n"
	"                one integer .npy (any int/uint dtype, 0-d or 1-d),\n"
	"                at most 256 MiB.  With INDEX arguments too, both\n"
	"                are deleted together, as one delete.\n",
	.waits = 1,
};

const zr_cli_cmd zr_cli_compact = {
	.name = "compact",
	.run = compact,
	.synopsis = "[--wait[=SECONDS]] STORE",
	.help =
	"Rewrites the live records back to back and truncates the files,\n"
	"reclaiming the space of deleted records.  A compact cut short is\n"
	"recovered by the next open (see recover); run it again for the rest.\n",
	.waits = 1,
};

const zr_cli_cmd zr_cli_sync = {
	.name = "sync",
	.run = sync_store,
	.synopsis = "[--wait[=SECONDS]] STORE",
	.help = "Flushes the store's files to disk.\n",
	.waits = 1,
};

const zr_cli_cmd zr_cli_recover = {
	.name = "recover",
	.run = recover,
	.synopsis = "[--wait[=SECONDS]] STORE",
	.help =
	"Recovers a delete or compact cut short (by a crash, kill -9 or a\n"
	"power cut) from its journal STORE/maintenance.zr: rolls the delete\n"
	"back, or finishes the compact's move in flight, and says what is\n"
	"still reclaimable.  Every open that may write the store's files does\n"
	"the same, read-only ones included; this command is for the case\n"
	"they cannot (a reader without write permission).\n",
	.waits = 1,
};
