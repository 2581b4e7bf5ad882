/*
 * png.c - PNG files of uint8 images with the pixels in stored deflate
 * blocks.  The file is: signature, IHDR, the zlib stream split over IDAT
 * chunks of at most IDAT_MAX bytes, IEND.  The zlib stream is a 2-byte
 * header, stored blocks of at most 65535 bytes (5-byte header each) of the
 * filtered rows (filter byte 0, then the row's pixels), and the Adler-32
 * of those rows.  Every byte's place is a function of its offset in the
 * rows, so encoding is one pass into the final buffer.
 */
#include <string.h>
#include <zlib.h>

#include "png.h"

#define SIG_LEN 8
#define CHUNK_OVERHEAD 12          /* length, type, CRC */
#define IHDR_LEN 13
#define IDAT_MAX (1u << 30)        /* below PNG's 2^31 - 1 chunk limit */
#define BLOCK_MAX 65535u           /* a stored block's payload */
#define BLOCK_HDR 5
#define ZLIB_HDR 2
#define ADLER_LEN 4
#define DIM_MAX 0x7fffffffu

static const unsigned char sig[SIG_LEN] = {
	0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'
};

static int channels_ok(uint64_t c)
{
	return c == 1 || c == 3 || c == 4;
}

int zrfile_png_shape(const zr_dtype *dtype, uint32_t ndim,
		     const uint64_t *shape, zrfile_png *out)
{
	zrfile_png img = { 0 };

	if (dtype->kind != 'u' || dtype->itemsize != 1)
		return ZR_E_DTYPE;
	if (ndim == 2) {
		img = (zrfile_png){ (uint32_t)shape[0], (uint32_t)shape[1], 1,
				    0 };
		if (shape[0] > DIM_MAX || shape[1] > DIM_MAX)
			return ZR_E_SHAPE;
	} else if (ndim == 3 && channels_ok(shape[2])) {
		if (shape[0] > DIM_MAX || shape[1] > DIM_MAX)
			return ZR_E_SHAPE;
		img = (zrfile_png){ (uint32_t)shape[0], (uint32_t)shape[1],
				(uint32_t)shape[2], 0 };
	} else if (ndim == 3 && channels_ok(shape[0])) {
		if (shape[1] > DIM_MAX || shape[2] > DIM_MAX)
			return ZR_E_SHAPE;
		img = (zrfile_png){ (uint32_t)shape[1], (uint32_t)shape[2],
				(uint32_t)shape[0], 1 };
	} else {
		return ZR_E_SHAPE;
	}
	if (!img.height || !img.width)
		return ZR_E_SHAPE;
	*out = img;
	return 0;
}

static uint64_t raw_len(const zrfile_png *img)
{
	return (uint64_t)img->height *
	       (1 + (uint64_t)img->width * img->channels);
}

static uint64_t zlib_len(const zrfile_png *img)
{
	uint64_t raw = raw_len(img);
	uint64_t blocks = (raw + BLOCK_MAX - 1) / BLOCK_MAX;

	return ZLIB_HDR + raw + BLOCK_HDR * blocks + ADLER_LEN;
}

static uint64_t idat_chunks(uint64_t z)
{
	return (z + IDAT_MAX - 1) / IDAT_MAX;
}

uint64_t zrfile_png_size(const zrfile_png *img)
{
	uint64_t z = zlib_len(img);

	return SIG_LEN + CHUNK_OVERHEAD + IHDR_LEN +
	       z + CHUNK_OVERHEAD * idat_chunks(z) + CHUNK_OVERHEAD;
}

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

/* Where byte z of the zlib stream goes in the file. */
static uint64_t zpos(uint64_t z)
{
	uint64_t first = SIG_LEN + CHUNK_OVERHEAD + IHDR_LEN;

	return first + (z / IDAT_MAX) * (IDAT_MAX + CHUNK_OVERHEAD) + 8 +
	       z % IDAT_MAX;
}

/* The zlib stream, written through its IDAT framing. */
struct zout {
	unsigned char *file;
	uint64_t z;        /* next zlib byte */
};

