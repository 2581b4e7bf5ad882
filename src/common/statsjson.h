/*
 * statsjson.h - the one JSON report of a store's figures: what `zrecord
 * stats` prints and what a mount's stats file holds, byte for byte.
 *
 * One line, keys in this order: records, live_bytes, data_bytes,
 * reclaimable, codec, ragged, dtype, and item_shape for dense stores:
 * {"records": 40, "live_bytes": 7680, "data_bytes": 7680, "reclaimable": 0,
 *  "codec": "raw", "ragged": false, "dtype": "|u1", "item_shape": [3, 8, 8]}
 */
#ifndef ZRCOMMON_STATSJSON_H
#define ZRCOMMON_STATSJSON_H

#include <stddef.h>

#include "zrecord.h"

/* The report of store s whose figures are st (from zr_store_stats), with
 * a trailing newline, into a malloc'ed *out of *len bytes (NUL-terminated
 * besides).  0, -ENOMEM, or zr_schema_json's error. */
int zrcommon_stats_json(const zr_store *s, const zr_stats *st, char **out,
			size_t *len);

#endif
