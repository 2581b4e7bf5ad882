/*
 * import_run.c - one import from start to end (zrimport.h): the
 * process-wide settings the decode wants, the temporary folder, the
 * format's run, the commit and the line that says how many records went
 * in.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>

#include "import.h"

int zr_imp_import(const zr_imp_config *cfg, const zr_imp_format *f,
		  char **srcs, int n)
{
	zr_imp_dataset *d = NULL;
	int rc;

	/* The library's pool places records in data.zr in the order its
	 * lanes finish; one lane keeps the layout a function of the input
	 * (byte-identical stores).  Decoding, the real work, fans out over
	 * our own threads.  The pool reads this at its first use, below. */
	setenv("ZR_THREADS", "0", 1);
	zr_imp_catch_signals();
	/* Every decoded image is a buffer of ~150 KiB that lives one batch:
	 * from the heap it is reused, from mmap (glibc's default above 128
	 * KiB) each one costs fresh page faults on every thread. */
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	rc = zr_imp_dataset_new(cfg, &d);
	if (rc == 0)
		rc = f->run(cfg, srcs, n, d);
	if (rc == 0)
		rc = zr_imp_dataset_commit(d);
	if (rc == 0)
		fprintf(stderr, "zrecord: import: %s: %llu records\n",
			cfg->dest,
			(unsigned long long)zr_imp_dataset_length(d));
	zr_imp_dataset_free(d);
	return rc ? ZR_IMP_FAIL : 0;
}
