/*
 * rmtree.c - rm -rf for the test programs, fuzz harnesses and benchmarks.
 */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stdio.h>

#include "rmtree.h"

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void zr_rmtree(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}
