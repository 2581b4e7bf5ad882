/*
 * import.h - what the import layer's files share (zrimport.h is what its
 * callers see): a sample (one record of every field), the decode of one
 * field into an array, the dataset being written, the sources that
 * produce samples, the decode fan-out and the progress line.
 */
#ifndef ZR_IMPORT_H
#define ZR_IMPORT_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "zrecord.h"
#include "zrimport.h" /* the config, the formats */

#define ZR_IMP_MAX_FIELDS 32
#define ZR_IMP_FAIL 1   /* what a failed step returns, once reported */
/* Input errors: a file that is not what it claims (its msg says why) and
 * one that changed between the walk and the read. */
#define ZR_IMP_EBAD (-EBADMSG)
#define ZR_IMP_ECHANGED (-ESTALE)
/* A mistake in the input that no call failed for: the message says why
 * and names no errno (zr_imp_error). */
#define ZR_IMP_ETEXT 0
#define ZR_IMP_NAME_MAX 64

/* How a field's bytes become a record. */
enum zr_imp_kind {
	ZR_IMP_IMAGE,  /* JPEG/PNG/WebP: decoded (or kept, --encoded)  */
	ZR_IMP_CLS,    /* decimal integer text: a scalar int64         */
	ZR_IMP_BYTES,  /* kept as they are: ragged u1                  */
	ZR_IMP_NPY,    /* one .npy file: its array                     */
	ZR_IMP_LABEL,  /* already an integer (image folder classes)    */
	ZR_IMP_ARRAY   /* already an array (HDF5, LMDB, .npy rows)     */
};

/* One record's array, owned by the field after decode. */
typedef struct zr_imp_array {
	zr_dtype dtype;
	uint32_t ndim;
	uint64_t shape[ZR_MAX_NDIM];
	void *data;     /* product(shape) * itemsize bytes, malloc'd */
	size_t len;
	int64_t label;  /* ZR_IMP_CLS / ZR_IMP_LABEL: the value      */
	int borrowed;   /* data is a decoder's buffer, not malloc'd  */
} zr_imp_array;

typedef struct zr_imp_field {
	int store;            /* index into the dataset's stores       */
	enum zr_imp_kind kind;
	char *path;           /* read by the worker when bytes is NULL */
	void *bytes;          /* the encoded input, malloc'd           */
	size_t nbytes;
	off_t want_size;      /* path: the size and mtime seen by the  */
	int64_t want_mtime;   /* walk (ns); a file that differs changed */
	zr_append *put;       /* NULL, or the session whose slot the    */
	uint64_t slot;        /* decoder puts a record of put_len bytes */
	size_t put_len;       /* into (dense stores)                    */
	int stored;           /* it did: out has no data, only shape    */
	zr_imp_array out;
	int err;              /* decode result                          */
	char msg[160];
} zr_imp_field;

typedef struct zr_imp_sample {
	char *where;          /* the path (or shard:key) errors name  */
	unsigned nfields;
	zr_imp_field f[ZR_IMP_MAX_FIELDS];
	int bad;              /* skipped under --skip-bad               */
} zr_imp_sample;

void zr_imp_sample_clear(zr_imp_sample *s);

/* -- decoding (image.c, field.c) ---------------------------------------- */

/* Decodes a JPEG, PNG or WebP held in (buf, len) into a uint8 HWC array
 * with the channels as the file holds them (1 grey, 2 grey+alpha, 3, 4),
 * then applies opts.  ZR_IMP_EBAD with msg for anything undecodable,
 * -ENOTSUP for a format it does not know.  Pure, thread-safe. */
int zr_imp_image_decode(const void *buf, size_t len,
			const zr_imp_image_opts *opts, zr_imp_array *out,
			char *msg, size_t msg_cap);
/* As zr_imp_image_decode, decoding straight into dst (out->borrowed)
 * when the image is dst_len bytes and opts leave it as decoded. */
