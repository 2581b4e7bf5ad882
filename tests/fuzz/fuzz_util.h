/*
 * fuzz_util.h - helpers shared by the libFuzzer harnesses: a scratch folder
 * on tmpfs, whole-file writes, and a hard assertion that libFuzzer reports
 * as a crash with the failing condition in its output.
 */
#ifndef ZR_FUZZ_UTIL_H
#define ZR_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "../rmtree.h"

/* Aborts (a libFuzzer "crash") with the condition and location. */
#define ZR_FUZZ_CHECK(cond)                                                    \
	((cond) ? (void)0 : zr_fuzz_die(#cond, __FILE__, __LINE__))

void zr_fuzz_die(const char *what, const char *file, int line)
	__attribute__((noreturn));

/* Pins the pool to the calling thread (deterministic replays) and creates a
 * process-private scratch folder under /dev/shm (or $TMPDIR); returns it. */
const char *zr_fuzz_setup(void);

/* Writes len bytes to dir/name, replacing it; aborts on I/O failure. */
void zr_fuzz_write(const char *dir, const char *name, const void *buf,
		   size_t len);

/* Little-endian u32 from the front of *data, consuming it (0 if short). */
uint32_t zr_fuzz_take_u32(const uint8_t **data, size_t *size);

#endif
