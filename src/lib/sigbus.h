/*
 * sigbus.h - the opt-in SIGBUS guard (zr_sigbus_guard): reads of the
 * library's own mappings that run under zr__guard_run() fail with -EIO
 * instead of killing the process when a page cannot be read.
 */
#ifndef ZR_SIGBUS_H
#define ZR_SIGBUS_H

#include <setjmp.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Set once, by the first zr_sigbus_guard(); never cleared. */
extern atomic_int zr__guard_on;

/* With the guard off, the read paths pay this one well-predicted branch. */
static inline int zr__guard_enabled(void)
{
	/* Relaxed is enough: the handler was installed by a syscall that
	 * returned before the flag was set. */
	return __builtin_expect(
		atomic_load_explicit(&zr__guard_on, memory_order_relaxed), 0);
}

/* What zr__guard_run returns for a fault: positive, so no result of fn
 * (0 or a negative code) is mistaken for one. */
#define ZR__GUARD_FAULT 1

/* One mapping a guarded run reads.  A run may read several (a gather
 * block reads the record table and the records). */
struct zr__guard_span {
	const void *lo;
	size_t len;
};

/* Where a guarded run faulted: which span, and how far into it. */
struct zr__guard_fault {
	unsigned span;
	size_t off;
};

/* Runs fn(arg), which reads only inside spans[0..n) (the array must live
 * until this returns).  Returns fn's result, or ZR__GUARD_FAULT if a
 * SIGBUS hit one of the spans meanwhile, with *where filled in (the
 * caller writes the message: it knows the store and the file).  One
 * sigsetjmp per run, whatever fn reads: guard a block of reads, not each
 * read.  fn must hold no lock and own no resource while it reads a span:
 * the jump abandons its frames. */
int zr__guard_run(const struct zr__guard_span *spans, unsigned n,
		  int (*fn)(void *), void *arg, struct zr__guard_fault *where);

#endif
