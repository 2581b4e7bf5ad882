/*
 * form_table.h - the one table of file forms (enum zrfile_form,
 * encoder.h): every file the encoder makes, by the suffix of its name in
 * a mount, the name `zrecord batch --form` takes, what it applies to, and
 * its plan and fill.  The tree's names (records/I.SUFFIX,
 * batch/SEED-STEP.SUFFIX), the command's --form and the encoder's plan
 * and fill all look a form up here, so a new form is one file (its plan
 * and fill) and one row (form_table.c; CONTRIBUTING.md, "How to add a
 * file form").
 */
#ifndef ZRFILE_FORM_TABLE_H
#define ZRFILE_FORM_TABLE_H

#include "encoder.h"

/* What a form applies to: a record's file, or a batch of one of three
 * kinds; a batch form may also apply to a mixture's batch of that kind. */
enum zrfile_on {
	ZRFILE_ON_RECORD = 1,	/* records/I.SUFFIX of any store          */
	ZRFILE_ON_DENSE = 2,	/* a batch of one dense store's records   */
	ZRFILE_ON_RAGGED = 4,	/* a batch of one ragged store's records  */
	ZRFILE_ON_FIELDS = 8,	/* a batch of named stores (a dataset's)  */
	ZRFILE_ON_MIXED = 16,	/* a mixture's batch of sources that differ
				 * in fields: no file of records          */
	ZRFILE_ON_MIXTURE = 32,	/* the form serves mixtures' batches too  */
	ZRFILE_ON_IMAGE = 64,	/* records/I.SUFFIX of an encoded-image
				 * store (zr_store_images), instead of
				 * ZRFILE_ON_RECORD                       */
	ZRFILE_ON_IMAGES = 128,	/* a batch of one such store's records
				 * decoded (besides its ragged forms)     */
	ZRFILE_ON_BATCH = ZRFILE_ON_DENSE | ZRFILE_ON_RAGGED |
			  ZRFILE_ON_FIELDS,
};

/* How a form's plan reads the records (the batch planner asks). */
enum zrfile_how {
	ZRFILE_HOW_SHAPES = 1,	/* its size needs every record's shape:
				 * the plan reads them (the shape cache
				 * keeps them), and refuses (-EINVAL, why)
				 * records that cannot take the form     */
	ZRFILE_HOW_DATA = 2,	/* such a form that holds the records'
				 * data (not only their shapes)          */
	ZRFILE_HOW_RECORDS = 4,	/* its size depends on which records it
				 * holds (a plan needs the indices)      */
	ZRFILE_HOW_MEMBERS = 8,	/* a member per ragged record: its size
				 * depends on them if a stream is ragged */
};


/* One row. */
struct zrfile_form_row {
	const char *suffix;	/* its file's name from the first dot on  */
	const char *cli;	/* `zrecord batch --form` NAME; NULL: none */
	unsigned on;		/* enum zrfile_on                         */
	unsigned how;		/* enum zrfile_how                        */
	/* HOW_SHAPES: why records are refused (after "its records cannot
	 * be ") */
	const char *why;
	/* its plan and fill (npy_parts.h) */
	int (*plan)(zrfile_npy *f);
	int (*fill)(const zrfile_npy *f, char *buf);
};

/* The row of form (one with nothing set past ZRFILE_NFORMS). */
const struct zrfile_form_row *zrfile_form(int form);
/* The form whose suffix is name[0..len) exactly and that applies to on
 * (one ZRFILE_ON_ kind; mixture: a mixture's batch), or -1. */
int zrfile_form_by_suffix(const char *name, size_t len, unsigned on,
			  int mixture);
/* The form of a --form NAME: a row's cli name, or the suffix (without its
 * dot) of a row that has one; -1 for none. */
int zrfile_form_named(const char *name);
/* The kind of a batch of streams st[0..n) (encoder.h): one unnamed
 * stream is a dense or a ragged store's (or a mixture of such stores'),
 * else named fields; and the form such a batch takes unless told. */
unsigned zrfile_form_on(const zrfile_source *st, size_t n);
int zrfile_form_default(unsigned on);
/* The --form names, ", "-separated, into buf (for a usage message). */
void zrfile_form_names(char *buf, size_t cap);

#endif
