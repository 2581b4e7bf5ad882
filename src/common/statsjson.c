/*
 * statsjson.c - formats a store's stats as JSON (see statsjson.h).  The
 * schema's part comes from zr_schema_json, so "dtype" and "item_shape" are
 * spelt as the schema file spells them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "statsjson.h"

int zrcommon_stats_json(const zr_store *s, const zr_stats *st, char **out,
			size_t *len)
{
	const zr_schema *sc = zr_store_schema(s);
	char schema[ZR_SCHEMA_MAX * 4];
	int err = zr_schema_json(sc, schema, sizeof(schema)), n;

	if (err)
		return err;
	/* the schema's own keys follow ours: skip its opening brace */
	n = asprintf(out, "{\"records\": %" PRIu64 ", \"live_bytes\": %"
		     PRIu64 ", \"data_bytes\": %" PRIu64 ", \"reclaimable\": %"
		     PRIu64 ", \"codec\": \"%s\", \"ragged\": %s, %s\n",
		     st->records, st->live_bytes, st->data_bytes,
		     st->reclaimable, zr_codec_name(zr_store_codec(s)),
		     sc->ragged ? "true" : "false", schema + 1);
	if (n < 0)
		return -ENOMEM;
	*len = (size_t)n;
	return 0;
}
