/*
 * info_file.h - the mount's own file at its root (zrecordfs(8), "Files"):
 * the daemon's version and pid, and the prefetcher's settings and
 * counters.  A dot file, so that ls, globs and copies of the mount's
 * stores pass it by; `zrecord ls` and `cat` have no mount and no such
 * file.
 */
#ifndef ZRFS_INFO_FILE_H
#define ZRFS_INFO_FILE_H

#include "fs.h"

#define ZRFS_INFO_NAME ".zrecordfs"

/* Adds it to the built tree (a name SRC already shows there wins, with a
 * warning on stderr).  Before the session starts. */
void zrfs_info_add(struct zrfs_fs *fs);

#endif
