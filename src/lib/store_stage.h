/*
 * store_stage.h - a batch's stored bytes fetched before the lanes decode
 * them, for a store whose data.zr has no map (a remote backend: S3).
 * Each record read alone would be a round trip of its own on one of two
 * lanes; staged, neighbouring records share a read and the reads run at
 * once on the I/O threads (iopool.h).
 */
#ifndef ZR_STORE_STAGE_H
#define ZR_STORE_STAGE_H

#include "store.h"

/* Records closer than this in data.zr are read as one range (the gap's
 * bytes cost less than another round trip), and a range stops growing at
 * ZR__STAGE_RANGE_MAX. */
#define ZR__STAGE_GAP (256u << 10)
#define ZR__STAGE_RANGE_MAX (8u << 20)
/* A batch whose ranges come to more is not staged: its records are read
 * one by one, as without staging. */
#define ZR__STAGE_MAX (256ull << 20)

struct zr__stage {
	uint8_t *buf;		/* the ranges, back to back              */
	const uint8_t **src;	/* record k's stored bytes, in buf       */
};

/* Reads the stored bytes of records idx[0..count) (entries read through
 * snapshot sn, the caller holding the store's rw lock shared) into *st.
 * 0 with st->src NULL when there is nothing to gain (a mapped data.zr,
 * one record, or more than ZR__STAGE_MAX); an error code after zr__fail()
 * otherwise (a bad entry, a failed read). */
int zr__stage_fetch(const zr_store *s, const struct zr__snap *sn,
		    const uint64_t *idx, size_t count, struct zr__stage *st);
void zr__stage_free(struct zr__stage *st);

#endif
