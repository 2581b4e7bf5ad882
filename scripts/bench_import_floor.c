/*
 * bench_import_floor.c - what each part of `zrecord import` of 224x224
 * JPEGs costs on one thread, in CPU seconds (the least of ROUNDS runs, so
 * that other jobs on the machine inflate it the least): the decode the
 * ceiling of scripts/bench_import.py times, reading the files, and the
 * ways of getting the decoded rows into a data file under OUT's folder
 * (write() from one buffer, a preallocated shared mapping, and the two
 * import pipelines, decode then write).  docs/import.md explains what the
 * figures bound.  Not a test.
 *
 *   scripts/bench_import_floor LIST OUT [ROUNDS]
 *
 * LIST holds the JPEG paths one a line (224x224 RGB, as bench_import.py
 * makes them); OUT is a scratch file, removed at the end.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <turbojpeg.h>
#include <unistd.h>

#define SIDE 224
#define ROW ((size_t)SIDE * SIDE * 3)
#define BATCH 218 /* rows in the import's 32 MiB batches */
#define MAX_FILES 100000

enum { DECODE, READ, WRITE, MAP, HEAP_THEN_WRITE, PUT, INTO_MAP, NWAYS };

static const char *const way_name[NWAYS] = {
	"decode into one buffer (the ceiling, 1 thread)",
	"read the files (open, fstat, read, close)",
	"pwrite the rows from one buffer",
	"fallocate + mmap + populate + munmap the rows",
	"decode into malloc'd batches, then pwrite (before)",
	"decode into one buffer, pwrite it at once (now)",
	"decode straight into a populated mapping",
};

static char *paths[MAX_FILES];
static unsigned char *data[MAX_FILES];
static unsigned long len[MAX_FILES];
static int n;
static tjhandle tj;
static const char *out;

static double cpu_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void read_files(void)
{
	for (int i = 0; i < n; i++) {
		struct stat st;
		int fd = open(paths[i], O_RDONLY);

		if (fd < 0 || fstat(fd, &st) < 0)
			die(paths[i]);
		free(data[i]);
		data[i] = malloc((size_t)st.st_size);
		if (!data[i] || read(fd, data[i], (size_t)st.st_size) !=
				st.st_size)
			die(paths[i]);
		len[i] = (unsigned long)st.st_size;
		close(fd);
	}
}

static void decode(int i, unsigned char *dst)
{
	if (tjDecompress2(tj, data[i], len[i], dst, SIDE, 0, SIDE, TJPF_RGB,
			  0) < 0) {
		fprintf(stderr, "%s: %s\n", paths[i], tjGetErrorStr2(tj));
		exit(1);
	}
}

static int fresh_file(void)
{
	int fd;

	unlink(out);
	fd = open(out, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die(out);
	return fd;
}

static void put_row(int fd, const void *row, int i)
{
	if (pwrite(fd, row, ROW, (off_t)(i * ROW)) != (ssize_t)ROW)
		die(out);
}

/* The rows [first, first + count) of the file, mapped and populated
 * (*maplen: the length of the page-aligned mapping around them). */
static unsigned char *map_rows(int fd, int first, int count, size_t *maplen)
{
	off_t off = (off_t)(first * ROW), start = off & ~(off_t)4095;
	unsigned char *m;

	*maplen = (size_t)count * ROW + (size_t)(off - start);
	if (fallocate(fd, 0, off, (off_t)((size_t)count * ROW)) < 0)
		die("fallocate");
	m = mmap(NULL, *maplen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, start);
	if (m == MAP_FAILED)
		die("mmap");
	madvise(m, *maplen, MADV_POPULATE_WRITE);
	return m + (off - start);
}

static void run(int way, unsigned char *buf, unsigned char **heap)
{
	int fd = way >= WRITE ? fresh_file() : -1;
	size_t maplen;

	for (int i = 0; i < n; i += BATCH) {
		int m = n - i < BATCH ? n - i : BATCH;
		unsigned char *rows;

		switch (way) {
		case DECODE:
			for (int j = 0; j < m; j++)
				decode(i + j, buf);
			break;
		case READ:
			if (i == 0)
				read_files();
			break;
		case WRITE:
			for (int j = 0; j < m; j++)
				put_row(fd, buf, i + j);
			break;
		case MAP:
		case INTO_MAP:
			rows = map_rows(fd, i, m, &maplen);
			for (int j = 0; way == INTO_MAP && j < m; j++)
				decode(i + j, rows + j * ROW);
			munmap(rows - (maplen - (size_t)m * ROW), maplen);
			break;
		case HEAP_THEN_WRITE:
			for (int j = 0; j < m; j++) {
				heap[j] = malloc(ROW);
				decode(i + j, heap[j]);
			}
			for (int j = 0; j < m; j++) {
				put_row(fd, heap[j], i + j);
				free(heap[j]);
			}
			break;
		case PUT:
			for (int j = 0; j < m; j++) {
				decode(i + j, buf);
				put_row(fd, buf, i + j);
			}
			break;
		}
	}
	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv)
{
	static unsigned char *heap[BATCH];
	double best[NWAYS];
	unsigned char *buf = malloc(ROW);
	char line[4096];
	int rounds = argc > 3 ? atoi(argv[3]) : 5;
	FILE *f = argc > 2 ? fopen(argv[1], "r") : NULL;

	if (!f) {
		fprintf(stderr, "usage: bench_import_floor LIST OUT [ROUNDS]\n");
		return 2;
	}
	while (n < MAX_FILES && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		paths[n++] = strdup(line);
	}
	fclose(f);
	out = argv[2];
	tj = tjInitDecompress();
	read_files();
	for (int w = 0; w < NWAYS; w++)
		best[w] = 1e9;
	for (int r = 0; r < rounds; r++)
		for (int w = 0; w < NWAYS; w++) {
			double t = cpu_now();

			run(w, buf, heap);
			t = cpu_now() - t;
			if (t < best[w])
				best[w] = t;
		}
	unlink(out);
	printf("%d rows of %zu bytes, least CPU time of %d rounds\n", n, ROW,
	       rounds);
	for (int w = 0; w < NWAYS; w++)
		printf("%-52s %.3f s  %.2fx the decode\n", way_name[w],
		       best[w], best[w] / best[DECODE]);
	tjDestroy(tj);
	return 0;
}
