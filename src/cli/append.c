/*
 * append.c - `zrecord append`: streams .npy files (or stdin) through one
 * zrfile_npystream session in fixed-size chunks, so a file of any size appends
 * in bounded memory and all files of one invocation commit together or not
 * at all.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "npy_stream.h"

#define CHUNK (8u << 20)

typedef struct append_ctx {
	const char *store;
	zrfile_npystream *stream;
	unsigned char *chunk;
	zr_cli_progress progress;
	uint64_t total;        /* bytes of all inputs; 0 if any is a pipe */
} append_ctx;

static int input_error(const append_ctx *c, const char *file, int err,
		       const char *detail)
{
	char msg[1024];

	snprintf(msg, sizeof(msg), "%s%s%s", file, detail ? ": " : "",
		 detail ? detail : "");
	return zr_cli_error(c->store, "append", err, msg);
}

/* Sums regular files' sizes for the progress meter (0: unknown). */
static uint64_t inputs_size(char **files, int n)
{
	uint64_t total = 0;
	struct stat st;
	int i;

	for (i = 0; i < n; i++) {
		if (!strcmp(files[i], "-") || stat(files[i], &st) < 0 ||
		    !S_ISREG(st.st_mode))
			return 0;
		total += (uint64_t)st.st_size;
	}
	return total;
}

static int feed_fd(append_ctx *c, const char *file, int fd)
{
	ssize_t n;
	int rc;

	for (;;) {
		n = read(fd, c->chunk, CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return input_error(c, file, -errno, NULL);
		if (n == 0)
			break;
		rc = zrfile_npystream_feed(c->stream, c->chunk, (size_t)n);
		if (rc < 0)
			return input_error(c, file, rc,
					   zrfile_npystream_message(c->stream));
		zr_cli_progress_fn(&c->progress,
				   zrfile_npystream_offset(c->stream),
				   c->total);
	}
	if (!zrfile_npystream_at_boundary(c->stream))
		return input_error(c, file, ZR_E_TRUNCATED,
				   "ends inside a .npy");
	return ZR_CLI_OK;
}

static int feed_file(append_ctx *c, const char *file)
{
	int fd, rc;

	rc = zr_cli_open_input(file, &fd);
	if (rc < 0)
		return input_error(c, file, rc, NULL);
	rc = feed_fd(c, file, fd);
	zr_cli_close_input(fd);
	return rc;
}

static int append_all(append_ctx *c, zr_store *s, char **files, int n)
{
	uint64_t records;
	int i, rc;

	rc = zrfile_npystream_new(s, &c->stream);
	if (rc < 0)
		return zr_cli_lib_error(c->store, "append", rc);
	for (i = 0; i < n; i++) {
		rc = feed_file(c, files[i]);
		if (rc != ZR_CLI_OK)
			goto out;
	}
	rc = zrfile_npystream_finish(c->stream, &records);
	if (rc < 0)
		rc = zr_cli_error(c->store, "append", rc,
				  zrfile_npystream_message(c->stream));
out:
	zr_cli_progress_end(&c->progress);
	zrfile_npystream_free(c->stream);
	return rc;
}

static int run(int argc, char **argv)
{
	append_ctx c = { 0 };
	zr_store *s;
	int rc;

	rc = zr_cli_store_args(&zr_cli_append, argc, argv, 1);
	if (rc >= 0)
		return rc;
	c.store = argv[optind];
	c.chunk = malloc(CHUNK);
	if (!c.chunk)
		return zr_cli_error(c.store, "append", -ENOMEM, NULL);
	c.total = inputs_size(argv + optind + 1, argc - optind - 1);
	zr_cli_progress_init(&c.progress, "append");
	rc = zr_cli_open(c.store, 0, "append", &s);
	if (rc == ZR_CLI_OK) {
		rc = append_all(&c, s, argv + optind + 1, argc - optind - 1);
		rc = zr_cli_close(s, c.store, "append", rc);
	} else {
		zr_cli_progress_end(&c.progress);
	}
	free(c.chunk);
	return rc;
}

const zr_cli_cmd zr_cli_append = {
	.name = "append",
	.run = run,
	.synopsis = "[--wait[=SECONDS]] STORE FILE.npy...",
	.help =
	"Appends the arrays in each FILE (\"-\" reads stdin).  A FILE may\n"
	"hold several .npy files back to back.  Dense store: every row of\n"
	"each array (shape (rows, *item_shape), same dtype) becomes a\n"
	"record.  Ragged store: each whole .npy becomes one record.  All\n"
	"FILEs are one append: if anything fails, nothing is added.  Files\n"
	"are streamed, so their size is not limited by memory.\n",
	.waits = 1,
};
