/*
 * main.c - the zrecord command's entry point: finds the subcommand and
 * handles the global --help, help CMD and --version.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const zr_cli_cmd *const commands[] = {
	&zr_cli_create, &zr_cli_append, &zr_cli_get, &zr_cli_batch,
	&zr_cli_stats, &zr_cli_schema, &zr_cli_verify, &zr_cli_train_dict,
	&zr_cli_delete, &zr_cli_compact, &zr_cli_sync, &zr_cli_import,
	&zr_cli_recover, &zr_cli_cat, &zr_cli_ls, &zr_cli_push, &zr_cli_pull,
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const zr_cli_cmd *find(const char *name)
{
	size_t i;

	for (i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i]->name, name))
			return commands[i];
	return NULL;
}

static void overview(FILE *f)
{
	size_t i;

	fprintf(f, "Usage: zrecord COMMAND [ARGS...]\n\n"
		"Creates, fills, reads and maintains Zrecord stores.\n\n");
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  zrecord %s %s\n", commands[i]->name,
			commands[i]->synopsis);
	fprintf(f, "\n  zrecord help COMMAND | zrecord COMMAND --help\n"
		"  zrecord --version\n\n"
		"Every command also takes --cache DIR|off and --cache-size N:\n"
		"the host cache of its S3 reads (zrecord(1), Common options).\n\n"
		"Errors go to stderr; the exit status is 0 on success, 1 when\n"
		"the operation fails and 2 for a bad command line.\n");
}

static int help(int argc, char **argv)
{
	const zr_cli_cmd *cmd;

	if (argc < 3) {
		overview(stdout);
		return ZR_CLI_OK;
	}
	cmd = find(argv[2]);
	if (!cmd) {
		fprintf(stderr, "zrecord: help: no command '%s'\n", argv[2]);
		return ZR_CLI_USAGE;
	}
	zr_cli_print_help(cmd);
	return ZR_CLI_OK;
}

/* Reports a failed write of stdout (a full disk, a closed pipe). */
static int flush_stdout(int rc)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return rc;
	fprintf(stderr, "zrecord: error writing to stdout\n");
	return rc == ZR_CLI_OK ? ZR_CLI_FAIL : rc;
}

int main(int argc, char **argv)
{
	const zr_cli_cmd *cmd;
	int rc;

	if (argc < 2) {
		overview(stderr);
		return ZR_CLI_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help"))
		return flush_stdout(help(argc, argv));
	if (!strcmp(argv[1], "--version")) {
		/* The library's own version too: a shared library that is
		 * not the one this command was built with shows here. */
		printf("zrecord (%s) %s, libzrecord %s\n", PACKAGE_NAME,
		       PACKAGE_VERSION, zr_version_string());
		return flush_stdout(ZR_CLI_OK);
	}
	cmd = find(argv[1]);
	if (!cmd) {
		fprintf(stderr, "zrecord: unknown command '%s'; try "
			"'zrecord --help'\n", argv[1]);
		return ZR_CLI_USAGE;
	}
	rc = cmd->run(argc - 1, argv + 1);
	zr_cli_cache_warn();
	return flush_stdout(rc);
}
