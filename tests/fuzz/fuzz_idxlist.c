/*
 * fuzz_idxlist.c - libFuzzer harness for the record-index list parser
 * (src/files/index_list.h) that the mount's delete file and `zrecord
 * delete --from` share.
 *
 * Input: bytes 0..3 seed the chunk sizes, byte 4 picks the length the
 * indices are checked against, the rest is the list.  Fed whole and in
 * random chunks as FUSE writes would arrive, it must succeed or fail alike
 * (a number cut by a chunk may fail for its range before the bad byte
 * after it: only the verdict is compared), give the same indices, all
 * below the length, and fail sticky with a message.  Text that succeeds
 * must hold exactly the numbers a plain tokenizer finds.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "index_list.h"

static const uint64_t limits[] = { 0, 1, 40, 1000, 1ull << 40, UINT64_MAX };
#define NLIMIT (sizeof(limits) / sizeof(limits[0]))

static uint32_t next_rand(uint32_t *state)
{
	*state = *state * 1103515245u + 12345u;
	return *state >> 8;
}

/* Feeds data in chunks (whole when seed is 0) and finishes. */
static int run(const uint8_t *data, size_t size, uint32_t seed,
	       uint64_t limit, uint64_t **idx, size_t *n)
{
	zrfile_idxlist *p = NULL;
	int rc = 0, whole = !seed;

	ZR_FUZZ_CHECK(zrfile_idxlist_new(&p) == 0);
	while (size > 0 && !rc) {
		uint32_t r = next_rand(&seed);
		size_t k = whole ? size :
			   1 + (r >> 2) % ((r & 3) == 0 ? 5 : 300);

		if (k > size)
			k = size;
		rc = zrfile_idxlist_feed(p, data, k, limit);
		data += k;
		size -= k;
	}
	if (!rc)
		rc = zrfile_idxlist_finish(p, limit, idx, n);
	if (rc) {
		ZR_FUZZ_CHECK(rc == -EINVAL || rc == ZR_E_RANGE ||
			      rc == ZR_E_NPY || rc == -EFBIG ||
			      rc == -ENOMEM);
		ZR_FUZZ_CHECK(zrfile_idxlist_message(p)[0] != '\0');
		ZR_FUZZ_CHECK(zrfile_idxlist_feed(p, "1", 1, limit) == rc);
		ZR_FUZZ_CHECK(zrfile_idxlist_finish(p, limit, idx, n) == rc);
	}
	zrfile_idxlist_free(p);
	return rc;
}

/* The numbers of text as a plain tokenizer splits them. */
static void check_text(const uint8_t *s, size_t len, const uint64_t *idx,
		       size_t n)
{
	size_t k = 0, i = 0;

	while (i < len) {
		uint64_t v = 0;

		if (strchr(" \t\r\n,", s[i]) && s[i]) {
			i++;
			continue;
		}
		for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
			v = v * 10 + (s[i] - '0');
		ZR_FUZZ_CHECK(k < n && idx[k] == v);
		k++;
	}
	ZR_FUZZ_CHECK(k == n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t *whole = NULL, *cut = NULL, limit;
	size_t nwhole = 0, ncut = 0;
	uint32_t seed;
	int rc_whole, rc_cut;

	if (size < 5)
		return 0;
	seed = zr_fuzz_take_u32(&data, &size) | 1;
	limit = limits[data[0] % NLIMIT];
	data++;
	size--;
	rc_whole = run(data, size, 0, limit, &whole, &nwhole);
	rc_cut = run(data, size, seed, limit, &cut, &ncut);
	ZR_FUZZ_CHECK(!rc_whole == !rc_cut);
	if (!rc_whole) {
		ZR_FUZZ_CHECK(nwhole == ncut);
		ZR_FUZZ_CHECK(!nwhole || !memcmp(whole, cut, nwhole * 8));
		for (size_t i = 0; i < nwhole; i++)
			ZR_FUZZ_CHECK(whole[i] < limit);
		if (size && data[0] != 0x93)
			check_text(data, size, whole, nwhole);
	}
	free(whole);
	free(cut);
	return 0;
}
