/*
 * traindict.c - `zrecord train-dict`: trains a zstd dictionary for a
 * zstd_dict store, from an existing store's records or from .npy files.
 * Files are mapped, not read, so their size is not bounded by memory; the
 * library picks a strided subset within the tier's sample budget.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

typedef struct samples {
	const void **ptr;
	size_t *size;
	size_t n, cap;
	void **maps;      /* one mapping per file, unmapped at the end */
	size_t *map_len;
	size_t nmaps;
} samples;

static int add_sample(samples *sm, const void *p, size_t len)
{
	size_t cap = sm->cap ? sm->cap * 2 : 1024;
	const void **np;
	size_t *ns;

	if (sm->n == sm->cap) {
		np = realloc(sm->ptr, cap * sizeof(*np));
		if (!np)
			return -ENOMEM;
		sm->ptr = np;
		ns = realloc(sm->size, cap * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		sm->size = ns;
		sm->cap = cap;
	}
	sm->ptr[sm->n] = p;
	sm->size[sm->n] = len;
	sm->n++;
	return 0;
}

/* Samples mirror records: rows of an array of rank >= 2 (a dense store's
 * records), the whole array otherwise (a ragged record, e.g. tokens). */
static int add_array(samples *sm, const unsigned char *data,
		     const zr_npy_header *h)
{
	uint64_t rows = h->ndim >= 2 ? h->shape[0] : 1, i;
	size_t row;
	int rc;

	if (h->data_len == 0)
		return 0;
	row = (size_t)(h->data_len / rows);
	for (i = 0; i < rows; i++) {
		rc = add_sample(sm, data + i * row, row);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Walks the .npy files laid back to back in one mapped file. */
static int add_npys(samples *sm, const unsigned char *b, size_t len,
		    const char *file)
{
	zr_npy_header h;
	size_t at = 0;
	int rc;

	while (at < len) {
		rc = zr_npy_parse(b + at, len - at, &h, NULL);
		if (rc == 0 && h.data_len > len - at - h.header_len)
			rc = ZR_E_TRUNCATED;
		if (rc < 0) {
			fprintf(stderr, "zrecord: train-dict: %s: byte %zu: "
				"%s: %s\n", file, at, zr_strerror(rc),
				zr_errmsg());
			return ZR_CLI_FAIL;
		}
		rc = add_array(sm, b + at + h.header_len, &h);
		if (rc < 0)
			return zr_cli_error(file, "train-dict", rc, NULL);
		at += h.header_len + (size_t)h.data_len;
	}
	return ZR_CLI_OK;
}

static int map_file(samples *sm, const char *file)
{
	struct stat st;
	void *m;
	int fd, rc = ZR_CLI_OK;

	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return zr_cli_error(file, "train-dict", -errno, NULL);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
		close(fd);
		return zr_cli_error(file, "train-dict", ZR_E_NPY,
				    "not a non-empty regular .npy file");
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return zr_cli_error(file, "train-dict", -errno, "mmap");
	sm->maps[sm->nmaps] = m;
	sm->map_len[sm->nmaps++] = (size_t)st.st_size;
	rc = add_npys(sm, m, (size_t)st.st_size, file);
	return rc;
}

static void samples_free(samples *sm)
{
	size_t i;

	for (i = 0; i < sm->nmaps; i++)
		munmap(sm->maps[i], sm->map_len[i]);
	free(sm->maps);
	free(sm->map_len);
	free(sm->ptr);
	free(sm->size);
}

static int train_files(char **files, int n, zr_dict_tier tier, void *dict,
		       size_t cap, size_t *len)
{
	samples sm = { 0 };
	int i, rc = ZR_CLI_OK;

	sm.maps = calloc((size_t)n, sizeof(*sm.maps));
	sm.map_len = calloc((size_t)n, sizeof(*sm.map_len));
	if (!sm.maps || !sm.map_len) {
		rc = zr_cli_error(files[0], "train-dict", -ENOMEM, NULL);
		goto out;
	}
	for (i = 0; i < n && rc == ZR_CLI_OK; i++)
		rc = map_file(&sm, files[i]);
	if (rc != ZR_CLI_OK)
		goto out;
	rc = zr_dict_train((const void *const *)sm.ptr, sm.size, sm.n, tier,
			   dict, cap, len);
	if (rc < 0)
		rc = zr_cli_lib_error(files[0], "train-dict", rc);
out:
	samples_free(&sm);
	return rc;
}

static int train_store(const char *path, zr_dict_tier tier, void *dict,
		       size_t cap, size_t *len)
{
	zr_store *s;
	int rc;

	rc = zr_cli_open(path, ZR_OPEN_RDONLY, "train-dict", &s);
	if (rc != ZR_CLI_OK)
		return rc;
	rc = zr_dict_train_store(s, tier, dict, cap, len);
	if (rc < 0)
		rc = zr_cli_lib_error(path, "train-dict", rc);
	return zr_cli_close(s, path, "train-dict", rc);
}

/* 1 if path is a store (asked of the library, so an s3:// URL is one
 * too) or a folder (which then says "no store"), 0 for .npy files, or
 * ZR_CLI_ error code (reported) if the library cannot tell. */
static int store_named(const char *path, int *rc)
{
	struct stat st;
	int r = zr_store_probe(path);

	*rc = r < 0 ? zr_cli_lib_error(path, "train-dict", r) : ZR_CLI_OK;
	return r > 0 || (stat(path, &st) == 0 && S_ISDIR(st.st_mode));
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tier", required_argument, NULL, 't' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const zr_cli_cmd *cmd = &zr_cli_train_dict;
	zr_dict_tier tier = ZR_DICT_BALANCED;
	const char *out = NULL;
	void *dict = NULL;
	size_t cap, len = 0;
	int c, rc, n, store;

	while ((c = zr_cli_getopt(cmd, argc, argv, "ho:", opts)) != -1) {
		if (c == 't' && zr_dict_tier_parse(optarg, &tier) < 0)
			return zr_cli_usage(cmd, "unknown tier '%s'", optarg);
		else if (c == 'o')
			out = optarg;
		else if (c != 't')
			return zr_cli_getopt_exit(c);
	}
	n = argc - optind;
	if (n < 1 || !out)
		return zr_cli_usage(cmd, "expected STORE or FILE.npy... and "
				    "-o DICT");
	store = store_named(argv[optind], &rc);
	if (rc != ZR_CLI_OK)
		return rc;
	if (store && n != 1)
		return zr_cli_usage(cmd, "train from one STORE or from files");
	cap = zr_dict_tier_dict_size(tier);
	dict = malloc(cap);
	if (!dict)
		return zr_cli_error(argv[optind], "train-dict", -ENOMEM, NULL);
	if (store)
		rc = train_store(argv[optind], tier, dict, cap, &len);
	else
		rc = train_files(argv + optind, n, tier, dict, cap, &len);
	if (rc == ZR_CLI_OK)
		rc = zr_cli_out_all(out, dict, len, argv[optind],
				    "train-dict");
	free(dict);
	return rc;
}

const zr_cli_cmd zr_cli_train_dict = {
	.name = "train-dict",
	.run = run,
	.synopsis = "(STORE | FILE.npy...) [--tier fast|balanced|max] -o DICT",
	.help =
	"Trains a zstd dictionary for `zrecord create --codec zstd_dict\n"
	"--dict DICT`, from a store's records or from .npy files (each may\n"
	"hold several .npy back to back).  From files, each row of an array\n"
	"of rank >= 2 is one sample (like a dense store's records) and an\n"
	"array of rank 0 or 1 is one sample (like a ragged record).\n\n"
	"  --tier TIER       fast (32 KiB dictionary), balanced (128 KiB,\n"
	"                    default) or max (1 MiB)\n"
	"  -o, --output DICT where to write the dictionary (required)\n",
};
