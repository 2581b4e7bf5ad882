/*
 * version.c - what a program or binding asks of the library it loaded: its
 * version, and the sizes of the public structs it was built with (so a
 * hand-written declaration that drifted from zrecord.h is caught at load
 * time rather than by reading fields one byte off).
 */
#include <string.h>

#include "zrecord.h"

unsigned zr_version(void)
{
	return ZR_VERSION_NUMBER;
}

const char *zr_version_string(void)
{
	return ZR_VERSION_STRING;
}

/* Every typedef struct of zrecord.h (tests/abi/test_abi.py checks the list
 * against the header). */
#define ZR__PUBLIC_STRUCTS(X)                                                  \
	X(zr_dtype)                                                            \
	X(zr_schema)                                                           \
	X(zr_loc)                                                              \
	X(zr_ragged_in)                                                        \
	X(zr_stats)                                                            \
	X(zr_sampler)                                                          \
	X(zr_npy_header)                                                       \
	X(zr_image_opts)                                                        \
	X(zr_transfer)                                                         \
	X(zr_cache_info)

size_t zr_struct_size(const char *name)
{
	static const struct {
		const char *name;
		size_t size;
	} sizes[] = {
#define ZR__SIZE(type) { #type, sizeof(type) },
		ZR__PUBLIC_STRUCTS(ZR__SIZE)
#undef ZR__SIZE
	};

	if (!name)
		return 0;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (!strcmp(sizes[i].name, name))
			return sizes[i].size;
	return 0;
}
