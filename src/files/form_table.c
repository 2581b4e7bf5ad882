/*
 * form_table.c - the table of file forms (form_table.h): one row a
 * form, the look-ups the tree's names and the command's --form go
 * through, and the encoder's plan and fill, which call a form's own.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "form_table.h"
#include "npy_parts.h"

/* The packed and padded forms and their parts (form_ragged.c). */
#define FLAT(sfx, name, data, why_)					\
	{ .suffix = sfx, .cli = name,					\
	  .on = ZRFILE_ON_RAGGED | ZRFILE_ON_MIXTURE,			\
	  .how = ZRFILE_HOW_SHAPES | ZRFILE_HOW_RECORDS | (data),	\
	  .why = why_, .plan = zrfile_plan_flat, .fill = zrfile_fill_flat }
#define PACKED_WHY "packed: they must have one ndim"
#define PADDED_WHY "padded: they must have one ndim, at least 1, and " \
		   "equal shapes beyond axis 0"

/* An encoded-image store's record files (form_image.c): decoded, or
 * its stored bytes under the suffix of their format. */
#define IMAGE_ROW(sfx, plan_, fill_)					\
	{ .suffix = sfx, .on = ZRFILE_ON_IMAGE, .how = ZRFILE_HOW_RECORDS, \
	  .plan = plan_, .fill = fill_ }
#define STORED(sfx) IMAGE_ROW(sfx, zrfile_plan_stored, zrfile_fill_stored)

static const struct zrfile_form_row rows[ZRFILE_NFORMS] = {
	[ZRFILE_RECORD] = {
		.suffix = ".npy", .on = ZRFILE_ON_RECORD,
		.how = ZRFILE_HOW_RECORDS,
		.plan = zrfile_plan_record, .fill = zrfile_fill_npy },
	[ZRFILE_PNG] = {
		.suffix = ".png", .on = ZRFILE_ON_RECORD,
		.how = ZRFILE_HOW_RECORDS,
		.plan = zrfile_plan_png, .fill = zrfile_fill_png },
	[ZRFILE_STACK] = {
		.suffix = ".npy", .on = ZRFILE_ON_DENSE | ZRFILE_ON_MIXTURE,
		.plan = zrfile_plan_stack, .fill = zrfile_fill_npy },
	[ZRFILE_NPZ] = {
		.suffix = ".npz", .cli = "npz",
		.on = ZRFILE_ON_RAGGED | ZRFILE_ON_FIELDS | ZRFILE_ON_MIXTURE,
		.how = ZRFILE_HOW_MEMBERS,
		.plan = zrfile_plan_npz, .fill = zrfile_fill_npz },
	[ZRFILE_INDICES] = {
		.suffix = ".indices.npy",
		.on = ZRFILE_ON_BATCH | ZRFILE_ON_MIXED | ZRFILE_ON_MIXTURE,
		.plan = zrfile_plan_indices, .fill = zrfile_fill_indices },
	[ZRFILE_PACKED] = FLAT(".packed.npz", "packed", ZRFILE_HOW_DATA,
			       PACKED_WHY),
	[ZRFILE_PADDED] = FLAT(".padded.npz", "padded", ZRFILE_HOW_DATA,
			       PADDED_WHY),
	[ZRFILE_PACKED_DATA] = FLAT(".packed.npy", "packed.npy",
				    ZRFILE_HOW_DATA, PACKED_WHY),
	[ZRFILE_OFFSETS] = FLAT(".offsets.npy", "offsets.npy", 0, PACKED_WHY),
	[ZRFILE_SHAPES] = FLAT(".shapes.npy", "shapes.npy", 0, PACKED_WHY),
	[ZRFILE_PADDED_DATA] = FLAT(".padded.npy", "padded.npy",
				    ZRFILE_HOW_DATA, PADDED_WHY),
	[ZRFILE_LENGTHS] = FLAT(".lengths.npy", "lengths.npy", 0, PADDED_WHY),
	[ZRFILE_IMAGE] = IMAGE_ROW(".npy", zrfile_plan_image,
				   zrfile_fill_image),
	[ZRFILE_IMAGE_PNG] = IMAGE_ROW(".png", zrfile_plan_image_png,
				       zrfile_fill_image_png),
	[ZRFILE_STORED_JPEG] = STORED(".jpg"),
	[ZRFILE_STORED_PNG] = STORED(".orig.png"),
	[ZRFILE_STORED_WEBP] = STORED(".webp"),
	[ZRFILE_IMAGES] = {
		.suffix = ".npy", .on = ZRFILE_ON_IMAGES,
		.plan = zrfile_plan_images, .fill = zrfile_fill_image },
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

int zrfile_npy_flat(int form)
{
	return !!(zrfile_form(form)->how & ZRFILE_HOW_SHAPES);
}

int zrfile_npy_needs_records(int form, const zrfile_source *st,
			     size_t nst)
{
	unsigned how = zrfile_form(form)->how;

	if (how & ZRFILE_HOW_RECORDS)
		return 1;
	for (size_t i = 0; (how & ZRFILE_HOW_MEMBERS) && i < nst; i++)
		if (zrfile_npy_ragged(&st[i]))
			return 1;
	return 0;
}

int zrfile_npy_plan(zrfile_npy *f, int form, const zrfile_source *st,
		    size_t nst, const uint64_t *idx, uint64_t count)
{
	const struct zrfile_form_row *r = zrfile_form(form);

	zrfile_npy_init(f, form, st, nst, idx, count);
	if (!r->plan || (!idx && zrfile_npy_needs_records(form, st, nst)))
		return -EINVAL;
	return r->plan(f);
}

int zrfile_npy_fill(const zrfile_npy *f, void *buf)
{
	const struct zrfile_form_row *r = zrfile_form(f->form);

	if (!f->idx || !buf || !r->fill)
		return -EINVAL; /* planned for its size only */
	return r->fill(f, buf);
}
