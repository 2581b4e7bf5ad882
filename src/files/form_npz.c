/*
 * form_npz.c - the .npz form (ZRFILE_NPZ, see encoder.h): every stream's
 * members in stream order, a dense stream's one (B, *item_shape) member
 * and a ragged stream's one member per record, stored by npz.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npy_parts.h"

#define INDEX_NAME_MAX 20 /* digits of the largest k */

static size_t stream_parts(const zrfile_npy *f, const zrfile_source *s)
{
	return zrfile_npy_ragged(s) ? f->count : 1;
}

/* Member count and an upper bound of the name bytes of an .npz. */
static int count_members(const zrfile_npy *f, size_t *n, size_t *bytes)
{
	*n = *bytes = 0;
	for (size_t i = 0; i < f->nst; i++) {
		const char *name = f->st[i].name;
		size_t parts = stream_parts(f, &f->st[i]);
		size_t len = (name ? strlen(name) + 1 : 4) + INDEX_NAME_MAX +
			     sizeof(".npy");

		if (parts > ZRFILE_NPZ_MEMBERS_MAX - *n)
			return ZR_E_TOOBIG; /* before allocating for them */
		*n += parts;
		*bytes += parts * len;
	}
	return 0;
}

/* Names and sizes of one stream's members, from f->part[f->nparts]. */
static int stream_members(zrfile_npy *f, const zrfile_source *s,
			  char **names)
{
	const char *name = s->name;
	int err = 0;

	if (!zrfile_npy_ragged(s)) {
		zrfile_npz_member *m = &f->part[f->nparts++];

		m->name = *names;
		*names += sprintf(*names, "%s.npy", name ? name : "arr_0") + 1;
		return zrfile_npy_dense_size(f, s, &m->size);
	}
	for (uint64_t k = 0; k < f->count && !err; k++) {
		zrfile_npz_member *m = &f->part[f->nparts++];

		m->name = *names;
		if (name)
			*names += sprintf(*names, "%s/%llu.npy", name,
					  (unsigned long long)k) + 1;
		else
			*names += sprintf(*names, "arr_%llu.npy",
					  (unsigned long long)k) + 1;
		err = zrfile_npy_record_size(s, f->idx[k], &m->size);
	}
	return err;
}

int zrfile_plan_npz(zrfile_npy *f)
{
	size_t n, bytes;
	char *names;
	int err = count_members(f, &n, &bytes);

	if (err)
		return err;
	f->part = calloc(n ? n : 1, sizeof(*f->part));
	f->names = names = malloc(bytes ? bytes : 1);
	if (!f->part || !names)
		return -ENOMEM;
	for (size_t i = 0; i < f->nst && !err; i++)
		err = stream_members(f, &f->st[i], &names);
	return err ? err : zrfile_npz_layout(f->part, f->nparts, &f->total);
}

int zrfile_fill_npz(const zrfile_npy *f, char *buf)
{
	const zrfile_npz_member *m = f->part;
	int err = 0;

	for (size_t i = 0; i < f->nst && !err; i++) {
		err = zrfile_npy_fill_stream(f, &f->st[i], m, buf);
		m += stream_parts(f, &f->st[i]);
	}
	return err ? err : zrfile_npz_finish(buf, f->total, f->part, f->nparts);
}
