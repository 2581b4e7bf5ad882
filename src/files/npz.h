/*
 * npz.h - stored (uncompressed) .npz archives laid out before their bytes
 * exist, so a batch can be gathered straight into its final place in the
 * archive and the archive's size is known before anything is read.
 *
 * Members use the ZIP "stored" method with a CRC-32 and no zip64: the whole
 * archive must stay under 4 GiB and hold at most 65535 members (else
 * ZR_E_TOOBIG).  np.load() reads the result.  Pure functions, no I/O.
 */
#ifndef ZRFILE_NPZ_H
#define ZRFILE_NPZ_H

#include <stddef.h>
#include <stdint.h>

#include "zrecord.h"

/* The most members an archive holds (ZIP without zip64). */
#define ZRFILE_NPZ_MEMBERS_MAX 0xffffu

typedef struct zrfile_npz_member {
	const char *name;   /* member name inside the zip, e.g. "arr_0.npy" */
	uint64_t size;      /* bytes of the member (its whole .npy)        */
	uint64_t offset;    /* out: where the member's bytes start          */
} zrfile_npz_member;

/* Computes every member's offset and the archive's total size.  -EINVAL for
 * a missing or over-long (> 65535 bytes) name. */
int zrfile_npz_layout(zrfile_npz_member *m, size_t n, uint64_t *total);

/* With every member's bytes already at buf + m[i].offset, writes the local
 * headers (with CRC-32 of those bytes), the central directory and the end
 * record.  buf holds total bytes; m is as zrfile_npz_layout left it. */
int zrfile_npz_finish(void *buf, uint64_t total, const zrfile_npz_member *m,
		  size_t n);

#endif
