/*
 * cli.h - what the zrecord command's files share: the subcommand table,
 * error reporting, argument parsing, output files, progress, and writing
 * records as .npy/.npz files, which `get` and `batch` both do.
 */
#ifndef ZR_CLI_H
#define ZR_CLI_H

#include <getopt.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "zrecord.h"

#define ZR_CLI_OK 0
#define ZR_CLI_FAIL 1   /* the operation failed */
#define ZR_CLI_USAGE 2  /* the command line was wrong */

/* One subcommand: run gets argv with argv[0] == the command's name. */
typedef struct zr_cli_cmd {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *synopsis; /* "STORE INDEX... [-o OUT]" */
	const char *help;     /* the rest of `zrecord NAME --help` */
	int waits;            /* takes --wait[=SECONDS] (zr_cli_open waits) */
	void (*help_more)(void); /* prints rows help cannot hold (cat: the
				  * run options' table), or NULL */
} zr_cli_cmd;

extern const zr_cli_cmd zr_cli_create, zr_cli_append, zr_cli_get,
	zr_cli_batch, zr_cli_stats, zr_cli_schema, zr_cli_verify,
	zr_cli_train_dict, zr_cli_delete, zr_cli_compact, zr_cli_sync,
	zr_cli_import, zr_cli_recover, zr_cli_cat, zr_cli_ls, zr_cli_push,
	zr_cli_pull;

/* -- errors (util.c) ----------------------------------------------------- */

/* Prints "zrecord: STORE: CMD: <zr_strerror(err)>[: detail]" and returns
 * ZR_CLI_FAIL.  detail NULL or "" is left out. */
int zr_cli_error(const char *store, const char *cmd, int err,
		 const char *detail);
/* Same, with the library's zr_errmsg() as the detail. */
int zr_cli_lib_error(const char *store, const char *cmd, int err);
/* Prints "zrecord: CMD: <fmt...>" and a hint to --help; returns
 * ZR_CLI_USAGE. */
