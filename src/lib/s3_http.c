/*
 * s3_http.c - one S3 request over libcurl (s3.h): signed with SigV4 by
 * curl itself, bounded in time (a stalled endpoint fails, never hangs),
 * retried with exponential backoff where a retry can help, and an HTTP
 * status that is not 2xx turned into -errno with a cause (error.h).
 * HEAD and ranged GET for reads, PUT for push (s3_push.c).
 *
 * Reads come from the library's pool lanes at the same time, so each
 * thread has its own easy handle (a handle is not shared between
 * threads), kept for the thread's life: curl keeps the handle's
 * connections open, and the next request of that lane reuses one.
 */
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "error.h"
#include "s3.h"

/* Attempts per request, and the first wait between two (doubled each
 * time): 0.1 + 0.2 + 0.4 s at most before a request gives up. */
#define TRIES 4
#define BACKOFF_MS 100
/* A connection not made in this long fails; a transfer slower than
 * LOW_SPEED bytes/s for LOW_TIME seconds is a stalled one. */
#define CONNECT_S 10L
#define LOW_SPEED 1L
#define LOW_TIME 20L

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_key_t handle_key;
static CURLcode init_rc;

static void handle_free(void *h)
{
	curl_easy_cleanup(h);
}

/* curl_global_init is not thread-safe in 7.88: once per process. */
static void global_init(void)
{
	init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
	if (init_rc == CURLE_OK && pthread_key_create(&handle_key, handle_free))
		init_rc = CURLE_FAILED_INIT;
}

/* The calling thread's easy handle, reset to no options (its connections
 * kept); NULL if curl cannot start. */
static CURL *thread_handle(void)
{
	CURL *h;

	pthread_once(&once, global_init);
	if (init_rc != CURLE_OK)
		return NULL;
	h = pthread_getspecific(handle_key);
	if (h) {
		curl_easy_reset(h);
		return h;
	}
	h = curl_easy_init();
	if (h && pthread_setspecific(handle_key, h)) {
		curl_easy_cleanup(h);
		h = NULL;
	}
	return h;
}

/* What one transfer collects. */
struct xfer {
	const struct zr__s3_req *r;
	struct zr__s3_resp *resp;
	char err_body[512]; /* an error status's body, for its <Code> */
	size_t err_len;
	int overrun;        /* the server sent more than asked */
	size_t sent;        /* a PUT's body bytes handed to curl */
};

/* Header line h (n bytes, not NUL-terminated) of name's value into
 * out[cap], trimmed; 0 if h is not that header. */
static int header_value(const char *h, size_t n, const char *name,
			char *out, size_t cap)
{
	size_t k = strlen(name);

	if (n <= k || strncasecmp(h, name, k) || h[k] != ':')
		return 0;
	h += k + 1;
	n -= k + 1;
	while (n && (*h == ' ' || *h == '\t')) {
		h++;
		n--;
	}
	while (n && (h[n - 1] == '\r' || h[n - 1] == '\n' || h[n - 1] == ' '))
		n--;
	snprintf(out, cap, "%.*s", (int)n, h);
	return 1;
}

static size_t on_header(char *h, size_t size, size_t nitems, void *ctx)
{
	struct xfer *x = ctx;
	size_t n = size * nitems;
	char v[32];

	if (n > 5 && !strncmp(h, "HTTP/", 5)) { /* a new response begins */
		const char *sp = memchr(h, ' ', n);

		x->resp->status = sp ? strtol(sp + 1, NULL, 10) : 0;
		x->resp->etag[0] = '\0';
		x->resp->length = 0;
	} else if (header_value(h, n, "content-length", v, sizeof(v))) {
		x->resp->length = strtoull(v, NULL, 10);
	} else {
		header_value(h, n, "etag", x->resp->etag,
			     sizeof(x->resp->etag));
	}
	return n;
}

static size_t on_body(char *p, size_t size, size_t nmemb, void *ctx)
{
	struct xfer *x = ctx;
	struct zr__s3_resp *resp = x->resp;
	size_t n = size * nmemb;

	if (resp->status < 200 || resp->status > 299) {
		size_t room = sizeof(x->err_body) - 1 - x->err_len;

		memcpy(x->err_body + x->err_len, p, n < room ? n : room);
		x->err_len += n < room ? n : room;
		return n;
	}
	if (n > x->r->cap - resp->got) {
		x->overrun = 1;
		return 0; /* stops the transfer: never more bytes than asked */
	}
	memcpy((char *)x->r->buf + resp->got, p, n);
	resp->got += n;
	return n;
}

/* A PUT's body, from r->body (from the start again at each attempt). */
static size_t on_read(char *p, size_t size, size_t nmemb, void *ctx)
{
	struct xfer *x = ctx;
	size_t n = x->r->body_len - x->sent;

	if (n > size * nmemb)
		n = size * nmemb;
	memcpy(p, (const char *)x->r->body + x->sent, n);
	x->sent += n;
	return n;
}

