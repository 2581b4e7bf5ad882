/*
 * statsjson.h - the JSON reports of a store's and a mixture's figures:
 * what `zrecord stats` prints and what a mount's stats files hold, byte
 * for byte.
 *
 * One line, keys in this order: records, live_bytes, data_bytes,
 * reclaimable, codec, ragged, dtype, and item_shape for dense stores:
 * {"records": 40, "live_bytes": 7680, "data_bytes": 7680, "reclaimable": 0,
 *  "codec": "raw", "ragged": false, "dtype": "|u1", "item_shape": [3, 8, 8]}
 */
#ifndef ZRCOMMON_STATSJSON_H
#define ZRCOMMON_STATSJSON_H

#include <stddef.h>

#include "mixfile.h"
#include "zrecord.h"

/* The report of store s whose figures are st (from zr_store_stats), with
 * a trailing newline, into a malloc'ed *out of *len bytes (NUL-terminated
 * besides).  0, -ENOMEM, or zr_schema_json's error. */
int zrcommon_stats_json(const zr_store *s, const zr_stats *st, char **out,
			size_t *len);

/* A mixture's figures, for zrcommon_mix_stats_json. */
typedef struct zrcommon_mix_figures {
	const char *path;	   /* the mixture file, as named          */
	/* its sources' paths and weights, and its schedule */
	const zrcommon_mixfile *file;
	const uint64_t *records;   /* file->k: each source's records      */
	const char *const *fields; /* nf names; NULL: the sources are stores */
	uint32_t nf;
	int records_served;	   /* batch files of records, else indices
				    * only                                */
} zrcommon_mix_figures;

/* A mixture's report, a JSON object over a few lines:
 * {"mixture": "dense.mix.json", "fields": null, "batch_files": "records
 *  and indices", "sources": [
 *   {"source": 0, "path": "a", "records": 40, "weight": 5, "share":
 *    0.500000, "positions_per_cycle": 80}, ...],
 *  "schedule": [{"from": 20, "weights": [1, 1, 1]}]}
 * into a malloc'ed *out of *len bytes (NUL-terminated besides): 0 or
 * -ENOMEM. */
int zrcommon_mix_stats_json(const zrcommon_mix_figures *m, char **out,
			    size_t *len);

#endif