int zr_imp_image_decode_into(const void *buf, size_t len,
			     const zr_imp_image_opts *opts, void *dst,
			     size_t dst_len, zr_imp_array *out, char *msg,
			     size_t msg_cap);
/* Applies --rgb, --resize, --center-crop and --chw to an HWC image, in
 * place of img (image_xform.c). */
int zr_imp_image_xform(zr_imp_array *img, const zr_imp_image_opts *opts,
		       char *msg, size_t msg_cap);
/* Decodes a CMYK or YCCK JPEG (tj: a TurboJPEG decompressor) of w x h
 * into rgb (w * h * 3 bytes) as PIL's convert("RGB") does
 * (image_cmyk.c); ZR_IMP_EBAD with msg for a corrupt file. */
int zr_imp_jpeg_cmyk(void *tj, const void *buf, size_t len, int w, int h,
		     uint8_t *rgb, char *msg, size_t cap);
/* 1 if zr_imp_image_xform leaves an h x w x c image as it is. */
int zr_imp_image_xform_keeps(uint32_t h, uint32_t w, uint32_t c,
			     const zr_imp_image_opts *opts);
/* A decode thread's own buffer, reused from record to record so that a
 * record put into its store is read back from the cache. */
typedef struct zr_imp_scratch {
	void *buf;
	size_t cap;
} zr_imp_scratch;

/* Reads (if needed) and decodes one field, setting f->err and f->msg,
 * and puts it into its store's slot if it has one (f->stored; sc, the
 * calling thread's buffer, may be NULL when f->put is). */
void zr_imp_field_decode(zr_imp_field *f, const zr_imp_image_opts *opts,
			 zr_imp_scratch *sc);
/* The kind a WebDataset member's extension maps to. */
enum zr_imp_kind zr_imp_kind_of_ext(const char *ext);
/* 1 if the name ends in .jpg .jpeg .png .webp (any case). */
int zr_imp_is_image_name(const char *name);

/* -- DEST's temporary folder (dest.c) ----------------------------------- */

typedef struct zr_imp_dest {
	char *tmp;        /* DEST.tmp-XXXXXX                          */
	char *dir;        /* the folder DEST goes in                  */
	const char *base; /* DEST's last name (in the caller's DEST)  */
	dev_t dir_dev;    /* dir's device and inode, 0 if it is none  */
	ino_t dir_ino;
} zr_imp_dest;

/* Removes what killed imports of DEST left (a DEST.tmp-XXXXXX whose
 * owner file names a process of this host that is gone), saying so,
 * then makes t->tmp with the mode mkdir(2) would give under the umask
 * and an owner file naming this process.  Reports its failures. */
int zr_imp_dest_make(zr_imp_dest *t, const char *dest);
/* Removes the owner file: the folder is about to become DEST. */
int zr_imp_dest_seal(const zr_imp_dest *t);
/* 1 if name, in the folder of stat dir, is DEST or a temporary folder
 * of DEST: the walks of the sources leave them out. */
int zr_imp_dest_hides(const zr_imp_dest *t, const struct stat *dir,
		      const char *name);
/* The entries of dir not starting with a dot, in byte order of their
 * names, without the ones zr_imp_dest_hides (t may be NULL: none); n
 * entries into *out (each and the array malloc'd), or -errno. */
struct dirent;
int zr_imp_list_dir(const zr_imp_dest *t, const char *dir,
		    struct dirent ***out);
void zr_imp_dest_free(zr_imp_dest *t);
/* Removes path and everything under it (symlinks not followed). */
int zr_imp_rmtree(const char *path);

/* -- the dataset being written (dataset.c) ------------------------------ */

/* Creates DEST.tmp-XXXXXX next to DEST (which must not exist). */
int zr_imp_dataset_new(const zr_imp_config *cfg, zr_imp_dataset **out);
/* Where the dataset is built (what the walks leave out). */
const zr_imp_dest *zr_imp_dataset_dest(const zr_imp_dataset *d);
/* Names a field: its store index (creating the slot; the store itself
 * is created with the first record's schema). */
