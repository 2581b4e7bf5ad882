/*
 * formats.c - the table of import formats (zrimport.h): one row a
 * format, naming its --type, the suffixes and folders it claims, the
 * options it takes and its run.  The command finds a SOURCE's format,
 * checks the options and names the choices through this table only, so
 * a new format is its file plus one row here.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "import.h"

/* Folders are asked in row order: images, which claims any, comes last. */
static const zr_imp_format formats[] = {
	{ "wds", { ".tar", ".tar.gz", ".tgz" }, NULL,
	  ZR_IMP_O_IMAGE | ZR_IMP_O_DROP, zr_imp_wds },
	{ "hdf5", { ".h5", ".hdf5", ".hdf" }, NULL, ZR_IMP_O_DATASET,
	  zr_imp_hdf5 },
	{ "lmdb", { ".mdb" }, zr_imp_lmdb_claims, ZR_IMP_O_KEYS, zr_imp_lmdb },
	{ "npy", { ".npy", ".npz" }, zr_imp_npy_claims, ZR_IMP_O_PERFILE,
	  zr_imp_npy },
	{ "images", { NULL }, zr_imp_folder_claims, ZR_IMP_O_IMAGE,
	  zr_imp_folder },
};

#define NFORMATS (sizeof(formats) / sizeof(formats[0]))

const zr_imp_format *zr_imp_format_at(unsigned i)
{
	return i < NFORMATS ? &formats[i] : NULL;
}

const zr_imp_format *zr_imp_format_named(const char *name)
{
	unsigned i;

	for (i = 0; i < NFORMATS; i++)
		if (!strcmp(formats[i].name, name))
			return &formats[i];
	return NULL;
}

static int ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);

	return n >= k && !strcasecmp(s + n - k, suf);
}

int zr_imp_format_of(const char *src, const zr_imp_format **out)
{
	struct stat st;
	unsigned i, k;

	*out = NULL;
	for (i = 0; i < NFORMATS; i++)
		for (k = 0; k < ZR_IMP_SUFFIXES_MAX && formats[i].suffixes[k];
		     k++)
			if (ends_with(src, formats[i].suffixes[k])) {
				*out = &formats[i];
				return 0;
			}
	if (stat(src, &st) < 0)
		return -errno;
	for (i = 0; S_ISDIR(st.st_mode) && i < NFORMATS; i++)
		if (formats[i].claims_folder &&
		    formats[i].claims_folder(src)) {
			*out = &formats[i];
			break;
		}
	return 0;
}

void zr_imp_format_takers(unsigned opt, char *buf, size_t cap)
{
	unsigned i, n = 0, total = 0;
	size_t o = 0;

	for (i = 0; i < NFORMATS; i++)
		total += (formats[i].opts & opt) != 0;
	buf[0] = 0;
	for (i = 0; i < NFORMATS && o < cap; i++) {
		if (!(formats[i].opts & opt))
			continue;
		n++;
		o += (size_t)snprintf(buf + o, cap - o, "%s%s",
				      n == 1 ? "" : n == total ? " and " : ", ",
				      formats[i].name);
	}
}
