/*
 * schema.c - the store schema: MsgPack bytes exactly as the seed's Python
 * writes them (msgpack.packb({"dtype": s, "item_shape": [...]})), strict
 * decoding of untrusted bytes, the dense row width and the JSON form.
 */
#include <errno.h>
#include <msgpack.h>
#include <string.h>

#include "error.h"
#include "mpcheck.h"
#include "text_builder.h"

/* Everything a schema must satisfy, whichever way it arrives. */
static int check_schema(const zr_schema *s)
{
	zr_dtype d;
	size_t row;

	if (!memchr(s->dtype.str, '\0', sizeof(s->dtype.str)) ||
	    zr_dtype_parse(s->dtype.str, &d) || strcmp(d.str, s->dtype.str) ||
	    d.kind != s->dtype.kind || d.order != s->dtype.order ||
	    d.itemsize != s->dtype.itemsize)
		return zr__fail(ZR_E_SCHEMA, "schema: dtype '%.4s' is not a "
				"canonical dtype.str", s->dtype.str);
	if (s->ragged)
		return 0;
	if (s->ndim > ZR_MAX_NDIM)
		return zr__fail(ZR_E_SCHEMA, "schema: item_shape has %u dims, "
				"over %d", (unsigned)s->ndim, ZR_MAX_NDIM);
	return zr_schema_row_bytes(s, &row);
}

int zr_schema_row_bytes(const zr_schema *schema, size_t *out)
{
	uint64_t n;

	zr__clear();
	if (!schema || !out || schema->ragged || schema->ndim > ZR_MAX_NDIM)
		return -EINVAL;
	n = schema->dtype.itemsize;
	for (uint32_t i = 0; i < schema->ndim; i++) {
		/* Records are never empty, so no caller divides by zero. */
		if (!schema->shape[i])
			return zr__fail(ZR_E_SCHEMA, "schema: item_shape[%u] "
					"is 0 (records must not be empty)",
					(unsigned)i);
		if (n > ZR_RECORD_MAX / schema->shape[i])
			return zr__fail(ZR_E_TOOBIG, "schema: one record "
					"would exceed 2 GiB");
		n *= schema->shape[i];
	}
	if (n > ZR_RECORD_MAX)
		return zr__fail(ZR_E_TOOBIG, "schema: one record of %llu "
				"bytes exceeds 2 GiB", (unsigned long long)n);
	*out = (size_t)n;
	return 0;
}

/* -- encoding ----------------------------------------------------------- */

static void pack_key(msgpack_packer *pk, const char *s)
{
	size_t n = strlen(s);

	msgpack_pack_str(pk, n);
	msgpack_pack_str_body(pk, s, n);
}

static void pack_schema(msgpack_packer *pk, const zr_schema *s)
{
	msgpack_pack_map(pk, s->ragged ? 1 : 2);
	pack_key(pk, "dtype");
	pack_key(pk, s->dtype.str);
	if (s->ragged)
		return;
	pack_key(pk, "item_shape");
	msgpack_pack_array(pk, s->ndim);
	for (uint32_t i = 0; i < s->ndim; i++)
		msgpack_pack_uint64(pk, s->shape[i]);
}

int zr_schema_encode(const zr_schema *schema, void *dst, size_t cap,
		     size_t *len)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;
	int rc;

	zr__clear();
	if (!schema || !dst || !len)
		return -EINVAL;
	rc = check_schema(schema);
	if (rc)
		return rc;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	pack_schema(&pk, schema);
	if (!sb.data) {
		rc = -ENOMEM;
		goto out;
	}
	if (sb.size > cap || sb.size > ZR_SCHEMA_MAX) {
		rc = zr__fail(ZR_E_SCHEMA, "schema: %zu bytes encoded, room "
			      "for %zu", sb.size,
			      cap < ZR_SCHEMA_MAX ? cap : ZR_SCHEMA_MAX);
		goto out;
	}
	memcpy(dst, sb.data, sb.size);
	*len = sb.size;
out:
	msgpack_sbuffer_destroy(&sb);
	return rc;
}

/* -- decoding ----------------------------------------------------------- */

static int str_is(const msgpack_object *o, const char *s)
{
	return o->type == MSGPACK_OBJECT_STR && o->via.str.size == strlen(s) &&
	       !memcmp(o->via.str.ptr, s, o->via.str.size);
}

static int decode_dtype(const msgpack_object *o, zr_dtype *out)
{
	char s[8];
	zr_dtype d;

	if (o->type != MSGPACK_OBJECT_STR || o->via.str.size >= sizeof(s))
		return zr__fail(ZR_E_SCHEMA, "schema: dtype is not a short "
				"string");
	memcpy(s, o->via.str.ptr, o->via.str.size);
	s[o->via.str.size] = '\0';
	if (zr_dtype_parse(s, &d) || strcmp(d.str, s))
		return zr__fail(ZR_E_SCHEMA, "schema: dtype '%s' is not a "
				"canonical dtype.str", s);
	*out = d;
	return 0;
}