/* The <Code> of an S3 error body (RGW's <Message> is empty). */
static void error_code(struct xfer *x)
{
	const char *b, *e;

	x->err_body[x->err_len] = '\0';
	b = strstr(x->err_body, "<Code>");
	e = b ? strstr(b, "</Code>") : NULL;
	if (e)
		snprintf(x->resp->code, sizeof(x->resp->code), "%.*s",
			 (int)(e - b - 6), b + 6);
}

/* Appends the header "fmt..." to *l; 0 if there was no memory (*l is
 * kept for the caller to free). */
static int add_header(struct curl_slist **l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int add_header(struct curl_slist **l, const char *fmt, ...)
{
	char buf[4096];
	struct curl_slist *t;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	t = curl_slist_append(*l, buf);
	if (t)
		*l = t;
	return t != NULL;
}

/* The request's headers: the payload hash curl 7.88 does not send (RGW
 * answers 403 without it: docs/many-hosts.md), the session token, the
 * range and the ETag it must match.  NULL without memory. */
static struct curl_slist *headers(const struct zr__s3_req *r)
{
	struct curl_slist *l = NULL;
	int ok = add_header(&l, "x-amz-content-sha256: UNSIGNED-PAYLOAD");

	if (ok && r->conf->token)
		ok = add_header(&l, "x-amz-security-token: %s", r->conf->token);
	if (ok && r->ranged)
		ok = add_header(&l, "Range: bytes=%llu-%llu",
				(unsigned long long)r->off,
				(unsigned long long)(r->off + r->cap - 1));
	if (ok && r->if_match)
		ok = add_header(&l, "If-Match: %s", r->if_match);
	if (!ok) {
		curl_slist_free_all(l);
		return NULL;
	}
	return l;
}

static void set_options(CURL *h, const struct zr__s3_req *r,
			struct curl_slist *hdr, struct xfer *x, char *sigv4,
			char *errbuf)
{
	curl_easy_setopt(h, CURLOPT_URL, r->http);
	curl_easy_setopt(h, CURLOPT_NOBODY, r->head ? 1L : 0L);
	if (r->body) {
		curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(h, CURLOPT_READFUNCTION, on_read);
		curl_easy_setopt(h, CURLOPT_READDATA, x);
		curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE,
				 (curl_off_t)r->body_len);
	}
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(h, CURLOPT_AWS_SIGV4, sigv4);
	curl_easy_setopt(h, CURLOPT_USERNAME, r->conf->key_id);
	curl_easy_setopt(h, CURLOPT_PASSWORD, r->conf->secret);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, CONNECT_S);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, LOW_SPEED);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, LOW_TIME);
	/* no signals from a library: timeouts without SIGALRM */
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
}

/* One attempt: a CURLcode, the status in x->resp. */
static CURLcode attempt(CURL *h, const struct zr__s3_req *r, struct xfer *x,
			struct curl_slist *hdr, char *errbuf)
{
	char sigv4[128];

	snprintf(sigv4, sizeof(sigv4), "aws:amz:%s:s3", r->conf->region);
	memset(x->resp, 0, sizeof(*x->resp));
	x->err_len = 0;
	x->overrun = 0;
	x->sent = 0;
	errbuf[0] = '\0';
	set_options(h, r, hdr, x, sigv4, errbuf);
	return curl_easy_perform(h);
}

/* Worth another try: the connection failed or broke, or the server said
 * it is busy or broken for now.  Not a timeout: an endpoint that stalled
 * for CONNECT_S or LOW_TIME is not back in a second, and retrying it
 * would multiply the time a caller waits to hear so. */
static int transient(CURLcode rc, long status)
{
	switch (rc) {
	case CURLE_OK:
		return status == 500 || status == 502 || status == 503 ||
		       status == 504;
	case CURLE_COULDNT_CONNECT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
		return 1;
	default:
		return 0;
	}
}

static void backoff(int attempt_no)
{
	long ms = (long)BACKOFF_MS << attempt_no;
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The -EIO of a request that never got an answer it could use. */
static int gave_up(const struct zr__s3_req *r, CURLcode rc,
		   const struct xfer *x, const char *errbuf, int tries)
{
	if (x->overrun)
		zr__cause("%s: the server sent more than the %zu bytes asked",
			  r->http, r->cap);
	else if (rc == CURLE_OK)
		zr__cause("%s: HTTP %ld%s%s after %d %s", r->http,
			  x->resp->status, x->resp->code[0] ? " " : "",
			  x->resp->code, tries, tries > 1 ? "tries" : "try");
	else
		zr__cause("%s: %s after %d %s", r->http,
			  errbuf[0] ? errbuf : curl_easy_strerror(rc), tries,
			  tries > 1 ? "tries" : "try");
	return -EIO;
}

/* SIGPIPE blocked on this thread for a transfer: a peer that closes the
 * connection must not end the caller's process (CURLOPT_NOSIGNAL, which
 * threads need, leaves SIGPIPE to the program, and TLS writes with
 * write()).  One raised meanwhile is taken back before the mask is
 * restored, one pending before is left alone, as libpq does. */
struct pipe_guard {
	sigset_t old;
	int was_pending;
};

static void pipe_block(struct pipe_guard *g)
{
	sigset_t pipe, pend;

	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe, &g->old);
	g->was_pending = !sigpending(&pend) && sigismember(&pend, SIGPIPE);
}

