/*
 * prefetch.h - gathering a batch sequence's next steps before they are
 * asked for, into memory an open can take over.  A trainer reads
 * batch/SEED-t, computes, then reads SEED-(t+1): the sampler is a pure
 * function of (seed, step), so once two consecutive steps of a sequence
 * were read the next `depth` are known and are gathered here, on one
 * low-priority thread, while the trainer computes.
 *
 * This layer knows nothing of stores or files: a sequence is an opaque
 * key, a step a number, and the caller's gather callback makes a step's
 * bytes together with the version tag that says which content they are.
 * An entry is handed over only to a take that names the same sequence,
 * step, version and size, so a caller that puts everything that decides a
 * file's bytes into the version (the daemon: the sampled length and the
 * sum of the stores' delete epochs) can never be served a stale or
 * different byte; a delete needs no cancel call for correctness, and the
 * hint's generation drops what it made stale.
 *
 * Bounds: at most `budget` bytes of buffers held or being gathered; at most
 * `depth` steps ahead of the last one read; ZRPF_SEQS sequences tracked,
 * the least recently read one forgotten first; a sequence not read for
 * ZRPF_IDLE_MS is dropped; a step read out of order (random access, a
 * restart) arms nothing and drops what its sequence had.
 *
 * Threads: every call may come from any thread.  gather runs on the
 * prefetch thread only, without this layer's lock held; release runs on
 * any thread, with that lock held (a leaf lock: release must not call
 * back into this layer).
 */
#ifndef ZRPF_PREFETCH_H
#define ZRPF_PREFETCH_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define ZRPF_SEQS 16
#define ZRPF_DEPTH_MAX 16
#define ZRPF_IDLE_MS 30000u
#define ZRPF_QUIET_NS 2000000u

typedef struct zrpf zrpf;

/* What a sequence is: two sequences are one when every field is equal. */
struct zrpf_seq {
	const void *src;	/* the caller's: a store or a dataset    */
	uint64_t mode, bsize, seed, form;
};

/* One step's bytes, as the gather callback makes them. */
struct zrpf_batch {
	uint64_t ver[2];	/* which content: compared at take       */
	uint64_t size;		/* bytes of the file                     */
	char *buf;		/* size bytes (cap allocated)            */
	size_t cap;
};

struct zrpf_conf {
	unsigned depth;		/* steps ahead, 1 .. ZRPF_DEPTH_MAX      */
	uint64_t budget;	/* bytes of buffers at most              */
	void *ctx;
	/* Makes step of s into *out: 0, or a negative errno (nothing is
	 * kept).  It calls zrpf_go(pf) before each piece of work (about
	 * 1 MiB), and gives up, freeing what it made, when that fails. */
	int (*gather)(void *ctx, const struct zrpf_seq *s, uint64_t step,
		      zrpf *pf, struct zrpf_batch *out);
	void (*release)(void *ctx, char *buf, size_t cap);
};

/* How much it did, for the daemon's summary at unmount. */
struct zrpf_counts {
	uint64_t gathered;	/* steps gathered ahead                  */
	uint64_t served;	/* of those, taken by an open            */
	uint64_t dropped;	/* gathered, never taken                 */
};

/* The default budget: 1/16 of RAM or 1 GiB, whichever is smaller. */
uint64_t zrpf_default_budget(void);
/* Starts the prefetch thread: 0, -EINVAL (depth or budget 0, no
 * gather), -ENOMEM or the errno of pthread_create. */
int zrpf_new(const struct zrpf_conf *conf, zrpf **out);
/* Stops the thread (a running gather is told to stop, and waited for)
 * and releases every buffer.  NULL is a no-op. */
void zrpf_free(zrpf *pf, struct zrpf_counts *counts);
/* What it did so far (the same as zrpf_free reports). */
void zrpf_count(zrpf *pf, struct zrpf_counts *out);
/* Step of s was opened, and s's content generation is gen now (entries
 * of another generation are dropped).  The second of two consecutive
 * steps arms s: steps step+1 .. step+depth are gathered ahead.  size is
 * the step's file size: what the next steps are assumed to need of the
 * budget until they are gathered. */
void zrpf_hint(zrpf *pf, const struct zrpf_seq *s, uint64_t step,
	       uint64_t gen, uint64_t size);
/* Hands over step of s if it is ready with exactly this version and
 * size: 1 and *out (the caller then owns out->buf), else 0.  A step still
 * being gathered is told to stop: the caller gathers it itself rather
 * than wait for a low-priority thread. */
int zrpf_take(zrpf *pf, const struct zrpf_seq *s, uint64_t step,
	      const uint64_t ver[2], uint64_t size, struct zrpf_batch *out);

/* A foreground request starts (+1) or ends (-1): while any runs, and
 * for ZRPF_QUIET_NS after the last one ended, the prefetch waits before
 * its next piece, so that its gathers (and the library pool's lanes they
 * take) never compete with a request for the CPU.  Any thread; cheap. */
void zrpf_busy(zrpf *pf, int delta);
/* In the gather callback, before each piece: 0 once the foreground is
 * quiet, -ECANCELED if the step is no longer wanted (taken by an open
 * that would not wait, dropped, or the prefetcher stopping). */
int zrpf_go(zrpf *pf);

#endif