static int decode_shape(const msgpack_object *o, zr_schema *out)
{
	if (o->type != MSGPACK_OBJECT_ARRAY)
		return zr__fail(ZR_E_SCHEMA, "schema: item_shape is not an "
				"array");
	if (o->via.array.size > ZR_MAX_NDIM)
		return zr__fail(ZR_E_SCHEMA, "schema: item_shape has %u dims, "
				"over %d", (unsigned)o->via.array.size,
				ZR_MAX_NDIM);
	for (uint32_t i = 0; i < o->via.array.size; i++) {
		const msgpack_object *d = &o->via.array.ptr[i];

		if (d->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
			return zr__fail(ZR_E_SCHEMA, "schema: item_shape[%u] "
					"is not a non-negative int",
					(unsigned)i);
		out->shape[i] = d->via.u64;
	}
	out->ndim = o->via.array.size;
	return 0;
}

static int decode_map(const msgpack_object *o, zr_schema *out)
{
	int have_dtype = 0, have_shape = 0, rc = 0;

	if (o->type != MSGPACK_OBJECT_MAP)
		return zr__fail(ZR_E_SCHEMA, "schema: not a MsgPack map");
	out->ragged = 1;
	for (uint32_t i = 0; !rc && i < o->via.map.size; i++) {
		const msgpack_object_kv *kv = &o->via.map.ptr[i];

		if (str_is(&kv->key, "dtype") && !have_dtype++) {
			rc = decode_dtype(&kv->val, &out->dtype);
		} else if (str_is(&kv->key, "item_shape") && !have_shape++) {
			out->ragged = 0;
			rc = decode_shape(&kv->val, out);
		} else {
			rc = zr__fail(ZR_E_SCHEMA, "schema: unexpected or "
				      "repeated key #%u", (unsigned)i);
		}
	}
	if (!rc && !have_dtype)
		rc = zr__fail(ZR_E_SCHEMA, "schema: no dtype");
	return rc;
}

int zr_schema_decode(const void *buf, size_t len, zr_schema *out)
{
	msgpack_unpacked up;
	zr_schema s;
	size_t used = 0;
	int rc;

	zr__clear();
	if (!buf || !out)
		return -EINVAL;
	if (!len || len > ZR_SCHEMA_MAX)
		return zr__fail(ZR_E_SCHEMA, "schema: %zu bytes (1..%d "
				"allowed)", len, ZR_SCHEMA_MAX);
	/* A map holding an array: two levels of containers. */
	if (zr__msgpack_check(buf, len, 2, &used))
		return zr__fail(ZR_E_SCHEMA, "schema: not one well-formed "
				"MsgPack map of at most two levels");
	if (used != len)
		return zr__fail(ZR_E_SCHEMA, "schema: %zu trailing bytes",
				len - used);
	memset(&s, 0, sizeof(s));
	msgpack_unpacked_init(&up);
	used = 0; /* msgpack_unpack_next starts at *off; the scan above
		   * already proved the object spans exactly len bytes */
	switch (msgpack_unpack_next(&up, buf, len, &used)) {
	case MSGPACK_UNPACK_SUCCESS:
		break;
	case MSGPACK_UNPACK_NOMEM_ERROR:
		rc = -ENOMEM;
		goto out;
	default:
		rc = zr__fail(ZR_E_SCHEMA, "schema: not one MsgPack object");
		goto out;
	}
	rc = decode_map(&up.data, &s);
	if (!rc)
		rc = check_schema(&s);
	if (!rc)
		*out = s;
out:
	msgpack_unpacked_destroy(&up);
	return rc;
}

/* -- JSON --------------------------------------------------------------- */

int zr_schema_json(const zr_schema *schema, char *dst, size_t cap)
{
	zr__text t;
	int rc;

	zr__clear();
	if (!schema || !dst)
		return -EINVAL;
	rc = check_schema(schema);
	if (rc)
		return rc;
	zr__text_init(&t, dst, cap);
	zr__text_add(&t, "{\"dtype\": \"%s\"", schema->dtype.str);
	if (!schema->ragged) {
		zr__text_add(&t, ", \"item_shape\": ");
		zr__text_dims(&t, schema->shape, schema->ndim, 0);
	}
	zr__text_add(&t, "}");
	if (!zr__text_fits(&t))
		return zr__fail(-ENOBUFS, "schema: JSON needs %zu bytes, %zu "
				"given", t.len + 1, cap);
	return 0;
}
