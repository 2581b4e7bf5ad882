/*
 * error.h - the library-internal side of the error convention: failing with
 * a detailed message, and carrying a failure from a pool lane back to the
 * thread that made the call.
 */
#ifndef ZR_ERROR_H
#define ZR_ERROR_H

#include "zrecord.h"

#define ZR__MSG_MAX 1024

/* Records "fmt..." as the calling thread's message (see zr_errmsg), sends it
 * to the log sink, and returns err so callers can write
 * `return zr__fail(ZR_E_CORRUPT, "meta.zr: ...", ...);`. */
int zr__fail(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Clears the calling thread's message (and cause) at the start of a
 * public call. */
void zr__clear(void);

/* A storage backend's cause for the -errno it is about to return (an
 * HTTP status, what to check): the backend knows why, the engine knows
 * which store file (vfs.h), so the calling thread's next zr__fail appends
 * "fmt..." to its own message and drops it.  A backend sets one only for
 * failures the engine does not take in its stride (never for a plain
 * missing file, which an open of dict.zr expects). */
void zr__cause(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A failure captured on one thread and replayed on another. */
typedef struct zr__error {
	int err;
	char msg[ZR__MSG_MAX];
} zr__error;

/* Copies the calling thread's current code and message into e if e holds no
 * failure yet (the first failure wins).  Not locked: callers serialize. */
void zr__error_capture(zr__error *e, int err);
/* Makes e the calling thread's message (without logging it again) and
 * returns e->err. */
int zr__error_replay(const zr__error *e);

#endif
