/*
 * open_file.h - an open record or batch file: a read transaction over the
 * content its node stands for (tree.h, Contents).  Open begins library
 * views of the node's stores, so whatever deletes come later every byte it
 * gives is of the content it opened; the bytes are copied into one buffer
 * (a record whole at the first read, a batch in pieces of about 1 MiB,
 * batch_gather.h: as reads reach them, or on a thread of its own from the
 * first read on, zrtree_file_ahead, when it has more than one), and a
 * read of bytes already in takes no lock.  The mount serves its record and batch files through it; `zrecord
 * cat` reads one through it too.
 *
 * Every call may give ZR_E_BUSY while a delete or compact of a store runs
 * (the views are begun without waiting), and nothing changed: the caller
 * tries again after it.  Failures other than that are written to the
 * node's errors file (errors_log.h).
 */
#ifndef ZRTREE_OPEN_FILE_H
#define ZRTREE_OPEN_FILE_H

#include "tree.h"

struct zrtree_file;
struct zrtree_gather;

/* Opens record or batch node n.  -ESTALE when the name now shows other
 * bytes of another size (or none): look it up again.  When it shows other
 * bytes of the node's size, the file serves those, copied now
 * (zrtree_file_fresh).  Otherwise nothing is copied yet. */
int zrtree_file_open(struct zrtree *t, const struct zrtree_node *n,
		     struct zrtree_file **out);
/* Frees f, its views and its buffer. */
void zrtree_file_close(struct zrtree_file *f);

/* Whether f serves bytes newer than its node's (a delete since its lookup
 * changed them): a cache of the node's bytes does not hold them. */
int zrtree_file_fresh(const struct zrtree_file *f);
/* A batch file's: the sum of its views' delete epochs at open
 * (zrtree_views_epoch). */
uint64_t zrtree_file_epoch(const struct zrtree_file *f);
/* The file's size (the node's). */
uint64_t zrtree_file_size(const struct zrtree_file *f);

/* Whether bytes [off, end) are in the buffer, without a lock; then
 * zrtree_file_bytes points at them. */
int zrtree_file_have(const struct zrtree_file *f, uint64_t off,
		     uint64_t end);
/* Copies in bytes [off, end) (off < end <= the size) unless they are:
 * plans a batch at the first call, then gathers the pieces they lie in.
 * Any number of threads. */
int zrtree_file_fill(struct zrtree_file *f, uint64_t off, uint64_t end);
/* The buffer (valid where zrtree_file_have says so). */
const char *zrtree_file_bytes(const struct zrtree_file *f);

/* Before any fill of a batch file whose views show the node's content
 * (not fresh): takes buf (cap bytes, from zrcommon_bigbuf_get), which
 * holds the whole file gathered elsewhere (the mount's prefetch), and
 * ends the views. */
void zrtree_file_adopt(struct zrtree_file *f, char *buf, size_t cap);
/* The same for a gather still under way (the prefetcher's: its views
 * showed the node's content): f takes a reference to g and the pieces
 * already in, and fills the rest through its own views. */
void zrtree_file_take_over(struct zrtree_file *f, struct zrtree_gather *g);

/* A batch file read from start to end (a mount's): from its first fill
 * on (at once after zrtree_file_take_over), if it is in more than one
 * piece, a thread of f's own gathers
 * every piece in file order on the library's lanes while the reads take
 * them, so that the next pieces are decoded while the reader copies these.
 * busy(+1) and busy(-1) (if set) bracket that thread's work.  Close stops
 * it after its piece. */
void zrtree_file_ahead(struct zrtree_file *f, void (*busy)(int delta));

#endif
