/*
 * output.c - where binary results go: the -o file (removed again if the
 * command fails, so no half-written result survives) or stdout, which must
 * not be a terminal.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char *out_name(const zr_cli_out *o)
{
	return o->path ? o->path : "stdout";
}

static int out_error(const zr_cli_out *o, const char *store,
		     const char *cmd, int err)
{
	char msg[512];

	snprintf(msg, sizeof(msg), "output %s", out_name(o));
	return zr_cli_error(store, cmd, err, msg);
}

int zr_cli_out_open(zr_cli_out *o, const char *path, const char *store,
		    const char *cmd)
{
	o->path = path && strcmp(path, "-") ? path : NULL;
	if (!o->path) {
		o->fd = STDOUT_FILENO;
		if (isatty(o->fd)) {
			fprintf(stderr, "zrecord: %s: refusing to write binary "
				"data to a terminal; use -o FILE or a pipe\n",
				cmd);
			return ZR_CLI_USAGE;
		}
		return ZR_CLI_OK;
	}
	o->fd = open(o->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (o->fd < 0)
		return out_error(o, store, cmd, -errno);
	return ZR_CLI_OK;
}

int zr_cli_out_write(zr_cli_out *o, const void *buf, size_t len,
		     const char *store, const char *cmd)
{
	const char *p = buf;
	ssize_t n;

	while (len > 0) {
		n = write(o->fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return out_error(o, store, cmd, n < 0 ? -errno : -EIO);
		p += n;
		len -= (size_t)n;
	}
	return ZR_CLI_OK;
}

int zr_cli_out_close(zr_cli_out *o, const char *store, const char *cmd,
		     int rc)
{
	if (!o->path)
		return rc;
	if (close(o->fd) < 0 && rc == ZR_CLI_OK)
		rc = out_error(o, store, cmd, -errno);
	if (rc != ZR_CLI_OK)
		unlink(o->path);
	return rc;
}

int zr_cli_out_all(const char *path, const void *buf, size_t len,
		   const char *store, const char *cmd)
{
	zr_cli_out o;
	int rc;

	rc = zr_cli_out_open(&o, path, store, cmd);
	if (rc != ZR_CLI_OK)
		return rc;
	rc = zr_cli_out_write(&o, buf, len, store, cmd);
	return zr_cli_out_close(&o, store, cmd, rc);
}