static void zwrite(struct zout *o, const unsigned char *b, uint64_t n)
{
	while (n) {
		uint64_t room = IDAT_MAX - o->z % IDAT_MAX;
		uint64_t k = n < room ? n : room;

		memcpy(o->file + zpos(o->z), b, k);
		o->z += k;
		b += k;
		n -= k;
	}
}

/* The filtered rows as stored blocks: raw is the offset in the rows. */
struct rows {
	struct zout o;
	uint64_t raw, total;
	uLong adler;
};

static void rwrite(struct rows *r, const unsigned char *b, uint64_t n)
{
	r->adler = adler32_z(r->adler, b, n);
	while (n) {
		uint64_t in_block = r->raw % BLOCK_MAX, k;

		if (in_block == 0) {
			uint64_t left = r->total - r->raw;
			unsigned len = left < BLOCK_MAX ? (unsigned)left
							: BLOCK_MAX;
			unsigned char h[BLOCK_HDR] = {
				left <= BLOCK_MAX, len & 0xff, len >> 8,
				~len & 0xff, (~len >> 8) & 0xff
			};

			zwrite(&r->o, h, BLOCK_HDR);
		}
		k = BLOCK_MAX - in_block;
		if (k > n)
			k = n;
		zwrite(&r->o, b, k);
		r->raw += k;
		b += k;
		n -= k;
	}
}

static void write_rows(const zrfile_png *img, const unsigned char *px,
		       struct rows *r)
{
	uint64_t w = img->width, c = img->channels, plane = img->height * w;
	unsigned char line[4096];
	const unsigned char zero = 0;

	for (uint64_t y = 0; y < img->height; y++) {
		rwrite(r, &zero, 1);
		if (!img->planar) {
			rwrite(r, px + y * w * c, w * c);
			continue;
		}
		/* (C, H, W): interleave through a small buffer */
		for (uint64_t x0 = 0; x0 < w; x0 += sizeof(line) / c) {
			uint64_t n = w - x0 < sizeof(line) / c ? w - x0
							       : sizeof(line) / c;

			for (uint64_t x = 0; x < n; x++)
				for (uint64_t k = 0; k < c; k++)
					line[x * c + k] =
						px[k * plane + y * w + x0 + x];
			rwrite(r, line, n * c);
		}
	}
}

static void chunk_seal(unsigned char *at, uint32_t len, const char *type)
{
	uLong crc;

	put32(at, len);
	memcpy(at + 4, type, 4);
	crc = crc32_z(0, at + 4, (z_size_t)len + 4);
	put32(at + 8 + len, (uint32_t)crc);
}

void zrfile_png_encode(const zrfile_png *img, const void *pixels, void *out)
{
	static const unsigned char zhdr[ZLIB_HDR] = { 0x78, 0x01 };
	static const unsigned char color[5] = { 0, 0, 0, 2, 6 };
	unsigned char *f = out, adler[ADLER_LEN];
	uint64_t z = zlib_len(img), size = zrfile_png_size(img);
	struct rows r = { { f, 0 }, 0, raw_len(img), adler32(0, NULL, 0) };
	unsigned char *ihdr = f + SIG_LEN;

	memcpy(f, sig, SIG_LEN);
	put32(ihdr + 8, img->width);
	put32(ihdr + 12, img->height);
	ihdr[16] = 8;                    /* bit depth */
	ihdr[17] = color[img->channels]; /* gray, RGB or RGBA */
	ihdr[18] = ihdr[19] = ihdr[20] = 0;
	chunk_seal(ihdr, IHDR_LEN, "IHDR");

	zwrite(&r.o, zhdr, ZLIB_HDR);
	write_rows(img, pixels, &r);
	put32(adler, (uint32_t)r.adler);
	zwrite(&r.o, adler, ADLER_LEN);
	for (uint64_t k = 0; k < idat_chunks(z); k++) {
		uint64_t len = z - k * IDAT_MAX;

		chunk_seal(f + zpos(k * IDAT_MAX) - 8,
			   (uint32_t)(len < IDAT_MAX ? len : IDAT_MAX), "IDAT");
	}
	chunk_seal(f + size - CHUNK_OVERHEAD, 0, "IEND");
}