int zr_imp_dataset_field(zr_imp_dataset *d, const char *name, int *store);
/* Reserves the rows of samples [0, n), about to be decoded, in the dense
 * stores already open (f->put, f->slot): each decode thread puts its
 * records there itself, and zr_imp_dataset_append, next, stages them.
 * Until then no other batch may be appended. */
int zr_imp_dataset_place(zr_imp_dataset *d, zr_imp_sample *s, size_t n);
/* 1 if zr_imp_dataset_place has stores to reserve rows in. */
int zr_imp_dataset_can_place(const zr_imp_dataset *d);
/* Appends decoded samples [0, n) in order (bad ones skipped). */
int zr_imp_dataset_append(zr_imp_dataset *d, zr_imp_sample *s, size_t n);
/* Writes files.txt as the samples go in: line i is record i's where
 * after its first rel bytes (the SOURCE's prefix), a backslash and a
 * newline in it written as \\ and \n. */
int zr_imp_dataset_names(zr_imp_dataset *d, size_t rel);
/* Writes a small file (classes.json) into the dataset. */
int zr_imp_dataset_write_file(zr_imp_dataset *d, const char *name,
			      const char *text);
/* Commits every store, syncs and renames the folder to DEST. */
int zr_imp_dataset_commit(zr_imp_dataset *d);
/* Removes the temporary folder and frees (after commit: frees only). */
void zr_imp_dataset_free(zr_imp_dataset *d);
uint64_t zr_imp_dataset_length(const zr_imp_dataset *d);

/* -- the pipeline (pipeline.c) ------------------------------------------ */

typedef struct zr_imp_run zr_imp_run;

/* SIGINT, SIGTERM and SIGHUP end the import at the next batch, which
 * then fails and removes the temporary folder. */
void zr_imp_catch_signals(void);
/* Decodes batches over cfg->threads lanes and appends them in order. */
int zr_imp_run_new(const zr_imp_config *cfg, zr_imp_dataset *d,
		   uint64_t total_items, uint64_t total_bytes,
		   zr_imp_run **out);
/* A fresh sample slot to fill (its fields cleared); the batch is
 * decoded and appended when full.  Never NULL once run_new succeeded. */
int zr_imp_run_next(zr_imp_run *r, zr_imp_sample **out);
/* Counts source bytes read (progress). */
void zr_imp_run_bytes(zr_imp_run *r, uint64_t n);
/* Counts a sample the source leaves out under --skip-bad (a broken
 * shard, an unreadable entry) in the report; where and why are copied. */
void zr_imp_run_skip(zr_imp_run *r, const char *where, const char *why);
/* The same for a sample --drop-incomplete drops: the report lists them
 * apart, under that option. */
void zr_imp_run_drop(zr_imp_run *r, const char *where, const char *why);
/* A source's last step: decodes and appends what is queued (if rc is
 * 0), prints what --skip-bad left out, frees; returns rc or the
 * flush's failure. */
int zr_imp_run_end(zr_imp_run *r, int rc);
/* Reports an error about the import as a whole or one input (report.c);
 * returns ZR_IMP_FAIL. */
int zr_imp_error(const char *where, int err, const char *detail);
/* A warning line about where ("zrecord: import: warning: ..."); the
 * import goes on. */
void zr_imp_warn(const char *where, const char *detail);
/* "ignored N file(s) that is/are not WHAT" when n > 0. */
void zr_imp_note_ignored(uint64_t n, const char *what);
/* 1 if the last report was of an input error (ZR_IMP_EBAD/ECHANGED). */
int zr_imp_input_failed(void);
/* rc, or 0 after noting path as skipped when rc followed the report of
 * an input error and --skip-bad is on: what is left of a shard or file
 * that cannot be read from here on is left out (pipeline.c). */
int zr_imp_skip_rest(zr_imp_run *r, const zr_imp_config *cfg,
		     const char *path, int rc);
/* Sends the reports to f instead of stderr (NULL: stderr again). */
void zr_imp_report_to(FILE *f);