static void pipe_restore(const struct pipe_guard *g)
{
	static const struct timespec now = { 0, 0 };
	sigset_t pipe, pend;

	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	if (!g->was_pending && !sigpending(&pend) &&
	    sigismember(&pend, SIGPIPE))
		sigtimedwait(&pipe, NULL, &now);
	pthread_sigmask(SIG_SETMASK, &g->old, NULL);
}

/* The attempts of r, backing off between them, until one is not worth
 * repeating or TRIES are spent; how many were made into *tries. */
static CURLcode attempts(CURL *h, const struct zr__s3_req *r, struct xfer *x,
			 struct curl_slist *hdr, char *errbuf, int *tries)
{
	struct pipe_guard g;
	CURLcode rc;

	pipe_block(&g);
	for (*tries = 1;; ++*tries) {
		rc = attempt(h, r, x, hdr, errbuf);
		if (!transient(rc, x->resp->status) || *tries == TRIES)
			break;
		backoff(*tries - 1);
	}
	pipe_restore(&g);
	return rc;
}

int zr__s3_send(const struct zr__s3_req *r, struct zr__s3_resp *out)
{
	char errbuf[CURL_ERROR_SIZE];
	struct xfer x = { .r = r, .resp = out };
	struct curl_slist *hdr;
	CURL *h = thread_handle();
	CURLcode rc;
	int tries;

	if (!h) {
		zr__cause("%s: libcurl did not start", r->url);
		return -EIO;
	}
	hdr = headers(r);
	if (!hdr)
		return -ENOMEM;
	rc = attempts(h, r, &x, hdr, errbuf, &tries);
	curl_slist_free_all(hdr);
	error_code(&x);
	if (rc != CURLE_OK || transient(rc, out->status))
		return gave_up(r, rc, &x, errbuf, tries);
	return 0;
}

int zr__s3_status_err(const struct zr__s3_req *r,
		      const struct zr__s3_resp *resp)
{
	const char *code = resp->code[0] ? resp->code : "";

	switch (resp->status) {
	case 403:
		zr__cause("%s: HTTP 403 %s: check AWS_ACCESS_KEY_ID, "
			  "AWS_SECRET_ACCESS_KEY and AWS_PROFILE", r->url,
			  code[0] ? code : "Forbidden");
		return -EACCES;
	case 404:
		return -ENOENT; /* the caller knows what was missing */
	case 412:
		zr__cause("%s changed since it was opened (HTTP 412: no longer "
			  "ETag %s): open the store again", r->url,
			  r->if_match ? r->if_match : "?");
		return -ESTALE;
	default:
		zr__cause("%s: HTTP %ld %s", r->url, resp->status,
			  code[0] ? code : "(no error code)");
		return -EIO;
	}
}

/* After a 404 for o: -ENOENT, with a cause if the bucket itself is
 * missing (a HEAD has no body to tell NoSuchBucket from NoSuchKey). */
int zr__s3_missing(const struct zr__s3_conf *c, const struct zr__s3_obj *o)
{
	struct zr__s3_req r = { .conf = c, .url = o->url,
				.http = o->http_bucket, .head = 1 };
	struct zr__s3_resp resp;

	if (zr__s3_send(&r, &resp) == 0 && resp.status == 404)
		zr__cause("no bucket \"%s\" at %s (NoSuchBucket)", o->bucket,
			  c->endpoint ? c->endpoint : "AWS S3");
	return -ENOENT;
}

/* HEAD of o into resp: 0 if the object is there, else -errno (with a
 * cause but for a plain missing key). */
int zr__s3_head(const struct zr__s3_conf *c, const struct zr__s3_obj *o,
		struct zr__s3_resp *resp)
{
	struct zr__s3_req r = { .conf = c, .url = o->url, .http = o->http,
				.head = 1 };
	int err = zr__s3_send(&r, resp);

	if (err)
		return err;
	if (resp->status >= 200 && resp->status <= 299)
		return 0;
	if (resp->status == 404)
		return -ENOENT; /* the caller asks zr__s3_missing if it tells */
	return zr__s3_status_err(&r, resp);
}
