/*
 * error.c - error names, messages and errno mapping generated from the one
 * table in zrecord.h, plus the thread-local detailed message and log sink.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"

static _Thread_local char tls_msg[ZR__MSG_MAX];
static _Thread_local char tls_cause[ZR__MSG_MAX / 2];
static zr_log_fn log_fn;
static void *log_ctx;

const char *zr_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
#define ZR__MSG(name, value, errnum, msg)                                      \
	case ZR_E_##name:                                                      \
		return msg;
		ZR_ERROR_MAP(ZR__MSG)
#undef ZR__MSG
	}
	if (err < 0 && err > -4096)
		return strerror(-err);
	return "unknown error";
}

const char *zr_errname(int err)
{
	switch (err) {
	case 0:
		return "OK";
#define ZR__NAME(name, value, errnum, msg)                                     \
	case ZR_E_##name:                                                      \
		return "ZR_E_" #name;
		ZR_ERROR_MAP(ZR__NAME)
#undef ZR__NAME
	}
	if (err < 0 && err > -4096) {
		const char *name = strerrorname_np(-err);
		return name ? name : "E?";
	}
	return "E?";
}

int zr_errno(int err)
{
	switch (err) {
	case 0:
		return 0;
#define ZR__ERRNO(name, value, errnum, msg)                                    \
	case ZR_E_##name:                                                      \
		return errnum;
		ZR_ERROR_MAP(ZR__ERRNO)
#undef ZR__ERRNO
	}
	if (err < 0 && err > -4096)
		return -err;
	return EIO;
}

const char *zr_errmsg(void)
{
	return tls_msg;
}

void zr_set_log(zr_log_fn fn, void *ctx)
{
	log_fn = fn;
	log_ctx = ctx;
}

void zr__clear(void)
{
	tls_msg[0] = '\0';
	tls_cause[0] = '\0';
}

void zr__cause(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tls_cause, sizeof(tls_cause), fmt, ap);
	va_end(ap);
}

int zr__fail(int err, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(tls_msg, sizeof(tls_msg), fmt, ap);
	va_end(ap);
	if (tls_cause[0]) {
		n = strlen(tls_msg);
		snprintf(tls_msg + n, sizeof(tls_msg) - n, " (%s)", tls_cause);
		tls_cause[0] = '\0';
	}
	if (log_fn)
		log_fn(log_ctx, err, tls_msg);
	return err;
}

void zr__error_capture(zr__error *e, int err)
{
	if (e->err || !err)
		return;
	e->err = err;
	if (tls_msg[0])
		snprintf(e->msg, sizeof(e->msg), "%s", tls_msg);
	else
		snprintf(e->msg, sizeof(e->msg), "%s", zr_strerror(err));
}

int zr__error_replay(const zr__error *e)
{
	snprintf(tls_msg, sizeof(tls_msg), "%s", e->msg);
	return e->err;
}