/* -- sources ------------------------------------------------------------ */

/* One field of a row-wise source's sample: data is copied. */
typedef struct zr_imp_row {
	int store;
	enum zr_imp_kind kind;  /* ZR_IMP_ARRAY, or ZR_IMP_BYTES (1-D u1) */
	zr_dtype dtype;
	uint32_t ndim;
	const uint64_t *shape;
	const void *data;
	size_t len;
} zr_imp_row;

/* Queues one sample of n fields (rows.c). */
int zr_imp_emit(zr_imp_run *r, const char *where, unsigned n,
		const zr_imp_row *rows);
/* The sum of the regular files' sizes, for the progress line's ETA (it
 * is left out when the input read grows past it: compressed sources). */
uint64_t zr_imp_files_size(char **paths, int n);
/* A file's modification time in nanoseconds. */
struct stat;
int64_t zr_imp_mtime_ns(const struct stat *st);
/* Reports (ZR_IMP_ECHANGED) if path's size or mtime is not before's. */
int zr_imp_unchanged(const char *path, const struct stat *before);
/* The dtype of kind ('i', 'u', 'f', 'c', 'b') and size in bytes. */
int zr_imp_dtype(char kind, int little, size_t size, zr_dtype *out);

/* The formats' runs and folder claims: the rows of formats.c. */
int zr_imp_hdf5(const zr_imp_config *cfg, char **srcs, int n,
		zr_imp_dataset *d);
int zr_imp_lmdb(const zr_imp_config *cfg, char **srcs, int n,
		zr_imp_dataset *d);
int zr_imp_npy(const zr_imp_config *cfg, char **srcs, int n,
	       zr_imp_dataset *d);

int zr_imp_folder(const zr_imp_config *cfg, char **srcs, int n,
		  zr_imp_dataset *d);
int zr_imp_wds(const zr_imp_config *cfg, char **srcs, int n,
	       zr_imp_dataset *d);
int zr_imp_lmdb_claims(const char *dir);   /* holds data.mdb          */
int zr_imp_npy_claims(const char *dir);    /* .npy/.npz and no images */
int zr_imp_folder_claims(const char *dir); /* any folder              */

/* -- WebDataset's sample rule (wds_read.c) ------------------------------ */

struct archive;
typedef struct zr_imp_wds_reader zr_imp_wds_reader;

/* Where the samples go.  sample takes s (its fields' store is the
 * reader's field index, named by zr_imp_wds_field_name) and the input
 * bytes it came from; it returns 0 or, after reporting, ZR_IMP_FAIL. */
typedef struct zr_imp_wds_sink {
	int (*sample)(void *ctx, zr_imp_sample *s, uint64_t bytes);
	void (*skip)(void *ctx, const char *where, const char *why);
	void *ctx;
} zr_imp_wds_sink;

/* The reader keeps the first sample's fields across shards. */
int zr_imp_wds_new(int drop_incomplete, const zr_imp_wds_sink *sink,
		   zr_imp_wds_reader **out);
/* Reads every member of an open archive; errors are reported, naming
 * shard and the member or key. */
int zr_imp_wds_shard(zr_imp_wds_reader *w, struct archive *a, const char *shard);
/* Members skipped for their names (no KEY.FIELD form, "__meta__"). */
uint64_t zr_imp_wds_ignored(const zr_imp_wds_reader *w);
const char *zr_imp_wds_field_name(const zr_imp_wds_reader *w, int field);
void zr_imp_wds_free(zr_imp_wds_reader *w);

/* -- progress (progress_line.c) ---------------------------------------------- */

typedef struct zr_imp_progress {
	int on;
	double start, last;
	uint64_t items, total_items, bytes, total_bytes;
} zr_imp_progress;

void zr_imp_progress_init(zr_imp_progress *p, int mode, uint64_t items,
			  uint64_t bytes);
void zr_imp_progress_step(zr_imp_progress *p, uint64_t items,
			  uint64_t bytes);
void zr_imp_progress_end(zr_imp_progress *p);

#endif
