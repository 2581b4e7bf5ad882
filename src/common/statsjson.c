/*
 * statsjson.c - formats a store's and a mixture's stats as JSON (see
 * statsjson.h).  A store's schema part comes from zr_schema_json, so
 * "dtype" and "item_shape" are spelt as the schema file spells them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

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

/* s as a JSON string. */
static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void source_json(FILE *f, const zrcommon_mix_figures *m, uint32_t s,
			uint64_t sum)
{
	uint64_t w = m->file->weight[s], n = m->records[s];

	fprintf(f, "%s\n  {\"source\": %u, \"path\": ", s ? "," : "", s);
	json_str(f, m->file->path[s]);
	fprintf(f, ", \"records\": %llu, \"weight\": %llu, \"share\": ",
		(unsigned long long)n, (unsigned long long)w);
	/* null, not NaN (no JSON number), while every weight is 0 */
	if (sum)
		fprintf(f, "%.6f", (double)w / (double)sum);
	else
		fprintf(f, "null");
	/* positions over which the source serves each record once; null
	 * when it never does, or past 2^64 positions */
	fprintf(f, ", \"positions_per_cycle\": ");
	if (w && n && n <= (UINT64_MAX - (w - 1)) / sum)
		fprintf(f, "%llu}",
			(unsigned long long)((n * sum + w - 1) / w));
	else
		fprintf(f, "null}");
}

static void schedule_json(FILE *f, const zrcommon_mixfile *file)
{
	fprintf(f, "],\n \"schedule\": [");
	for (uint32_t i = 0; i < file->nsched; i++) {
		fprintf(f, "%s{\"from\": %llu, \"weights\": [", i ? ", " : "",
			(unsigned long long)file->from[i]);
		for (uint32_t s = 0; s < file->k; s++)
			fprintf(f, "%s%llu", s ? ", " : "", (unsigned long long)
				file->weights[(size_t)i * file->k + s]);
		fprintf(f, "]}");
	}
	fprintf(f, "]}\n");
}

int zrcommon_mix_stats_json(const zrcommon_mix_figures *m, char **out,
			    size_t *len)
{
	uint64_t sum = 0;
	FILE *f = open_memstream(out, len);

	if (!f)
		return -ENOMEM;
	for (uint32_t s = 0; s < m->file->k; s++)
		sum += m->file->weight[s];
	fprintf(f, "{\"mixture\": ");
	json_str(f, m->path);
	fprintf(f, ", \"fields\": %s", m->fields ? "" : "null");
	for (uint32_t i = 0; m->fields && i < m->nf; i++) {
		fprintf(f, "%s", i ? ", " : "[");
		json_str(f, m->fields[i]);
	}
	fprintf(f, "%s, \"batch_files\": \"%s\", \"sources\": [",
		m->fields ? "]" : "", m->records_served ? "records and indices"
		: "indices only");
	for (uint32_t s = 0; s < m->file->k; s++)
		source_json(f, m, s, sum);
	schedule_json(f, m->file);
	if (fclose(f)) {
		free(*out);
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}
