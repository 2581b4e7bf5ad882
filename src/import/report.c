/*
 * report.c - the one format of the import's error messages:
 * "zrecord: import: WHERE: DETAIL[: strerror]", where WHERE names the
 * input (a path, a shard and its member or key, a store).  Input errors
 * (a bad file, a changed file) say why in DETAIL alone, and are
 * remembered for --skip-bad.  A mistake no call returned an errno for
 * (ZR_IMP_ETEXT) says DETAIL alone: no message ends in an errno that did
 * not happen.
 */
#include <stdio.h>

#include "import.h"

/* Where reports go: stderr, or what the fuzz harnesses choose.  Reports
 * come from the main thread only (workers leave theirs in the field). */
static FILE *out;
/* The last report was about an input's bytes (--skip-bad may go on). */
static int last_input;

void zr_imp_report_to(FILE *f)
{
	out = f;
}

int zr_imp_error(const char *where, int err, const char *detail)
{
	int sys = err != ZR_IMP_EBAD && err != ZR_IMP_ECHANGED &&
		  err > -4096 && err < 0;
	int has = detail && *detail;

	last_input = err == ZR_IMP_EBAD || err == ZR_IMP_ECHANGED;
	fprintf(out ? out : stderr, "zrecord: import: %s: %s%s%s\n", where,
		has ? detail : "", has && sys ? ": " : "",
		sys || !has ? zr_strerror(err) : "");
	return ZR_IMP_FAIL;
}

void zr_imp_warn(const char *where, const char *detail)
{
	fprintf(out ? out : stderr, "zrecord: import: warning: %s: %s\n",
		where, detail);
}

void zr_imp_note_ignored(uint64_t n, const char *what)
{
	if (n)
		fprintf(out ? out : stderr, "zrecord: import: ignored %llu "
			"file%s that %s not %s\n", (unsigned long long)n,
			n == 1 ? "" : "s", n == 1 ? "is" : "are", what);
}

int zr_imp_input_failed(void)
{
	return last_input;
}
