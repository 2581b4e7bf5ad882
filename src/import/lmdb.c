/*
 * lmdb.c - the LMDB source: the main database of each environment, in key
 * order, inside one read transaction (a snapshot: a writer beside us
 * changes nothing we see).  Values become the ragged uint8 store "value",
 * keys (--keys) the store "key".  LMDB maps the file; a data.mdb cut short
 * would raise SIGBUS on a page past its end, which is caught here and
 * reported as a damaged file.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lmdb.h>

#include "import.h"

static sigjmp_buf bus_jump;
static volatile sig_atomic_t bus_armed;

static void on_bus(int sig)
{
	if (!bus_armed) {
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	siglongjmp(bus_jump, 1);
}

static int lmdb_error(const char *path, int err, const char *what)
{
	char msg[300];

	snprintf(msg, sizeof(msg), "%s: %s", what, mdb_strerror(err));
	return zr_imp_error(path, ZR_IMP_EBAD, msg);
}

static int open_env(const char *path, MDB_env **env)
{
	struct stat st;
	unsigned flags = MDB_RDONLY;
	int rc;

	if (stat(path, &st) < 0)
		return zr_imp_error(path, -errno, "cannot stat");
	if (!S_ISDIR(st.st_mode))
		flags |= MDB_NOSUBDIR;
	rc = mdb_env_create(env);
	if (rc)
		return lmdb_error(path, rc, "cannot start LMDB");
	mdb_env_set_maxreaders(*env, 126);
	rc = mdb_env_open(*env, path, flags, 0);
	/* A read-only copy without a writable lock file: read it unlocked
	 * (nothing may write to it meanwhile). */
	if (rc == EACCES || rc == EROFS) {
		mdb_env_close(*env);
		rc = mdb_env_create(env);
		if (rc == 0)
			rc = mdb_env_open(*env, path, flags | MDB_NOLOCK, 0);
	}
	if (rc) {
		mdb_env_close(*env);
		*env = NULL;
		return lmdb_error(path, rc, "not an LMDB environment, or a "
				  "damaged one");
	}
	return 0;
}

static int walk(const zr_imp_config *cfg, const char *path, MDB_env *env,
		zr_imp_run *r, const int *stores)
{
	zr_imp_row rows[2];
	MDB_txn *txn = NULL;
	MDB_cursor *cur = NULL;
	MDB_dbi dbi;
	MDB_val k, v;
	char where[600];
	int rc, op = MDB_FIRST, out = 0;
	unsigned long long i = 0;

	rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
	if (rc == 0)
		rc = mdb_dbi_open(txn, NULL, 0, &dbi);
	if (rc == 0)
		rc = mdb_cursor_open(txn, dbi, &cur);
	while (rc == 0 && out == 0 &&
	       (rc = mdb_cursor_get(cur, &k, &v, op)) == 0) {
		op = MDB_NEXT;
		memset(rows, 0, sizeof(rows));
		rows[0].store = stores[0];
		rows[0].kind = ZR_IMP_BYTES;
		rows[0].data = v.mv_data;
		rows[0].len = v.mv_size;
		rows[1] = rows[0];
		rows[1].store = stores[1];
		rows[1].data = k.mv_data;
		rows[1].len = k.mv_size;
		snprintf(where, sizeof(where), "%s: entry %llu", path, i++);
		out = zr_imp_emit(r, where, cfg->keys ? 2 : 1, rows);
	}
	if (cur)
		mdb_cursor_close(cur);
	if (txn)
		mdb_txn_abort(txn);
	if (out)
		return out;
	return rc == MDB_NOTFOUND ? 0 : lmdb_error(path, rc, "cannot read");
}

static int one_env(const zr_imp_config *cfg, const char *path,
		   zr_imp_run *r, const int *stores)
{
	struct sigaction sa, old;
	MDB_env *env = NULL;
	int rc;

	rc = open_env(path, &env);
	if (rc)
		return rc;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_bus;
	sigaction(SIGBUS, &sa, &old);
	if (sigsetjmp(bus_jump, 1) == 0) {
		bus_armed = 1;
		rc = walk(cfg, path, env, r, stores);
	} else {
		/* The transaction is abandoned with the environment. */
		rc = zr_imp_error(path, ZR_IMP_EBAD, "a page lies past the end "
				  "of the file (cut short, or changing)");
	}
	bus_armed = 0;
	sigaction(SIGBUS, &old, NULL);
	mdb_env_close(env);
	return rc;
}

int zr_imp_lmdb_claims(const char *dir)
{
	char *mdb;
	int found;

	if (asprintf(&mdb, "%s/data.mdb", dir) < 0)
		return 0;
	found = access(mdb, F_OK) == 0;
	free(mdb);
	return found;
}

int zr_imp_lmdb(const zr_imp_config *cfg, char **srcs, int n,
		zr_imp_dataset *d)
{
	zr_imp_run *r;
	int stores[2] = { 0, 0 }, i, rc;

	if (zr_imp_dataset_field(d, "value", &stores[0]) < 0 ||
	    (cfg->keys && zr_imp_dataset_field(d, "key", &stores[1]) < 0))
		return zr_imp_error(cfg->dest, -ENOMEM, NULL);
	rc = zr_imp_run_new(cfg, d, 0, 0, &r);
	if (rc)
		return rc;
	for (i = 0; i < n && rc == 0; i++)
		rc = zr_imp_skip_rest(r, cfg, srcs[i],
				      one_env(cfg, srcs[i], r, stores));
	return zr_imp_run_end(r, rc);
}
