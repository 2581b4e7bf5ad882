/*
 * npz.c - writes the ZIP structure around members whose bytes are already
 * in place: local headers, central directory, end record (stored method,
 * no zip64, a fixed 1980-01-01 timestamp so equal batches are equal bytes).
 */
#include <errno.h>
#include <string.h>
#include <zlib.h>

#include "npz.h"

#define LOCAL_LEN 30
#define CENTRAL_LEN 46
#define END_LEN 22
#define ZIP_MAX 0xffffffffu   /* without zip64, every field is 32-bit */
#define NAME_MAX_LEN 0xffffu
#define ZIP_VERSION 20        /* 2.0: what readers expect for "stored" */
#define DOS_DATE 0x0021       /* 1980-01-01 */

static unsigned char *put16(unsigned char *p, unsigned v)
{
	p[0] = v & 0xff;
	p[1] = (v >> 8) & 0xff;
	return p + 2;
}

static unsigned char *put32(unsigned char *p, uint32_t v)
{
	p = put16(p, v & 0xffff);
	return put16(p, v >> 16);
}

/* The walk both functions share: where the central directory starts and
 * the total.  Fails rather than overflow a 32-bit ZIP field. */
static int walk(const zrfile_npz_member *m, size_t n, uint64_t *cd_off,
		uint64_t *total)
{
	uint64_t at = 0, cd = 0;
	size_t i, len;

	if (n > ZRFILE_NPZ_MEMBERS_MAX)
		return ZR_E_TOOBIG;
	for (i = 0; i < n; i++) {
		if (!m[i].name)
			return -EINVAL;
		len = strlen(m[i].name);
		if (len == 0 || len > NAME_MAX_LEN)
			return -EINVAL;
		if (m[i].size > ZIP_MAX)
			return ZR_E_TOOBIG;
		at += LOCAL_LEN + len;
		at += m[i].size;
		cd += CENTRAL_LEN + len;
		if (at > ZIP_MAX)
			return ZR_E_TOOBIG;
	}
	*cd_off = at;
	at += cd + END_LEN;
	if (at > ZIP_MAX)
		return ZR_E_TOOBIG;
	*total = at;
	return 0;
}

int zrfile_npz_layout(zrfile_npz_member *m, size_t n, uint64_t *total)
{
	uint64_t cd, t, at = 0;
	size_t i;
	int rc;

	if ((!m && n) || !total)
		return -EINVAL;
	rc = walk(m, n, &cd, &t);
	if (rc < 0)
		return rc;
	for (i = 0; i < n; i++) {
		at += LOCAL_LEN + strlen(m[i].name);
		m[i].offset = at;
		at += m[i].size;
	}
	*total = t;
	return 0;
}

/* The fields a local header and its central entry share, from "version
 * needed" through the extra-field length. */
static unsigned char *put_common(unsigned char *p, uint32_t crc,
				 uint32_t size, size_t name_len)
{
	p = put16(p, ZIP_VERSION); /* version needed */
	p = put16(p, 0);         /* flags */
	p = put16(p, 0);         /* method: stored */
	p = put16(p, 0);         /* time */
	p = put16(p, DOS_DATE);
	p = put32(p, crc);
	p = put32(p, size);      /* compressed */
	p = put32(p, size);      /* uncompressed */
	p = put16(p, name_len);
	return put16(p, 0);      /* extra length */
}

static uint32_t member_crc(const unsigned char *data, uint64_t size)
{
	return crc32_z(crc32_z(0, Z_NULL, 0), data, size);
}

int zrfile_npz_finish(void *buf, uint64_t total, const zrfile_npz_member *m,
		  size_t n)
{
	unsigned char *base = buf, *p, *cdp;
	uint64_t cd, t, local, next = 0;
	size_t i, len;
	uint32_t crc;
	int rc;

	if (!buf || (!m && n))
		return -EINVAL;
	rc = walk(m, n, &cd, &t);
	if (rc < 0)
		return rc;
	if (t != total)
		return -EINVAL;
	cdp = base + cd;
	for (i = 0; i < n; i++) {
		len = strlen(m[i].name);
		if (m[i].offset != next + LOCAL_LEN + len)
			/* not the layout zrfile_npz_layout made */
			return -EINVAL;
		local = next;
		next = m[i].offset + m[i].size;
		crc = member_crc(base + m[i].offset, m[i].size);

		p = put32(base + local, 0x04034b50);
		p = put_common(p, crc, m[i].size, len);
		memcpy(p, m[i].name, len);

		cdp = put32(cdp, 0x02014b50);
		cdp = put16(cdp, ZIP_VERSION); /* version made by */
		cdp = put_common(cdp, crc, m[i].size, len);
		cdp = put16(cdp, 0);       /* comment length */
		cdp = put16(cdp, 0);       /* disk number */
		cdp = put16(cdp, 0);       /* internal attributes */
		cdp = put32(cdp, 0);       /* external attributes */
		cdp = put32(cdp, local);
		memcpy(cdp, m[i].name, len);
		cdp += len;
	}
	p = put32(cdp, 0x06054b50);
	p = put16(p, 0);                   /* this disk */
	p = put16(p, 0);                   /* disk with the directory */
	p = put16(p, n);
	p = put16(p, n);
	p = put32(p, (uint32_t)(cdp - base - cd));
	p = put32(p, cd);
	put16(p, 0);                       /* comment length */
	return 0;
}
