/*
 * check_util.h - helpers shared by the Check suites: temporary folders and
 * small file utilities.
 */
#ifndef ZR_CHECK_UTIL_H
#define ZR_CHECK_UTIL_H

#include <stddef.h>

/* Creates a fresh folder under $TMPDIR (or /tmp) and writes its path into
 * dst; aborts the test on failure. */
void ck_tmpdir(char *dst, size_t cap);
/* rm -rf path (best effort). */
void ck_rmtree(const char *path);

#endif
