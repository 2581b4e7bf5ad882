/*
 * form_table.c - the table of file forms (forms.h): one row a form, and
 * the look-ups the tree's names and the command's --form go through.
 */
#include <stdio.h>
#include <string.h>

#include "npy_file.h"

#define PACKED_WHY "packed: they must have one ndim"
#define PADDED_WHY "padded: they must have one ndim, at least 1, and " \
		   "equal shapes beyond axis 0"
#define FLAT (ZRFILE_ON_RAGGED | ZRFILE_ON_MIXTURE)
#define FLAT_HOW (ZRFILE_HOW_SHAPES | ZRFILE_HOW_RECORDS)

static const struct zrfile_form_row rows[ZRFILE_NFORMS] = {
	[ZRFILE_RECORD] = { ".npy", NULL, ZRFILE_ON_RECORD,
			    ZRFILE_HOW_RECORDS, NULL },
	[ZRFILE_PNG] = { ".png", NULL, ZRFILE_ON_RECORD, ZRFILE_HOW_RECORDS,
			 NULL },
	[ZRFILE_STACK] = { ".npy", NULL, ZRFILE_ON_DENSE | ZRFILE_ON_MIXTURE,
			   0, NULL },
	[ZRFILE_NPZ] = { ".npz", "npz", ZRFILE_ON_RAGGED | ZRFILE_ON_FIELDS |
			 ZRFILE_ON_MIXTURE, ZRFILE_HOW_MEMBERS, NULL },
	[ZRFILE_INDICES] = { ".indices.npy", NULL, ZRFILE_ON_BATCH |
			     ZRFILE_ON_MIXED | ZRFILE_ON_MIXTURE, 0, NULL },
	[ZRFILE_PACKED] = { ".packed.npz", "packed", FLAT,
			    FLAT_HOW | ZRFILE_HOW_DATA, PACKED_WHY },
	[ZRFILE_PADDED] = { ".padded.npz", "padded", FLAT,
			    FLAT_HOW | ZRFILE_HOW_DATA, PADDED_WHY },
	[ZRFILE_PACKED_DATA] = { ".packed.npy", "packed.npy", FLAT,
				 FLAT_HOW | ZRFILE_HOW_DATA, PACKED_WHY },
	[ZRFILE_OFFSETS] = { ".offsets.npy", "offsets.npy", FLAT, FLAT_HOW,
			     PACKED_WHY },
	[ZRFILE_SHAPES] = { ".shapes.npy", "shapes.npy", FLAT, FLAT_HOW,
			    PACKED_WHY },
	[ZRFILE_PADDED_DATA] = { ".padded.npy", "padded.npy", FLAT,
				 FLAT_HOW | ZRFILE_HOW_DATA, PADDED_WHY },
	[ZRFILE_LENGTHS] = { ".lengths.npy", "lengths.npy", FLAT, FLAT_HOW,
			     PADDED_WHY },
};

const struct zrfile_form_row *zrfile_form(int form)
{
	static const struct zrfile_form_row none;

	return form >= 0 && form < ZRFILE_NFORMS ? &rows[form] : &none;
}

static int is(const char *s, const char *name, size_t len)
{
	return s && strlen(s) == len && !memcmp(s, name, len);
}

int zrfile_form_by_suffix(const char *name, size_t len, unsigned on,
			  int mixture)
{
	for (int i = 0; i < ZRFILE_NFORMS; i++)
		if ((rows[i].on & on) &&
		    (!mixture || (rows[i].on & ZRFILE_ON_MIXTURE)) &&
		    is(rows[i].suffix, name, len))
			return i;
	return -1;
}

int zrfile_form_named(const char *name)
{
	size_t len = strlen(name);

	for (int i = 0; i < ZRFILE_NFORMS; i++)
		if (rows[i].cli && (is(rows[i].cli, name, len) ||
				    is(rows[i].suffix + 1, name, len)))
			return i;
	return -1;
}

void zrfile_form_names(char *buf, size_t cap)
{
	size_t at = 0;

	buf[0] = 0;
	for (int i = 0; i < ZRFILE_NFORMS && at < cap; i++)
		if (rows[i].cli)
			at += (size_t)snprintf(buf + at, cap - at, "%s%s",
					       at ? ", " : "", rows[i].cli);
}

unsigned zrfile_form_on(const zrfile_source *st, size_t n)
{
	if (n != 1 || st[0].name)
		return ZRFILE_ON_FIELDS;
	return zr_store_schema(st[0].zs)->ragged ? ZRFILE_ON_RAGGED
						 : ZRFILE_ON_DENSE;
}

int zrfile_form_default(unsigned on)
{
	return on == ZRFILE_ON_DENSE ? ZRFILE_STACK : ZRFILE_NPZ;
}
