/*
 * sigbus.c - the SIGBUS guard.  Records and the record table are read
 * from mappings of data.zr and meta.zr; a page the kernel cannot fill (a
 * media error, a file truncated behind the library's back) raises SIGBUS
 * on the reading thread, which by default kills the process and every
 * store it serves.  Once zr_sigbus_guard() has run, each guarded run of
 * reads (one record, or a whole block of a gather) arms a thread-local
 * jump target for the mappings it reads; the handler jumps back when the
 * fault lies in one of them and hands every other SIGBUS to the handler
 * it replaced.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>

#include "error.h"
#include "sigbus.h"

struct guard {
	sigjmp_buf jb;
	const struct zr__guard_span *spans;
	unsigned n;
	struct guard *prev; /* an outer guarded run, if any */
	/* Set by the handler and read after the jump: volatile, or the
	 * value read back would be indeterminate. */
	volatile unsigned fault_span;
	volatile size_t fault_off;
};

atomic_int zr__guard_on;

/* initial-exec: the handler reads it, and the first touch of a dynamic
 * TLS variable in a dlopen'd library may allocate, which a signal handler
 * must not. */
static __thread struct guard *armed __attribute__((tls_model("initial-exec")));

static struct sigaction prev_action;
static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static int install_err;

/* Does what would have happened without this handler. */
static void chain(int sig, siginfo_t *si, void *uc)
{
	const struct sigaction *p = &prev_action;

	if (p->sa_flags & SA_SIGINFO) {
		p->sa_sigaction(sig, si, uc);
		return;
	}
	/* A fault cannot be ignored (returning would fault again); a signal
	 * sent by a process can. */
	if (p->sa_handler == SIG_IGN && si->si_code <= 0)
		return;
	if (p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN) {
		p->sa_handler(sig);
		return;
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/* The innermost armed guard with a span holding a, if any; fills in
 * where it faulted. */
static struct guard *guard_of(const uint8_t *a)
{
	for (struct guard *g = armed; g; g = g->prev) {
		for (unsigned i = 0; i < g->n; i++) {
			const uint8_t *lo = g->spans[i].lo;

			if (a >= lo && (size_t)(a - lo) < g->spans[i].len) {
				g->fault_span = i;
				g->fault_off = (size_t)(a - lo);
				return g;
			}
		}
	}
	return NULL;
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	struct guard *g;

	/* si_code > 0: the kernel's report of a fault, not a kill(2). */
	if (si->si_code > 0 && (g = guard_of(si->si_addr)))
		siglongjmp(g->jb, 1);
	chain(sig, si, uc);
}

/*
 * Whether sigsetjmp saves the signal mask.  Normally not: that is a
 * syscall per guarded run, and SA_NODEFER leaves SIGBUS unblocked after
 * the jump out of the handler.  ThreadSanitizer, though, runs every
 * handler with all signals blocked whatever sa_flags say, and its
 * siglongjmp restores no mask unless one was saved: the thread would
 * go on with SIGBUS blocked, and its next fault would kill the process.
 */
#if defined(__SANITIZE_THREAD__)
#define GUARD_SAVEMASK 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define GUARD_SAVEMASK 1
#endif
#endif
#ifndef GUARD_SAVEMASK
#define GUARD_SAVEMASK 0
#endif

int zr__guard_run(const struct zr__guard_span *spans, unsigned n,
		  int (*fn)(void *), void *arg, struct zr__guard_fault *where)
{
	struct guard g;
	int err;

	g.spans = spans;
	g.n = n;
	g.prev = armed;
	/* Nothing below the sigsetjmp changes a local that the fault path
	 * reads, but the handler's fault_*, which are volatile. */
	if (sigsetjmp(g.jb, GUARD_SAVEMASK)) {
		armed = g.prev;
		where->span = g.fault_span;
		where->off = g.fault_off;
		return ZR__GUARD_FAULT;
	}
	armed = &g;
	/* The handler runs on this thread: keep the reads inside the armed
	 * window. */
	atomic_signal_fence(memory_order_seq_cst);
	err = fn(arg);
	atomic_signal_fence(memory_order_seq_cst);
	armed = g.prev;
	return err;
}

static void install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	/* Read the old action first, so that a fault on another thread
	 * while ours goes in never chains to an unset one. */
	if (sigaction(SIGBUS, NULL, &prev_action) ||
	    sigaction(SIGBUS, &sa, NULL))
		install_err = -errno;
	else
		atomic_store(&zr__guard_on, 1);
}

int zr_sigbus_guard(void)
{
	zr__clear();
	pthread_once(&install_once, install);
	if (install_err)
		return zr__fail(install_err, "sigaction(SIGBUS): %s",
				strerror(-install_err));
	return 0;
}
