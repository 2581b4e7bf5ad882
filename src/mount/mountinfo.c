/*
 * mountinfo.c - reads /proc/self/mountinfo for mountinfo.h.
 */
#include <stdio.h>
#include <string.h>

#include "mountinfo.h"

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 |
				      (s[3] - '0'));
			s += 3;
		} else {
			*w++ = *s;
		}
	}
	*w = 0;
}

int zrmount_live_here(const char *mnt)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[8192], at[4096], type[256], src[4096];
	int found = 0;

	while (f && !found && fgets(line, sizeof(line), f)) {
		const char *dash = strstr(line, " - ");

		if (!dash || sscanf(line, "%*s %*s %*s %*s %4095s", at) != 1 ||
		    sscanf(dash + 3, "%255s %4095s", type, src) != 2)
			continue;
		unescape(at);
		found = !strcmp(at, mnt) && !strcmp(type, "fuse.zrecordfs");
	}
	if (f)
		fclose(f);
	if (found) {
		unescape(src);
		fprintf(stderr, "zrecordfs: %s is a live zrecordfs mount (of "
			"%s): a mount over it would hide it; unmount it first "
			"(umount %s) or choose another folder\n", mnt, src,
			mnt);
	}
	return found;
}