int zr_cli_usage(const zr_cli_cmd *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Prints the command's full help on stdout. */
void zr_cli_print_help(const zr_cli_cmd *cmd);

/* -- arguments (util.c) -------------------------------------------------- */

/* --wait[=SECONDS]: zr_cli_getopt parses it into the wait of zr_cli_open
 * (it never returns ZR_CLI_OPT_WAIT); zr_cli_store_args offers it to the
 * commands whose waits is set.  Default 60 s, at most a day. */
#define ZR_CLI_OPT_WAIT 0x100
#define ZR_CLI_WAIT_OPTION { "wait", optional_argument, NULL, ZR_CLI_OPT_WAIT }
#define ZR_CLI_WAIT_DEFAULT 60u
#define ZR_CLI_WAIT_MAX 86400u

/* --cache DIR and --cache-size N (cache_opts.c): every command takes
 * them, through zr_cli_getopt, which applies them (zr_cache_set) once the
 * options are parsed. */
#define ZR_CLI_OPT_CACHE 0x101
#define ZR_CLI_OPT_CACHE_SIZE 0x102
/* longopts and the common ones, in a table of its own (longopts if it is
 * too long to add them to). */
const struct option *zr_cli_common_opts(const struct option *longopts);
/* One of them; 0, or -EINVAL for a --cache-size that is no size (the
 * caller words the usage message). */
int zr_cli_cache_opt(int c, const char *arg);
/* The cache they chose made the process's; 0, or -3 after a message. */
int zr_cli_cache_apply(const zr_cli_cmd *cmd);
/* A warning on stderr if the default cache an S3 read fell back on could
 * not be used (zr_cache_status). */
void zr_cli_cache_warn(void);

/* getopt_long over a subcommand's argv that handles --help (returns -2
 * after printing it), --wait and bad options or values (returns -3 after a
 * usage message); otherwise as getopt_long.  Every longopts needs
 * {"help", 0, 0, 'h'}. */
int zr_cli_getopt(const zr_cli_cmd *cmd, int argc, char **argv,
		  const char *shortopts, const struct option *longopts);
/* Maps zr_cli_getopt's -2/-3 to an exit code. */
int zr_cli_getopt_exit(int c);
/* For commands whose only options are --help and (cmd->waits) --wait:
 * parses "STORE", then nothing
 * or (min_rest > 0) at least min_rest more arguments, read by the caller
 * from argv[optind + 1].  Returns -1 to go on, else an exit code. */
int zr_cli_store_args(const zr_cli_cmd *cmd, int argc, char **argv,
		      int min_rest);

/* Strict unsigned decimal; -EINVAL for anything else (sign, blanks, ""),
 * -ERANGE past UINT64_MAX. */
int zr_cli_parse_u64(const char *s, uint64_t *out);
/* Parses argv[0..n) as record indices into a new array (*out, free it).
 * Reports bad ones itself and returns ZR_CLI_USAGE; ZR_CLI_FAIL on out of
 * memory; 0 on success. */
int zr_cli_parse_indices(const zr_cli_cmd *cmd, char **argv, int n,
			 uint64_t **out);
/* ZR_E_RANGE report for the first index >= the store's length. */
int zr_cli_check_range(const char *store, const char *cmd, zr_store *s,
		       const uint64_t *idx, size_t n);

/* Prints the store's zr_store_lock_warning, if any, as a warning. */
void zr_cli_warn_lock(const zr_store *s);
/* Opens a store, reporting failure itself (returns ZR_CLI_FAIL), and
 * warning when its lock does not reach other hosts; says what the open
 * recovered of an interrupted delete or compact (zr_store_recovered).  After --wait, a
 * store whose lock is held is retried until it is free or the time is
 * up; "store busy" names the holder. */
int zr_cli_open(const char *path, unsigned flags, const char *cmd,
		zr_store **out);
/* Closes (syncing a read-write handle) and reports a failed sync;
 * returns rc unchanged unless the close fails while rc was ZR_CLI_OK. */
int zr_cli_close(zr_store *s, const char *path, const char *cmd, int rc);

/* Opens FILE for reading, "-" meaning stdin: 0 or -errno. */
int zr_cli_open_input(const char *file, int *fd);
/* Closes what zr_cli_open_input opened (stdin stays open). */
void zr_cli_close_input(int fd);
/* Reads a whole regular file of at most max bytes; -errno or -EFBIG. */
int zr_cli_read_file(const char *path, size_t max, void **buf, size_t *len);

/* -- output (output.c) --------------------------------------------------- */

typedef struct zr_cli_out {
	int fd;
	const char *path;  /* NULL for stdout */
} zr_cli_out;

/* Opens -o PATH (created or truncated) or stdout when path is NULL or "-".
 * Refuses a terminal as stdout.  Reports errors itself. */
int zr_cli_out_open(zr_cli_out *o, const char *path, const char *store,
		    const char *cmd);
/* Writes everything, reporting errors itself. */
int zr_cli_out_write(zr_cli_out *o, const void *buf, size_t len,
		     const char *store, const char *cmd);
/* Closes; when rc is not ZR_CLI_OK a file output is removed.  Returns rc,
 * or the close's failure. */
int zr_cli_out_close(zr_cli_out *o, const char *store, const char *cmd,
		     int rc);

/* Open, write buf, close: the whole output of a command in one call. */
int zr_cli_out_all(const char *path, const void *buf, size_t len,
		   const char *store, const char *cmd);

/* -- progress (progress_meter.c) ----------------------------------------- */

typedef struct zr_cli_progress {
	int on;            /* stderr is a terminal */
	const char *label;
	int last_permille;
	int shown;
	pthread_mutex_t lock; /* guards the fields above the library updates */
} zr_cli_progress;

void zr_cli_progress_init(zr_cli_progress *p, const char *label);
/* A zr_progress_fn: ctx is the zr_cli_progress.  total 0 means unknown. */
void zr_cli_progress_fn(void *ctx, uint64_t done, uint64_t total);
/* Ends the line if one was shown; pairs with init. */
void zr_cli_progress_end(zr_cli_progress *p);

/* -- records as NumPy files (records.c) ---------------------------------- */

/* The form of several records of s in one file: a stacked .npy of shape
 * (n, *item_shape) for a dense store, an .npz of arr_0.npy, arr_1.npy, ...
 * for a ragged one (see src/files/encoder.h). */
int zr_cli_several_form(zr_store *s);
/* Writes records idx[0..n) of s to out (-o; NULL: stdout) as the NumPy
 * file of form (an enum zrfile_form: the bytes zrecordfs serves for
 * the same records).  Reports errors itself; returns a ZR_CLI_ code. */
int zr_cli_write_records(zr_store *s, int form, const uint64_t *idx,
			 size_t n, const char *out, const char *store,
			 const char *cmd);
/* Writes the file f plans (encoder.h; zrecord batch: a batch_file.h
 * plan's) to out: a dense stack piece by piece, any other form whole.
 * Reports errors itself; returns a ZR_CLI_ code. */
struct zrfile_npy;
int zr_cli_write_file(const struct zrfile_npy *f, const char *out,
		      const char *store, const char *cmd);

/* -- decoded images (images.c) ------------------------------------------- */

/* --decode and --augment into o: -1 when good, else a usage exit. */
int zr_cli_image_opts(const zr_cli_cmd *cmd, const char *decode,
		      const char *augment, zr_image_opts *o);
/* ZR_CLI_OK for an encoded-image store, else says so (ZR_CLI_FAIL). */
int zr_cli_image_check(zr_store *s, const char *store, const char *cmd);
/* ZR_CLI_OK when o gives every image one output size (several records
 * make one array), else says so (ZR_CLI_FAIL). */
int zr_cli_image_sized(const zr_image_opts *o, const char *store,
		       const char *cmd);
/* Writes records idx[0..n) decoded under o as one .npy of uint8: (H, W,
 * 3) when single, else (n, S, S, 3).  Reports errors itself. */
int zr_cli_write_images(zr_store *s, const uint64_t *idx, size_t n,
			const zr_image_opts *o, int single, const char *out,
			const char *store, const char *cmd);

#endif
