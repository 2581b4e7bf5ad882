/*
 * dest.c - DEST's temporary folder, DEST.tmp-XXXXXX beside DEST: made
 * with the mode a mkdir under the caller's umask gives (mkdtemp's is
 * 0700).  The walks of the sources list folders through it, which
 * leaves DEST and its temporary folders out, so that a DEST inside a
 * SOURCE never imports itself.
 */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import.h"

#define SUFFIX ".tmp-"
#define SUFFIX_RAND 6 /* mkdtemp's XXXXXX */

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

int zr_imp_rmtree(const char *path)
{
	return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS) < 0 ? -errno : 0;
}

/* 1 if name is base.tmp-XXXXXX, a temporary folder of DEST. */
static int tmp_named(const char *base, const char *name)
{
	size_t b = strlen(base), s = strlen(SUFFIX);

	return strlen(name) == b + s + SUFFIX_RAND && !strncmp(name, base, b) &&
	       !strncmp(name + b, SUFFIX, s);
}

/* The folder DEST goes in, and DEST's last name. */
static int split_dest(const char *dest, char **dir, const char **base)
{
	const char *slash = strrchr(dest, '/');

	*base = slash ? slash + 1 : dest;
	*dir = slash == dest ? strdup("/") :
	       slash ? strndup(dest, (size_t)(slash - dest)) : strdup(".");
	return *dir ? 0 : -ENOMEM;
}

int zr_imp_dest_make(zr_imp_dest *t, const char *dest)
{
	struct stat st;
	mode_t mask;
	int err;

	memset(t, 0, sizeof(*t));
	if (split_dest(dest, &t->dir, &t->base) < 0 ||
	    asprintf(&t->tmp, "%s" SUFFIX "XXXXXX", dest) < 0) {
		t->tmp = NULL;
		return zr_imp_error(dest, -ENOMEM, NULL);
	}
	if (stat(t->dir, &st) == 0) {
		t->dir_dev = st.st_dev;
		t->dir_ino = st.st_ino;
	}
	if (!mkdtemp(t->tmp)) {
		err = -errno;
		free(t->tmp);
		t->tmp = NULL;
		return zr_imp_error(dest, err, err == -ENOENT ?
				    "the folder DEST goes in does not exist" :
				    "cannot create the temporary folder "
				    "beside DEST");
	}
	/* the mode mkdir(2) would give: others may read what they may */
	mask = umask(0);
	umask(mask);
	err = chmod(t->tmp, 0777 & ~mask) < 0 ? -errno : 0;
	if (err < 0) {
		zr_imp_error(t->tmp, err, "cannot set up the temporary folder");
		zr_imp_rmtree(t->tmp);
		return ZR_IMP_FAIL;
	}
	return 0;
}

int zr_imp_dest_hides(const zr_imp_dest *t, const struct stat *dir,
		      const char *name)
{
	if (!t || dir->st_dev != t->dir_dev || dir->st_ino != t->dir_ino)
		return 0;
	return !strcmp(name, t->base) || tmp_named(t->base, name);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int visible(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

int zr_imp_list_dir(const zr_imp_dest *t, const char *dir,
		    struct dirent ***out)
{
	struct dirent **list;
	struct stat st;
	int n, i, m = 0;

	n = scandir(dir, &list, visible, by_name);
	if (n < 0)
		return -errno;
	if (stat(dir, &st) < 0)
		st.st_ino = 0;
	for (i = 0; i < n; i++)
		if (st.st_ino && zr_imp_dest_hides(t, &st, list[i]->d_name))
			free(list[i]);
		else
			list[m++] = list[i];
	*out = list;
	return m;
}

void zr_imp_dest_free(zr_imp_dest *t)
{
	free(t->tmp);
	free(t->dir);
	t->tmp = t->dir = NULL;
}
