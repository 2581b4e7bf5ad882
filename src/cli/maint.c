/*
 * maint.c - the maintenance commands that change a store in place:
 * `zrecord delete`, `zrecord compact`, `zrecord sync` and
 * `zrecord recover`.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

static int delete(int argc, char **argv)
{
	const zr_cli_cmd *cmd = &zr_cli_delete;
	uint64_t *idx = NULL;
	const char *store;
	zr_store *s;
	int rc, n;

	rc = zr_cli_store_args(cmd, argc, argv, 1);
	if (rc >= 0)
		return rc;
	store = argv[optind];
	n = argc - optind - 1;
	rc = zr_cli_parse_indices(cmd, argv + optind + 1, n, &idx);
	if (rc != ZR_CLI_OK)
		return rc;
	rc = zr_cli_open(store, 0, "delete", &s);
	if (rc == ZR_CLI_OK) {
		rc = zr_cli_check_range(store, "delete", s, idx, (size_t)n);
		if (rc == ZR_CLI_OK)
			rc = zr_store_delete(s, idx, (size_t)n);
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
	.synopsis = "[--wait[=SECONDS]] STORE INDEX...",
	.help =
	"Deletes records.  Each hole is filled by moving the last record\n"
	"into it (highest index first), so indices of the survivors near the\n"
	"end change; the space is reclaimed by compact.  Nothing is deleted\n"
	"if any INDEX is out of range.\n",
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
