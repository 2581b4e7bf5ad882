/*
 * s3.h - the pieces of the read-only S3 backend (vfs_s3.c): where requests
 * go and how they are signed (s3_conf.c), and one request over libcurl
 * with its timeouts, retries and errors (s3_http.c).
 */
#ifndef ZR_S3_H
#define ZR_S3_H

#include <stddef.h>
#include <stdint.h>

/* Credentials and endpoint, from the AWS_* variables and the AWS_PROFILE's
 * ~/.aws/credentials and ~/.aws/config (the variables win). */
struct zr__s3_conf {
	char *endpoint; /* "http://host:port" (no trailing '/'), path-style
			 * URLs; NULL: AWS itself, virtual-host style */
	char *region;   /* AWS_REGION, else the profile's, else us-east-1 */
	char *key_id;
	char *secret;
	char *token;    /* AWS_SESSION_TOKEN or NULL */
	char *profile;  /* the profile read, for messages (NULL: none) */
};

/* Fills c; -errno with a cause (error.h) naming what is missing. */
int zr__s3_conf_load(struct zr__s3_conf *c);
void zr__s3_conf_free(struct zr__s3_conf *c);

/* An s3:// URL taken apart: the HTTP URL of the object (key percent-
 * encoded) and of its bucket, and the bucket's name. */
struct zr__s3_obj {
	char *url;    /* "s3://bucket/key", as given (for messages) */
	char *bucket; /* "bucket" */
	char *key;    /* "key" (may be empty) */
	char *http;   /* the object's HTTP URL */
	char *http_bucket; /* the bucket's, ending in '/' */
};

/* -EINVAL (with a cause) for a URL without a bucket. */
int zr__s3_obj_parse(const struct zr__s3_conf *c, const char *url,
		     struct zr__s3_obj *o);
void zr__s3_obj_free(struct zr__s3_obj *o);
/* The ListObjectsV2 URL of o's bucket for at most max keys under prefix
 * (a key prefix, "" for the whole bucket), grouped by '/' if delimit,
 * from continuation token (NULL: the first page); NULL without memory. */
char *zr__s3_list_query(const struct zr__s3_obj *o, const char *prefix,
			int delimit, unsigned max, const char *token);

/* One request: HEAD, PUT of body (body_len bytes), or GET into buf (at
 * most cap bytes; the bytes [off, off + cap) when ranged). */
struct zr__s3_req {
	const struct zr__s3_conf *conf;
	const char *url;      /* the s3:// URL, for messages */
	const char *http;     /* where it goes (query included) */
	int head;
	int ranged;
	const void *body; /* non-NULL: a PUT of these bytes */
	size_t body_len;
	uint64_t off;
	void *buf;
	size_t cap;
	const char *if_match; /* an ETag the object must still have, or NULL */
};

struct zr__s3_resp {
	long status;
	uint64_t length;  /* Content-Length (the object's size for HEAD) */
	size_t got;       /* body bytes in buf */
	char etag[128];   /* as sent, quotes included */
	char code[64];    /* an error body's <Code>, "" if none */
};

/* Sends r, retrying connection failures and 500/502/503/504 with
 * exponential backoff a bounded number of times: 0 with any HTTP status
 * in out, or -EIO once the retries are spent (with a cause, error.h). */
int zr__s3_send(const struct zr__s3_req *r, struct zr__s3_resp *out);

/* The -errno of a status that is not 2xx, with a cause naming r's URL and
 * what to check (403: the credentials; 412: the object changed). */
int zr__s3_status_err(const struct zr__s3_req *r,
		      const struct zr__s3_resp *resp);

/* HEAD of o into resp: 0 if the object is there, else -errno (with a
 * cause but for a missing key: -ENOENT, without the request that
 * zr__s3_missing makes to tell a missing bucket, which only a caller for
 * whom the key must be there pays). */
int zr__s3_head(const struct zr__s3_conf *c, const struct zr__s3_obj *o,
		struct zr__s3_resp *resp);
/* After a 404 for o: -ENOENT, with a cause if the bucket itself is
 * missing (a HEAD has no body to tell NoSuchBucket from NoSuchKey). */
int zr__s3_missing(const struct zr__s3_conf *c, const struct zr__s3_obj *o);

/* The object prefix + "/" + name ("s3://b/p", "meta.zr"), parsed. */
int zr__s3_obj_child(const struct zr__s3_conf *c, const char *prefix,
		     const char *name, struct zr__s3_obj *o);

/* Names, each malloc'ed. */
struct zr__s3_names {
	char **v;
	size_t n, cap;
};

void zr__s3_names_free(struct zr__s3_names *v);
/* A copy of name[0..len) appended; -ENOMEM. */
int zr__s3_names_add(struct zr__s3_names *v, const char *name, size_t len);

/* One folder level under a key prefix (s3_list.c). */
struct zr__s3_list {
	struct zr__s3_names keys; /* the objects' names after the prefix */
	struct zr__s3_names dirs; /* the folders', without their '/' */
};

/* Lists prefix ("" or ending in '/') of o's bucket, url naming it in
 * messages, into out (which the caller frees, also on failure): every
 * key and folder counts against *budget, -E2BIG once it is spent; a name
 * no mount can show ("", ".", "..", over NAME_MAX) is passed over.
 * -errno with a cause (error.h). */
int zr__s3_list_level(const struct zr__s3_conf *c,
		      const struct zr__s3_obj *o, const char *url,
		      const char *prefix, size_t *budget,
		      struct zr__s3_list *out);
/* Whether any key of o's bucket starts with prefix, asked with one page
 * of one key: 0 if one does, -ENOENT if none or after a 404 (with a cause
 * if the bucket is missing, zr__s3_missing), else -errno with a cause. */
int zr__s3_list_any(const struct zr__s3_conf *c, const struct zr__s3_obj *o,
		    const char *prefix);

#endif
