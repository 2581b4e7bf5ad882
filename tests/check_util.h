/*
 * check_util.h - helpers shared by the Check suites: temporary folders and
 * small file utilities.
 */
#ifndef ZR_CHECK_UTIL_H
#define ZR_CHECK_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "rmtree.h"
#include "zrecord.h"

/* Creates a fresh folder under $TMPDIR (or /tmp) and writes its path into
 * dst; aborts the test on failure. */
void ck_tmpdir(char *dst, size_t cap);

/* The per-test folder of suites whose TCase has the checked fixture
 * (ck_dir_setup, ck_dir_teardown): fresh before each test, removed after. */
extern char ck_dir[4096];
void ck_dir_setup(void);
void ck_dir_teardown(void);

/* -- store engine helpers (check_store*.c, check_dict.c, check_pool.c) -- */

/* The three codecs, for loop tests. */
extern const zr_codec ck_codecs[3];
/* Fills buf with compressible bytes that depend on seed. */
void ck_fill(void *buf, size_t len, uint64_t seed);
/* A schema: dense with item_shape shape[0..ndim), or ragged if ndim < 0. */
zr_schema ck_schema(const char *dtype, int ndim, const uint64_t *shape);
/* Trains a fast-tier dictionary on synthetic records; malloc'd. */
void *ck_dict(size_t *len);
/* Creates dir/name (a dictionary is made for zstd_dict); aborts on error. */
zr_store *ck_store(const char *dir, const char *name, const zr_schema *sc,
		   zr_codec codec);
/* dir/name into dst. */
void ck_path(char *dst, size_t cap, const char *dir, const char *name);
/* File utilities on dir/name; abort the test on failure. */
uint64_t ck_file_size(const char *dir, const char *name);
void ck_file_write(const char *dir, const char *name, uint64_t off,
		   const void *buf, size_t len);
void ck_file_read(const char *dir, const char *name, uint64_t off, void *buf,
		  size_t len);
void ck_file_truncate(const char *dir, const char *name, uint64_t len);

#endif
