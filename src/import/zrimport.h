/*
 * zrimport.h - the import layer as its callers see it: what an import is
 * asked to do (zr_imp_config), the table of the formats it reads (one row
 * a format: its --type name, the suffixes and folders it claims, the
 * options it takes, the function that runs it), and the one call that
 * imports SOURCEs into a new dataset folder.  `zrecord import` parses its
 * command line into these and calls zr_imp_import; the layer's own files
 * share import.h.
 */
#ifndef ZR_IMPORT_LAYER_H
#define ZR_IMPORT_LAYER_H

#include <stdint.h>

#include "zrecord.h"

/* Options that shape image records (--rgb, --resize, --center-crop,
 * --chw, --encoded). */
typedef struct zr_imp_image_opts {
	int encoded;
	int rgb;
	int chw;
	uint32_t resize_h, resize_w; /* both 0: none; w 0: shorter side */
	uint32_t crop_h, crop_w;     /* 0: none                         */
} zr_imp_image_opts;

typedef struct zr_imp_config {
	const char *dest;
	zr_codec codec;
	zr_imp_image_opts img;
	int skip_bad;
	int drop_incomplete;
	int progress;     /* 1 on, 0 off, -1 when stderr is a terminal */
	unsigned threads;
	int keys;         /* LMDB: also a store of the keys */
	char **names;     /* HDF5: the datasets to import, NULL: all */
	unsigned nnames;
	int per_file;     /* .npy: one ragged record per file */
} zr_imp_config;

typedef struct zr_imp_dataset zr_imp_dataset;

/* The options only some formats take (a format's opts). */
#define ZR_IMP_O_IMAGE   1u  /* --rgb --resize --center-crop --chw --encoded */
#define ZR_IMP_O_DROP    2u  /* --drop-incomplete */
#define ZR_IMP_O_KEYS    4u  /* --keys            */
#define ZR_IMP_O_DATASET 8u  /* --dataset NAME    */
#define ZR_IMP_O_PERFILE 16u /* --per-file        */

#define ZR_IMP_SUFFIXES_MAX 4

/* One import format: a row of the table in formats.c. */
typedef struct zr_imp_format {
	const char *name;   /* its --type name */
	/* the file names it claims by suffix (any case), NULL-ended */
	const char *suffixes[ZR_IMP_SUFFIXES_MAX];
	/* 1 if it claims the folder dir, or NULL; the table's rows are
	 * asked in order, so a row claiming every folder comes last */
	int (*claims_folder)(const char *dir);
	unsigned opts;      /* the ZR_IMP_O_* it takes */
	/* reads the n SOURCEs into d, reporting its failures */
	int (*run)(const zr_imp_config *cfg, char **srcs, int n,
		   zr_imp_dataset *d);
} zr_imp_format;

/* The i-th format of the table (from 0), NULL past the last. */
const zr_imp_format *zr_imp_format_at(unsigned i);
/* The format named name (--type), or NULL. */
const zr_imp_format *zr_imp_format_named(const char *name);
/* The format src is, by its suffix or, for a folder, the first row that
 * claims it: 0 and *out (NULL when no format claims it), or -errno when
 * src cannot be found. */
int zr_imp_format_of(const char *src, const zr_imp_format **out);
/* "wds and images": the names of the formats that take option opt. */
void zr_imp_format_takers(unsigned opt, char *buf, size_t cap);

/* Imports the n SOURCEs of format f into the new dataset folder
 * cfg->dest, all or nothing (import_run.c); 0, or 1 once reported. */
int zr_imp_import(const zr_imp_config *cfg, const zr_imp_format *f,
		  char **srcs, int n);

#endif
