/*
 * fuzz_util.c - helpers shared by the libFuzzer harnesses.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_util.h"

static char scratch[256];

void zr_fuzz_die(const char *what, const char *file, int line)
{
	fprintf(stderr, "fuzz check failed: %s at %s:%d\n", what, file, line);
	abort();
}

static void remove_scratch(void)
{
	zr_rmtree(scratch);
}

const char *zr_fuzz_setup(void)
{
	const char *base = getenv("TMPDIR");

	if (scratch[0])
		return scratch;
	/* A fixed pool size keeps a crash reproducible from its input. */
	setenv("ZR_THREADS", "0", 1);
	if (access("/dev/shm", W_OK) == 0)
		base = "/dev/shm";
	else if (!base || !*base)
		base = "/tmp";
	snprintf(scratch, sizeof(scratch), "%s/zrfuzz.XXXXXX", base);
	ZR_FUZZ_CHECK(mkdtemp(scratch) != NULL);
	atexit(remove_scratch);
	return scratch;
}

void zr_fuzz_write(const char *dir, const char *name, const void *buf,
		   size_t len)
{
	char path[512];
	const char *p = buf;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ZR_FUZZ_CHECK(fd >= 0);
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		ZR_FUZZ_CHECK(n > 0);
		p += n;
		len -= (size_t)n;
	}
	ZR_FUZZ_CHECK(close(fd) == 0);
}

uint32_t zr_fuzz_take_u32(const uint8_t **data, size_t *size)
{
	const uint8_t *p = *data;
	uint32_t v;

	if (*size < 4)
		return 0;
	v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
	*data += 4;
	*size -= 4;
	return v;
}
