/*
 * shutdown_signals.h - SIGTERM, SIGINT and SIGHUP end the session loop
 * without a lost wake-up: one thread takes them with sigwait(), marks the
 * session exited and interrupts the loop's wait until the loop returns.
 *
 * libfuse 3.14's own handler only marks the session exited; a signal that
 * lands between the multithreaded loop's check of that mark and its
 * sem_wait() left the daemon serving until the next request came in.
 */
#ifndef ZRFS_SHUTDOWN_SIGNALS_H
#define ZRFS_SHUTDOWN_SIGNALS_H

struct fuse_session;

/* Blocks the shutdown signals (and the wake-up signal) in the calling
 * thread, so in every thread it starts from now on. Call before the
 * first thread starts. */
void zrfs_sig_block(void);
/* Starts the signal thread for se; -errno if it cannot. */
int zrfs_sig_start(struct fuse_session *se);
/* Lets the wake-up signal interrupt the calling thread while it runs the
 * session loop (call just before the loop). */
void zrfs_sig_loop_begin(void);
/* The loop has returned: stops and joins the signal thread. The shutdown
 * signals stay blocked, so a second one cannot cut the store sync short. */
void zrfs_sig_stop(void);

#endif
