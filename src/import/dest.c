/*
 * dest.c - DEST's temporary folder, DEST.tmp-XXXXXX beside DEST: made
 * with the mode a mkdir under the caller's umask gives (mkdtemp's is
 * 0700), holding a small owner file (the importer's pid, host and start
 * time) until the commit.  The owner files of earlier imports of the
 * same DEST tell a killed import's leftovers, removed here, from another
 * import's running one, left alone.  The walks of the sources list folders through it, which
 * leaves DEST and its temporary folders out, so that a DEST inside a
 * SOURCE never imports itself.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import.h"

#define OWNER_FILE ".zrecord-import"
#define SUFFIX ".tmp-"
#define SUFFIX_RAND 6 /* mkdtemp's XXXXXX */

/* The start time of process pid in clock ticks since boot (field 22 of
 * /proc/PID/stat), 0 when it cannot be read: with the pid it names one
 * process, where a pid alone may have been reused. */
static unsigned long long start_time(long pid)
{
	char path[64], buf[1024], *p;
	unsigned long long t = 0;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* the command name (field 2) is in parentheses and may hold any
	 * byte: count fields from the last ')' */
	p = strrchr(buf, ')');
	for (field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (p)
		t = strtoull(p + 1, NULL, 10);
	return t;
}

static void host_name(char *host, size_t cap)
{
	if (gethostname(host, cap) < 0)
		snprintf(host, cap, "?");
	host[cap - 1] = 0;
}

static int write_owner(const char *tmp)
{
	char path[PATH_MAX], host[256];
	FILE *f;
	int rc = 0;

	host_name(host, sizeof(host));
	if (snprintf(path, sizeof(path), "%s/%s", tmp, OWNER_FILE) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "wx");
	if (!f)
		return -errno;
	if (fprintf(f, "%ld %s %llu\n", (long)getpid(), host,
		    start_time((long)getpid())) < 0 || fflush(f) ||
	    fsync(fileno(f)))
		rc = -errno;
	if (fclose(f) && !rc)
		rc = -errno;
	return rc;
}

/* An earlier import's owner file: 1 and its fields, or 0 if unreadable. */
static int read_owner(const char *tmp, long *pid, char *host, size_t cap,
		      unsigned long long *start)
{
	char path[PATH_MAX], fmt[32];
	FILE *f;
	int n;

	if (snprintf(path, sizeof(path), "%s/%s", tmp, OWNER_FILE) >=
	    (int)sizeof(path) || !(f = fopen(path, "re")))
		return 0;
	snprintf(fmt, sizeof(fmt), "%%ld %%%zus %%llu", cap - 1);
	n = fscanf(f, fmt, pid, host, start);
	fclose(f);
	return n == 3 && *pid > 0;
}

/* 1 if the import that wrote the owner file is gone: on this host, and
 * its pid is no process, or one started at another time (reused). */
static int owner_gone(long pid, const char *host, unsigned long long start)
{
	char mine[256];

	host_name(mine, sizeof(mine));
	if (strcmp(host, mine))
		return 0;
	if (kill((pid_t)pid, 0) < 0)
		return errno == ESRCH;
	return start && start_time(pid) && start_time(pid) != start;
}

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

/* Removes the leftover tmp (a path) of a killed import, or says why it
 * stays. */
static void clean_one(const char *tmp)
{
	unsigned long long start = 0;
	char host[256];
	long pid = 0;
	int rc;

	if (!read_owner(tmp, &pid, host, sizeof(host), &start)) {
		fprintf(stderr, "zrecord: import: note: leaving %s: it names "
			"no importer (remove it when no import writes "
			"there)\n", tmp);
	} else if (!owner_gone(pid, host, start)) {
		fprintf(stderr, "zrecord: import: note: leaving %s: the "
			"import of pid %ld on host %s may still write there\n",
			tmp, pid, host);
	} else if ((rc = zr_imp_rmtree(tmp)) < 0) {
		fprintf(stderr, "zrecord: import: cannot remove %s, left by "
			"an import that is gone: %s\n", tmp, zr_strerror(rc));
	} else {
		fprintf(stderr, "zrecord: import: removed %s, left by an "
			"import that is gone (pid %ld on this host)\n", tmp,
			pid);
	}
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

static void clean_stale(zr_imp_dest *t)
{
	struct dirent **list;
	struct stat st;
	char *path;
	int n, i;

	n = scandir(t->dir, &list, NULL, alphasort);
	for (i = 0; i < n; i++) {
		if (tmp_named(t->base, list[i]->d_name) &&
		    asprintf(&path, "%s/%s", t->dir, list[i]->d_name) >= 0) {
			if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
				clean_one(path);
			free(path);
		}
		free(list[i]);
	}
	if (n >= 0)
		free(list);
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
		clean_stale(t);
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
	err = chmod(t->tmp, 0777 & ~mask) < 0 ? -errno : write_owner(t->tmp);
	if (err < 0) {
		zr_imp_error(t->tmp, err, "cannot set up the temporary folder");
		zr_imp_rmtree(t->tmp);
		return ZR_IMP_FAIL;
	}
	return 0;
}

int zr_imp_dest_seal(const zr_imp_dest *t)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%s", t->tmp, OWNER_FILE) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	return unlink(path) < 0 ? -errno : 0;
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
