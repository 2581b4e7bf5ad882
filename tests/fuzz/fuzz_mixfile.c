/*
 * fuzz_mixfile.c - libFuzzer harness for the mixture file reader
 * (src/common/mixfile.h) and the mixture streams it feeds (zr_stream_*).
 *
 * Every input either fails with a message or parses into sources with
 * non-empty paths and weights of at most 2^20 and a schedule in position
 * order.  A parsed mixture becomes a stream (lengths derived from the
 * weights); if the library accepts it and its schedule, every mapped
 * position names a source below k and a record below that source's
 * length, and one call for a run equals one call per position.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "mixfile.h"
#include "zrecord.h"

static void check_stream(const zrcommon_mixfile *m)
{
	uint64_t len[1024], idx[64], one;
	uint32_t src[64], s1;
	zr_stream *st;
	int rc = 0;

	for (uint32_t i = 0; i < m->k; i++)
		len[i] = 1 + (m->weight[i] * 7919 + i) % 257;
	if (zr_stream_new_mixture(42, m->k, len, m->weight, &st))
		return;
	for (uint32_t i = 0; !rc && i < m->nsched; i++)
		rc = zr_stream_weights(st, m->from[i],
				       m->weights + (size_t)i * m->k);
	if (!rc) {
		uint64_t pos = m->nsched ? m->from[m->nsched - 1] : 0;

		pos = pos > UINT64_MAX - 64 ? UINT64_MAX - 64 : pos;
		ZR_FUZZ_CHECK(zr_stream_map(st, pos, 64, src, idx) == 0);
		for (int i = 0; i < 64; i++) {
			ZR_FUZZ_CHECK(src[i] < m->k);
			ZR_FUZZ_CHECK(idx[i] < len[src[i]]);
			ZR_FUZZ_CHECK(zr_stream_map(st, pos + (uint64_t)i, 1,
						    &s1, &one) == 0);
			ZR_FUZZ_CHECK(s1 == src[i] && one == idx[i]);
		}
	}
	zr_stream_free(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	zrcommon_mixfile m;
	char msg[256];
	int rc = zrcommon_mixfile_parse((const char *)data, size, &m, msg,
					sizeof(msg));

	if (rc) {
		ZR_FUZZ_CHECK(rc == -22 || rc == -12);
		ZR_FUZZ_CHECK(msg[0] != 0);
		return 0;
	}
	ZR_FUZZ_CHECK(m.k >= 1 && m.k <= 1024);
	for (uint32_t i = 0; i < m.k; i++) {
		ZR_FUZZ_CHECK(m.path[i] && m.path[i][0]);
		ZR_FUZZ_CHECK(m.weight[i] <= (1u << 20));
	}
	for (uint32_t i = 1; i < m.nsched; i++)
		ZR_FUZZ_CHECK(m.from[i] >= m.from[i - 1]);
	check_stream(&m);
	zrcommon_mixfile_free(&m);
	return 0;
}
